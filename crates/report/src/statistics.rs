//! The statistics tickscope reports, defined once: for each, its key (the name programs see
//! in CSV columns and `tickscope compare --json` rows, unit-suffixed), its label for people,
//! and how it is read from a thread's statistics (or all threads merged) and from a
//! per-second window. Outputs list which statistics they show, in their order —
//! `export::csv::COLUMNS`, the figure rows of `tickscope compare`, the terminal summary — and
//! take keys, labels and values from here. A new statistic is one row in `TABLE` (and one
//! variant of [`Statistic`]), then its key in the lists of the outputs that show it.
//!
//! Definitions: latency is woke − expiry and dt is woke − previous woke, both ns
//! (`docs/result-schema.md`); SD is the population standard deviation about the mean, RMS
//! jitter the root mean square of dt − period (Wilson, "The hazards of real-time Linux
//! scheduling", 2013, prints it as "SD"); percentiles follow HdrHistogram's convention
//! (`tickscope_engine::histogram`).

use serde::{Serialize, Serializer};
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::time::Nanos;

/// One statistic of a run's thread, of all its threads merged, or of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Statistic {
    /// Wake-ups measured.
    Samples,
    /// Expiries that passed before the thread woke for the previous one.
    Overruns,
    /// Smallest latency.
    LatencyMin,
    /// Mean latency.
    LatencyMean,
    /// Standard deviation of the latency.
    LatencySd,
    /// Median latency.
    LatencyP50,
    /// 90th percentile of the latency.
    LatencyP90,
    /// 99th percentile of the latency.
    LatencyP99,
    /// 99.9th percentile of the latency.
    LatencyP99_9,
    /// 99.99th percentile of the latency.
    LatencyP99_99,
    /// Largest latency.
    LatencyMax,
    /// Wake-ups before their expiry (latency < 0).
    Early,
    /// Mean period dt.
    DtMean,
    /// Standard deviation of dt about its mean.
    DtSd,
    /// Root mean square of dt − period.
    DtRmsJitter,
    /// Smallest dt.
    DtMin,
    /// Largest dt.
    DtMax,
    /// 99th percentile of |dt − period|.
    DtAbsDeviationP99,
    /// CPU used by the measuring thread(s), % of one core.
    CpuPercent,
}

/// A statistic's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// A time, integer ns.
    Nanos(Nanos),
    /// A time with decimals, ns (means, deviations).
    NanosF(f64),
    /// A count.
    Count(u64),
    /// A percentage (0–100 per core).
    Percent(f64),
    /// Not measured (no wake-up, no period), or not kept for a window.
    Missing,
}

impl Serialize for Figure {
    /// The number itself (an integer for times in ns and counts), nothing for
    /// [`Figure::Missing`] (`null` in JSON, an empty CSV field).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Figure::Nanos(v) => s.serialize_some(&v),
            Figure::NanosF(v) | Figure::Percent(v) => s.serialize_some(&v),
            Figure::Count(v) => s.serialize_u64(v),
            Figure::Missing => s.serialize_none(),
        }
    }
}

/// How one statistic is named and read.
struct Row {
    stat: Statistic,
    key: &'static str,
    label: &'static str,
    thread: fn(&ThreadStats) -> Figure,
    window: fn(&WindowStats) -> Figure,
}

fn lat(t: &ThreadStats, f: fn(&tickscope_engine::result::LatencyStats) -> Figure) -> Figure {
    t.latency_ns.as_ref().map_or(Figure::Missing, f)
}

fn dt(t: &ThreadStats, f: fn(&tickscope_engine::result::PeriodStats) -> Figure) -> Figure {
    t.period_ns.as_ref().map_or(Figure::Missing, f)
}

fn ns(v: Option<Nanos>) -> Figure {
    v.map_or(Figure::Missing, Figure::Nanos)
}

fn ns_f(v: Option<f64>) -> Figure {
    v.map_or(Figure::Missing, Figure::NanosF)
}

fn missing(_: &WindowStats) -> Figure {
    Figure::Missing
}

