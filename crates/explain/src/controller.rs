//! `--explain`: every wake-up later than the threshold broken into its causes, on the
//! collector thread, from the engine's raw-sample stream and a private trace instance.
//!
//! The measuring loop gains nothing: the [`Controller`] is fed the raw samples the engine
//! streams to the collector, picks the late ones, reads the instance's `trace_pipe` into a
//! bounded window of recent events per CPU ([`EventWindow`]) and, once the trace has caught
//! up with a late wake-up, attributes it ([`crate::attribute`]). Without tracing (no root,
//! no tracefs: context mode) late wake-ups are counted and the per-window context
//! ([`crate::context`]) says what moved. `--on-late` rules act on the late wake-ups (trace
//! marker, capture bundle, stop, a command: bounded by [`crate::on_late_exec`]).
//!
//! The report crate's `--explain` sink drives the controller from the run's events and puts
//! its [`ExplainSection`] into the result document; bundles are written through [`Hooks`].

use crate::backend::{Capture, CaptureCost, TRACEFS_WINDOW_KEEP_NS};
use crate::bpf::BpfCapture;
use crate::bundle::Bundle;
use crate::context::WindowContext;
use crate::model::{attribute_reading_quota, label_own_threads};
use crate::on_late::{Action, Rule};
use crate::on_late_exec::ExecActions;
use crate::run_clock::Clocks;
use crate::section::HITS_KEPT;
use crate::section::{ActionStatus, CaptureRecord, ExplainSection, ThreadCauses, TracingCost};
use crate::table::CauseTable;
use crate::tracefs::{self, InstanceSpec, TraceInstance, Unavailable};
use crate::window::EventWindow;
use crate::{Breakdown, LateSample, Setting};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tickscope_engine::quote::quoted;
use tickscope_engine::run::{Applied, RunConfig, SecondWindows};
use tickscope_engine::sample::{LateThreshold, RawSample};
use tickscope_engine::time::ClockId;

static THRESHOLD_HIT: AtomicBool = AtomicBool::new(false);

/// What `--explain` has found so far, for `monitor`'s metrics (published after every window
/// and at the end of the run; `None` without `--explain`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    /// `bpf`, `tracefs` or `context`.
    pub backend: String,
    /// Per measuring thread, by thread index.
    pub threads: Vec<PublishedThread>,
}

/// One thread's late wake-ups, as published.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishedThread {
    /// Thread index.
    pub thread: usize,
    /// Wake-ups later than the threshold, received so far.
    pub late: u64,
    /// Of those, waiting for their events (not in `causes` yet).
    pub pending: u64,
    /// The others, by cause (every late wake-up is in exactly one row once attributed).
    pub causes: CauseTable,
}

static PUBLISHED: Mutex<Option<Published>> = Mutex::new(None);

/// The newest [`Published`] state of `--explain` in this process, if it runs.
pub fn published() -> Option<Published> {
    PUBLISHED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Replaces the published state that [`published`] returns (the controller after each
/// window; a replay of recorded events, `bench/explain-replay.sh`, likewise).
pub fn publish_state(state: Published) {
    *PUBLISHED.lock().unwrap_or_else(|p| p.into_inner()) = Some(state);
}

/// True once a `stop` action ended the run (the CLI exits with status 3).
pub fn threshold_hit() -> bool {
    THRESHOLD_HIT.load(Ordering::SeqCst)
}

/// How late wake-ups are explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Trace when permitted (BPF, else tracefs), else context.
    Auto,
    /// Trace (BPF, else tracefs), or refuse.
    Trace,
    /// The BPF backend, or refuse.
    Bpf,
    /// The tracefs text backend, or refuse.
    Tracefs,
    /// `/proc` context only.
    Context,
}

/// Which wake-ups get a full breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// Later than this, ns.
    Fixed(i64),
    /// Later than the previous window's p99 of the same thread (100 µs before the first).
    P99,
}

/// `--explain` as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainOptions {
    /// Backend choice.
    pub mode: Mode,
    /// Which wake-ups are explained.
    pub threshold: Threshold,
    /// `--on-late` rules.
    pub rules: Vec<Rule>,
    /// Where capture bundles go (created if missing).
    pub capture_dir: PathBuf,
    /// At most this many captures.
    pub capture_limit: u32,
    /// No capture within this long of the previous one.
    pub cooldown: Duration,
    /// Breakdowns kept in full (the worst).
    pub keep_breakdowns: usize,
    /// Per-CPU trace buffer, KiB.
    pub buffer_kb: u32,
    /// `--explain-log FILE`: every late wake-up's breakdown, one JSON object per line (the
    /// document keeps only the worst).
    pub log: Option<PathBuf>,
    /// Whether each logged line also carries the trace events it was attributed from
    /// (`events`: the window around the wake-up, on CLOCK_MONOTONIC, as the trace gave
    /// them: without the idle task's switches out that [`crate::idle_switch`] puts back on
    /// the text path), for replaying the attribution.
    pub log_events: bool,
}

/// A late wake-up waiting for the trace to catch up.
struct Pending {
    sample: LateSample,
    since: Instant,
    rules: Vec<usize>,
}

