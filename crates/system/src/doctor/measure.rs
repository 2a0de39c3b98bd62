//! `tickscope doctor --measure`: for every knob tickscope can set for itself and restore,
//! short interleaved A/B runs on the engine, and a verdict backed by the numbers.
//!
//! Each row changes one knob from the settings an ordinary program gets — SCHED_OTHER, no
//! PM QoS request, the default timer slack, unpinned, `clock_nanosleep(TIMER_ABSTIME)` —
//! so that the row says what that one knob is worth here. Like a comparison of methods
//! ([`tickscope_engine::schedule`]), rounds alternate the order (round 1: without, with; round 2: with,
//! without; …) so that drift of a noisy machine favours neither side. A knob is said to
//! change p99 only when the rounds' p99s of the two sides differ significantly
//! ([`tickscope_engine::significance::mann_whitney`], two-sided, α = 0.05): with 5 rounds a side the
//! smallest possible p is 2/252 ≈ 0.008, with 2 rounds 1/3 (never significant), so a
//! single noisy round is "no measurable effect", not a finding. Every setting is held
//! by the run's guards (policy and slack per measuring thread, PM QoS through an open file
//! that is closed at the end, placement per thread): nothing outlives the run, and boot
//! parameters are never touched.

use super::Context;
use crate::facts::Facts;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::histogram::SignedHistogram;
use tickscope_engine::result::LatencyStats;
use tickscope_engine::run::{run, PolicyRequest, RunConfig, AUTO_PRIORITY};
use tickscope_engine::setup::Policy;
use tickscope_engine::significance::{mann_whitney, median};
use tickscope_engine::time::{Nanos, NS_PER_MS};
use tickscope_engine::wait::MethodKind;

/// The knobs, in the order they are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Knob {
    /// SCHED_OTHER vs SCHED_FIFO 90.
    Policy,
    /// No PM QoS request vs `/dev/cpu_dma_latency` held at 0.
    PmQos,
    /// The default timer slack (50 µs) vs 1 ns.
    TimerSlack,
    /// Unpinned vs pinned to the quietest measured CPU.
    Placement,
    /// `nanosleep-abs` vs `hybrid` (sleep, then spin).
    Method,
}

impl Knob {
    /// Every knob.
    pub const ALL: &'static [Knob] = &[
        Knob::Policy,
        Knob::PmQos,
        Knob::TimerSlack,
        Knob::Placement,
        Knob::Method,
    ];

    /// Its name: `policy`, `pm-qos`, `timer-slack`, `placement`, `method`.
    pub fn name(self) -> &'static str {
        match self {
            Knob::Policy => "policy",
            Knob::PmQos => "pm-qos",
            Knob::TimerSlack => "timer-slack",
            Knob::Placement => "placement",
            Knob::Method => "method",
        }
    }
}

/// How long and how often to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureConfig {
    /// Length of each run, ns (> 0).
    pub duration_ns: Nanos,
    /// Rounds of (without, with) per knob (≥ 1).
    pub rounds: u32,
    /// The period of the measuring thread, ns (> 0).
    pub period_ns: Nanos,
}

impl Default for MeasureConfig {
    /// 1 s runs, 5 rounds (the fewest in which the test can find an effect at α = 0.05 with
    /// some margin), 1 ms period.
    fn default() -> Self {
        MeasureConfig {
            duration_ns: 1_000 * NS_PER_MS,
            rounds: 5,
            period_ns: NS_PER_MS,
        }
    }
}

/// Latency summary of one side of a knob, over its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Median wake-up latency of every wake-up of all its rounds (their histograms merged),
    /// ns.
    pub p50_ns: Nanos,
    /// 99th percentile of every wake-up of all its rounds (histograms merged), ns.
    pub p99_ns: Nanos,
    /// Largest latency of all its runs, ns.
    pub max_ns: Nanos,
    /// Wake-ups recorded, all rounds.
    pub samples: u64,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnobResult {
    /// The knob.
    pub knob: Knob,
    /// The setting without (the ordinary program's).
    pub without: String,
    /// The setting with.
    pub with: String,
    /// Measured without; `None` when not measured.
    pub without_stats: Option<Side>,
    /// Measured with; `None` when not measured.
    pub with_stats: Option<Side>,
    /// `with p99 / without p99`; < 1 means the knob helps.
    pub ratio_p99: Option<f64>,
    /// Each round's p99 without, ns, in round order.
    #[serde(default)]
    pub rounds_p99_without_ns: Vec<Nanos>,
    /// Each round's p99 with, ns, in round order.
    #[serde(default)]
    pub rounds_p99_with_ns: Vec<Nanos>,
    /// Two-sided Mann–Whitney p-value of the rounds' p99s without against with
    /// ([`tickscope_engine::significance::mann_whitney`]); `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// One sentence: what the knob did here ("no measurable effect" unless `p_value` <
    /// 0.05), or `unknown: <reason>`.
    pub verdict: String,
}

