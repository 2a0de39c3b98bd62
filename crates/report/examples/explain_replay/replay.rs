//! The oracle's recorded late wake-ups (`crates/explain/tests/fixtures/oracle/`) replayed at
//! the volume of a many-CPU host, through the path `monitor --explain` runs on the BPF
//! backend: each late wake-up's events become the binary records the BPF program writes
//! into its per-CPU rings (`bpf/capture.bpf.c`, layout in `tickscope_explain::bpf_records`),
//! a dump of each ring it touched is decoded by the backend's [`Decoder`], pushed through the
//! controller's [`EventWindow`] (3 s, as the controller keeps it), attributed
//! ([`attribute`]), counted in the thread's [`CauseTable`], published as the controller
//! publishes and turned into the `monitor` cause counters ([`Why`]) and a textfile.
//!
//! Each virtual thread `k` replays the recordings in turn, with every timestamp shifted to
//! its own virtual time (the expiries and callback times in the payloads too), its own
//! two CPUs (`2k`, `2k + 1`: the recordings were made on a 2-CPU machine) and its own tid;
//! every other task gets a pid and command name drawn from `variants` (the command
//! name's first 9 bytes, `-`, the variant: at most 15 bytes as `TASK_COMM_LEN` allows), so
//! the decoder's name tables and the culprit counts see many more names than the
//! recordings hold. The events the BPF programs do not record are left out, as
//! `oracle_replay.rs`'s lean path does; the decoder puts back what it always puts back.
//!
//! Nothing here is timing: the replay runs as fast as the CPU allows.

use prometheus::{Encoder, Registry, TextEncoder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tickscope_explain::bpf_records::{
    parse_dump, Decoder, DUMP_SIZE, HEADER_SIZE, RECORD_SIZE, RING_LEN, SOFTIRQS, VECTORS,
};
use tickscope_explain::controller::{
    publish_state, Published, PublishedThread, CATCH_UP_NS, WINDOW_CAP,
};
use tickscope_explain::table::{CauseTable, DETAILS_KEPT};
use tickscope_explain::window::EventWindow;
use tickscope_explain::{attribute, Breakdown, Event, Kind, LateSample, Nanos, Setting};
use tickscope_report::sink::prometheus::why::Why;

/// The controller's window with the BPF backend (the default of [`Replay::load`]'s
/// `keep_ns`), at most [`WINDOW_CAP`] per CPU.
pub const WINDOW_KEEP_NS: Nanos = tickscope_explain::backend::BPF_WINDOW_KEEP_NS;
/// Breakdowns kept for the result (`run --explain`'s default, `cmd/explain.rs`).
pub const KEEP_BREAKDOWNS: usize = 20;
/// Where the virtual clock starts, ns (any positive time: records with time 0 are empty).
const START_NS: Nanos = 1_000_000_000_000;

/// One recorded late wake-up and the setting of its recording.
struct Row {
    setting: usize,
    sample: LateSample,
    /// Its events the BPF programs record, ordered by (CPU, time).
    events: Vec<Event>,
}

/// What is replayed, and the state of the pipeline.
pub struct Replay {
    settings: Vec<Setting>,
    rows: Vec<Row>,
    threads: usize,
    variants: u64,
    /// Function name → the address its records carry (and the decoder resolves).
    functions: HashMap<String, u64>,
    decoder: Decoder,
    window: EventWindow,
    /// Per virtual CPU: records written so far and the ring as the kernel holds it.
    rings: Vec<(u64, Vec<u8>)>,
    tables: Vec<(u64, CauseTable)>,
    /// The slowest breakdowns (as the controller keeps them).
    pub breakdowns: Vec<Breakdown>,
    registry: Registry,
    why: Why,
    textfile: PathBuf,
    /// Late wake-ups replayed.
    pub late: u64,
    /// Records decoded.
    pub records: u64,
    /// Bytes of the last textfile written.
    pub textfile_bytes: usize,
    next: u64,
    decoded: Vec<Event>,
}

/// Sizes of everything the long path keeps, for the checks and the bench's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Task names by pid in the decoder (≤ 4096).
    pub comms: usize,
    /// Interned texts in the decoder (≤ its cap).
    pub names: usize,
    /// Timer callbacks known (by address).
    pub symbols: usize,
    /// IRQ names known.
    pub irqs: usize,
    /// Events in the window.
    pub window: usize,
    /// Most detail names in one cause row of one thread (≤ DETAILS_KEPT + 1).
    pub details: usize,
    /// Cause rows, all threads.
    pub causes: usize,
    /// `tickscope_late_culprit_info` series.
    pub culprit_series: usize,
    /// Breakdowns kept.
    pub breakdowns: usize,
}