/// What the controller asks of the program around it.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// Writes a capture bundle as `dir/name/` and returns that directory.
    ///
    /// # Errors
    /// The OS error of writing it.
    pub write_capture: fn(dir: &Path, name: &str, bundle: &Bundle) -> std::io::Result<PathBuf>,
    /// The newest window's `/proc` context, if one was read (for a capture bundle).
    pub latest_context: fn() -> Option<WindowContext>,
}

/// The `--explain` controller: owns the trace instance, the late wake-ups waiting for the
/// trace, the section being filled and the running `--on-late` commands.
pub struct Controller {
    opts: ExplainOptions,
    hooks: Hooks,
    stop: Arc<AtomicBool>,
    trace: Option<Capture>,
    note: String,
    /// Why the preferred backend (BPF) did not run.
    fallback: String,
    /// Collector CPU time spent reading the trace, ns.
    read_cpu_ns: i64,
    virtualized: bool,
    window: EventWindow,
    applied: Option<Applied>,
    setting: Option<Setting>,
    thresholds: Vec<i64>,
    pending: VecDeque<Pending>,
    section: ExplainSection,
    hits: u32,
    last_capture: Option<Instant>,
    execs: ExecActions,
    traced_since: Option<Instant>,
    run_settings: serde_json::Value,
    /// Whether the current run is traced (with `--rounds`, every other run is not).
    traced_now: bool,
    /// Per finished run: traced or not, its method, and its merged latency.
    rounds: Vec<crate::observer::RunLatency>,
    /// `--explain-log`'s writer.
    log: Option<std::io::BufWriter<std::fs::File>>,
    /// How far the sample stream is known to be complete, ns: the newest wake-up received,
    /// or the end of the latest window reported (every wake-up of a window — the late ones
    /// are all that is streamed — arrives before the window is reported).
    received: Option<i64>,
    /// The run's window length, ns (for the end of a reported window).
    window_ns: i64,
    /// Whether a thread id named in this pump's breakdowns is one of tickscope's own
    /// ([`own_thread`]), each asked once per pump.
    own_tids: Vec<(i32, bool)>,
    /// The events of the late wake-up being attributed ([`EventWindow::range_into`]): one
    /// allocation kept from one wake-up to the next.
    range_buf: Vec<crate::Event>,
    /// Per measured thread, whether a CPU quota applies to it ([`crate::cpu_quota::applies`]),
    /// read at most once per pump, when the events of one of its late wake-ups suggest a CFS
    /// throttle ([`crate::model::attribute_reading_quota`]).
    quotas: Vec<(i32, Option<bool>)>,
    /// The run's clock: its samples, when on it, are moved to the trace's CLOCK_MONOTONIC
    /// ([`crate::run_clock`]).
    clock: ClockId,
    /// What the latest samples were moved by, ns (0: they were on CLOCK_MONOTONIC).
    clock_offset: i64,
    /// For a method whose timer ends before the expiry (`hybrid`): the grid point (ns on
    /// CLOCK_MONOTONIC, modulo the period) the kernel was last given, `None` before the
    /// first; `grid` false for every other method.
    grid: bool,
    grid_phase: Option<i64>,
}

/// Events the controller's window keeps per CPU at most (2^20), whatever their age.
pub const WINDOW_CAP: usize = 1 << 20;

/// The latency p99 fallback before the first window, ns.
const P99_START: i64 = 100_000;
/// A late wake-up is attributed once the trace is this far past it, ns; its events are taken
/// from two periods before its expiry to this far after its wake-up …
pub const CATCH_UP_NS: i64 = 2_000_000;
/// … or after this long at the latest (the events stay held meanwhile; a breakdown made
/// before the trace reached its wake-up is flagged `trace_behind`).
const WAIT_AT_MOST: Duration = Duration::from_secs(5);
/// The most events whose allocation the controller keeps between two late wake-ups' ranges
/// (≈ 0.5 MiB; a 1 ms thread's range holds a few dozen).
const RANGE_BUF_KEPT: usize = 4096;
/// At most this many late wake-ups wait for the trace; beyond, they are counted unexplained.
const PENDING_CAP: usize = 20_000;