/// The two configurations of `knob` and their labels, or why this user cannot set it.
fn sides(
    knob: Knob,
    base: &RunConfig,
    facts: &Facts,
    ctx: &Context,
) -> Result<(RunConfig, RunConfig, String, String), String> {
    let mut with = base.clone();
    let (a, b) = match knob {
        Knob::Policy => {
            if !facts.privileges.may_set_rt(AUTO_PRIORITY) {
                return Err("needs root (CAP_SYS_NICE or RLIMIT_RTPRIO ≥ 90)".into());
            }
            with.policy = PolicyRequest::Exact(Policy::Fifo {
                priority: AUTO_PRIORITY,
            });
            ("SCHED_OTHER".into(), format!("SCHED_FIFO {AUTO_PRIORITY}"))
        }
        Knob::PmQos => {
            if facts.privileges.pm_qos_writable.value() != Some(&true) {
                return Err("needs root (write access to /dev/cpu_dma_latency)".into());
            }
            with.pm_qos_us = Some(0);
            with.pm_qos_required = true;
            ("off".into(), "0 µs".into())
        }
        Knob::TimerSlack => {
            with.timer_slack_ns = Some(1);
            (
                format!(
                    "default {} ns",
                    tickscope_engine::setup::current_timer_slack()
                ),
                "1 ns".into(),
            )
        }
        Knob::Placement => {
            let cpu = quietest(facts, ctx);
            with.cpus = vec![Some(cpu)];
            ("unpinned".into(), format!("CPU {cpu}"))
        }
        Knob::Method => {
            with.method = MethodKind::Hybrid;
            ("nanosleep-abs".into(), "hybrid".into())
        }
    };
    Ok((base.clone(), with, a, b))
}

/// The quietest measured CPU: an isolated one if any, else the one that took the fewest
/// device interrupts since boot.
pub fn quietest(facts: &Facts, ctx: &Context) -> usize {
    let k = &facts.kernel;
    if let Some(&c) = ctx
        .cpus
        .iter()
        .find(|c| k.isolcpus.contains(c) || k.nohz_full.contains(c))
    {
        return c;
    }
    let irqs = facts.irq.irqs.value().cloned().unwrap_or_default();
    let load = |cpu: usize| -> u64 {
        let Some(col) = facts.irq.columns.iter().position(|&c| c == cpu) else {
            return u64::MAX;
        };
        irqs.iter().filter_map(|i| i.counts.get(col)).sum()
    };
    ctx.cpus
        .iter()
        .copied()
        .min_by_key(|&c| load(c))
        .unwrap_or(0)
}

