//! The x86-64 time-stamp counter: reading it, whether it may be read, and its frequency.
//!
//! `rdtsc` reads the counter without waiting for earlier instructions; `rdtscp` waits for
//! them to execute and also returns `IA32_TSC_AUX` (Intel SDM vol. 2B). An invariant TSC
//! (CPUID 0x8000_0007 EDX bit 8) ticks at a constant rate in every P-, C- and T-state. The
//! rate comes, in order of preference, from what the kernel uses (its `tsc_khz`, shown in
//! `/sys/devices/system/cpu/cpu0/tsc_freq_khz` on kernels that export it, and in the boot log
//! by `arch/x86/kernel/tsc.c`), from CPUID leaf 0x15 (crystal × ratio, Intel SDM vol. 3B
//! §18.7.3) or the hypervisor timing leaf 0x4000_0010, and last from a calibration against
//! `CLOCK_MONOTONIC_RAW`.

use serde::{Deserialize, Serialize};
use tickscope_engine::time::Nanos;

/// Where the TSC frequency came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TscFrequencySource {
    /// `/sys/devices/system/cpu/cpu0/tsc_freq_khz` (the kernel's `tsc_khz`).
    Sysfs,
    /// The kernel log line `tsc: Refined TSC clocksource calibration: …` or
    /// `tsc: Detected … MHz`: the kernel's `tsc_khz`.
    KernelLog,
    /// CPUID leaf 0x15: crystal clock × TSC/crystal ratio.
    Cpuid15,
    /// The hypervisor's CPUID timing leaf 0x4000_0010 (EAX = TSC kHz).
    HypervisorCpuid,
    /// Counted against `CLOCK_MONOTONIC_RAW` over a short sleep.
    Calibrated,
}

/// The TSC's tick rate and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TscFrequency {
    /// Ticks per second (Hz), > 0.
    pub hz: u64,
    /// Where `hz` came from.
    pub source: TscFrequencySource,
    /// The evidence: the file, log line or CPUID values, or the calibration window.
    pub detail: String,
    /// Whether the CPU reports an invariant TSC (constant rate in all power states).
    pub invariant: bool,
}

impl TscFrequency {
    /// Nanoseconds per tick (for 2.5 GHz, 0.4).
    pub fn ns_per_tick(&self) -> f64 {
        1e9 / self.hz as f64
    }
}

/// Whether `rdtsc` (`rdtscp` when `with_p`) may be executed here; the reason if not.
///
/// Checks CPUID (TSC: leaf 1 EDX bit 4; RDTSCP: leaf 0x8000_0001 EDX bit 27) and that the
/// process is not in `PR_TSC_SIGSEGV` mode (`prctl(2)` `PR_GET_TSC`), where the instructions
/// fault.
///
/// # Errors
/// A few words saying why the instruction is unavailable.
pub fn available(with_p: bool) -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        if cpuid(1).edx & (1 << 4) == 0 {
            return Err("the CPU has no TSC".into());
        }
        if with_p
            && (cpuid(0x8000_0000).eax < 0x8000_0001 || cpuid(0x8000_0001).edx & (1 << 27) == 0)
        {
            return Err("the CPU has no rdtscp instruction".into());
        }
        let mut mode: libc::c_int = 0;
        // SAFETY: PR_GET_TSC stores the mode into the int whose address is passed.
        let r = unsafe { libc::prctl(libc::PR_GET_TSC, &mut mode as *mut libc::c_int) };
        if r == 0 && mode == libc::PR_TSC_SIGSEGV {
            return Err("reading the TSC is disabled for this process (PR_TSC_SIGSEGV)".into());
        }
        Ok(())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = with_p;
        Err("the TSC is read only on x86-64".into())
    }
}

/// Reads the TSC with `rdtsc`, in ticks. Call only after [`available`]`(false)` succeeded.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn rdtsc() -> i64 {
    // SAFETY: rdtsc has no memory effects; `available` checked that it does not fault.
    unsafe { std::arch::x86_64::_rdtsc() as i64 }
}

