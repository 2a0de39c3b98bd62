//! Day-long runs that stay small: after a run's first stretch, the windows written to the
//! result file (`--json`) and the per-thread intervals of the interval log (`--hlog`) are
//! coarsened to one per minute, merged exactly from the run's own windows.
//!
//! A window record costs about 400 bytes of JSON and an interval about 320 bytes of log, per
//! thread and window: a 24-hour run on 64 CPUs with 1-second windows would write some 2.5 GB
//! of JSON and 1.8 GB of log. So:
//!
//! - the windows of all threads merged (the result's `thread: null` entries, the log's `all`
//!   tag — or the single thread's, in a one-thread run) keep the run's grain for the first
//!   hour; after it the result holds one entry per minute, while the log's `all` intervals
//!   keep the run's grain for the whole run (they are what `tickscope gate` resamples);
//! - each thread's windows keep the run's grain for the first hour too, shortened to
//!   4 h ÷ threads when a run has more than four threads (so that the full-grain part holds
//!   at most four thread-hours of windows), rounded up to whole minutes; then one per minute.
//!
//! A coarse window is a window of the result schema whose `span` says how many of the run's
//! windows it covers (60 of 1 s), with `index` and `start_ns` of its first. Its figures are
//! those of its windows merged exactly — counts and extremes added up, means and standard
//! deviations combined from counts, means and second moments (Chan, Golub and LeVeque,
//! "Algorithms for computing the sample variance: analysis and recommendations", *The American
//! Statistician* 37(3):242–247, 1983), and `latency_p99` read from the merged histogram at
//! the rank rule of every other window (the bucket holding rank ⌈0.99·n⌉) — so a quantile
//! of a coarse window is exact at its grain. See docs/result-schema.md and docs/run.md.

use std::collections::BTreeMap;
use std::sync::Arc;
use tickscope_engine::histogram::HistogramBuckets;
use tickscope_engine::result::WindowStats;
use tickscope_engine::time::Nanos;
use tickscope_engine::window_counts::WindowCounts;

/// How long the windows keep the run's grain, ns of run time (1 hour).
pub const FINE_FOR_NS: Nanos = 3_600_000_000_000;

/// Thread-time at the run's grain that the per-thread windows of a run get, ns (4 hours
/// shared among the threads: the first hour for up to four threads).
pub const FINE_THREAD_TIME_NS: Nanos = 4 * FINE_FOR_NS;

/// The length of a coarse window, ns (1 minute).
pub const COARSE_NS: Nanos = 60_000_000_000;

/// When a series of windows turns coarse, in the run's windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grain {
    /// Windows `0..fine` keep the run's grain; a multiple of `coarse`.
    fine: u64,
    /// Windows per coarse window (≥ 1; 1: never coarsened).
    coarse: u64,
}

impl Grain {
    /// The grain of the windows of all threads merged, or of a run's only thread: the run's
    /// own for [`FINE_FOR_NS`], then [`COARSE_NS`]. `window_ns` is the run's window (> 0).
    pub fn merged(window_ns: Nanos) -> Grain {
        Grain::new(window_ns, FINE_FOR_NS)
    }

    /// The grain of each thread's windows in a run of `threads` threads: the run's own for
    /// [`FINE_FOR_NS`] or [`FINE_THREAD_TIME_NS`] ÷ `threads`, whichever is shorter, rounded
    /// up to a whole coarse window; then [`COARSE_NS`].
    pub fn per_thread(window_ns: Nanos, threads: usize) -> Grain {
        let share = FINE_THREAD_TIME_NS / threads.max(1) as Nanos;
        Grain::new(window_ns, share.min(FINE_FOR_NS))
    }

    /// The grain of one series in a run of `threads` threads: [`Grain::merged`] for the
    /// merged windows (`thread` `None`) and for a run's only thread, else
    /// [`Grain::per_thread`].
    pub fn of(thread: Option<usize>, threads: usize, window_ns: Nanos) -> Grain {
        match (thread, threads) {
            (Some(_), 2..) => Grain::per_thread(window_ns, threads),
            _ => Grain::merged(window_ns),
        }
    }

    fn new(window_ns: Nanos, fine_ns: Nanos) -> Grain {
        let window = window_ns.max(1);
        let coarse = (COARSE_NS / window).max(1) as u64;
        let fine = (fine_ns + window - 1) / window;
        Grain {
            fine: (fine as u64).div_ceil(coarse) * coarse,
            coarse,
        }
    }

    /// Windows at the run's grain before the first coarse one.
    pub fn fine_windows(&self) -> u64 {
        self.fine
    }

