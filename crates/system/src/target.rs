//! What `tickscope attach` reads about the program it observes (its target) from `/proc` (proc(5), The Linux
//! man-pages project, <https://man7.org/linux/man-pages/man5/proc.5.html>): its command name,
//! its threads, its locked memory, and per thread its policy, timer slack, affinity and CPU
//! time; and the CPU latency limit in force on the machine. Nothing is written.

use tickscope_engine::setup::Policy;
use tickscope_engine::time::Nanos;

/// `/proc/PID/comm` without its newline; `None` when the process does not exist.
pub fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end().to_string())
}

/// The comm of thread `tid` of `pid`, or an empty string once it is gone.
pub fn thread_comm(pid: i32, tid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default()
}

/// The thread ids of `pid`, ascending (`/proc/PID/task`); empty once it is gone.
pub fn threads(pid: i32) -> Vec<i32> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Whether process `pid` still exists (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Thread `tid`'s time on a CPU, ns: the first field of `/proc/TID/schedstat`
/// (Documentation/scheduler/sched-stats.rst); `None` once it is gone.
pub fn cpu_time(tid: i32) -> Option<Nanos> {
    std::fs::read_to_string(format!("/proc/{tid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Thread `tid`'s timer slack, ns (`/proc/TID/timerslack_ns`, readable by root); `None`
/// when it cannot be read.
pub fn timer_slack(tid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{tid}/timerslack_ns"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Thread `tid`'s scheduling policy and parameters (sched_getattr(2): SCHED_DEADLINE's
/// runtime, deadline and period included); SCHED_OTHER nice 0 when it cannot be read.
pub fn policy(tid: i32) -> Policy {
    tickscope_engine::setup::policy_of(tid).unwrap_or(Policy::Other { nice: 0 })
}

/// The CPUs any of `tids` may run on (the union of their `sched_getaffinity(2)` masks,
/// sched_getaffinity(2), The Linux man-pages project); threads already gone are skipped.
pub fn cpus_of(tids: &[i32]) -> Vec<usize> {
    let mut cpus = std::collections::BTreeSet::new();
    for &tid in tids {
        // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let r = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
        if r != 0 {
            continue;
        }
        for cpu in 0..libc::CPU_SETSIZE as usize {
            // SAFETY: cpu < CPU_SETSIZE, the set's capacity.
            if unsafe { libc::CPU_ISSET(cpu, &set) } {
                cpus.insert(cpu);
            }
        }
    }
    cpus.into_iter().collect()
}

/// The memory process `pid` has locked, KiB (`VmLck` of `/proc/PID/status`: what mlock(2)
/// and mlockall(2) hold); `None` when it cannot be read.
pub fn locked_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// The one CPU thread `tid` may run on, when its affinity mask holds exactly one
/// (sched_getaffinity(2)); `None` for several, or when it cannot be read.
pub fn only_cpu(tid: i32) -> Option<usize> {
    match cpus_of(&[tid])[..] {
        [cpu] => Some(cpu),
        _ => None,
    }
}

/// The CPU wake-up latency limit in force on the machine, µs: the smallest request any
/// process holds on `/dev/cpu_dma_latency`, read from the device (a 32-bit value;
/// Documentation/power/pm_qos_interface.rst). `None` when no process holds one (the value is
/// then the default, `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`, 2 000 000 000 µs) or the device
/// cannot be read (it is root's). Opening the device adds a request of that default value —
/// no limit — for as long as it is open (`cpu_latency_qos_open()`, kernel/power/qos.c); it
/// is closed before this returns, so nothing the machine runs with changes.
pub fn cpu_latency_limit_us() -> Option<i32> {
    use std::io::Read;
    const NO_LIMIT: i32 = 2_000_000_000;
    let mut value = [0u8; 4];
    std::fs::File::open("/dev/cpu_dma_latency")
        .ok()?
        .read_exact(&mut value)
        .ok()?;
    match i32::from_ne_bytes(value) {
        v if (0..NO_LIMIT).contains(&v) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read() {
        let me = std::process::id() as i32;
        assert!(alive(me) && comm(me).is_some());
        assert!(threads(me).contains(&me));
        assert!(cpu_time(me).is_some_and(|c| c > 0));
        assert!(!alive(i32::MAX) && comm(i32::MAX).is_none() && threads(i32::MAX).is_empty());
        assert!(locked_kib(me).is_some() && locked_kib(i32::MAX).is_none());
        assert_eq!(only_cpu(i32::MAX), None);
    }

    #[test]
    fn a_deadline_thread_is_read_with_its_parameters() {
        let dl = Policy::Deadline {
            runtime_ns: 100_000,
            deadline_ns: 10_000_000,
            period_ns: 10_000_000,
        };
        let read = std::thread::spawn(move || {
            let guard = tickscope_engine::setup::PolicyGuard::apply(dl);
            // SAFETY: gettid has no preconditions.
            let read = policy(unsafe { libc::gettid() });
            guard.map(|_| read)
        })
        .join()
        .unwrap();
        match read {
            Ok(read) => assert_eq!(read, dl),
            Err(e) => eprintln!(
                "skipping a_deadline_thread_is_read_with_its_parameters: cannot set \
                 SCHED_DEADLINE ({e})"
            ),
        }
    }

    #[test]
    fn a_thread_pinned_to_one_cpu_is_read_as_that_cpu() {
        let cpus = cpus_of(&[0]);
        let Some(&cpu) = cpus.last() else {
            eprintln!("skipping a_thread_pinned_to_one_cpu_is_read_as_that_cpu: no affinity");
            return;
        };
        let read = std::thread::spawn(move || {
            // SAFETY: cpu_set_t is plain data; the set is valid for the call.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                assert_eq!(
                    libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
                    0
                );
                only_cpu(libc::gettid())
            }
        })
        .join()
        .unwrap();
        assert_eq!(read, Some(cpu));
    }
}
