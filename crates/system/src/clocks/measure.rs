//! The measuring loops of `tickscope clocks` and the passes that run them.
//!
//! Budget: the total is split evenly over the passes (one, or three with `idle_compare`);
//! within a pass every clock gets a slot in proportion to its weight — a `clock_gettime`
//! clock [`LIBRARY_WEIGHT`] for the library reads, [`SYSCALL_WEIGHT`] for the system
//! calls and [`IDLE_WEIGHT`] for the after-idle pairs; a TSC read the first and last.
//!
//! Every buffer is allocated before the loops; the timed region (one batch) only reads the
//! clock and stores the value.

use super::kind::{clock_resolution, read_clock_syscall};
use super::spinner::{sibling_cpu, Spinner};
use super::stats::{access_verdict, cost_stats, pair_stats, DeltaAccumulator};
use super::tsc::{self, TscFrequency};
use super::{
    Access, ClockEntry, ClockKind, ClockMeasurement, ClockOutcome, ClocksConfig, ClocksPass,
    ClocksResult, Condition, CostStats, DeltaStats, PairStats, IDLE_GAP_NS, READS_PER_BATCH,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tickscope_engine::error::Error;
use tickscope_engine::setup::{AffinityGuard, PmQosGuard, PM_QOS_PATH};
use tickscope_engine::time::{read_clock, Nanos, NS_PER_MS, NS_PER_SEC};

/// Budget weight of the library (or instruction) reads: cost and back-to-back deltas.
pub const LIBRARY_WEIGHT: Nanos = 4;
/// Budget weight of the reads through `syscall(SYS_clock_gettime)`.
pub const SYSCALL_WEIGHT: Nanos = 2;
/// Budget weight of the after-idle pairs.
pub const IDLE_WEIGHT: Nanos = 3;
/// Fewest batches per cost measurement, whatever the budget.
pub const MIN_BATCHES: usize = 5;
/// Most batches per cost measurement (bounds memory at 8 bytes a batch).
pub const MAX_BATCHES: usize = 1 << 18;
/// Fewest after-idle pairs per clock, whatever the budget.
pub const MIN_IDLE_PAIRS: usize = 3;
/// Most after-idle pairs per clock.
pub const MAX_IDLE_PAIRS: usize = 1 << 14;

/// The clock that times each batch.
const BATCH_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC_RAW;

/// Everything the loops write into, allocated once, and the stop flag they check.
struct Buffers<'a> {
    stop: &'a AtomicBool,
    reads: Vec<i64>,
    batch_ns: Vec<Nanos>,
    pairs: Vec<Nanos>,
    deltas: DeltaAccumulator,
}

impl<'a> Buffers<'a> {
    fn new(stop: &'a AtomicBool) -> Self {
        Buffers {
            stop,
            reads: vec![0; READS_PER_BATCH],
            batch_ns: Vec::with_capacity(MAX_BATCHES),
            pairs: Vec::with_capacity(MAX_IDLE_PAIRS),
            deltas: DeltaAccumulator::new(),
        }
    }
}

/// Measures every clock of [`ClockKind::all`] as described in [`super`], on the calling
/// thread, within about `cfg.budget_ns` (plus 50–100 ms to calibrate the TSC where the
/// kernel does not say its frequency).
///
/// # Errors
/// An invalid-config [`Error`] for a budget ≤ 0; a setup [`Error`] when the thread cannot be pinned to
/// `cfg.cpu`. A condition of `idle_compare` that cannot be set up (PM QoS without
/// permission, no second CPU) is reported in its [`ClocksPass::skipped`], not as an error.
pub fn measure(cfg: &ClocksConfig) -> Result<ClocksResult, Error> {
    measure_until(cfg, &AtomicBool::new(false))
}