impl Controller {
    /// Prepares `--explain`: in trace mode (or auto, when permitted) creates the private trace
    /// instance now, before the first wake-up, and the capture directory when a rule
    /// captures. Returns the controller and, for auto, a note on the fallback.
    ///
    /// # Errors
    /// With [`Mode::Trace`], [`Unavailable`] saying why tracing cannot be used and how to
    /// allow it; for any mode, a capture directory that cannot be created.
    pub fn new(
        opts: ExplainOptions,
        stop: Arc<AtomicBool>,
        virtualized: bool,
        hooks: Hooks,
    ) -> Result<(Self, Option<String>), Unavailable> {
        let captures = opts
            .rules
            .iter()
            .any(|r| r.actions.contains(&Action::Capture));
        if captures {
            std::fs::create_dir_all(&opts.capture_dir).map_err(|e| {
                Unavailable(format!(
                    "cannot create the capture directory {}: {e}",
                    quoted(&opts.capture_dir)
                ))
            })?;
        }
        let log = match &opts.log {
            Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(
                |e| Unavailable(format!("--explain-log {}: {e}", quoted(p))),
            )?)),
            None => None,
        };
        let mut notes: Vec<String> = Vec::new();
        let execs = opts
            .rules
            .iter()
            .any(|r| r.actions.iter().any(|a| matches!(a, Action::Exec(_))));
        if execs {
            notes.extend(ExecActions::prepare());
        }
        let mut fallback = String::new();
        let bpf = match opts.mode {
            Mode::Context | Mode::Tracefs => None,
            Mode::Trace | Mode::Auto | Mode::Bpf => match BpfCapture::load() {
                Ok(mut cap) => Some(Capture::Bpf {
                    cap: Box::new({
                        if !cap.wait_callbacks_found() {
                            notes.push(
                                "--explain: the wait timers' callbacks are hidden from this \
                                 process (grant CAP_SYSLOG, or run as root): every timer a \
                                 measured thread starts is taken for its expiry, so a late \
                                 wake-up can look on time"
                                    .into(),
                            );
                        }
                        // A vCPU's idle state is no evidence (see `stop_recording`).
                        if virtualized {
                            cap.stop_recording("cpu_idle");
                        }
                        cap
                    }),
                    windows: Default::default(),
                    dumps: Vec::new(),
                    events: Vec::new(),
                    marker: None,
                }),
                Err(e) if opts.mode == Mode::Bpf => {
                    return Err(Unavailable(format!("--explain=bpf: {e}")))
                }
                Err(e) => {
                    fallback = e.to_string();
                    None
                }
            },
        };
        let trace = match (bpf, opts.mode) {
            (Some(b), _) => Some(b),
            (None, Mode::Context) => None,
            (None, _) => {
                let spec = InstanceSpec {
                    buffer_kb: opts.buffer_kb,
                    cpus: Vec::new(),
                    events: Vec::new(),
                };
                match TraceInstance::create(&spec) {
                    Ok((t, stale)) => {
                        if !stale.is_empty() {
                            notes.push(format!(
                                "removed trace instances left by killed runs: {}",
                                stale.join(", ")
                            ));
                        }
                        Some(Capture::Tracefs {
                            inst: t,
                            buf: Vec::new(),
                            parser: Default::default(),
                        })
                    }
                    Err(e) if matches!(opts.mode, Mode::Trace | Mode::Tracefs) => {
                        let flag = match opts.mode {
                            Mode::Tracefs => "tracefs",
                            _ => "trace",
                        };
                        return Err(Unavailable(match fallback.is_empty() {
                            true => format!("--explain={flag}: {e}"),
                            false => format!("--explain={flag}: {fallback}; {e}"),
                        }));
                    }
                    Err(e) => {
                        // Both backends' reasons: without root, the BPF backend's names the
                        // capabilities that would do instead (CAP_BPF and CAP_PERFMON).
                        notes.push(match fallback.is_empty() {
                            true => format!("--explain: context mode, no per-wake-up causes ({e})"),
                            false => format!(
                                "--explain: context mode, no per-wake-up causes ({fallback}; {e})"
                            ),
                        });
                        None
                    }
                }
            }
        };
        if let (Some(Capture::Tracefs { .. }), false) = (&trace, fallback.is_empty()) {
            notes.push(format!("--explain: tracefs backend (fallback): {fallback}"));
        }
        let note = match &trace {
            Some(t) => t.describe(),
            None => "context mode: late wake-ups counted, causes need root and tracefs \
                     (sample-level attribution); see the per-window context"
                .to_string(),
        };
        let threshold = match opts.threshold {
            Threshold::Fixed(ns) => tickscope_engine::units::ns_i(ns),
            Threshold::P99 => "p99".into(),
        };
        let keep_ns = trace
            .as_ref()
            .map_or(TRACEFS_WINDOW_KEEP_NS, Capture::window_keep_ns);
        let section = ExplainSection {
            backend: trace.as_ref().map_or("context", Capture::name).into(),
            note: note.clone(),
            threshold,
            timestamp_resolution_ns: trace.as_ref().map(Capture::resolution_ns),
            ..Default::default()
        };
        Ok((
            Controller {
                opts,
                hooks,
                stop,
                trace,
                note,
                fallback,
                read_cpu_ns: 0,
                virtualized,
                window: EventWindow::new(keep_ns, WINDOW_CAP),
                applied: None,
                setting: None,
                thresholds: Vec::new(),
                pending: VecDeque::new(),
                section,
                hits: 0,
                last_capture: None,
                execs: ExecActions::default(),
                traced_since: None,
                run_settings: serde_json::Value::Null,
                traced_now: false,
                rounds: Vec::new(),
                log,
                received: None,
                window_ns: 1_000_000_000,
                own_tids: Vec::new(),
                range_buf: Vec::new(),
                quotas: Vec::new(),
                clock: ClockId::Monotonic,
                clock_offset: 0,
                grid: false,
                grid_phase: None,
            },
            (!notes.is_empty()).then(|| notes.join("; ")),
        ))
    }

    /// Publishes the causes counted so far (for `monitor`).
    fn publish(&self) {
        let threads = self
            .section
            .threads
            .iter()
            .map(|t| PublishedThread {
                thread: t.thread,
                late: t.late,
                pending: self
                    .pending
                    .iter()
                    .filter(|p| p.sample.thread == t.thread)
                    .count() as u64,
                causes: t.causes.clone(),
            })
            .collect();
        publish_state(Published {
            backend: self.section.backend.clone(),
            threads,
        });
    }

    /// Which wake-ups the measuring loop needs to stream for this controller: those later
    /// than its threshold ([`Threshold`]; the p99 one as the engine keeps it, from the
    /// same windows and 100 µs before the first).
    pub fn late_threshold(&self) -> LateThreshold {
        match self.opts.threshold {
            Threshold::Fixed(ns) => LateThreshold::Fixed(ns),
            Threshold::P99 => LateThreshold::PreviousP99 { first: P99_START },
        }
    }

    fn threshold_for(&self, thread: usize) -> i64 {
        match self.opts.threshold {
            Threshold::Fixed(ns) => ns,
            Threshold::P99 => self.thresholds.get(thread).copied().unwrap_or(P99_START),
        }
    }

    /// Reads what the trace holds into the window.
    fn read_trace(&mut self) {
        if let Some(t) = self.trace.as_mut() {
            self.read_cpu_ns += t.read(&mut self.window);
        }
    }

    /// For a method that spins to its expiry, has the backend read the events of the late
    /// wake-ups waiting (the BPF side sends no window for a thread without a timer): once
    /// per pump, only while one of them is not caught up.
    fn fetch_for_spinners(&mut self) {
        let (Some(t), true) = (
            self.trace.as_mut(),
            self.setting.as_ref().is_some_and(|s| s.spins),
        ) else {
            return;
        };
        let (window, received) = (&self.window, self.received);
        let behind = self
            .pending
            .iter()
            .any(|p| !complete(t, window, received, &p.sample));
        if behind {
            let late: Vec<(i32, i64)> = self
                .pending
                .iter()
                .map(|p| (p.sample.tid, p.sample.woke))
                .collect();
            self.read_cpu_ns += t.fetch(&mut self.window, &late);
        }
    }

    /// Attributes the late wake-ups the trace has caught up with (all when `force`).
    fn pump(&mut self, force: bool) {
        self.execs.poll(&mut self.section.captures);
        // The events of every waiting wake-up stay in the window however far the trace has
        // run ahead (a backlog must not be attributed to an emptied window).
        let period = self.setting.as_ref().map_or(0, |s| s.period);
        // The same for wake-ups the collector has not received yet (the sample stream can lag
        // the trace by seconds when the collector is starved): nothing after the newest
        // wake-up received is dropped for age.
        let margin = 2 * period + CATCH_UP_NS;
        let hold = match (self.pending.front(), self.received) {
            (Some(p), r) => {
                Some((p.sample.expiry - margin).min(r.map_or(i64::MAX, |r| r - margin)))
            }
            (None, r) => r.map(|r| r - margin),
        };
        self.window.hold_from(hold);
        self.read_trace();
        self.fetch_for_spinners();
        self.own_tids.clear();
        self.quotas.clear();
        while let Some(p) = self.pending.front() {
            let s = &p.sample;
            let ready = force
                || self
                    .trace
                    .as_ref()
                    .is_none_or(|t| complete(t, &self.window, self.received, s))
                || p.since.elapsed() >= WAIT_AT_MOST;
            if !ready {
                break;
            }
            let p = self.pending.pop_front().expect("front exists");
            self.explain_one(p);
        }
    }

    fn explain_one(&mut self, p: Pending) {
        let s = p.sample;
        let row = &mut self.section.threads[s.thread];
        let breakdown = match (&self.trace, &self.setting) {
            (Some(_), Some(setting)) if self.traced_now => {
                let mut from = s.expiry - 2 * setting.period - CATCH_UP_NS;
                if setting.spins {
                    from = from.min(s.expiry - crate::spin::LOOKBACK_NS);
                }
                let to = s.woke + CATCH_UP_NS;
                let mut events = std::mem::take(&mut self.range_buf);
                self.window.range_into(from, to, &mut events);
                let near = to - from + setting.period;
                Clocks::now().events_to_monotonic(
                    &mut events,
                    s.tid,
                    &setting.timer_functions,
                    (s.expiry, near),
                );
                // The text path may lack the idle task's switches out (idle_switch.rs); the
                // log keeps the events as the trace gave them.
                let text = matches!(self.trace, Some(Capture::Tracefs { .. }));
                let as_read =
                    (text && self.opts.log_events && self.log.is_some()).then(|| events.clone());
                let put_back = match text {
                    true => crate::idle_switch::fill_in(&mut events),
                    false => Vec::new(),
                };
                let quotas = &mut self.quotas;
                let mut b = attribute_reading_quota(&s, setting, &events, || {
                    let known = quotas.iter().find(|q| q.0 == s.tid).map(|q| q.1);
                    known.unwrap_or_else(|| {
                        let q = crate::cpu_quota::applies(s.tid);
                        quotas.push((s.tid, q));
                        q
                    })
                });
                // One the breakdown reads: on its CPU, from a period before the expiry
                // (who held the CPU then) to the wake-up.
                let read = s.expiry - setting.period..=s.woke;
                if put_back
                    .iter()
                    .any(|&(cpu, ts)| Some(cpu) == b.cpu && read.contains(&ts))
                {
                    b.flags.push("idle_switch_put_back".into());
                }
                if self.window.newest() < s.woke {
                    b.flags.push("trace_behind".into());
                }
                let known = &mut self.own_tids;
                label_own_threads(&mut b, |pid| match known.iter().find(|k| k.0 == pid) {
                    Some(k) => k.1,
                    None => {
                        let own = own_thread(pid);
                        known.push((pid, own));
                        own
                    }
                });
                row.causes.add(&b);
                if let Some(w) = self.log.as_mut() {
                    let line = match self.opts.log_events {
                        true => serde_json::to_value(&b).map(|mut v| {
                            let logged = as_read.as_ref().unwrap_or(&events);
                            v["events"] = serde_json::to_value(logged).unwrap_or_default();
                            v
                        }),
                        false => serde_json::to_value(&b),
                    };
                    if let Ok(v) = line {
                        use std::io::Write;
                        if writeln!(w, "{v}").is_err() {
                            self.log = None; // a full disk ends the log, not the run
                        }
                    }
                }
                Some((b, events))
            }
            _ => {
                row.causes.add_unexplained("not traced", s.latency());
                None
            }
        };
        if !p.rules.is_empty() {
            self.act(&p, breakdown.as_ref());
        }
        if let Some((b, events)) = breakdown {
            self.keep(b);
            // The range's allocation serves the next late wake-up, unless an unusually long
            // range (a spinner's look-back) grew it: that one is freed.
            if events.capacity() <= RANGE_BUF_KEPT {
                self.range_buf = events;
            }
        }
    }

    fn keep(&mut self, b: Breakdown) {
        let list = &mut self.section.breakdowns;
        if list.len() >= self.opts.keep_breakdowns
            && list.last().is_some_and(|w| w.latency_ns >= b.latency_ns)
        {
            return;
        }
        list.push(b);
        list.sort_by_key(|b| std::cmp::Reverse(b.latency_ns));
        list.truncate(self.opts.keep_breakdowns);
    }

    /// Runs the actions of the rules a late wake-up hit, in order, stopping at the first
    /// failure (as rtla's `--on-threshold`).
    fn act(&mut self, p: &Pending, found: Option<&(Breakdown, Vec<crate::Event>)>) {
        let s = p.sample;
        self.hits += 1;
        let cause = found
            .map(|(b, _)| b.cause.to_string())
            .unwrap_or_else(|| "not traced".into());
        let mut record = CaptureRecord {
            index: self.hits,
            thread: s.thread,
            seq: s.seq,
            path: String::new(),
            latency_ns: s.latency(),
            cause,
            actions: Vec::new(),
        };
        let actions: Vec<((usize, usize), Action)> = p
            .rules
            .iter()
            .flat_map(|&r| {
                let list = self.opts.rules[r].actions.iter().cloned().enumerate();
                list.map(move |(i, a)| ((r, i), a))
            })
            .collect();
        let cpu = found.and_then(|(b, _)| b.cpu);
        for (key, a) in actions {
            let (name, result) = match &a {
                Action::Mark => ("mark", self.mark(&s)),
                Action::Capture => ("capture", self.capture(&s, found, &mut record)),
                Action::Stop => {
                    THRESHOLD_HIT.store(true, Ordering::SeqCst);
                    self.stop.store(true, Ordering::SeqCst);
                    ("stop", Ok("ok".into()))
                }
                Action::Exec(cmd) => {
                    let slot = (self.section.captures.len(), record.actions.len());
                    ("exec", self.exec(key, slot, cmd, &s, cpu, &record.path))
                }
            };
            let failed = result.is_err();
            record.actions.push(ActionStatus {
                name: name.into(),
                status: result.unwrap_or_else(|e| e),
            });
            if failed {
                break;
            }
        }
        if self.section.captures.len() < HITS_KEPT {
            self.section.captures.push(record);
        } else {
            self.section.hits_not_kept += 1;
        }
    }

    fn mark(&mut self, s: &LateSample) -> Result<String, String> {
        match self.trace.as_mut() {
            Some(t) => t
                .mark(&format!(
                    "tickscope: late wake-up T{} tid {} #{} latency {} ns expiry {}\n",
                    s.thread,
                    s.tid,
                    s.seq,
                    s.latency(),
                    s.expiry
                ))
                .map(|file| match file {
                    Some(file) => format!("ok: {file}"),
                    None => format!(
                        "skipped: tracefs is not mounted at {}, so no tracer reads trace_marker",
                        crate::tracefs::TRACEFS
                    ),
                })
                .map_err(|e| format!("trace_marker: {e}")),
            None => Ok("skipped: no trace".into()),
        }
    }

    fn capture(
        &mut self,
        s: &LateSample,
        found: Option<&(Breakdown, Vec<crate::Event>)>,
        record: &mut CaptureRecord,
    ) -> Result<String, String> {
        if self.hits > self.opts.capture_limit {
            return Ok(format!(
                "skipped: --capture-limit {}",
                self.opts.capture_limit
            ));
        }
        if self
            .last_capture
            .is_some_and(|t| t.elapsed() < self.opts.cooldown)
        {
            return Ok("skipped: cool-down".into());
        }
        let bundle = Bundle {
            sample: *s,
            breakdown: found.map(|(b, _)| b.clone()),
            events: found.map(|(_, e)| e.clone()).unwrap_or_default(),
            trace_note: match &self.trace {
                Some(_) => None,
                None => Some(self.note.clone()),
            },
            context: (self.hooks.latest_context)(),
            settings: self.run_settings.clone(),
        };
        let name = format!("capture-{:04}", self.hits);
        let path = (self.hooks.write_capture)(&self.opts.capture_dir, &name, &bundle)
            .map_err(|e| format!("capture: {e}"))?;
        self.last_capture = Some(Instant::now());
        record.path = path.display().to_string();
        Ok("ok".into())
    }

    /// Starts an `exec` action's command (bounded, see [`crate::on_late_exec`]).
    fn exec(
        &mut self,
        key: (usize, usize),
        slot: (usize, usize),
        cmd: &str,
        s: &LateSample,
        cpu: Option<u32>,
        bundle: &str,
    ) -> Result<String, String> {
        let env = [
            ("TICKSCOPE_LATENCY_NS", s.latency().to_string()),
            ("TICKSCOPE_TID", s.tid.to_string()),
            (
                "TICKSCOPE_CPU",
                cpu.map(|c| c.to_string()).unwrap_or_default(),
            ),
            ("TICKSCOPE_EXPIRY_NS", s.expiry.to_string()),
            ("TICKSCOPE_BUNDLE", bundle.to_string()),
        ];
        // A previous command that has just ended frees its action.
        self.execs.poll(&mut self.section.captures);
        self.execs.start(key, cmd, &env, slot)
    }
}

