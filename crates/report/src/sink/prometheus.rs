//! Prometheus metrics of a run (`tickscope monitor`): a sink that updates metric objects on
//! the collector thread, and an [`Exposition`] that another thread (the HTTP server, the
//! textfile writer) encodes at any time. Nothing is kept per window, so memory does not grow
//! with the length of the run.
//!
//! Names follow Prometheus's naming practice (single-word prefix `tickscope_`, base unit
//! seconds, `_total` for counters, `_info` for metadata; "Metric and label naming",
//! <https://prometheus.io/docs/practices/naming/>). Latency and |dt − period| are classic
//! histograms with 1-2-5 buckets from 1 µs to 100 ms ([`BUCKETS_SECONDS`]): classic
//! histograms aggregate across machines with `histogram_quantile()` ("Histograms and
//! summaries", <https://prometheus.io/docs/practices/histograms/>). No native histograms:
//! the exposition is the Prometheus text format 0.0.4, which cannot carry them.
//!
//! Encoding is done by the `prometheus` crate (tikv/rust-prometheus) — never by hand.
//!
//! Where the values come from: everything comes from each finished window, nothing from
//! single wake-ups, so the measuring loop does the same work with or without `monitor`.
//! The latency and period-deviation histograms are accumulated from the window histograms
//! the loop already keeps ([`SinkNeeds::window_histograms`], [`window_buckets`]: bucket
//! counts at HdrHistogram's resolution, `_count` exact, the latency's `_sum` exact); wake-up
//! and overrun counts, window maxima and the staleness timestamp from the window's
//! statistics. Early wake-ups (latency < 0) land in the lowest bucket, `le` 1 µs, so
//! `_count` equals the wake-ups, and are counted in `tickscope_early_wakeups_total`.

use super::{RunContext, RunSink, SinkNeeds};
use crate::target::Target;
pub use labels::{BUCKETS_SECONDS, TARGET_LABELS, THREAD_LABELS};
use prometheus::TextEncoder;
use prometheus::{
    Counter, CounterVec, Encoder, Gauge, GaugeVec, IntCounter, IntCounterVec, Opts, Registry,
};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tickscope_engine::run::{Applied, RunConfig, SecondWindows};
use tickscope_engine::time::Nanos;
use tickscope_system::system::SystemInfo;
use window_buckets::{Values, WindowBuckets};

/// The content type of [`Exposition::encode`]'s output (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The metrics, shared between the sink (which updates them) and whoever encodes them.
#[derive(Clone)]
pub struct Exposition {
    registry: Arc<Registry>,
    output_errors: IntCounterVec,
}

impl Exposition {
    /// Makes `tickscope_output_errors_total{output="<output>"}` appear, at 0, so that
    /// `rate()` sees its first increase; for an output the process rewrites while it runs
    /// (`textfile`).
    pub fn watch_output(&self, output: &str) {
        self.output_errors.with_label_values(&[output]);
    }

    /// Counts one failed write of `output` in `tickscope_output_errors_total`.
    pub fn output_failed(&self, output: &str) {
        self.output_errors.with_label_values(&[output]).inc();
    }

    /// Every metric in the OpenMetrics text format ([`openmetrics::CONTENT_TYPE`]), for a
    /// scraper that asks for it.
    pub fn encode_openmetrics(&self) -> String {
        openmetrics::encode(&self.registry)
    }

    /// Every metric in the Prometheus text format 0.0.4 ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("encoding into memory does not fail");
        out
    }
}

/// The metric objects.
struct Metrics {
    latency: WindowBuckets,
    deviation: WindowBuckets,
    wakeups: IntCounterVec,
    overruns: IntCounterVec,
    early: IntCounterVec,
    cpu_seconds: CounterVec,
    window_max: GaugeVec,
    max: GaugeVec,
    last_window: Gauge,
}

/// Per measuring thread: its label values and what is needed between windows.
struct ThreadState {
    labels: Vec<String>,
    tid: i32,
    max_ns: Option<Nanos>,
    cpu_ns_seen: Option<u64>,
    /// Its series, looked up once (a look-up hashes every label value).
    series: Option<Series>,
}

/// One thread's series of the per-thread metrics (the histograms are kept by index in
/// [`WindowBuckets`]).
struct Series {
    wakeups: IntCounter,
    overruns: IntCounter,
    early: IntCounter,
    cpu_seconds: Counter,
    /// Made at the first window with a maximum: absent from the exposition until then.
    window_max: Option<Gauge>,
    max: Option<Gauge>,
}