/// [`measure()`], ended early when `stop` becomes true: every clock still measured takes
/// only its minimum of batches and pairs, and the idle-comparison passes are skipped, so
/// the call returns within a few milliseconds per clock. A result after a stop is
/// shortened; the caller should say so or discard it.
///
/// # Errors
/// As [`measure()`].
pub fn measure_until(cfg: &ClocksConfig, stop: &AtomicBool) -> Result<ClocksResult, Error> {
    if cfg.budget_ns <= 0 {
        return Err(Error::config(
            tickscope_engine::error::Setting::Budget,
            format!(
                "the time budget must be positive (got {} ns)",
                cfg.budget_ns
            ),
        ));
    }
    let (cpu, cpu_note) = match (cfg.cpu, cfg.idle_compare) {
        (Some(c), _) => (Some(c), Some("as asked".to_string())),
        (None, true) => {
            // SAFETY: sched_getcpu has no arguments; it returns -1 on error.
            let here = unsafe { libc::sched_getcpu() };
            let note = "the CPU it started on, fixed for the idle comparison";
            (usize::try_from(here).ok(), Some(note.to_string()))
        }
        (None, false) => (None, None),
    };
    // Chosen before pinning: afterwards this thread may use only `cpu`.
    let sibling = if cfg.idle_compare {
        cpu.and_then(sibling_cpu)
    } else {
        None
    };
    let _pin = cpu
        .map(|c| {
            AffinityGuard::pin(c).map_err(|e| {
                let msg = format!("cannot pin the measurement to CPU {c}: {e}");
                Error::refused(tickscope_engine::error::Facility::Affinity, msg, e)
            })
        })
        .transpose()?;

    let passes = if cfg.idle_compare { 3 } else { 1 };
    let pass_ns = cfg.budget_ns / passes;
    let tsc = tsc::frequency((pass_ns / 10).clamp(50 * NS_PER_MS, 100 * NS_PER_MS));
    let mut bufs = Buffers::new(stop);
    let clocks = measure_pass(pass_ns, tsc.as_ref(), &mut bufs);

    let mut idle_compare = Vec::new();
    if cfg.idle_compare && !stop.load(Ordering::Relaxed) {
        idle_compare.push(match PmQosGuard::hold(0) {
            Ok(guard) => {
                let clocks = measure_pass(pass_ns, tsc.as_ref(), &mut bufs);
                drop(guard);
                pass(
                    Condition::PmQosZero,
                    "0 µs held on /dev/cpu_dma_latency",
                    clocks,
                )
            }
            Err(e) => {
                let hint = match e.raw_os_error() {
                    Some(libc::EACCES | libc::EPERM) => "; the device is root-only",
                    _ => "",
                };
                let why = format!("cannot hold {PM_QOS_PATH} at 0: {e}{hint}");
                skipped(Condition::PmQosZero, why)
            }
        });
        idle_compare.push(match sibling {
            None => skipped(
                Condition::SiblingSpin,
                "no other CPU is available to spin on".into(),
            ),
            Some((s, smt)) => match Spinner::start(s, 2 * pass_ns + 5 * NS_PER_SEC) {
                Ok(spinner) => {
                    let clocks = measure_pass(pass_ns, tsc.as_ref(), &mut bufs);
                    drop(spinner);
                    let kind = if smt {
                        "an SMT sibling (same core)"
                    } else {
                        "another core (no SMT sibling)"
                    };
                    pass(
                        Condition::SiblingSpin,
                        &format!("a thread spinning on CPU {s}, {kind}"),
                        clocks,
                    )
                }
                Err(e) => skipped(
                    Condition::SiblingSpin,
                    format!("cannot start a spinning thread on CPU {s}: {e}"),
                ),
            },
        });
    }
    Ok(ClocksResult {
        cpu,
        cpu_note,
        batch_clock: "CLOCK_MONOTONIC_RAW".into(),
        tsc,
        clocks,
        idle_compare,
    })
}

/// Measures one `clock_gettime` clock alone — resolution, library and system-call cost,
/// back-to-back deltas and after-idle pairs, exactly as [`measure()`] measures it — within
/// about `budget_ns`, on the calling thread wherever it runs, without calibrating the TSC.
/// Each part still takes its minimum of batches ([`MIN_BATCHES`]) and pairs
/// ([`MIN_IDLE_PAIRS`]) when the budget is smaller. `tickscope doctor` uses it for the cost
/// of a `CLOCK_MONOTONIC` read with a 50 ms budget.
///
/// # Errors
/// An invalid-config [`Error`] for a budget ≤ 0 or a clock read by an instruction (the TSC),
/// which needs the calibration [`measure()`] does.
pub fn measure_clock(clock: ClockKind, budget_ns: Nanos) -> Result<ClockOutcome, Error> {
    let invalid = |msg: String| Error::config(tickscope_engine::error::Setting::Budget, msg);
    if budget_ns <= 0 {
        return Err(invalid(format!(
            "the time budget must be positive (got {budget_ns} ns)"
        )));
    }
    let Some(id) = clock.clock_id() else {
        return Err(invalid(format!(
            "{} is read by an instruction; measure it with tickscope clocks",
            clock.name()
        )));
    };
    let stop = AtomicBool::new(false);
    let mut bufs = Buffers::new(&stop);
    Ok(measure_kernel_clock(
        id,
        budget_ns / weight(clock),
        &mut bufs,
    ))
}

