//! Classic Prometheus histograms accumulated from the engine's window histograms, so that
//! `monitor` needs no wake-up streamed out of the measuring loop.
//!
//! The measuring loop already counts every wake-up into an HdrHistogram with 2 significant
//! figures ([`tickscope_engine::window_histogram`]); once a window (1 s) the collector hands
//! its buckets over ([`WindowStats::latency_buckets`]). This collector adds each of those
//! buckets to the classic bucket (`le`, [`BUCKETS_SECONDS`]) its lowest value falls in
//! and, at a scrape, encodes the cumulative counts as the `prometheus` crate's histogram
//! family would (its `Collector` trait, <https://docs.rs/prometheus/0.14.0/prometheus/core/trait.Collector.html>)
//! — per thread one series, a few dozen integers, whatever the rate of wake-ups.
//!
//! Resolution: an HdrHistogram bucket is at most 1/128 of its value wide (Gil Tene,
//! HdrHistogram, <http://hdrhistogram.org>), so a wake-up up to 1/128 above an `le` edge
//! (e.g. 1 000 … 1 003 ns for `le="1e-06"`) is counted at or below that edge: the bucket
//! counts are those of the values' HdrHistogram lowest equivalents. `_count` is exact.
//! `_sum` is exact where the caller gives the window's exact sum (latency: from the loop's
//! running sum); otherwise each bucket's values are taken at its middle (HdrHistogram's
//! `medianEquivalentValue`), within 1/256 of each value.
//!
//! [`WindowStats::latency_buckets`]: tickscope_engine::result::WindowStats::latency_buckets

use super::labels::BUCKETS_SECONDS;
use prometheus::core::{Collector, Desc};
use prometheus::proto::{Bucket, Histogram, LabelPair, Metric, MetricFamily, MetricType};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tickscope_engine::histogram::HistogramBuckets;
use tickscope_engine::window_counts::WindowCounts;
use tickscope_engine::window_histogram::{counts_index, highest_equivalent, lowest_equivalent};

/// How a window histogram's values go into the classic buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Signed values as they are; values below zero (early wake-ups) land in the lowest
    /// bucket (wake-up latency).
    Signed,
    /// The magnitudes |x| (the period deviation |dt − period|).
    Magnitude,
}

/// One labelled series: its labels (sorted by name, as the `prometheus` crate sorts them),
/// its counts per classic bucket (the last one is `+Inf` alone) and its sum, seconds.
struct Series {
    labels: Vec<LabelPair>,
    counts: [u64; BUCKETS_SECONDS.len() + 1],
    sum: f64,
}

/// A histogram family fed from window histograms (see the module docs). Clones share the
/// series: register one with the registry, update through another.
#[derive(Clone)]
pub struct WindowBuckets {
    desc: Desc,
    names: Vec<String>,
    values: Values,
    edges_ns: [u64; BUCKETS_SECONDS.len()],
    /// The highest value of the HdrHistogram bucket holding each edge, ns.
    edges_high_ns: [u64; BUCKETS_SECONDS.len()],
    /// The counts index of the HdrHistogram bucket holding each edge.
    edges_index: [usize; BUCKETS_SECONDS.len()],
    series: Arc<Mutex<Vec<Series>>>,
}