    /// Windows per coarse window.
    pub fn coarse_windows(&self) -> u64 {
        self.coarse
    }

    /// The coarse window that window `index` belongs to (the index of its first window), or
    /// `None` while the series keeps the run's grain.
    pub fn group(&self, index: u64) -> Option<u64> {
        (self.coarse > 1 && index >= self.fine).then(|| index - index % self.coarse)
    }
}

/// Mean and sum of squared deviations of a set of values, combined set by set (Chan et al.).
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Adds a set of `n` values with this mean and population standard deviation.
    fn add(&mut self, n: u64, mean: f64, stddev: f64) {
        if n == 0 {
            return;
        }
        let (na, nb) = (self.n as f64, n as f64);
        let total = na + nb;
        let delta = mean - self.mean;
        self.m2 += stddev * stddev * nb + delta * delta * na * nb / total;
        self.mean += delta * nb / total;
        self.n += n;
    }

    fn stddev(&self) -> Option<f64> {
        (self.n > 0).then(|| (self.m2 / self.n as f64).max(0.0).sqrt())
    }
}

/// Adds `counts` into `into` (by bucket value, [`HistogramBuckets`]'s convention).
fn add_buckets(into: &mut BTreeMap<Nanos, u64>, counts: &WindowCounts) {
    counts.for_each_bucket(|v, c| *into.entry(v).or_default() += c);
}