/// Runs the A/B table. `progress` gets one line per finished run; `stop` ends early (the
/// rows measured so far are returned, the rest say `unknown: interrupted`).
pub fn measure(
    cfg: &MeasureConfig,
    facts: &Facts,
    ctx: &Context,
    stop: &Arc<AtomicBool>,
    progress: &mut dyn FnMut(&str),
) -> Vec<KnobResult> {
    let mut base = RunConfig::new(cfg.period_ns);
    base.duration_ns = Some(cfg.duration_ns);
    base.policy = PolicyRequest::Exact(Policy::Other { nice: 0 });
    base.timer_slack_ns = None;
    base.pm_qos_us = None;
    base.cpus = vec![None];
    let mut out = Vec::new();
    for &knob in Knob::ALL {
        let (a, b, la, lb) = match sides(knob, &base, facts, ctx) {
            Ok(s) => s,
            Err(reason) => {
                out.push(unknown(knob, String::new(), String::new(), reason));
                continue;
            }
        };
        let mut runs = [Rounds::default(), Rounds::default()];
        let mut failed = None;
        'rounds: for round in 0..cfg.rounds.max(1) {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                if stop.load(Ordering::Relaxed) {
                    failed = Some("interrupted".to_string());
                    break 'rounds;
                }
                let c = if side == 0 { &a } else { &b };
                match run(c, stop, &mut |_| {}) {
                    Ok(o) => {
                        if let Some(e) = o.error {
                            failed = Some(e);
                            break 'rounds;
                        }
                        let s = &o.summary;
                        if let Some(l) = &s.latency_ns {
                            runs[side].add(l, s.samples);
                            progress(&format!(
                                "{} {} (round {}): p50 {} µs, p99 {} µs, max {} µs",
                                knob.name(),
                                if side == 0 { &la } else { &lb },
                                round + 1,
                                us(l.p50),
                                us(l.p99),
                                us(l.max)
                            ));
                        }
                    }
                    Err(e) => {
                        failed = Some(e.to_string());
                        break 'rounds;
                    }
                }
            }
        }
        if let Some(reason) = failed {
            out.push(unknown(knob, la, lb, reason));
            continue;
        }
        let (Some(x), Some(y)) = (side(&runs[0]), side(&runs[1])) else {
            out.push(unknown(knob, la, lb, "no wake-ups recorded".into()));
            continue;
        };
        let ratio = (x.p99_ns > 0).then(|| y.p99_ns as f64 / x.p99_ns as f64);
        let (pa, pb) = (runs[0].p99s.clone(), runs[1].p99s.clone());
        let verdict = verdict(knob, &lb, &pa, &pb);
        let as_f64 = |v: &[Nanos]| v.iter().map(|&n| n as f64).collect::<Vec<_>>();
        let p_value = mann_whitney(&as_f64(&pa), &as_f64(&pb)).map(|t| t.p);
        out.push(KnobResult {
            knob,
            without: la,
            with: lb,
            without_stats: Some(x),
            with_stats: Some(y),
            ratio_p99: ratio,
            rounds_p99_without_ns: pa,
            rounds_p99_with_ns: pb,
            p_value,
            verdict,
        });
    }
    out
}

fn unknown(knob: Knob, without: String, with: String, reason: String) -> KnobResult {
    KnobResult {
        knob,
        without,
        with,
        without_stats: None,
        with_stats: None,
        ratio_p99: None,
        rounds_p99_without_ns: Vec::new(),
        rounds_p99_with_ns: Vec::new(),
        p_value: None,
        verdict: format!("unknown: {reason}"),
    }
}

/// The wake-ups of one side's rounds: their latency histograms merged (exact to the
/// bucket, [`SignedHistogram::from_buckets`]), the exact maximum, the count.
#[derive(Default)]
struct Rounds {
    hist: SignedHistogram,
    max: Option<Nanos>,
    samples: u64,
    /// Each round's own p99, ns: the values the test compares.
    p99s: Vec<Nanos>,
}

impl Rounds {
    fn add(&mut self, l: &LatencyStats, samples: u64) {
        self.p99s.push(l.p99);
        self.hist.add(&SignedHistogram::from_buckets(&l.histogram));
        self.max = Some(self.max.map_or(l.max, |m| m.max(l.max)));
        self.samples += samples;
    }
}

/// The percentiles of all the rounds' wake-ups together (not a mean of each round's
/// percentiles, which would weigh a short noisy round like a long quiet one), clamped to
/// the exact maximum as every percentile tickscope reports.
fn side(runs: &Rounds) -> Option<Side> {
    let max = runs.max?;
    let q = |q: f64| runs.hist.value_at_quantile(q).map(|v| v.min(max));
    Some(Side {
        p50_ns: q(0.5)?,
        p99_ns: q(0.99)?,
        max_ns: max,
        samples: runs.samples,
    })
}

