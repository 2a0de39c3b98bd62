//! The housekeeping CPUs of a session: where every thread that
//! does not measure runs — the collector (which also reads the trace of `--explain`), the
//! signal thread, the load's and `--on-late`'s waiters, the HTTP server and the textfile
//! writer — away from the measured CPUs. Monitoring agents on the measured CPUs are a known
//! source of latency (telegraf's intel_powerstat raised cyclictest's latency:
//! <https://github.com/influxdata/telegraf/issues/13828>), and under a non-preemptible kernel a
//! FIFO thread waits while tickscope's own collector is in the kernel reading the trace
//! (measured: 110 of 116 late wake-ups blamed on tickscope's own threads before this).
//! [`Placement`] is the one place that decides it for every command.

use std::io;
use tickscope_engine::setup::{allowed_cpus, format_cpu_list};

/// Why tickscope's own threads cannot be kept off the measured CPUs by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// A measuring thread is unpinned, so every CPU is measured.
    Unpinned,
    /// The measuring threads are pinned to every CPU this process may use.
    EveryCpu,
}

/// A housekeeping CPU list that cannot be used.
#[derive(Debug)]
pub enum PlacementError {
    /// This process's CPU affinity cannot be read (`sched_getaffinity(2)`).
    Affinity(io::Error),
    /// A CPU asked for is not in this process's affinity mask.
    NotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may use.
        allowed: Vec<usize>,
    },
    /// CPUs asked for are measured too.
    Overlap {
        /// The CPUs asked for.
        asked: Vec<usize>,
        /// Those of them that are measured.
        overlap: Vec<usize>,
    },
}

/// The housekeeping CPUs for measuring threads pinned as `measured` (`None` = unpinned):
/// `asked` or, by default, the allowed CPUs not measured. `Ok(Err(why))` means "do not pin"
/// (every CPU is measured, or a thread is unpinned).
///
/// # Errors
/// [`PlacementError`] when `asked` names a CPU this process may not use or overlaps a
/// measured CPU, or when the affinity cannot be read.
pub fn choose(
    asked: Option<&[usize]>,
    measured: &[Option<usize>],
) -> Result<Result<Vec<usize>, Shared>, PlacementError> {
    let allowed = allowed_cpus().map_err(PlacementError::Affinity)?;
    let pinned: Vec<usize> = measured.iter().flatten().copied().collect();
    if let Some(cpus) = asked {
        if let Some(&cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(PlacementError::NotAllowed { cpu, allowed });
        }
        let overlap: Vec<usize> = cpus
            .iter()
            .filter(|c| pinned.contains(c))
            .copied()
            .collect();
        if !overlap.is_empty() {
            return Err(PlacementError::Overlap {
                asked: cpus.to_vec(),
                overlap,
            });
        }
        return Ok(Ok(cpus.to_vec()));
    }
    if measured.iter().any(Option::is_none) {
        return Ok(Err(Shared::Unpinned));
    }
    let rest: Vec<usize> = allowed
        .into_iter()
        .filter(|c| !pinned.contains(c))
        .collect();
    if rest.is_empty() {
        return Ok(Err(Shared::EveryCpu));
    }
    Ok(Ok(rest))
}

/// Where tickscope's own threads run during a measurement, decided once per command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The housekeeping CPUs, or `Err(why)` when they share the measured CPUs.
    pub cpus: Result<Vec<usize>, String>,
    /// The CPUs this process could use at start (the collector's mask while a run starts
    /// its measuring threads, which inherit it before they pin themselves).
    allowed: Vec<usize>,
}

impl Placement {
    /// A placement on `cpus` (from [`choose`]; `Err(why)`: tickscope's own threads stay
    /// where they are, and the header says `why`).
    ///
    /// # Errors
    /// The OS error when this process's CPU affinity cannot be read.
    pub fn new(cpus: Result<Vec<usize>, String>) -> io::Result<Placement> {
        Ok(Placement {
            cpus,
            allowed: allowed_cpus()?,
        })
    }

    /// One line for the header: `CPU 0 (tickscope's own threads)` or why they are not moved.
    pub fn describe(&self) -> String {
        match &self.cpus {
            Ok(c) => format!(
                "tickscope's own threads on CPU{} {}",
                if c.len() == 1 { "" } else { "s" },
                format_cpu_list(c)
            ),
            Err(why) => format!(
                "not separated: tickscope's own threads may share the measured CPUs ({why})"
            ),
        }
    }

    /// Before a run starts its measuring threads: the collector gets its starting mask back
    /// (a measuring thread is created with the collector's mask and then pins itself to its
    /// CPU, which must be in that mask).
    pub fn before_run(&self) {
        if self.cpus.is_ok() {
            let _ = pin_current(&self.allowed);
        }
    }

    /// Once the measuring threads `measuring` (kernel thread ids) exist: every other thread
    /// of this process — the calling collector, the signal thread, waiters — moves to the
    /// housekeeping CPUs; threads they start later inherit that. Returns the threads that
    /// could not be moved, as one sentence, if any.
    pub fn after_start(&self, measuring: &[i32]) -> Option<String> {
        let cpus = self.cpus.as_ref().ok()?;
        let mut failed = Vec::new();
        let tasks = std::fs::read_dir("/proc/self/task").ok()?;
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if measuring.contains(&tid) {
                continue;
            }
            if let Err(e) = pin_thread(tid, cpus) {
                // A thread that ended meanwhile is not a failure.
                if e.raw_os_error() != Some(libc::ESRCH) {
                    failed.push(format!("{tid} ({e})"));
                }
            }
        }
        (!failed.is_empty()).then(|| {
            format!(
                "cannot move tickscope's own threads {} to the housekeeping CPUs",
                failed.join(", ")
            )
        })
    }
}

/// Pins the calling thread to `cpus` (`sched_setaffinity(2)` on the calling thread).
///
/// # Errors
/// The OS error (`EINVAL` for an empty or offline set).
pub fn pin_current(cpus: &[usize]) -> io::Result<()> {
    pin_thread(0, cpus)
}

/// Pins thread `tid` (0: the calling thread) to `cpus` (`sched_setaffinity(2)`).
///
/// # Errors
/// The OS error (`EINVAL` for an empty or offline set, `ESRCH` for a thread that is gone).
pub fn pin_thread(tid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: the index is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `tid` is a thread id (0: the calling thread); `set` is a valid cpu_set_t of
    // the size passed.
    if unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_refused_and_default_is_the_rest() {
        let allowed = allowed_cpus().unwrap();
        let first = allowed[0];
        let err = choose(Some(&[first]), &[Some(first)]).unwrap_err();
        assert!(matches!(err, PlacementError::Overlap { .. }), "{err:?}");
        assert_eq!(choose(None, &[None]).unwrap(), Err(Shared::Unpinned));
        match choose(None, &[Some(first)]).unwrap() {
            Ok(rest) => assert!(!rest.contains(&first) && !rest.is_empty()),
            Err(why) => assert!(allowed.len() == 1 && why == Shared::EveryCpu),
        }
        assert!(matches!(
            choose(Some(&[usize::MAX]), &[Some(first)]),
            Err(PlacementError::NotAllowed { .. })
        ));
    }
}