/// The run's events, in the order the report crate's sink receives them (its `RunSink`):
/// the controller needs every raw sample.
impl Controller {
    /// A run's threads are set up and about to start: run `index` (from 0) of a plan of
    /// `rounds` rounds, with `config` and the settings `applied`. Starts tracing this run
    /// (with several rounds, every second run is not traced: the observer effect).
    pub fn started(&mut self, config: &RunConfig, rounds: u32, index: usize, applied: &Applied) {
        self.pump(true);
        let tids: Vec<i32> = applied.threads.iter().map(|t| t.tid).collect();
        let wakes = applied.method.descriptor().wakes;
        let nrs: Vec<i64> = wakes.syscalls.to_vec();
        // A timer re-armed by whichever thread takes its signal (setitimer's): the expiry is
        // taken from the timer's firing.
        let fired_by = match wakes.expiry_at_fire {
            true => wakes.callbacks.first().copied(),
            false => None,
        };
        self.setting = Some(Setting {
            period: config.period_ns,
            virtualized: self.virtualized,
            wait_syscalls: nrs.clone(),
            timer_functions: wakes.callbacks.iter().map(|f| f.to_string()).collect(),
            returns_traced: true,
            cpu_quota: None,
            spins: (applied.method.descriptor().spin_share)(
                &config.method_options,
                config.period_ns,
            )
            .is_some_and(|share| share >= 1.0),
            timer_before_expiry: wakes.timer_before_expiry,
        });
        // The wait's return is left untraced (off the measured wake-up's path) where the
        // thread arms its own wait timer: see `BpfCapture::trace_returns`.
        let returns = fired_by.is_some() || wakes.callbacks.is_empty();
        self.run_settings = serde_json::json!({ "config": config, "applied": applied });
        self.window_ns = config.window_ns;
        self.clock = config.clock;
        self.clock_offset = 0;
        self.grid = wakes.timer_before_expiry;
        self.grid_phase = None;
        self.thresholds = vec![P99_START; tids.len()];
        for t in &applied.threads {
            if self.section.threads.len() <= t.thread {
                self.section.threads.push(ThreadCauses {
                    thread: t.thread,
                    tid: t.tid,
                    ..Default::default()
                });
            }
            self.section.threads[t.thread].tid = t.tid;
        }
        // The observer effect, stated: with several rounds every second run is not traced.
        self.traced_now = self.trace.is_some() && !(rounds > 1 && index % 2 == 1);
        if let (Some(trace), false) = (self.trace.as_mut(), self.traced_now) {
            trace.freeze();
        }
        if let (Some(trace), true) = (self.trace.as_mut(), self.traced_now) {
            let pinned: Option<Vec<usize>> = applied.threads.iter().map(|t| t.cpu).collect();
            let spec = InstanceSpec {
                buffer_kb: self.opts.buffer_kb,
                cpus: pinned.unwrap_or_default(),
                events: tracefs::explain_events(&tids, &nrs),
            };
            let threshold = match self.opts.threshold {
                Threshold::Fixed(ns) => ns,
                Threshold::P99 => P99_START,
            };
            let started = trace.trace_returns(returns).and_then(|on| {
                if let Some(s) = self.setting.as_mut() {
                    s.returns_traced = on;
                }
                trace.start(&tids, &nrs, threshold, &spec, fired_by)
            });
            if let Err(e) = started {
                eprintln!("tickscope: --explain: {e}; this run is explained from context only");
                self.trace = None;
                self.section.backend = "context".into();
                self.section.note = e.to_string();
            } else {
                self.traced_since.get_or_insert_with(Instant::now);
                // What runs now (the wait's return traced or not).
                self.section.note = trace.describe();
            }
        }
        self.applied = Some(applied.clone());
        self.publish();
    }