/// Every statistic: key, label, how to read it from a thread's totals and from a window
/// (windows keep only min, mean, p99 and max of the latency).
const TABLE: [Row; 19] = [
    Row {
        stat: Statistic::Samples,
        key: "samples",
        label: "samples",
        thread: |t| Figure::Count(t.samples),
        window: |w| Figure::Count(w.samples),
    },
    Row {
        stat: Statistic::Overruns,
        key: "overruns",
        label: "overruns",
        thread: |t| Figure::Count(t.overruns),
        window: |w| Figure::Count(w.overruns),
    },
    Row {
        stat: Statistic::LatencyMin,
        key: "latency_min_ns",
        label: "latency min",
        thread: |t| lat(t, |l| Figure::Nanos(l.min)),
        window: |w| ns(w.latency_min),
    },
    Row {
        stat: Statistic::LatencyMean,
        key: "latency_mean_ns",
        label: "latency mean",
        thread: |t| lat(t, |l| Figure::NanosF(l.mean)),
        window: |w| ns_f(w.latency_mean),
    },
    Row {
        stat: Statistic::LatencySd,
        key: "latency_sd_ns",
        label: "latency SD",
        thread: |t| lat(t, |l| Figure::NanosF(l.stddev)),
        window: missing,
    },
    Row {
        stat: Statistic::LatencyP50,
        key: "latency_p50_ns",
        label: "latency p50",
        thread: |t| lat(t, |l| Figure::Nanos(l.p50)),
        window: missing,
    },
    Row {
        stat: Statistic::LatencyP90,
        key: "latency_p90_ns",
        label: "latency p90",
        thread: |t| lat(t, |l| Figure::Nanos(l.p90)),
        window: missing,
    },
    Row {
        stat: Statistic::LatencyP99,
        key: "latency_p99_ns",
        label: "latency p99",
        thread: |t| lat(t, |l| Figure::Nanos(l.p99)),
        window: |w| ns(w.latency_p99),
    },
    Row {
        stat: Statistic::LatencyP99_9,
        key: "latency_p99_9_ns",
        label: "latency p99.9",
        thread: |t| lat(t, |l| Figure::Nanos(l.p99_9)),
        window: missing,
    },
    Row {
        stat: Statistic::LatencyP99_99,
        key: "latency_p99_99_ns",
        label: "latency p99.99",
        thread: |t| lat(t, |l| Figure::Nanos(l.p99_99)),
        window: missing,
    },
    Row {
        stat: Statistic::LatencyMax,
        key: "latency_max_ns",
        label: "latency max",
        thread: |t| lat(t, |l| Figure::Nanos(l.max)),
        window: |w| ns(w.latency_max),
    },
    Row {
        stat: Statistic::Early,
        key: "early",
        label: "early wake-ups",
        thread: |t| lat(t, |l| Figure::Count(l.early)),
        window: missing,
    },
    Row {
        stat: Statistic::DtMean,
        key: "dt_mean_ns",
        label: "dt mean",
        thread: |t| dt(t, |p| Figure::NanosF(p.mean)),
        window: |w| ns_f(w.period_mean),
    },
    Row {
        stat: Statistic::DtSd,
        key: "dt_sd_ns",
        label: "dt SD",
        thread: |t| dt(t, |p| Figure::NanosF(p.stddev)),
        window: |w| ns_f(w.period_stddev),
    },
    Row {
        stat: Statistic::DtRmsJitter,
        key: "dt_rms_jitter_ns",
        label: "dt RMS jitter",
        thread: |t| dt(t, |p| Figure::NanosF(p.rms_jitter)),
        window: |w| ns_f(w.period_rms_jitter),
    },
    Row {
        stat: Statistic::DtMin,
        key: "dt_min_ns",
        label: "dt min",
        thread: |t| dt(t, |p| Figure::Nanos(p.min)),
        window: |w| ns(w.period_min),
    },
    Row {
        stat: Statistic::DtMax,
        key: "dt_max_ns",
        label: "dt max",
        thread: |t| dt(t, |p| Figure::Nanos(p.max)),
        window: |w| ns(w.period_max),
    },
    Row {
        stat: Statistic::DtAbsDeviationP99,
        key: "dt_abs_deviation_p99_ns",
        label: "|dt − period| p99",
        thread: |t| dt(t, |p| Figure::Nanos(p.abs_deviation_p99)),
        window: missing,
    },
    Row {
        stat: Statistic::CpuPercent,
        key: "cpu_percent",
        label: "CPU (% of one core)",
        thread: |t| Figure::Percent(t.cpu_percent),
        window: |w| w.cpu_percent.map_or(Figure::Missing, Figure::Percent),
    },
];

impl Statistic {
    fn row(self) -> &'static Row {
        // TABLE lists the variants in declaration order (a test checks it).
        &TABLE[self as usize]
    }

    /// Every statistic, in the order of `TABLE`.
    pub fn all() -> impl Iterator<Item = Statistic> {
        TABLE.iter().map(|r| r.stat)
    }

    /// The name programs see: a CSV column, a `tickscope compare --json` row key
    /// (`latency_p99_ns`; times end in `_ns`).
    pub fn key(self) -> &'static str {
        self.row().key
    }

    /// The label people see (`latency p99`).
    pub fn label(self) -> &'static str {
        self.row().label
    }

    /// The value for a thread, or all threads merged.
    pub fn of_thread(self, t: &ThreadStats) -> Figure {
        (self.row().thread)(t)
    }

    /// The value for a per-second window; [`Figure::Missing`] for what windows do not keep
    /// (every latency percentile but p99, the latency SD, early wake-ups).
    pub fn of_window(self, w: &WindowStats) -> Figure {
        (self.row().window)(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_statistic_once_in_declaration_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.stat as usize, i, "{}", row.key);
        }
        let mut keys: Vec<&str> = TABLE.iter().map(|r| r.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), TABLE.len());
    }

    fn empty() -> ThreadStats {
        ThreadStats {
            thread: None,
            tid: None,
            cpu: None,
            samples: 0,
            overruns: 0,
            samples_dropped: 0,
            latency_ns: None,
            period_ns: None,
            cpu_time_ns: 0,
            wall_time_ns: 0,
            cpu_percent: 0.0,
            last_latency_ns: None,
            method_report: None,
            windows: Vec::new(),
        }
    }

    #[test]
    fn a_thread_without_wake_ups_has_only_counts() {
        let t = empty();
        for s in Statistic::all() {
            let f = s.of_thread(&t);
            match s {
                Statistic::Samples | Statistic::Overruns => assert_eq!(f, Figure::Count(0)),
                Statistic::CpuPercent => assert_eq!(f, Figure::Percent(0.0)),
                _ => assert_eq!(f, Figure::Missing, "{}", s.key()),
            }
        }
    }
}