fn shift(kind: &mut Kind, by: Nanos) {
    match kind {
        Kind::HrtimerStart {
            expires,
            softexpires,
            ..
        } => {
            *expires += by;
            if let Some(s) = softexpires {
                *s += by;
            }
        }
        Kind::HrtimerExpireEntry { now, .. } => *now += by,
        _ => {}
    }
}

/// The events of `events` that the BPF programs record (`oracle_replay.rs`, `lean_path`).
fn recorded(e: &Event) -> bool {
    match &e.kind {
        Kind::VectorEntry { name } => name != "local_timer",
        Kind::CpuIdle { state } => state.is_some(),
        Kind::HrtimerExpireExit { .. } => false,
        k => code_of(k).is_some(),
    }
}

/// The record kind (`enum kind` of the C source) of an event kind the programs record.
fn code_of(k: &Kind) -> Option<u16> {
    Some(match k {
        Kind::HrtimerStart { .. } => 1,
        Kind::HrtimerExpireEntry { .. } => 2,
        Kind::HrtimerExpireExit { .. } => 3,
        Kind::VectorEntry { .. } => 4,
        Kind::VectorExit { .. } => 5,
        Kind::IrqEntry { .. } => 6,
        Kind::IrqExit { .. } => 7,
        Kind::SoftirqEntry { .. } => 8,
        Kind::SoftirqExit { .. } => 9,
        Kind::SchedSwitch { .. } => 10,
        Kind::CpuIdle { .. } => 11,
        Kind::SysExit { .. } => 12,
        Kind::PageFault { .. } => 13,
        _ => return None,
    })
}

fn comm_words(name: &str) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = name.len().min(15);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    let mut w = [0u64; 2];
    for (i, c) in b.chunks(8).enumerate() {
        let mut x = [0u8; 8];
        x.copy_from_slice(c);
        w[i] = u64::from_le_bytes(x);
    }
    w
}

/// `(preempted, state bits)` for `sched_switch`'s state letters (the inverse of
/// `bpf_records::state_letters`).
fn state_bits(letters: &str) -> (bool, u32) {
    match letters {
        "R+" => (true, 0),
        "S" => (false, 1),
        "D" => (false, 2),
        "T" => (false, 4),
        "t" => (false, 8),
        "X" => (false, 16),
        "Z" => (false, 32),
        "P" => (false, 64),
        "I" => (false, 0x402),
        _ => (false, 0),
    }
}

fn index_of(list: &[&str], name: &str) -> u64 {
    list.iter().position(|n| *n == name).unwrap_or(0) as u64
}