    /// A thread joined the run (`tickscope attach` following a program): `applied` lists it
    /// last. It gets its row in the section and, when this run is traced, is traced from
    /// now on like the threads of the start (a refusal is said once on stderr; its late
    /// wake-ups are then explained from context only).
    pub fn thread_joined(&mut self, applied: &Applied) {
        let Some(t) = applied.threads.last() else {
            return;
        };
        while self.section.threads.len() <= t.thread {
            let thread = self.section.threads.len();
            self.section.threads.push(ThreadCauses {
                thread,
                ..Default::default()
            });
        }
        self.section.threads[t.thread].tid = t.tid;
        if self.thresholds.len() <= t.thread {
            self.thresholds.resize(t.thread + 1, P99_START);
        }
        self.applied = Some(applied.clone());
        if let (Some(trace), true, Some(setting)) =
            (self.trace.as_mut(), self.traced_now, self.setting.as_ref())
        {
            let tids: Vec<i32> = applied.threads.iter().map(|t| t.tid).collect();
            let pinned: Option<Vec<usize>> = applied.threads.iter().map(|t| t.cpu).collect();
            let spec = InstanceSpec {
                buffer_kb: self.opts.buffer_kb,
                cpus: pinned.unwrap_or_default(),
                events: tracefs::explain_events(&tids, &setting.wait_syscalls),
            };
            let threshold = match self.opts.threshold {
                Threshold::Fixed(ns) => ns,
                Threshold::P99 => P99_START,
            };
            if let Err(e) = trace.add_thread(t.tid, threshold, &spec) {
                eprintln!(
                    "tickscope: --explain: thread {} joined but cannot be traced ({e}); its \
                     late wake-ups are explained from context only",
                    t.tid
                );
            }
        }
        self.publish();
    }