/// A latency in µs with one decimal (the one unit of every `--measure` line).
fn us(ns: Nanos) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// One sentence on what `knob` set to `with` did to p99, from each round's p99 without
/// (`a`) and with (`b`), ns: a change only when the Mann–Whitney test finds one at α =
/// 0.05, with the rounds' median p99 on each side and the p-value; else "no measurable
/// effect" (and, with too few rounds for the test ever to find one, how many it needs).
fn verdict(knob: Knob, with: &str, a: &[Nanos], b: &[Nanos]) -> String {
    let what = match knob {
        Knob::Policy => format!("running at {with} instead of SCHED_OTHER"),
        Knob::PmQos => "holding PM QoS at 0".to_string(),
        Knob::TimerSlack => "a timer slack of 1 ns".to_string(),
        Knob::Placement => format!("pinning to {with}"),
        Knob::Method => "the hybrid method (sleep, then spin)".to_string(),
    };
    let fa: Vec<f64> = a.iter().map(|&n| n as f64).collect();
    let fb: Vec<f64> = b.iter().map(|&n| n as f64).collect();
    let (Some(test), Some(ma), Some(mb)) = (mann_whitney(&fa, &fb), median(&fa), median(&fb))
    else {
        return format!("on this machine, {what}: no rounds to compare");
    };
    let medians = format!(
        "median p99 of {} rounds each {} → {} µs",
        a.len().min(b.len()),
        us(ma.round() as Nanos),
        us(mb.round() as Nanos)
    );
    let p = format!("Mann–Whitney p = {:.3}", test.p);
    if test.significant() && mb < ma {
        format!("on this machine, {what} lowered p99 ({medians}, {p})")
    } else if test.significant() && mb > ma {
        format!("on this machine, {what} raised p99 ({medians}, {p})")
    } else if a.len().min(b.len()) < 4 {
        format!(
            "on this machine, {what} had no measurable effect on p99 ({medians}, {p}); \
             {} rounds cannot show one — use --rounds 5 or more",
            a.len().min(b.len())
        )
    } else {
        format!("on this machine, {what} had no measurable effect on p99 ({medians}, {p})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_need_a_significant_difference() {
        let high = [212_000, 230_000, 205_000, 260_000, 220_000];
        let low = [69_000, 71_000, 66_000, 90_000, 70_000];
        let v = verdict(Knob::PmQos, "0 µs", &high, &low);
        assert!(
            v.contains(
                "lowered p99 (median p99 of 5 rounds each 220.0 → 70.0 µs, Mann–Whitney p = 0.008)"
            ),
            "{v}"
        );
        assert!(verdict(Knob::Method, "hybrid", &low, &high).contains("raised"));
        // One noisy round is not an effect: the issue's "timer slack raised p99 from 651 to
        // 1024 µs" from one round each.
        let v = verdict(Knob::TimerSlack, "1 ns", &[651_000], &[1_024_000]);
        assert!(v.contains("no measurable effect"), "{v}");
        assert!(v.contains("--rounds 5"), "{v}");
        let mixed = [60_000, 250_000, 70_000, 240_000, 65_000];
        let v = verdict(Knob::Method, "hybrid", &mixed, &high);
        assert!(v.contains("no measurable effect"), "{v}");
        assert!(!v.contains("--rounds"), "{v}");
    }

    /// The latency statistics of `values` (ns), as a run reports them.
    fn stats(values: &[Nanos]) -> LatencyStats {
        let mut h = SignedHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        LatencyStats {
            min: *values.iter().min().unwrap(),
            max: *values.iter().max().unwrap(),
            mean: 0.0,
            stddev: 0.0,
            p50: 0,
            p90: 0,
            p99: 0,
            p99_9: 0,
            p99_99: 0,
            early: 0,
            histogram: h.buckets(),
        }
    }

    /// Two rounds: 1000 quiet wake-ups at 10 µs, and 100 with 20 of them at 500 µs. Their
    /// wake-ups together have p99 = 500 µs (20 of 1100 are above the 99th percentile's rank),
    /// while the mean of the two rounds' p99s would be ~255 µs.
    #[test]
    fn rounds_are_merged_not_averaged() {
        let quiet = vec![10_000; 1000];
        let mut noisy = vec![10_000; 80];
        noisy.extend([500_000; 20]);
        let mut r = Rounds::default();
        r.add(&stats(&quiet), 1000);
        r.add(&stats(&noisy), 100);
        let s = side(&r).unwrap();
        assert_eq!(s.samples, 1100);
        assert_eq!(s.max_ns, 500_000);
        assert_eq!(s.p99_ns, 500_000, "the merged distribution's p99");
        assert!((9_900..=10_100).contains(&s.p50_ns), "{}", s.p50_ns);
        assert!(side(&Rounds::default()).is_none());
    }
}