impl WindowBuckets {
    /// An empty family `name` (help text `help`), with `labels` as label names
    /// ([`super::THREAD_LABELS`], or [`super::labels::TARGET_LABELS`] when attached).
    ///
    /// # Errors
    /// A name or help text the `prometheus` crate refuses (constant in tickscope).
    pub fn new(
        name: &str,
        help: &str,
        values: Values,
        labels: &[&str],
    ) -> prometheus::Result<Self> {
        let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        let desc = Desc::new(name.into(), help.into(), names.clone(), HashMap::new())?;
        let edges_ns = BUCKETS_SECONDS.map(|s| (s * 1e9).round() as u64);
        Ok(WindowBuckets {
            desc,
            names,
            values,
            edges_ns,
            edges_high_ns: edges_ns.map(highest_equivalent),
            edges_index: edges_ns.map(counts_index),
            series: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// One series per measuring thread, at 0, with these label values (in the order of
    /// the label names given to [`WindowBuckets::new`]), replacing any before.
    pub fn threads(&self, labels: &[Vec<String>]) {
        let series = labels.iter().map(|values| self.series(values)).collect();
        *self.lock() = series;
    }

    /// One more series, at 0, for a thread that joined the run (the next index).
    pub fn push_thread(&self, labels: &[String]) {
        let series = self.series(labels);
        self.lock().push(series);
    }

    fn series(&self, values: &[String]) -> Series {
        let mut pairs: Vec<LabelPair> = self
            .names
            .iter()
            .zip(values)
            .map(|(name, value)| {
                let mut p = LabelPair::default();
                p.set_name(name.clone());
                p.set_value(value.clone());
                p
            })
            .collect();
        pairs.sort_by(|a, b| a.name().cmp(b.name()));
        Series {
            labels: pairs,
            counts: [0; BUCKETS_SECONDS.len() + 1],
            sum: 0.0,
        }
    }

    /// Adds one window of thread `thread` (an index into [`WindowBuckets::threads`]'s list;
    /// another is ignored): its HdrHistogram counters ([`WindowCounts`]) and, if known, the
    /// exact sum of its values, ns.
    ///
    /// A bucket's lowest value is at or below an edge exactly when its counts index is at
    /// or below the index of the edge's own bucket, so each classic bucket is the sum of a
    /// range of the counters (summed a few at a time, no per-bucket work); without an exact
    /// sum, the bucket middles are summed per block of equal-width buckets
    /// ([`WindowCounts::middle_sums`]). The same counts and sum as [`WindowBuckets::add`]
    /// with the window's [`WindowCounts::buckets`] (a test checks it).
    pub fn add_counts(&self, thread: usize, window: &WindowCounts, exact_sum_ns: Option<f64>) {
        let mut all = self.lock();
        let Some(series) = all.get_mut(thread) else {
            return;
        };
        let last = &self.edges_index;
        WindowCounts::add_ranges(window.positive(), last, &mut series.counts);
        match self.values {
            // Early wake-ups: all in the lowest bucket.
            Values::Signed => {
                WindowCounts::add_ranges(window.negative(), &[], &mut series.counts[..1])
            }
            Values::Magnitude => {
                WindowCounts::add_ranges(window.negative(), last, &mut series.counts)
            }
        }
        let sum_ns = exact_sum_ns.unwrap_or_else(|| {
            let (positive, negative) = window.middle_sums();
            match self.values {
                Values::Signed => positive as f64 - negative as f64,
                Values::Magnitude => (positive + negative) as f64,
            }
        });
        series.sum += sum_ns / 1e9;
    }

    /// Adds one window of thread `thread` (an index into [`WindowBuckets::threads`]'s list;
    /// another is ignored) given as explicit buckets (the task set's response and execution
    /// times) and, if known, the exact sum of its values, ns.
    ///
    /// One pass over the window's entries with a cursor over the classic buckets (both
    /// ascend): an entry ≥ 0 carries its bucket's highest value, so its lowest value is at or
    /// below an edge exactly when the entry is at or below the highest value of the edge's
    /// own bucket ([`WindowBuckets::new`] keeps those); an entry < 0 carries its lowest
    /// magnitude, compared with the edge itself. Bucket middles are computed only when no
    /// exact sum is given.
    pub fn add(&self, thread: usize, window: &HistogramBuckets, exact_sum_ns: Option<f64>) {
        let mut all = self.lock();
        let Some(series) = all.get_mut(thread) else {
            return;
        };
        let entries = &window.buckets[..];
        let (below, above) = entries.split_at(entries.partition_point(|e| e.0 < 0));
        let want_sum = exact_sum_ns.is_none();
        // Σ middle × count, ns, exact (a window holds < 2^32 values of < 2^43 ns each).
        let mut sum_ns: i128 = 0;
        match self.values {
            Values::Signed => {
                // Early wake-ups: all in the lowest bucket.
                for &(value, count) in below {
                    series.counts[0] += count;
                    if want_sum {
                        sum_ns -=
                            i128::from(middle_of_lowest(value.unsigned_abs())) * count as i128;
                    }
                }
            }
            Values::Magnitude => {
                // Ascending by magnitude: the entries < 0 walked backwards.
                let mut slot = 0;
                for &(value, count) in below.iter().rev() {
                    let low = value.unsigned_abs();
                    while slot < self.edges_ns.len() && low > self.edges_ns[slot] {
                        slot += 1;
                    }
                    series.counts[slot] += count;
                    if want_sum {
                        sum_ns += i128::from(middle_of_lowest(low)) * count as i128;
                    }
                }
            }
        }
        let mut slot = 0;
        for &(value, count) in above {
            let high = value as u64;
            while slot < self.edges_high_ns.len() && high > self.edges_high_ns[slot] {
                slot += 1;
            }
            series.counts[slot] += count;
            if want_sum {
                sum_ns += i128::from(middle_of_lowest(lowest_equivalent(high))) * count as i128;
            }
        }
        series.sum += exact_sum_ns.unwrap_or(sum_ns as f64) / 1e9;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Series>> {
        self.series.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The middle value of the HdrHistogram bucket whose lowest value is `low`, ns
/// (HdrHistogram's `medianEquivalentValue`).
#[inline]
fn middle_of_lowest(low: u64) -> u64 {
    low + (highest_equivalent(low) - low).div_ceil(2)
}

impl Collector for WindowBuckets {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let metrics = self
            .lock()
            .iter()
            .map(|s| {
                let mut buckets = Vec::with_capacity(BUCKETS_SECONDS.len());
                let mut cumulative = 0;
                for (le, n) in BUCKETS_SECONDS.iter().zip(&s.counts) {
                    cumulative += n;
                    let mut b = Bucket::default();
                    b.set_upper_bound(*le);
                    b.set_cumulative_count(cumulative);
                    buckets.push(b);
                }
                let mut h = Histogram::default();
                h.set_bucket(buckets);
                h.set_sample_count(s.counts.iter().sum());
                h.set_sample_sum(s.sum);
                let mut m = Metric::from_label(s.labels.clone());
                m.set_histogram(h);
                m
            })
            .collect();
        let mut family = MetricFamily::default();
        family.set_name(self.desc.fq_name.clone());
        family.set_help(self.desc.help.clone());
        family.set_field_type(MetricType::HISTOGRAM);
        family.set_metric(metrics);
        vec![family]
    }
}