/// Reads the TSC with `rdtscp`, in ticks. Call only after [`available`]`(true)` succeeded.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn rdtscp() -> i64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp writes only `aux`, a valid u32; `available` checked it does not fault.
    unsafe { std::arch::x86_64::__rdtscp(&mut aux) as i64 }
}

/// Parses the frequency out of the kernel's TSC log lines, Hz: prefers
/// `Refined TSC clocksource calibration: 2499.999 MHz`, then `Detected 2500.000 MHz TSC`,
/// then `Detected 2499.998 MHz processor` (which the kernel prints alone when the CPU and TSC
/// rates agree). Returns the Hz and the line used.
pub fn parse_kernel_log(log: &str) -> Option<(u64, String)> {
    let tsc_lines: Vec<&str> = log.lines().filter(|l| l.contains("tsc: ")).collect();
    let pick = |marker: &str, suffix: &str| {
        tsc_lines.iter().rev().find_map(|l| {
            let (_, rest) = l.split_once(marker)?;
            let mhz = rest.trim().strip_suffix(suffix)?.trim();
            let from_tsc = l.find("tsc: ").map_or(*l, |i| &l[i..]);
            Some((parse_mhz(mhz)?, from_tsc.trim().to_string()))
        })
    };
    pick("Refined TSC clocksource calibration:", "MHz")
        .or_else(|| pick("Detected", "MHz TSC"))
        .or_else(|| pick("Detected", "MHz processor"))
}

/// `2499.998` (MHz with up to three decimals, as the kernel prints kHz) → Hz.
fn parse_mhz(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    if frac.len() > 3 || int.is_empty() {
        return None;
    }
    let khz = int.parse::<u64>().ok()? * 1000 + format!("{frac:0<3}").parse::<u64>().ok()?;
    (khz > 0).then_some(khz * 1000)
}

/// The TSC frequency from the kernel or the CPU without measuring; `None` if neither says.
pub fn known_frequency() -> Option<(u64, TscFrequencySource, String)> {
    const SYSFS: &str = "/sys/devices/system/cpu/cpu0/tsc_freq_khz";
    if let Some(khz) = std::fs::read_to_string(SYSFS)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&k| k > 0)
    {
        return Some((khz * 1000, TscFrequencySource::Sysfs, SYSFS.to_string()));
    }
    if let Some((hz, line)) = crate::system::kernel_log().and_then(|l| parse_kernel_log(&l)) {
        return Some((hz, TscFrequencySource::KernelLog, line));
    }
    cpuid_frequency()
}

/// CPUID leaf `leaf` (`std::arch::x86_64::__cpuid`). The function is safe from Rust 1.94 on
/// and `unsafe` before; the block keeps the declared oldest compiler (`rust-version`) building.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
fn cpuid(leaf: u32) -> std::arch::x86_64::CpuidResult {
    // SAFETY: every x86_64 CPU has the CPUID instruction, which reads no memory.
    unsafe { std::arch::x86_64::__cpuid(leaf) }
}