fn pass(condition: Condition, note: &str, clocks: Vec<ClockEntry>) -> ClocksPass {
    ClocksPass {
        condition,
        note: Some(note.to_string()),
        skipped: None,
        clocks,
    }
}

fn skipped(condition: Condition, reason: String) -> ClocksPass {
    ClocksPass {
        condition,
        note: None,
        skipped: Some(reason),
        clocks: Vec::new(),
    }
}

/// The budget weight of one clock.
fn weight(source: ClockKind) -> Nanos {
    match source.clock_id() {
        Some(_) => LIBRARY_WEIGHT + SYSCALL_WEIGHT + IDLE_WEIGHT,
        None => LIBRARY_WEIGHT + IDLE_WEIGHT,
    }
}

/// Measures every clock once within about `budget_ns`.
fn measure_pass(
    budget_ns: Nanos,
    tsc: Option<&TscFrequency>,
    b: &mut Buffers<'_>,
) -> Vec<ClockEntry> {
    let all = ClockKind::all();
    let unit_ns = budget_ns / all.iter().map(|&s| weight(s)).sum::<Nanos>();
    all.iter()
        .map(|&source| ClockEntry {
            clock: source,
            name: source.name().to_string(),
            monotonic: source.is_monotonic(),
            outcome: match source.clock_id() {
                Some(id) => measure_kernel_clock(id, unit_ns, b),
                None => measure_tsc(source, unit_ns, tsc, b),
            },
        })
        .collect()
}

/// One `clock_gettime` clock: resolution, library and system-call cost, deltas, pairs.
fn measure_kernel_clock(id: libc::clockid_t, unit_ns: Nanos, b: &mut Buffers<'_>) -> ClockOutcome {
    let resolution_ns = match clock_resolution(id) {
        Ok(r) => r,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            return ClockOutcome::Unsupported {
                reason: "the kernel does not offer this clock (clock_getres: EINVAL)".into(),
            }
        }
        Err(e) => {
            return ClockOutcome::Unsupported {
                reason: format!("clock_getres failed: {e}"),
            }
        }
    };
    let (cost, deltas) = time_batches(|| read_clock(id), LIBRARY_WEIGHT * unit_ns, b);
    let (syscall_cost, _) = time_batches(|| read_clock_syscall(id), SYSCALL_WEIGHT * unit_ns, b);
    let after_idle = after_idle_pairs(|| read_clock(id), 1.0, IDLE_WEIGHT * unit_ns, b);
    ClockOutcome::Measured(Box::new(ClockMeasurement {
        resolution_ns,
        access: access_verdict(cost.median_ns, syscall_cost.median_ns),
        cost,
        syscall_cost: Some(syscall_cost),
        deltas,
        delta_ticks: None,
        after_idle,
    }))
}

/// One TSC read (`rdtsc` or `rdtscp`): cost, deltas in ticks and ns, pairs.
#[cfg(target_arch = "x86_64")]
fn measure_tsc(
    source: ClockKind,
    unit_ns: Nanos,
    freq: Option<&TscFrequency>,
    b: &mut Buffers<'_>,
) -> ClockOutcome {
    let with_p = source == ClockKind::Rdtscp;
    if let Err(reason) = tsc::available(with_p) {
        return ClockOutcome::Unsupported { reason };
    }
    let Some(freq) = freq else {
        return ClockOutcome::Unsupported {
            reason: "the TSC frequency is unknown".into(),
        };
    };
    let k = freq.ns_per_tick();
    let (cost, ticks, after_idle) = if with_p {
        let (c, t) = time_batches(tsc::rdtscp, LIBRARY_WEIGHT * unit_ns, b);
        (
            c,
            t,
            after_idle_pairs(tsc::rdtscp, k, IDLE_WEIGHT * unit_ns, b),
        )
    } else {
        let (c, t) = time_batches(tsc::rdtsc, LIBRARY_WEIGHT * unit_ns, b);
        (
            c,
            t,
            after_idle_pairs(tsc::rdtsc, k, IDLE_WEIGHT * unit_ns, b),
        )
    };
    ClockOutcome::Measured(Box::new(ClockMeasurement {
        resolution_ns: (k.ceil() as Nanos).max(1),
        cost,
        syscall_cost: None,
        access: Access::Instruction,
        deltas: ticks.scaled(k),
        delta_ticks: Some(ticks),
        after_idle,
    }))
}

#[cfg(not(target_arch = "x86_64"))]
fn measure_tsc(
    _source: ClockKind,
    _unit_ns: Nanos,
    _freq: Option<&TscFrequency>,
    _b: &mut Buffers<'_>,
) -> ClockOutcome {
    ClockOutcome::Unsupported {
        reason: "the TSC is read only on x86-64".into(),
    }
}

