//! The housekeeping CPUs of `tickscope monitor`: where the collector, the HTTP server and the
//! textfile writer run, away from the measured CPUs — monitoring agents on the measured CPUs
//! are a known source of latency (telegraf's intel_powerstat raised cyclictest's latency:
//! <https://github.com/influxdata/telegraf/issues/13828>).

use std::io;
use tickscope_engine::setup::{allowed_cpus, format_cpu_list, parse_cpu_list};

/// The housekeeping CPUs for measuring threads pinned as `measured` (`None` = unpinned):
/// `asked` (a CPU list) or, by default, the allowed CPUs not measured. `Ok(None)` means "do
/// not pin" (every CPU is measured, or a thread is unpinned), with the reason.
///
/// # Errors
/// One sentence when `asked` is not a CPU list, names a CPU this process may not use, or
/// overlaps a measured CPU.
pub fn choose(
    asked: Option<&str>,
    measured: &[Option<usize>],
) -> Result<Result<Vec<usize>, String>, String> {
    let allowed = allowed_cpus().map_err(|e| format!("cannot read the CPU affinity: {e}"))?;
    let pinned: Vec<usize> = measured.iter().flatten().copied().collect();
    if let Some(list) = asked {
        let cpus = parse_cpu_list(list.trim()).map_err(|e| format!("--housekeeping-cpus: {e}"))?;
        if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(format!(
                "--housekeeping-cpus: CPU {c} is not available to this process (allowed: {})",
                format_cpu_list(&allowed)
            ));
        }
        let overlap: Vec<usize> = cpus
            .iter()
            .filter(|c| pinned.contains(c))
            .copied()
            .collect();
        if !overlap.is_empty() {
            return Err(format!(
                "--housekeeping-cpus {} overlaps the measured CPUs ({}); the exporter must stay \
                 off them",
                format_cpu_list(&cpus),
                format_cpu_list(&overlap)
            ));
        }
        return Ok(Ok(cpus));
    }
    if measured.iter().any(Option::is_none) {
        return Ok(Err(
            "measuring threads are unpinned, so every CPU is measured; pin them with -a and \
             the exporter moves off them"
                .into(),
        ));
    }
    let rest: Vec<usize> = allowed
        .into_iter()
        .filter(|c| !pinned.contains(c))
        .collect();
    if rest.is_empty() {
        return Ok(Err(
            "every CPU is measured; give --housekeeping-cpus or measure fewer CPUs".into(),
        ));
    }
    Ok(Ok(rest))
}

/// Pins the calling thread to `cpus` (`sched_setaffinity(2)` on the calling thread).
///
/// # Errors
/// The OS error (`EINVAL` for an empty or offline set).
pub fn pin_current(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: the index is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
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
        let err = choose(Some(&first.to_string()), &[Some(first)]).unwrap_err();
        assert!(err.contains("overlaps"), "{err}");
        assert!(choose(None, &[None]).unwrap().is_err());
        match choose(None, &[Some(first)]).unwrap() {
            Ok(rest) => assert!(!rest.contains(&first) && !rest.is_empty()),
            Err(why) => assert!(allowed.len() == 1 && why.contains("every CPU")),
        }
        assert!(choose(Some("x"), &[Some(first)]).is_err());
    }
}