    /// A window (one second) is complete: updates the p99 thresholds and attributes what the
    /// trace has caught up with.
    pub fn window(&mut self, second: &SecondWindows) {
        let span = second.threads.iter().map(|(_, w)| w.span.max(1)).max();
        if let Some(span) = span {
            let end = second.first_expiry + (second.index + span) as i64 * self.window_ns;
            let offset = Clocks::now().offset_of_recent(end, self.clock);
            self.follow_grid(second.first_expiry - offset);
            let end = end - offset;
            self.received = Some(self.received.map_or(end, |r| r.max(end)));
        }
        for (t, w) in &second.threads {
            if let (Some(p99), Some(slot)) = (w.latency_p99, self.thresholds.get_mut(*t)) {
                *slot = p99.max(1);
                if let (Threshold::P99, Some(trace), Some(row)) = (
                    self.opts.threshold,
                    self.trace.as_mut(),
                    self.section.threads.get(*t),
                ) {
                    trace.set_threshold(row.tid, *slot);
                }
            }
        }
        self.pump(false);
        self.publish();
    }

    /// The threads were told to go: `first_expiry` (absolute ns on the run's clock) is on
    /// every thread's grid from the first wake-up on (see [`Controller::samples`] for what
    /// follows the grid later).
    pub fn going(&mut self, first_expiry: i64) {
        let offset = Clocks::now().offset_of_recent(first_expiry, self.clock);
        self.follow_grid(first_expiry - offset);
    }