/// Times batches of [`READS_PER_BATCH`] back-to-back reads with [`BATCH_CLOCK`] around each,
/// for about `share_ns` (at least [`MIN_BATCHES`], at most [`MAX_BATCHES`]), and returns the
/// cost per read and the deltas between successive reads (in `read`'s unit).
#[inline(always)]
fn time_batches<F: FnMut() -> i64>(
    mut read: F,
    share_ns: Nanos,
    b: &mut Buffers<'_>,
) -> (CostStats, DeltaStats) {
    b.batch_ns.clear();
    b.deltas.reset();
    let start = read_clock(BATCH_CLOCK);
    loop {
        let t0 = read_clock(BATCH_CLOCK);
        for slot in b.reads.iter_mut() {
            *slot = read();
        }
        let t1 = read_clock(BATCH_CLOCK);
        b.batch_ns.push(t1 - t0); // within the capacity reserved in Buffers::new
        b.deltas.add_run(&b.reads);
        let n = b.batch_ns.len();
        let enough = t1 - start >= share_ns || b.stop.load(Ordering::Relaxed);
        if n >= MAX_BATCHES || (n >= MIN_BATCHES && enough) {
            break;
        }
    }
    let cost = cost_stats(&mut b.batch_ns, READS_PER_BATCH);
    let deltas = b.deltas.summary();
    (
        cost.expect("at least MIN_BATCHES batches ran"),
        deltas.expect("every batch holds READS_PER_BATCH ≥ 2 reads"),
    )
}

/// The clock_gettime 2010 post's measurement: sleep [`IDLE_GAP_NS`], read twice back to back, keep the
/// difference (× `unit_ns`, rounded to ns); repeated for about `share_ns` (at least
/// [`MIN_IDLE_PAIRS`], at most [`MAX_IDLE_PAIRS`] times).
#[inline(always)]
fn after_idle_pairs<F: FnMut() -> i64>(
    mut read: F,
    unit_ns: f64,
    share_ns: Nanos,
    b: &mut Buffers<'_>,
) -> PairStats {
    b.pairs.clear();
    let start = read_clock(BATCH_CLOCK);
    loop {
        std::thread::sleep(Duration::from_nanos(IDLE_GAP_NS as u64));
        let first = read();
        let second = read();
        let delta = second.wrapping_sub(first);
        b.pairs.push((delta as f64 * unit_ns).round() as Nanos);
        let n = b.pairs.len();
        if n >= MAX_IDLE_PAIRS
            || (n >= MIN_IDLE_PAIRS
                && (read_clock(BATCH_CLOCK) - start >= share_ns || b.stop.load(Ordering::Relaxed)))
        {
            break;
        }
    }
    pair_stats(&mut b.pairs, IDLE_GAP_NS).expect("at least MIN_IDLE_PAIRS pairs were taken")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_measurement_covers_every_clock() {
        let cfg = ClocksConfig {
            cpu: None,
            budget_ns: 50 * NS_PER_MS,
            idle_compare: false,
        };
        let r = measure(&cfg).unwrap();
        assert_eq!(r.clocks.len(), ClockKind::all().len());
        assert!(r.idle_compare.is_empty());
        let mono = r.clocks[2]
            .measured()
            .expect("CLOCK_MONOTONIC is always there");
        assert_eq!(r.clocks[2].clock, ClockKind::Monotonic);
        assert!(mono.cost.median_ns > 0.0 && mono.cost.batches >= MIN_BATCHES as u64);
        assert_eq!(mono.deltas.backward_steps, 0);
        assert!(mono.after_idle.samples >= MIN_IDLE_PAIRS as u64);
        let bad = ClocksConfig {
            budget_ns: 0,
            ..cfg
        };
        assert!(matches!(
            measure(&bad).map_err(|e| e.kind().clone()),
            Err(tickscope_engine::error::ErrorKind::InvalidConfig { .. })
        ));
    }

    #[test]
    fn one_clock_alone() {
        let ClockOutcome::Measured(m) =
            measure_clock(ClockKind::Monotonic, 20 * NS_PER_MS).unwrap()
        else {
            panic!("CLOCK_MONOTONIC is always there");
        };
        assert!(m.cost.median_ns > 0.0 && m.cost.batches >= MIN_BATCHES as u64);
        assert!(m.syscall_cost.is_some());
        assert!(measure_clock(ClockKind::Monotonic, 0).is_err());
        assert!(measure_clock(ClockKind::Rdtsc, 20 * NS_PER_MS).is_err());
    }
}