impl Replay {
    /// Loads every `*.jsonl` recording of `dir` for `threads` virtual threads, task names
    /// drawn from `variants` (≥ 1) per recorded name, the event window keeping `keep_ns`
    /// behind its newest event ([`WINDOW_KEEP_NS`] as the controller).
    ///
    /// # Errors
    /// A recording that cannot be read or parsed, in words.
    pub fn load(
        dir: &Path,
        threads: usize,
        variants: u64,
        keep_ns: Nanos,
    ) -> Result<Replay, String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        let (mut settings, mut rows) = (Vec::new(), Vec::new());
        let (mut functions, mut irqs) = (HashMap::new(), HashMap::new());
        for f in &files {
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let mut lines = text.lines();
            let bad = |e: serde_json::Error| format!("{}: {e}", f.display());
            let head: serde_json::Value =
                serde_json::from_str(lines.next().unwrap_or("")).map_err(bad)?;
            let s = &head["setting"];
            settings.push(Setting {
                period: s["period"].as_i64().unwrap_or(1_000_000),
                virtualized: s["virtualized"].as_bool().unwrap_or(false),
                wait_syscalls: s["wait_syscalls"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_i64()).collect())
                    .unwrap_or_default(),
                timer_functions: s["timer_functions"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                returns_traced: s["returns_traced"].as_bool().unwrap_or(true),
                cpu_quota: s["cpu_quota"].as_bool(),
                spins: s["spins"].as_bool().unwrap_or(false),
                timer_before_expiry: s["timer_before_expiry"].as_bool().unwrap_or(false),
            });
            for line in lines {
                #[derive(serde::Deserialize)]
                struct Rec {
                    sample: LateSample,
                    events: Vec<Event>,
                }
                let r: Rec = serde_json::from_str(line).map_err(bad)?;
                let mut events: Vec<Event> = r.events.into_iter().filter(recorded).collect();
                for e in &events {
                    match &e.kind {
                        Kind::HrtimerStart { function, .. }
                        | Kind::HrtimerExpireEntry { function, .. } => {
                            let next = 0xffff_ffff_8100_0000 + 0x40 * functions.len() as u64;
                            functions.entry(function.to_string()).or_insert(next);
                        }
                        Kind::IrqEntry { irq, name } => {
                            irqs.entry(name.to_string()).or_insert(*irq);
                        }
                        _ => {}
                    }
                }
                events.sort_by_key(|e| (e.cpu, e.ts));
                rows.push(Row {
                    setting: settings.len() - 1,
                    sample: r.sample,
                    events,
                });
            }
        }
        if rows.is_empty() {
            return Err(format!("no recordings in {}", dir.display()));
        }
        let symbols = functions.iter().map(|(n, a)| (*a, n.clone())).collect();
        let irq_names = irqs.iter().map(|(n, i)| (*i, n.clone())).collect();
        let registry = Registry::new();
        let why = Why::register(&registry, &["thread"]);
        let textfile =
            std::env::temp_dir().join(format!("explain-replay-{}.prom", std::process::id()));
        Ok(Replay {
            settings,
            rows,
            threads,
            variants: variants.max(1),
            functions,
            decoder: Decoder::offline(symbols, irq_names),
            window: EventWindow::new(keep_ns, WINDOW_CAP),
            rings: (0..2 * threads)
                .map(|_| (0, vec![0u8; DUMP_SIZE]))
                .collect(),
            tables: vec![(0, CauseTable::default()); threads],
            breakdowns: Vec::new(),
            registry,
            why,
            textfile,
            late: 0,
            records: 0,
            textfile_bytes: 0,
            next: 0,
            decoded: Vec::new(),
        })
    }

    /// Recorded late wake-ups available.
    pub fn recordings(&self) -> usize {
        self.rows.len()
    }

    /// Replays one late wake-up of virtual thread `k` whose expiry is `expiry` ns of virtual
    /// time: the next recording in turn.
    pub fn late_wakeup(&mut self, k: usize, expiry: Nanos) {
        let n = self.next;
        self.next += 1;
        let row = &self.rows[(n % self.rows.len() as u64) as usize];
        let by = START_NS + expiry - row.sample.expiry;
        let tid = 100_000 + k as i32;
        let rename = |pid: i32, comm: &str| -> (i32, String) {
            if pid == 0 {
                return (0, comm.to_string());
            }
            if pid == row.sample.tid {
                return (tid, comm.to_string());
            }
            let v = (n.wrapping_mul(7919) + pid as u64) % self.variants;
            let stem: String = comm.chars().take(9).collect();
            (200_000 + v as i32, format!("{stem}-{v}"))
        };
        let mut touched: Vec<usize> = Vec::new();
        for e in &row.events {
            let cpu = 2 * k + (e.cpu as usize % 2);
            let Some(code) = code_of(&e.kind) else {
                continue;
            };
            let (pid, _) = rename(e.pid, &e.comm);
            let mut kind = e.kind.clone();
            shift(&mut kind, by);
            let p: [u64; 6] = match &kind {
                Kind::HrtimerStart {
                    timer,
                    function,
                    expires,
                    softexpires,
                } => [
                    *timer,
                    *expires as u64,
                    softexpires.unwrap_or(*expires) as u64,
                    self.functions.get(function.as_str()).copied().unwrap_or(0),
                    0,
                    0,
                ],
                Kind::HrtimerExpireEntry {
                    timer,
                    function,
                    now,
                    user,
                } => [
                    *timer,
                    *now as u64,
                    match user {
                        Some(true) => 2,
                        Some(false) => 1,
                        None => 0,
                    },
                    self.functions.get(function.as_str()).copied().unwrap_or(0),
                    0,
                    0,
                ],
                Kind::HrtimerExpireExit { timer } => [*timer, 0, 0, 0, 0, 0],
                Kind::VectorEntry { name } | Kind::VectorExit { name } => {
                    [index_of(&VECTORS, name), 0, 0, 0, 0, 0]
                }
                Kind::IrqEntry { irq, .. } | Kind::IrqExit { irq } => [*irq as u64, 0, 0, 0, 0, 0],
                Kind::SoftirqEntry { action } | Kind::SoftirqExit { action } => {
                    [index_of(&SOFTIRQS, action), 0, 0, 0, 0, 0]
                }
                Kind::SchedSwitch {
                    prev_pid,
                    prev_comm,
                    prev_state,
                    prev_prio,
                    next_pid,
                    next_comm,
                    next_prio,
                } => {
                    let (pp, pc) = rename(*prev_pid, prev_comm);
                    let (np, nc) = rename(*next_pid, next_comm);
                    let (preempt, bits) = state_bits(prev_state);
                    let [a0, a1] = comm_words(&pc);
                    let [b0, b1] = comm_words(&nc);
                    [
                        pp as u32 as u64 | (np as u32 as u64) << 32,
                        (bits as u64 & 0xffff)
                            | (prev_prio.map_or(0, |p| (p + 1) as u64 & 0xff) << 16)
                            | (preempt as u64) << 31
                            | (*next_prio as u32 as u64) << 32,
                        a0,
                        a1,
                        b0,
                        b1,
                    ]
                }
                Kind::CpuIdle { state } => [state.unwrap_or(u32::MAX) as u64, 0, 0, 0, 0, 0],
                Kind::SysExit { nr } => [*nr as u64, 0, 0, 0, 0, 0],
                Kind::PageFault { address, user } => [*address, *user as u64, 0, 0, 0, 0],
                _ => continue,
            };
            let (head, ring) = &mut self.rings[cpu];
            let at = HEADER_SIZE + (*head as usize % RING_LEN) * RECORD_SIZE;
            let r = &mut ring[at..at + RECORD_SIZE];
            r[0..8].copy_from_slice(&((e.ts + by) as u64).to_le_bytes());
            r[8..12].copy_from_slice(&(pid as u32).to_le_bytes());
            r[12..14].copy_from_slice(&code.to_le_bytes());
            for (j, w) in p.iter().enumerate() {
                r[16 + 8 * j..24 + 8 * j].copy_from_slice(&w.to_le_bytes());
            }
            *head += 1;
            if !touched.contains(&cpu) {
                touched.push(cpu);
            }
        }
        let sample = LateSample {
            thread: k,
            tid,
            seq: self.tables[k].0,
            expiry: START_NS + expiry,
            woke: START_NS + expiry + row.sample.latency(),
        };
        let setting = &self.settings[row.setting];
        for cpu in touched {
            let (head, ring) = &mut self.rings[cpu];
            ring[0..8].copy_from_slice(&head.to_le_bytes());
            ring[8..12].copy_from_slice(&(tid as u32).to_le_bytes());
            ring[12..16].copy_from_slice(&(cpu as u32).to_le_bytes());
            ring[16..24].copy_from_slice(&(sample.expiry as u64).to_le_bytes());
            ring[24..32].copy_from_slice(&(sample.woke as u64).to_le_bytes());
            if let Some(d) = parse_dump(ring) {
                self.records += self.decoder.decode(&d, &mut self.decoded) as u64;
            }
        }
        for e in self.decoded.drain(..) {
            self.window.push(e);
        }
        let from = sample.expiry - 2 * setting.period - CATCH_UP_NS;
        let events = self.window.range(from, sample.woke + CATCH_UP_NS);
        let b = attribute(&sample, setting, &events);
        let (late, table) = &mut self.tables[k];
        *late += 1;
        table.add(&b);
        self.late += 1;
        self.keep(b);
    }

    /// As the controller keeps breakdowns: the slowest [`KEEP_BREAKDOWNS`].
    fn keep(&mut self, b: Breakdown) {
        let list = &mut self.breakdowns;
        if list.len() >= KEEP_BREAKDOWNS
            && list.last().is_some_and(|w| w.latency_ns >= b.latency_ns)
        {
            return;
        }
        list.push(b);
        list.sort_by_key(|b| std::cmp::Reverse(b.latency_ns));
        list.truncate(KEEP_BREAKDOWNS);
    }

    /// Publishes the cause tables as the controller does after a window, updates the
    /// `monitor` cause counters from them and rewrites the textfile (written to a file in
    /// the temporary directory and renamed over the previous one, as `--textfile` does).
    ///
    /// # Errors
    /// Writing the textfile, in words.
    pub fn publish(&mut self) -> Result<(), String> {
        publish_state(Published {
            backend: "bpf".into(),
            threads: self
                .tables
                .iter()
                .enumerate()
                .map(|(thread, (late, causes))| PublishedThread {
                    thread,
                    late: *late,
                    pending: 0,
                    causes: causes.clone(),
                })
                .collect(),
        });
        let threads = self.threads;
        self.why
            .update(|t| (t < threads).then(|| vec![t.to_string()]));
        let mut text = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut text)
            .map_err(|e| e.to_string())?;
        let tmp = self.textfile.with_extension("prom.tmp");
        std::fs::write(&tmp, &text)
            .and_then(|()| std::fs::rename(&tmp, &self.textfile))
            .map_err(|e| format!("{}: {e}", self.textfile.display()))?;
        self.textfile_bytes = text.len();
        Ok(())
    }

    /// The late wake-ups counted by the `monitor` counters, and their sum by cause, from the
    /// last textfile written: (total of `tickscope_late_wakeups_total`, late wake-ups).
    pub fn counted(&self) -> (u64, u64) {
        let fam = self.registry.gather();
        let total = fam
            .iter()
            .filter(|f| f.name() == "tickscope_late_wakeups_total")
            .flat_map(|f| {
                f.get_metric()
                    .iter()
                    .map(|m| m.get_counter().get_value() as u64)
            })
            .sum();
        (total, self.tables.iter().map(|t| t.0).sum())
    }

    /// Sizes of what the path keeps now.
    pub fn sizes(&self) -> Sizes {
        let (comms, names, symbols, irqs) = self.decoder.table_sizes();
        let culprit_series = self
            .registry
            .gather()
            .iter()
            .filter(|f| f.name() == "tickscope_late_culprit_info")
            .map(|f| f.get_metric().len())
            .sum();
        Sizes {
            comms,
            names,
            symbols,
            irqs,
            window: self.window.len(),
            details: self
                .tables
                .iter()
                .flat_map(|t| t.1.causes.values().map(|r| r.details.len()))
                .max()
                .unwrap_or(0),
            causes: self.tables.iter().map(|t| t.1.causes.len()).sum(),
            culprit_series,
            breakdowns: self.breakdowns.len(),
        }
    }

    /// Late wake-ups by cause category, all threads, most frequent first.
    pub fn causes(&self) -> Vec<(String, u64)> {
        let mut all = CauseTable::default();
        for (_, t) in &self.tables {
            all.merge(t);
        }
        let mut v: Vec<(String, u64)> = all.causes.into_iter().map(|(c, r)| (c, r.count)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// The bound on detail names per cause row (`DETAILS_KEPT` + "(other names)").
    pub fn details_bound() -> usize {
        DETAILS_KEPT + 1
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.textfile);
    }
}