#[cfg(target_arch = "x86_64")]
fn cpuid_frequency() -> Option<(u64, TscFrequencySource, String)> {
    if cpuid(0).eax >= 0x15 {
        let r = cpuid(0x15);
        if r.eax != 0 && r.ebx != 0 && r.ecx != 0 {
            let hz = r.ecx as u64 * r.ebx as u64 / r.eax as u64;
            let detail = format!("CPUID 0x15: crystal {} Hz × {}/{}", r.ecx, r.ebx, r.eax);
            return Some((hz, TscFrequencySource::Cpuid15, detail));
        }
    }
    if cpuid(1).ecx & (1 << 31) != 0 && cpuid(0x4000_0000).eax >= 0x4000_0010 {
        let khz = cpuid(0x4000_0010).eax as u64;
        if khz > 0 {
            let detail = format!("CPUID 0x40000010: {khz} kHz");
            return Some((khz * 1000, TscFrequencySource::HypervisorCpuid, detail));
        }
    }
    None
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_frequency() -> Option<(u64, TscFrequencySource, String)> {
    None
}

/// Whether CPUID reports an invariant TSC (leaf 0x8000_0007 EDX bit 8).
pub fn invariant() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        cpuid(0x8000_0000).eax >= 0x8000_0007 && cpuid(0x8000_0007).edx & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Counts TSC ticks against `CLOCK_MONOTONIC_RAW` across a sleep of `window_ns` and returns
/// ticks per second. Each end reads the TSC on both sides of the clock read, eight times, and
/// uses the midpoint of the tightest bracket, so the error is about one read over the window
/// (~10⁻⁶ for 50 ms).
pub fn calibrate(window_ns: Nanos) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use tickscope_engine::time::{read_clock, NS_PER_SEC};
        // The tightest of a few brackets, so that an interruption between the reads does
        // not shift the midpoint.
        let sample = || {
            (0..8)
                .map(|_| {
                    let a = rdtsc();
                    let t = read_clock(libc::CLOCK_MONOTONIC_RAW);
                    let b = rdtsc();
                    (b - a, a + (b - a) / 2, t)
                })
                .min_by_key(|&(width, _, _)| width)
                .map(|(_, mid, t)| (mid, t))
                .expect("eight samples")
        };
        let (tsc0, t0) = sample();
        std::thread::sleep(std::time::Duration::from_nanos(window_ns.max(1) as u64));
        let (tsc1, t1) = sample();
        let ns = (t1 - t0).max(1) as i128;
        ((tsc1 - tsc0).max(0) as i128 * NS_PER_SEC as i128 / ns) as u64
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = window_ns;
        0
    }
}

/// The TSC frequency: [`known_frequency`], else [`calibrate`] over `calibration_ns`.
/// `None` when `rdtsc` is not [`available`] (or calibration counted nothing).
pub fn frequency(calibration_ns: Nanos) -> Option<TscFrequency> {
    available(false).ok()?;
    let (hz, source, detail) = known_frequency().unwrap_or_else(|| {
        let hz = calibrate(calibration_ns);
        let detail = format!(
            "counted against CLOCK_MONOTONIC_RAW over {} ms",
            calibration_ns / 1_000_000
        );
        (hz, TscFrequencySource::Calibrated, detail)
    });
    (hz > 0).then(|| TscFrequency {
        hz,
        source,
        detail,
        invariant: invariant(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_log_lines() {
        let log = "<6>[    0.000026] tsc: Detected 2499.998 MHz processor\n\
                   [    0.2] clocksource: Switched to clocksource tsc\n";
        let (hz, line) = parse_kernel_log(log).unwrap();
        assert_eq!(hz, 2_499_998_000);
        assert_eq!(line, "tsc: Detected 2499.998 MHz processor");
        let refined = format!(
            "{log}[    0.000030] tsc: Detected 2500.000 MHz TSC\n\
             [    1.5] tsc: Refined TSC clocksource calibration: 2499.9 MHz\n"
        );
        assert_eq!(parse_kernel_log(&refined).unwrap().0, 2_499_900_000);
        let tsc_line = format!("{log}[    0.000030] tsc: Detected 2500.000 MHz TSC\n");
        assert_eq!(parse_kernel_log(&tsc_line).unwrap().0, 2_500_000_000);
        assert_eq!(parse_kernel_log("tsc: Detected fast MHz processor"), None);
        assert_eq!(parse_kernel_log(""), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn calibration_is_near_the_known_rate() {
        if available(false).is_err() {
            return;
        }
        let hz = calibrate(20_000_000);
        assert!(hz > 100_000_000, "{hz} Hz");
        if let Some((known, _, _)) = known_frequency() {
            let ratio = hz as f64 / known as f64;
            assert!(
                (0.9..1.1).contains(&ratio),
                "calibrated {hz}, known {known}"
            );
        }
        if available(true).is_ok() {
            let a = rdtsc();
            assert!(rdtscp() >= a);
        }
    }
}
