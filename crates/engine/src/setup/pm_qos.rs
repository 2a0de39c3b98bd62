//! Holding a CPU wake-up latency limit through `/dev/cpu_dma_latency` (kernel PM QoS).
//!
//! Writing a 32-bit latency in µs to the device and keeping it open asks cpuidle to avoid
//! idle states whose exit latency exceeds it; closing the file drops the request
//! (Documentation/power/pm_qos_interface.rst). cyclictest holds 0 by default.

use std::fs::File;
use std::io::{self, Write};

/// The PM QoS device for the CPU latency limit.
pub const PM_QOS_PATH: &str = "/dev/cpu_dma_latency";

/// An open `/dev/cpu_dma_latency` holding a latency limit; dropping it closes the file,
/// which restores the kernel's default.
#[derive(Debug)]
pub struct PmQosGuard {
    _file: File,
    limit_us: i32,
}

impl PmQosGuard {
    /// Requests a CPU wake-up latency of at most `limit_us` µs (0 keeps CPUs out of any idle
    /// state deeper than polling).
    ///
    /// # Errors
    /// `EACCES` when not root (the device is mode 0600), `ENOENT` where the kernel has no
    /// PM QoS device.
    pub fn hold(limit_us: i32) -> io::Result<Self> {
        let mut file = File::options().write(true).open(PM_QOS_PATH)?;
        file.write_all(&limit_us.to_ne_bytes())?;
        Ok(PmQosGuard {
            _file: file,
            limit_us,
        })
    }

    /// The latency limit held, µs.
    pub(crate) fn limit_us(&self) -> i32 {
        self.limit_us
    }
}