    /// For a method whose timer ends before the expiry, gives the kernel the run's expiry
    /// grid through `expiry` (ns on CLOCK_MONOTONIC) when it is new: at the first expiry seen,
    /// and again when the grid moved (`--overrun relative`). The run's threads share one grid.
    fn follow_grid(&mut self, expiry: i64) {
        let period = self.setting.as_ref().map_or(0, |s| s.period);
        if !self.grid || !self.traced_now || period <= 0 {
            return;
        }
        let phase = expiry.rem_euclid(period);
        if self.grid_phase == Some(phase) {
            return;
        }
        self.grid_phase = Some(phase);
        if let Some(trace) = self.trace.as_mut() {
            for row in &self.section.threads {
                trace.set_grid(row.tid, period, phase);
            }
        }
    }

    /// The next raw wake-ups of one thread, in order, on the run's clock: the late ones wait
    /// for the trace (moved to CLOCK_MONOTONIC, the trace's clock).
    pub fn samples(&mut self, thread: usize, samples: &[RawSample]) {
        let threshold = self.threshold_for(thread);
        let tid = self.section.threads.get(thread).map(|t| t.tid).unwrap_or(0);
        if samples.is_empty() {
            return self.pump(false);
        }
        // `tickscope attach` streams wake-ups on CLOCK_MONOTONIC whatever its clock.
        if let (Some(last), true) = (samples.last(), self.clock != ClockId::Monotonic) {
            self.clock_offset = Clocks::now().offset_of_recent(last.woke, self.clock);
        }
        let offset = self.clock_offset;
        if let Some(last) = samples.last() {
            let woke = last.woke - offset;
            self.received = Some(self.received.map_or(woke, |r| r.max(woke)));
            self.follow_grid(last.expiry - offset);
        }
        for s in samples {
            let latency = s.woke - s.expiry;
            if latency <= threshold {
                continue;
            }
            if let Some(row) = self.section.threads.get_mut(thread) {
                row.late += 1;
            }
            let rules = self
                .opts
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| latency > r.threshold_ns)
                .map(|(i, _)| i)
                .collect();
            let sample = LateSample {
                thread,
                tid,
                seq: s.seq,
                expiry: s.expiry - offset,
                woke: s.woke - offset,
            };
            if self.pending.len() >= PENDING_CAP {
                if let Some(row) = self.section.threads.get_mut(thread) {
                    row.causes
                        .add_unexplained("not explained (too many)", latency);
                }
                continue;
            }
            self.pending.push_back(Pending {
                sample,
                since: Instant::now(),
                rules,
            });
        }
        self.pump(false);
    }

    /// The section as it stands (the result document's `explain`).
    pub fn section(&mut self) -> ExplainSection {
        self.execs.poll(&mut self.section.captures);
        if let (Some(since), true) = (self.traced_since, self.window.seen > 0) {
            let secs = since.elapsed().as_secs_f64();
            self.section.events_per_s = (secs > 0.0).then(|| self.window.seen as f64 / secs);
        }
        self.section.observer = crate::observer::observer_effect(&self.rounds);
        self.section.events_read = self.window.seen;
        self.section.events_lost = self.window.lost;
        if let (Some(t), Some(since)) = (self.trace.as_ref(), self.traced_since) {
            let secs = since.elapsed().as_secs_f64();
            let c: CaptureCost = t.cost(&self.window, self.read_cpu_ns);
            let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
            self.section.cost = Some(TracingCost {
                backend: t.name().into(),
                fallback: self.fallback.clone(),
                events_per_s: per_s(c.events as f64),
                events_lost: c.lost,
                windows: c.windows,
                read_cpu_ns: c.read_cpu_ns,
                read_cpu_percent: per_s(c.read_cpu_ns as f64 / 1e7),
                load_cpu_ns: c.load_cpu_ns,
            });
            if let Capture::Bpf { .. } = t {
                self.section.events_lost = c.lost;
            }
        }
        self.section.clone()
    }

    /// A run ended with this merged latency (p50, p99, max, ns; `None` without wake-ups):
    /// attributes everything still waiting, ends the commands still running and publishes
    /// the final counts.
    pub fn run_finished(&mut self, latency: Option<(i64, i64, i64)>) {
        // The last wake-ups' events are in the buffer by now.
        std::thread::sleep(Duration::from_millis(20));
        self.pump(true);
        // Commands still running end with the run (after a short grace).
        self.execs.stop_all(&mut self.section.captures);
        self.publish();
        if let Some((p50, p99, max)) = latency {
            self.rounds.push(crate::observer::RunLatency {
                traced: self.traced_now,
                method: self.applied.as_ref().map_or("", |a| a.method.name()),
                p50,
                p99,
                max,
            });
        }
    }

    /// The last run ended: attributes what is left, flushes `--explain-log`, removes the
    /// trace instance and ends the commands still running.
    ///
    /// # Errors
    /// The `--explain-log` file cannot be written (one sentence).
    pub fn finish(&mut self) -> Result<(), String> {
        self.pump(true);
        if let Some(w) = self.log.as_mut() {
            use std::io::Write;
            w.flush().map_err(|e| format!("--explain-log: {e}"))?;
        }
        self.trace = None; // the instance is removed here
        self.execs.stop_all(&mut self.section.captures);
        Ok(())
    }
}
impl Drop for Controller {
    fn drop(&mut self) {
        self.trace = None;
        self.execs.stop_all(&mut self.section.captures);
    }
}

