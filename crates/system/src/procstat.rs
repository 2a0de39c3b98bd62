//! `/proc/stat` snapshots and the load achieved between two of them: busy share of chosen
//! CPUs, context switches and interrupts per second.
//!
//! Fields as documented in proc(5) ("/proc/stat", The Linux man-pages project,
//! <https://man7.org/linux/man-pages/man5/proc_stat.5.html>): per-CPU lines `cpuN user nice
//! system idle iowait irq softirq steal guest guest_nice` in USER_HZ ticks, where `guest`
//! and `guest_nice` are already counted in `user` and `nice`; `ctxt` (context switches
//! since boot) and `intr` (its first number: interrupts since boot).

use std::time::Instant;

/// Busy and total ticks of one CPU since boot (USER_HZ units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq + steal.
    pub busy: u64,
    /// busy + idle + iowait.
    pub total: u64,
}

/// One reading of `/proc/stat`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcStat {
    /// When it was read.
    pub at: Instant,
    /// Per CPU: (CPU number, ticks), in file order.
    pub cpus: Vec<(usize, CpuTicks)>,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Interrupts since boot (all sources).
    pub intr: u64,
}

/// What a load achieved between two readings.
#[derive(Debug, Clone, PartialEq)]
pub struct Achieved {
    /// Busy share of each chosen CPU, % (0–100), in the order asked.
    pub cpu_busy_percent: Vec<f64>,
    /// Context switches per second, whole machine.
    pub context_switches_per_s: f64,
    /// Interrupts per second, whole machine.
    pub interrupts_per_s: f64,
    /// Seconds between the readings.
    pub seconds: f64,
}

impl ProcStat {
    /// Reads `/proc/stat` now.
    ///
    /// # Errors
    /// The I/O error of reading the file.
    pub fn read() -> std::io::Result<ProcStat> {
        let text = std::fs::read_to_string("/proc/stat")?;
        Ok(ProcStat::parse(&text, Instant::now()))
    }

    /// Parses the text of `/proc/stat` read at `at`; unknown or malformed lines are skipped
    /// (a missing counter reads 0).
    pub fn parse(text: &str, at: Instant) -> ProcStat {
        let mut s = ProcStat {
            at,
            cpus: Vec::new(),
            ctxt: 0,
            intr: 0,
        };
        for line in text.lines() {
            let mut f = line.split_ascii_whitespace();
            let Some(key) = f.next() else { continue };
            let nums: Vec<u64> = f.map_while(|v| v.parse().ok()).collect();
            match key {
                "ctxt" => s.ctxt = nums.first().copied().unwrap_or(0),
                "intr" => s.intr = nums.first().copied().unwrap_or(0),
                k if k.starts_with("cpu") && k.len() > 3 => {
                    let Ok(cpu) = k[3..].parse::<usize>() else {
                        continue;
                    };
                    let g = |i: usize| nums.get(i).copied().unwrap_or(0);
                    let busy = g(0) + g(1) + g(2) + g(5) + g(6) + g(7);
                    let total = busy + g(3) + g(4);
                    s.cpus.push((cpu, CpuTicks { busy, total }));
                }
                _ => {}
            }
        }
        s
    }

    /// The load achieved from `earlier` to `self` on `cpus` (all CPUs of the file when
    /// empty). A CPU that went away, or no ticks elapsed, reads 0 %.
    pub fn since(&self, earlier: &ProcStat, cpus: &[usize]) -> Achieved {
        let seconds = self.at.duration_since(earlier.at).as_secs_f64();
        let wanted: Vec<usize> = if cpus.is_empty() {
            self.cpus.iter().map(|(c, _)| *c).collect()
        } else {
            cpus.to_vec()
        };
        let ticks = |s: &ProcStat, cpu: usize| {
            s.cpus
                .iter()
                .find(|(c, _)| *c == cpu)
                .map(|(_, t)| *t)
                .unwrap_or_default()
        };
        let cpu_busy_percent = wanted
            .iter()
            .map(|&cpu| {
                let (a, b) = (ticks(earlier, cpu), ticks(self, cpu));
                let total = b.total.saturating_sub(a.total);
                match total {
                    0 => 0.0,
                    t => 100.0 * b.busy.saturating_sub(a.busy) as f64 / t as f64,
                }
            })
            .collect();
        let rate = |a: u64, b: u64| match seconds > 0.0 {
            true => b.saturating_sub(a) as f64 / seconds,
            false => 0.0,
        };
        Achieved {
            cpu_busy_percent,
            context_switches_per_s: rate(earlier.ctxt, self.ctxt),
            interrupts_per_s: rate(earlier.intr, self.intr),
            seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const A: &str = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\n\
                     cpu1 5 0 5 40 0 0 0 0 0 0\nintr 1000 1 2 3\nctxt 5000\nbtime 1\n";
    const B: &str = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 55 0 5 40 0 0 0 0 0 0\n\
                     cpu1 5 0 5 90 10 0 0 0 0 0\nintr 3000 1 2 3\nctxt 6000\n";

    #[test]
    fn busy_share_and_rates() {
        let t0 = Instant::now();
        let a = ProcStat::parse(A, t0);
        let b = ProcStat::parse(B, t0 + Duration::from_secs(2));
        assert_eq!(a.cpus.len(), 2);
        let got = b.since(&a, &[0, 1]);
        assert_eq!(got.cpu_busy_percent, vec![100.0, 0.0]);
        assert_eq!(got.context_switches_per_s, 500.0);
        assert_eq!(got.interrupts_per_s, 1000.0);
        assert_eq!(b.since(&a, &[]).cpu_busy_percent.len(), 2);
        assert_eq!(b.since(&a, &[7]).cpu_busy_percent, vec![0.0]);
    }

    #[test]
    fn reads_this_machine() {
        let s = ProcStat::read().expect("/proc/stat");
        assert!(!s.cpus.is_empty() && s.ctxt > 0);
    }
}