/// The value of the bucket holding rank ⌈q·n⌉ (at least 1) of buckets ascending by value.
fn value_at_quantile(buckets: &BTreeMap<Nanos, u64>, q: f64) -> Option<Nanos> {
    let n: u64 = buckets.values().sum();
    if n == 0 {
        return None;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    buckets.iter().find_map(|(&v, &c)| {
        seen += c;
        (seen >= rank).then_some(v)
    })
}

/// The windows of one series (a thread, or all threads merged) being merged into one coarse
/// window.
#[derive(Debug, Default)]
pub struct CoarseWindow {
    /// The first window of the coarse one, and one past the last window covered.
    range: Option<(u64, u64)>,
    samples: u64,
    overruns: u64,
    latency_min: Option<Nanos>,
    latency_max: Option<Nanos>,
    latency_sum: f64,
    latency: BTreeMap<Nanos, u64>,
    period: Moments,
    /// Σ n·rms² of the windows' deviations from the nominal period.
    period_rms_sum: f64,
    period_min: Option<Nanos>,
    period_max: Option<Nanos>,
    deviation: BTreeMap<Nanos, u64>,
    /// Σ cpu·span and Σ span over the windows that have a CPU figure.
    cpu: Option<(f64, u64)>,
    policy: Option<String>,
}

impl CoarseWindow {
    /// Adds window `w`, which belongs to the coarse window starting at window `group`. When
    /// `w` starts another coarse window, the one merged so far is returned, finished
    /// (`window_ns`: the run's window, for its `start_ns`).
    ///
    /// Exact when `w` carries its histograms (`latency_buckets`, `deviation_buckets`, which
    /// [`tickscope_engine::run::RunConfig::window_histograms`] attaches); without them the
    /// coarse window's `latency_p99` is the largest of its windows' and its period figures
    /// count one interval per wake-up.
    pub fn add(&mut self, group: u64, w: &WindowStats, window_ns: Nanos) -> Option<WindowStats> {
        let done = match self.range {
            Some((start, _)) if start != group => self.take(window_ns),
            _ => None,
        };
        let end = w.index + w.span.max(1);
        self.range = Some(match self.range {
            Some((start, e)) => (start, e.max(end)),
            None => (group, end),
        });
        self.samples += w.samples;
        self.overruns += w.overruns;
        self.latency_min = min_of(self.latency_min, w.latency_min);
        self.latency_max = max_of(self.latency_max, w.latency_max);
        self.latency_sum += w.latency_mean.unwrap_or(0.0) * w.samples as f64;
        match &w.latency_buckets {
            Some(b) => add_buckets(&mut self.latency, b),
            // No histogram: the window's p99 stands for its share of the tail.
            None => {
                if let Some(p99) = w.latency_p99 {
                    *self.latency.entry(p99).or_default() += w.samples;
                }
            }
        }
        let intervals = match &w.deviation_buckets {
            Some(b) => {
                add_buckets(&mut self.deviation, b);
                b.len()
            }
            None => w.samples,
        };
        if let (Some(mean), Some(sd)) = (w.period_mean, w.period_stddev) {
            self.period.add(intervals, mean, sd);
            let rms = w.period_rms_jitter.unwrap_or(0.0);
            self.period_rms_sum += rms * rms * intervals as f64;
        }
        self.period_min = min_of(self.period_min, w.period_min);
        self.period_max = max_of(self.period_max, w.period_max);
        if let Some(c) = w.cpu_percent {
            let (sum, span) = self.cpu.unwrap_or((0.0, 0));
            self.cpu = Some((sum + c * w.span.max(1) as f64, span + w.span.max(1)));
        }
        if w.policy.is_some() {
            self.policy.clone_from(&w.policy);
        }
        done
    }

    /// The coarse window merged so far, finished, and a fresh start; `None` when nothing
    /// with a wake-up was added.
    pub fn take(&mut self, window_ns: Nanos) -> Option<WindowStats> {
        let c = std::mem::take(self);
        let (start, end) = c.range?;
        if c.samples == 0 {
            return None;
        }
        let p99 = value_at_quantile(&c.latency, 0.99)
            .zip(c.latency_max)
            .map(|(v, max)| v.min(max));
        let n = c.period.n;
        Some(WindowStats {
            index: start,
            span: end - start,
            start_ns: start as Nanos * window_ns,
            samples: c.samples,
            overruns: c.overruns,
            latency_min: c.latency_min,
            latency_mean: Some(c.latency_sum / c.samples as f64),
            latency_p99: p99,
            latency_max: c.latency_max,
            period_mean: (n > 0).then_some(c.period.mean),
            period_stddev: c.period.stddev(),
            period_rms_jitter: (n > 0).then(|| (c.period_rms_sum / n as f64).sqrt()),
            period_min: c.period_min,
            period_max: c.period_max,
            cpu_percent: c.cpu.map(|(sum, span)| sum / span.max(1) as f64),
            policy: c.policy,
            latency_buckets: WindowCounts::from_buckets(&buckets_of(c.latency)).map(Arc::new),
            deviation_buckets: WindowCounts::from_buckets(&buckets_of(c.deviation)).map(Arc::new),
        })
    }
}

/// The coarse windows of every series of one run being merged, for a sink that writes
/// windows as they finish (`--json`, `--csv`): each window passes through [`Coarsener::put`],
/// which says what to write — the window itself while its series keeps the run's grain, a
/// finished coarse window after that, or nothing while one is being merged — and
/// [`Coarsener::flush`] gives the coarse windows still open when the run ends. It holds one
/// [`CoarseWindow`] per series: its memory does not grow with the run's length.
#[derive(Debug)]
pub struct Coarsener {
    /// The coarse window being merged, per series (a thread, `None` for all threads merged).
    open: BTreeMap<Option<usize>, CoarseWindow>,
    /// The run's window, ns (for the coarse windows' `start_ns`).
    window_ns: Nanos,
}

impl Default for Coarsener {
    fn default() -> Self {
        Coarsener {
            open: BTreeMap::new(),
            window_ns: 1,
        }
    }
}

impl Coarsener {
    /// Takes window `w` of series `thread` (`None`: all threads merged) in a run of
    /// `threads` threads with windows of `window_ns` ns, and returns the window to write:
    /// `w` as it is while the series keeps the run's grain ([`Grain::of`]), else the coarse
    /// window `w` finished, if it finished one.
    pub fn put(
        &mut self,
        thread: Option<usize>,
        (threads, window_ns): (usize, Nanos),
        w: &WindowStats,
    ) -> Option<WindowStats> {
        match Grain::of(thread, threads, window_ns).group(w.index) {
            None => Some(w.clone()),
            Some(group) => {
                self.window_ns = window_ns;
                self.open
                    .entry(thread)
                    .or_default()
                    .add(group, w, window_ns)
            }
        }
    }

    /// The coarse windows still being merged, finished, by series (the merged one first,
    /// then the threads in order); leaves the coarsener empty, ready for another run.
    pub fn flush(&mut self) -> Vec<(Option<usize>, WindowStats)> {
        let window_ns = self.window_ns;
        std::mem::take(&mut self.open)
            .into_iter()
            .filter_map(|(thread, mut acc)| acc.take(window_ns).map(|w| (thread, w)))
            .collect()
    }
}

fn buckets_of(map: BTreeMap<Nanos, u64>) -> HistogramBuckets {
    HistogramBuckets {
        significant_figures: tickscope_engine::histogram::SIGNIFICANT_FIGURES,
        buckets: map.into_iter().collect(),
    }
}

fn min_of(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn max_of(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests;