/// Whether the events of late wake-up `s` are complete in `window` ([`Capture::caught_up`],
/// `received` the newest wake-up the collector has).
fn complete(t: &Capture, window: &EventWindow, received: Option<i64>, s: &LateSample) -> bool {
    t.caught_up(window, s.tid, s.expiry, s.woke, CATCH_UP_NS, received)
}

/// Whether thread `tid` is one of this process's: `/proc/self/task/TID` exists only for the
/// process's own threads (proc(5); `proc_task_lookup()` in fs/proc/base.c refuses a thread
/// of another group). One `statx` per thread id a pump's breakdowns name (their details and
/// marks name the same few tasks), where reading the whole directory cost ≈ 60 µs a pump
/// (perf, a 1 ms run with a window for every wake-up over 25 µs, 2026-11-28).
fn own_thread(tid: i32) -> bool {
    Path::new(&format!("/proc/self/task/{tid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_threads_are_this_processs_only() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            // SAFETY: gettid has no memory effects.
            tx.send(unsafe { libc::gettid() }).unwrap();
            done_rx.recv().ok();
        });
        let other_tid = rx.recv().unwrap();
        // SAFETY: as above.
        let me = unsafe { libc::gettid() };
        assert!(own_thread(me), "{me}");
        assert!(own_thread(other_tid), "{other_tid}");
        assert!(!own_thread(1), "init is another process's");
        assert!(!own_thread(0), "the idle task");
        done_tx.send(()).unwrap();
        other.join().unwrap();
    }
}