impl Series {
    /// The series of the thread labelled `l`; the counters appear at 0.
    fn of(m: &Metrics, l: &[String]) -> Series {
        let l: Vec<&str> = l.iter().map(String::as_str).collect();
        Series {
            wakeups: m.wakeups.with_label_values(&l),
            overruns: m.overruns.with_label_values(&l),
            early: m.early.with_label_values(&l),
            cpu_seconds: m.cpu_seconds.with_label_values(&l),
            window_max: None,
            max: None,
        }
    }
}

/// Updates the metrics from a run's events (see the module docs).
pub struct PrometheusSink {
    metrics: Metrics,
    why: why::Why,
    threads: Vec<ThreadState>,
    window: Nanos,
    /// The program whose threads are measured (`monitor --attach`): every thread is
    /// labelled with [`TARGET_LABELS`], its method that of its own wait.
    target: Option<Rc<RefCell<Target>>>,
}

fn must<T>(r: prometheus::Result<T>) -> T {
    r.expect("constant metric definitions are valid and registered once")
}

impl PrometheusSink {
    /// The sink and its exposition, for a run of `config` on `system`. Registers
    /// `tickscope_build_info` (version) and `tickscope_config_info` (method, requested
    /// policy, interval, clock, overrun policy, threads, kernel, preemption model) at once.
    pub fn new(system: &SystemInfo, config: &RunConfig) -> (PrometheusSink, Exposition) {
        Self::with_labels(system, config, None)
    }

    /// As [`PrometheusSink::new`], for `monitor --attach`: the measured threads are those of
    /// `target` (the document's section, filled in as threads are chosen and join), and
    /// every per-thread metric also carries their `tid` and `comm` ([`TARGET_LABELS`]), its
    /// `method` that of the thread's own wait; threads that join the run get their series
    /// when they join.
    pub fn for_target(
        system: &SystemInfo,
        config: &RunConfig,
        target: Rc<RefCell<Target>>,
    ) -> (PrometheusSink, Exposition) {
        Self::with_labels(system, config, Some(target))
    }

    fn with_labels(
        system: &SystemInfo,
        config: &RunConfig,
        target: Option<Rc<RefCell<Target>>>,
    ) -> (PrometheusSink, Exposition) {
        let thread_labels: &[&str] = match target.is_some() {
            true => &TARGET_LABELS,
            false => &THREAD_LABELS,
        };
        let Base {
            registry,
            output_errors,
            last_window,
        } = Base::new(system, config);
        let histogram = |name: &str, help: &str, values| {
            let h = must(WindowBuckets::new(name, help, values, thread_labels));
            must(registry.register(Box::new(h.clone())));
            h
        };
        let int_counter = |name: &str, help: &str| {
            let c = must(IntCounterVec::new(Opts::new(name, help), thread_labels));
            must(registry.register(Box::new(c.clone())));
            c
        };
        let gauge = |name: &str, help: &str| {
            let g = must(GaugeVec::new(Opts::new(name, help), thread_labels));
            must(registry.register(Box::new(g.clone())));
            g
        };
        let cpu_seconds = must(CounterVec::new(
            Opts::new(
                "tickscope_thread_cpu_seconds_total",
                "CPU time used by the measuring thread, seconds.",
            ),
            thread_labels,
        ));
        must(registry.register(Box::new(cpu_seconds.clone())));
        let metrics = Metrics {
            latency: histogram(
                "tickscope_wakeup_latency_seconds",
                "Wake-up latency (woke - expiry), seconds.",
                Values::Signed,
            ),
            deviation: histogram(
                "tickscope_period_deviation_seconds",
                "Period deviation |dt - period| between consecutive wake-ups, seconds.",
                Values::Magnitude,
            ),
            wakeups: int_counter("tickscope_wakeups_total", "Wake-ups measured."),
            overruns: int_counter(
                "tickscope_overruns_total",
                "Overruns: expiries that passed before the thread woke for the previous one.",
            ),
            early: int_counter(
                "tickscope_early_wakeups_total",
                "Wake-ups before their expiry (negative latency).",
            ),
            cpu_seconds,
            window_max: gauge(
                "tickscope_window_latency_max_seconds",
                "Largest wake-up latency of the last finished window, seconds.",
            ),
            max: gauge(
                "tickscope_latency_max_seconds",
                "Largest wake-up latency since the start, seconds.",
            ),
            last_window,
        };
        let why = why::Why::register(&registry, thread_labels);
        let sink = PrometheusSink {
            metrics,
            why,
            threads: Vec::new(),
            window: config.window_ns,
            target,
        };
        (
            sink,
            Exposition {
                registry: Arc::new(registry),
                output_errors,
            },
        )
    }

