//! CPU affinity of the calling thread (`sched_setaffinity(2)`) and CPU lists like `0,2-3`.

use super::last_os_error;
use std::io;

/// Parses a CPU list in the kernel's `cpuset` syntax (`0`, `0,2`, `1-3`, `0,4-7`), as taken by
/// `taskset -c` and cyclictest `-a`. Returns the CPUs ascending, without repeats.
///
/// # Errors
/// A sentence naming the part that is not a CPU number or range.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let bad = || format!("'{part}' in CPU list '{s}' is not a CPU number or range like 2-5");
        if part.is_empty() {
            return Err(format!("CPU list '{s}' has an empty entry"));
        }
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().map_err(|_| bad())?,
                b.trim().parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let v = part.parse::<usize>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if lo > hi {
            return Err(format!("range '{part}' in CPU list '{s}' runs backwards"));
        }
        if hi >= libc::CPU_SETSIZE as usize {
            return Err(format!(
                "CPU {hi} in '{s}' is beyond the largest CPU number Linux supports"
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs in the same syntax, with ranges (`[0,1,2,5]` → `0-2,5`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// The CPUs the calling thread may run on (`sched_getaffinity(2)`), ascending.
///
/// # Errors
/// The OS error of `sched_getaffinity`.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = get_affinity()?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `set` is an initialised cpu_set_t and the index is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

fn get_affinity() -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` is writable and its size is passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if r != 0 {
        return Err(last_os_error());
    }
    Ok(set)
}

fn set_affinity(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(set), set) };
    if r != 0 {
        return Err(last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to one CPU; restores the previous affinity when dropped.
/// Must be dropped on the thread that created it.
#[derive(Debug)]
pub struct AffinityGuard {
    saved: libc::cpu_set_t,
}

impl AffinityGuard {
    /// Pins the calling thread to `cpu`.
    ///
    /// # Errors
    /// `EINVAL` if the CPU is offline or outside the process's cpuset.
    pub fn pin(cpu: usize) -> io::Result<Self> {
        let saved = get_affinity()?;
        // SAFETY: zeroed cpu_set_t is empty; CPU_SET with an index below CPU_SETSIZE.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        unsafe { libc::CPU_SET(cpu, &mut set) };
        set_affinity(&set)?;
        Ok(AffinityGuard { saved })
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        let _ = set_affinity(&self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(parse_cpu_list("0,2-3").unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_cpu_list(" 3 , 1 ,1").unwrap(), vec![1, 3]);
        for bad in ["", "a", "1-", "3-1", "1,,2", "-1", "99999"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn allowed_cpus_is_not_empty() {
        assert!(!allowed_cpus().unwrap().is_empty());
    }

    #[test]
    fn pin_and_restore() {
        let before = allowed_cpus().unwrap();
        {
            let _g = AffinityGuard::pin(before[0]).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![before[0]]);
        }
        assert_eq!(allowed_cpus().unwrap(), before);
    }

    proptest! {
        #[test]
        fn format_then_parse_round_trips(mut cpus in proptest::collection::vec(0usize..64, 1..20)) {
            cpus.sort_unstable();
            cpus.dedup();
            prop_assert_eq!(parse_cpu_list(&format_cpu_list(&cpus)).unwrap(), cpus);
        }
    }
}