    /// Thread `t`'s state: its label values (with `tid` and `comm` when attached) and its
    /// CPU time so far.
    fn thread_state(
        &self,
        applied: &Applied,
        t: &tickscope_engine::run::AppliedThread,
    ) -> ThreadState {
        let mut labels = vec![
            t.cpu.map_or_else(|| "unpinned".into(), |c| c.to_string()),
            t.thread.to_string(),
            applied.method.name().to_string(),
            applied.policy.name().to_string(),
        ];
        if let Some(target) = &self.target {
            let target = target.borrow();
            let own = target.threads.iter().find(|x| x.tid == t.tid);
            if let Some(method) = own.and_then(|x| x.method.clone()) {
                labels[2] = method;
            }
            labels.push(t.tid.to_string());
            labels.push(own.map_or_else(|| "?".into(), |x| x.comm.clone()));
        }
        ThreadState {
            labels,
            tid: t.tid,
            max_ns: None,
            cpu_ns_seen: schedstat_ns(t.tid),
            series: None,
        }
    }

    /// Makes thread `t`'s counters exist, at 0, so that rate() sees the first increase.
    fn series_at_zero(&mut self, t: usize) {
        let Some(state) = self.threads.get_mut(t) else {
            return;
        };
        state.series = Some(Series::of(&self.metrics, &state.labels));
    }
}

/// What every exposition has, whatever it measures: the registry with
/// `tickscope_build_info`, `tickscope_config_info`, `tickscope_output_errors_total` and
/// `tickscope_last_window_timestamp_seconds`.
struct Base {
    registry: Registry,
    output_errors: IntCounterVec,
    last_window: Gauge,
}

impl Base {
    /// The registry for a run of `config` on `system`, with the metrics above registered.
    fn new(system: &SystemInfo, config: &RunConfig) -> Base {
        let registry = Registry::new();
        let last_window = must(Gauge::new(
            "tickscope_last_window_timestamp_seconds",
            "Unix time at which the last window was reported (staleness: the textfile cannot \
             carry timestamps).",
        ));
        must(registry.register(Box::new(last_window.clone())));
        let build = must(GaugeVec::new(
            Opts::new("tickscope_build_info", "tickscope's version; always 1."),
            &["version"],
        ));
        build
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1.0);
        must(registry.register(Box::new(build)));
        let config_labels = [
            ("method", config.method.name().to_string()),
            ("policy", policy_request(config)),
            ("interval_seconds", seconds(config.period_ns).to_string()),
            ("clock", config.clock.name().to_string()),
            (
                "overrun",
                format!("{:?}", config.overrun).to_ascii_lowercase(),
            ),
            ("threads", config.cpus.len().to_string()),
            ("kernel", system.kernel_release.clone()),
            (
                "preemption",
                system.preemption_model.clone().unwrap_or_default(),
            ),
        ];
        let names: Vec<&str> = config_labels.iter().map(|(n, _)| *n).collect();
        let values: Vec<&str> = config_labels.iter().map(|(_, v)| v.as_str()).collect();
        let info = must(GaugeVec::new(
            Opts::new(
                "tickscope_config_info",
                "The settings of the measurement (policy as requested; the applied policy is \
                 each thread's policy label); always 1.",
            ),
            &names,
        ));
        info.with_label_values(&values).set(1.0);
        must(registry.register(Box::new(info)));
        let output_errors = must(IntCounterVec::new(
            Opts::new(
                "tickscope_output_errors_total",
                "Failed writes of an output rewritten while the monitor runs (output: \
                 textfile); each is retried at the next interval.",
            ),
            &["output"],
        ));
        must(registry.register(Box::new(output_errors.clone())));
        Base {
            registry,
            output_errors,
            last_window,
        }
    }
}

/// The policy as requested, for `tickscope_config_info`.
fn policy_request(config: &RunConfig) -> String {
    match config.policy {
        tickscope_engine::run::PolicyRequest::Auto => "auto".into(),
        tickscope_engine::run::PolicyRequest::Exact(p) => p.name().into(),
    }
}

/// ns → seconds.
fn seconds(ns: Nanos) -> f64 {
    ns as f64 / 1e9
}

/// CPU time a thread has run, ns: the first field of `/proc/TID/schedstat` (proc(5),
/// "/proc/pid/schedstat"; a thread's id opens its own directory, as for this process's
/// measuring threads so for a program `monitor --attach` measures). `None` when absent.
fn schedstat_ns(tid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

impl RunSink for PrometheusSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            window_histograms: true,
            ..SinkNeeds::default()
        }
    }

    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        self.window = ctx.config.window_ns;
        self.threads = applied
            .threads
            .iter()
            .map(|t| self.thread_state(applied, t))
            .collect();
        // Every series exists from the start, at 0, so that rate() sees the first increase.
        for t in 0..self.threads.len() {
            self.series_at_zero(t);
        }
        let labels: Vec<Vec<String>> = self.threads.iter().map(|t| t.labels.clone()).collect();
        self.metrics.latency.threads(&labels);
        self.metrics.deviation.threads(&labels);
    }

    fn thread_joined(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        let Some(t) = applied.threads.last() else {
            return;
        };
        if t.thread != self.threads.len() {
            return;
        }
        let state = self.thread_state(applied, t);
        self.metrics.latency.push_thread(&state.labels);
        self.metrics.deviation.push_thread(&state.labels);
        self.threads.push(state);
        self.series_at_zero(t.thread);
    }

    fn window(&mut self, _ctx: &RunContext<'_>, second: &SecondWindows) {
        for (t, w) in &second.threads {
            let Some(state) = self.threads.get_mut(*t) else {
                continue;
            };
            let m = &self.metrics;
            let s = state
                .series
                .get_or_insert_with(|| Series::of(m, &state.labels));
            s.wakeups.inc_by(w.samples);
            if let Some(buckets) = &w.latency_buckets {
                let exact_sum = w.latency_mean.map(|mean| mean * w.samples as f64);
                m.latency.add_counts(*t, buckets, exact_sum);
                let early: u64 = buckets.negative().iter().map(|&c| u64::from(c)).sum();
                if early > 0 {
                    s.early.inc_by(early);
                }
            }
            if let Some(buckets) = &w.deviation_buckets {
                m.deviation.add_counts(*t, buckets, None);
            }
            s.overruns.inc_by(w.overruns);
            if let Some(max) = w.latency_max {
                let gauge = |g: &mut Option<Gauge>, vec: &GaugeVec| {
                    g.get_or_insert_with(|| {
                        let l: Vec<&str> = state.labels.iter().map(String::as_str).collect();
                        vec.with_label_values(&l)
                    })
                    .clone()
                };
                gauge(&mut s.window_max, &m.window_max).set(seconds(max));
                let all = state.max_ns.map_or(max, |m| m.max(max));
                state.max_ns = Some(all);
                gauge(&mut s.max, &m.max).set(seconds(all));
            }
            let cpu = match (schedstat_ns(state.tid), state.cpu_ns_seen) {
                (Some(now), Some(seen)) => {
                    state.cpu_ns_seen = Some(now);
                    now.saturating_sub(seen) as f64 / 1e9
                }
                // No schedstat: the window's share of one core over the window's length.
                _ => w.cpu_percent.unwrap_or(0.0) / 100.0 * seconds(self.window) * w.span as f64,
            };
            s.cpu_seconds.inc_by(cpu.max(0.0));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.metrics.last_window.set(now);
        self.update_why();
    }

    fn run_finished(
        &mut self,
        _ctx: &RunContext<'_>,
        _doc: &crate::document::RunDocument,
    ) -> Result<(), super::SinkError> {
        // The explain sink (before this one) has attributed every late wake-up by now.
        self.update_why();
        Ok(())
    }
}

impl PrometheusSink {
    fn update_why(&mut self) {
        let threads = &self.threads;
        self.why
            .update(|t| threads.get(t).map(|s| s.labels.to_vec()));
    }
}

pub mod labels;
pub mod openmetrics;
pub mod tasks;
pub mod why;
pub mod window_buckets;

#[cfg(test)]
mod tests;
