//! The BPF backend's binary records (`bpf/capture.bpf.c`) decoded into [`Event`]s, so that
//! [`crate::attribute`] explains them exactly as it explains the text of `trace_pipe`.
//!
//! A dump is one CPU's ring as the BPF program copied it to the ring buffer when a measured
//! thread was late: a [`HEADER_SIZE`]-byte header (see [`Dump`]; it ends with the two newest
//! armings of a watched thread's wait timer, records of their own, see [`ARMED_AT`]) and
//! [`RING_LEN`] records of 64 bytes, written in place from `head % RING_LEN`. Each record is `ts` (u64, CLOCK_MONOTONIC ns from
//! `bpf_ktime_get_ns()`, "BPF helpers", man 7 bpf-helpers), `pid` (u32, the current task),
//! `kind` (u16), 2 unused bytes and six u64 payload words whose meaning depends on the kind
//! (the same numbers as `enum kind` in the C source). All fields are little-endian, as the
//! machine writes them. Timestamps are exact ns (the text path prints µs).
//!
//! Names the records carry as numbers are looked up here: timer callbacks printed by the
//! kernel (`%ps` through BPF), else in `/proc/kallsyms`; IRQ handler names in
//! `/proc/interrupts`; softirq vectors by number (`softirq_to_name`, kernel/softirq.c); task
//! names from the switches seen (else `/proc/PID/comm`).

use crate::events::{Event, Kind, Nanos};
use crate::name::{Interner, Name};
use std::collections::HashMap;

/// Records per CPU ring (`RING_LEN` in the C source).
pub const RING_LEN: usize = 256;
/// Bytes per record.
pub const RECORD_SIZE: usize = 64;
/// Bytes of a dump's header.
pub const HEADER_SIZE: usize = 216;
/// Where the header keeps the two newest armings of a watched thread's wait timer on the CPU
/// (`armed_seq[2]`, u64, their positions in the CPU's stream, then the 64-byte records
/// `armed[2]`; `armed[0]` the newest, a record of time 0 where there was none): under a flood of
/// interrupts the ring turns over within one period, and a window whose arming was
/// overwritten still has it from here. Two, because where the wait's return is not traced
/// the window is sent after the thread armed its next timer.
pub const ARMED_AT: usize = 72;
/// How many armings the header keeps.
const ARMINGS: usize = 2;
/// Bytes of one dump (`struct ring`).
pub const DUMP_SIZE: usize = HEADER_SIZE + RING_LEN * RECORD_SIZE;

/// The x86 vectors, by the index the C program records (`VECTOR(name, idx)`).
pub const VECTORS: [&str; 8] = [
    "local_timer",
    "reschedule",
    "call_function",
    "call_function_single",
    "irq_work",
    "error_apic",
    "spurious_apic",
    "thermal_apic",
];

/// Softirq vector names by number (`softirq_to_name`, kernel/softirq.c).
pub const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// At most this many task names are remembered (then forgotten all at once and relearned).
const COMMS_KEPT: usize = 4096;

/// The idle task's name as the text output prints it.
const IDLE: Name = Name::from_static("<idle>");
/// A task whose name is not known (as the text output prints it).
const UNKNOWN: Name = Name::from_static("<...>");

/// One record as written by the BPF program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Position in the CPU's stream of records (0 = the first since load).
    pub seq: u64,
    /// CLOCK_MONOTONIC, ns.
    pub ts: Nanos,
    /// The current task's id (0 = idle).
    pub pid: i32,
    /// `enum kind` of the C source.
    pub kind: u16,
    /// Payload words.
    pub p: [u64; 6],
}

/// One CPU's ring, sent because thread `tid` was late — or, with `tid` 0, a carry copy: a
/// watched thread overdue and kept off this CPU while half the ring filled (the late
/// window, sent later, would start after its expiry without it; `carry()` in the C source).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dump {
    /// Records written on this CPU since load (`head`).
    pub head: u64,
    /// The late thread (0: a carry copy).
    pub tid: i32,
    /// The CPU whose ring this is.
    pub cpu: u32,
    /// The thread's soft expiry (the time it asked for; the hard one is later by its timer
    /// slack), ns.
    pub expiry: Nanos,
    /// Its return from the wait (`sys_exit`), ns.
    pub woke: Nanos,
    /// Dumps sent from this CPU so far (this one included).
    pub dumps: u64,
    /// Dumps this CPU could not send (ring buffer full) so far.
    pub dumps_lost: u64,
    /// The ring's records, oldest first, only those written — and before them the armings
    /// kept in the header ([`ARMED_AT`]) that the ring no longer holds.
    pub records: Vec<Record>,
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

impl Dump {
    /// The dump's header alone (no records; allocates nothing).
    pub fn clone_header(&self) -> Dump {
        Dump {
            records: Vec::new(),
            ..*self
        }
    }
}

/// Decodes one dump; `None` when it is shorter than [`DUMP_SIZE`].
pub fn parse_dump(b: &[u8]) -> Option<Dump> {
    let mut d = Dump {
        records: Vec::with_capacity(RING_LEN + ARMINGS),
        ..Dump::default()
    };
    parse_dump_into(b, &mut d, None).then_some(d)
}

/// [`parse_dump`] into `d`, whose record list is reused (its capacity kept: a collector
/// that passes the same one every time allocates nothing per dump), leaving out the records
/// up to sequence `through` (already decoded from an earlier dump of the CPU); `false`,
/// with `d` unchanged, when `b` is shorter than [`DUMP_SIZE`].
fn parse_dump_into(b: &[u8], d: &mut Dump, through: Option<u64>) -> bool {
    if b.len() < DUMP_SIZE {
        return false;
    }
    let head = u64_at(b, 0);
    let records = &mut d.records;
    records.clear();
    let first = head
        .saturating_sub(RING_LEN as u64)
        .max(through.map_or(0, |t| t.saturating_add(1)));
    // The armings the header keeps, where the ring has overwritten them and they were not
    // decoded from an earlier dump (a record of time 0: none).
    for k in 0..ARMINGS {
        let seq = u64_at(b, ARMED_AT + 8 * k);
        if seq < head.saturating_sub(RING_LEN as u64) && through.is_none_or(|t| seq > t) {
            let at = ARMED_AT + 8 * ARMINGS + k * RECORD_SIZE;
            records.extend(record_at(b, at, seq));
        }
    }
    for seq in first..head {
        let at = HEADER_SIZE + (seq as usize % RING_LEN) * RECORD_SIZE;
        if let Some(r) = record_at(b, at, seq) {
            records.push(r);
        }
    }
    // A record interrupted between taking its slot and reading the clock can be out of
    // order by the length of the interrupt. (Ties keep the order of writing, as a stable
    // sort would, without its buffer.)
    records.sort_unstable_by_key(|r| (r.ts, r.seq));
    d.head = head;
    d.tid = u32_at(b, 8) as i32;
    d.cpu = u32_at(b, 12);
    d.expiry = u64_at(b, 16) as Nanos;
    d.woke = u64_at(b, 24) as Nanos;
    d.dumps = u64_at(b, 32);
    d.dumps_lost = u64_at(b, 40);
    true
}

/// The record at byte `at` of a dump, number `seq` of its CPU; `None` where it was never
/// written (time 0).
fn record_at(b: &[u8], at: usize, seq: u64) -> Option<Record> {
    // One bounds check for the record; each word from its fixed place.
    let r: &[u8; RECORD_SIZE] = b.get(at..at + RECORD_SIZE)?.try_into().ok()?;
    let word = |i: usize| {
        let w: [u8; 8] = r[8 * i..8 * i + 8].try_into().expect("8 bytes");
        u64::from_le_bytes(w)
    };
    let ts = word(0);
    if ts == 0 {
        return None;
    }
    let head = word(1);
    Some(Record {
        seq,
        ts: ts as Nanos,
        pid: head as u32 as i32,
        kind: (head >> 32) as u16,
        p: [word(2), word(3), word(4), word(5), word(6), word(7)],
    })
}

/// The `prev_state` letters `sched_switch` prints (`__trace_sched_switch_state` and the
/// event's `TP_printk`, include/trace/events/sched.h): `R+` when preempted, `R` when
/// runnable, else the letter of the highest reported state bit (`I` for `TASK_IDLE`).
pub fn state_letters(preempt: bool, state: u32) -> &'static str {
    const TASK_IDLE: u32 = 0x0402; // TASK_UNINTERRUPTIBLE | TASK_NOLOAD
    if preempt {
        return "R+";
    }
    if state == TASK_IDLE {
        return "I";
    }
    match 32 - (state & 0x7f).leading_zeros() {
        0 => "R",
        1 => "S",
        2 => "D",
        3 => "T",
        4 => "t",
        5 => "X",
        6 => "Z",
        _ => "P",
    }
}

/// The bytes of a task name carried in two payload words (`char comm[16]`, NUL-padded).
fn comm_bytes(words: &[u64]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (chunk, w) in b.chunks_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// The decoder's tables, looked up for nearly every record: foldhash (the hash `hashbrown`
/// uses by default) instead of SipHash, seeded per process.
type Fast<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Turns dumps into [`Event`]s: each CPU's records once, in order, with names resolved.
/// Names come from a bounded [`Interner`] and the buffers are kept between dumps: once a
/// run's names are known, decoding a dump allocates nothing per record.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Newest record sequence already turned into events, per CPU.
    done: Fast<u32, u64>,
    comms: Fast<i32, Name>,
    symbols: Fast<u64, Name>,
    irqs: Fast<u32, Name>,
    names: Interner,
    /// [`FillIn`]'s per-CPU state (its buffer kept between dumps).
    fill_cpus: Vec<(u32, CpuFill)>,
    /// The dump [`Decoder::decode_bytes`] parses into (kept between dumps).
    dump: Dump,
    /// Read `/proc` for names not learned from the records (off in tests).
    read_proc: bool,
    /// `/proc/kallsyms` hid its addresses from this process (no `CAP_SYSLOG`): not read
    /// again.
    kallsyms_hidden: bool,
    /// The kernel refused to name addresses by `%ps` ([`crate::bpf_ksym::names_of`]): not
    /// asked again.
    printing_refused: bool,
}

impl Decoder {
    /// A decoder that asks the kernel (timer callbacks, through BPF, else `/proc/kallsyms`)
    /// and reads `/proc/interrupts` and `/proc/PID/comm` for names the records do not carry.
    pub fn new() -> Self {
        Decoder {
            read_proc: true,
            ..Default::default()
        }
    }

    /// A decoder that reads nothing from `/proc`: symbols and IRQ names come from `symbols`
    /// and `irqs`, unknown ones print as hex / numbers (for tests and replays).
    pub fn offline(symbols: HashMap<u64, String>, irqs: HashMap<u32, String>) -> Self {
        Decoder {
            symbols: symbols.into_iter().map(|(a, n)| (a, n.into())).collect(),
            irqs: irqs.into_iter().map(|(i, n)| (i, n.into())).collect(),
            ..Default::default()
        }
    }

    /// Names the timer callback at kernel address `address` (already read from
    /// `/proc/kallsyms` by the caller: no second read for it).
    pub fn know_symbol(&mut self, address: u64, name: &str) {
        let name = self.names.intern(name);
        self.symbols.insert(address, name);
    }

    /// How many names each of the decoder's tables holds: (task names by pid, interned
    /// texts, timer callbacks, IRQ handlers). The first two are bounded (4096 pids and
    /// the interner's cap); the last two grow only with the kernel's symbols and IRQs used.
    pub fn table_sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.comms.len(),
            self.names.len(),
            self.symbols.len(),
            self.irqs.len(),
        )
    }

    /// Appends the dump's records not decoded before (by sequence, per CPU) to `out`, oldest
    /// first, with what [`fill_in`] puts back. Returns how many records.
    ///
    /// When records between this CPU's previous window and this one were never sent
    /// (overwritten in the kernel's ring before a window carried them), a [`Kind::Lost`]
    /// marker with their count stands where the gap ends, at the time of the record after
    /// it: a late wake-up whose events fall in that gap is then "events lost", not
    /// "unexplained" ([`crate::window::EventWindow`] stamps when the gap began). Each arming
    /// the header kept ([`ARMED_AT`]) and put back splits such a gap: a marker on each side.
    pub fn decode(&mut self, dump: &Dump, out: &mut Vec<Event>) -> usize {
        let done = self.done.get(&dump.cpu).copied();
        // The records not decoded before, read in place (a dump that came through
        // [`Decoder::decode_bytes`] holds no others).
        let fresh = || {
            dump.records
                .iter()
                .filter(move |r| done.is_none_or(|d| r.seq > d))
        };
        if let Some(max) = fresh().map(|r| r.seq).max() {
            self.done.insert(dump.cpu, max);
        }
        // Records the ring can still hold start at `ring_from`; those before it are armings
        // the header kept. Gaps (records overwritten before any window carried them) are
        // marked where they end — before each kept arming and before the ring's oldest
        // record — each counted from the record before it in the stream (an arming, or this
        // CPU's previous window; before the CPU's first window nothing is known).
        let ring_from = dump.head.saturating_sub(RING_LEN as u64);
        let mut kept = [u64::MAX; ARMINGS];
        for (k, r) in fresh()
            .filter(|r| r.seq < ring_from)
            .take(ARMINGS)
            .enumerate()
        {
            kept[k] = r.seq;
        }
        kept.sort_unstable();
        let ring_first = fresh().filter(|r| r.seq >= ring_from).map(|r| r.seq).min();
        // (seq of the record a gap ends at, records lost), in stream order.
        let mut gaps = [(u64::MAX, 0u64); ARMINGS + 1];
        let mut prev = done;
        for (g, seq) in gaps.iter_mut().zip(
            kept.iter()
                .filter(|&&s| s != u64::MAX)
                .copied()
                .chain(ring_first),
        ) {
            *g = (
                seq,
                prev.filter(|&p| seq > p + 1).map_or(0, |p| seq - p - 1),
            );
            prev = Some(seq);
        }
        self.resolve_symbols(fresh());
        // Each event goes through `fill_in`'s state straight onto `out` (moved once).
        let mut events = FillIn::onto(out, std::mem::take(&mut self.fill_cpus));
        let mut ring_marked = false;
        let mut n = 0;
        for r in fresh() {
            n += 1;
            // The ring's marker stands before its oldest record in time (records interrupted
            // between taking their slot and reading the clock may be out of order).
            let ends_gap = match r.seq < ring_from {
                true => Some(r.seq),
                false => (!std::mem::replace(&mut ring_marked, true))
                    .then_some(ring_first)
                    .flatten(),
            };
            let count = ends_gap
                .and_then(|s| gaps.iter_mut().find(|g| g.0 == s))
                .map_or(0, |g| std::mem::take(&mut g.1));
            if count > 0 {
                events.push(Event {
                    ts: r.ts,
                    cpu: dump.cpu,
                    pid: -1,
                    comm: Name::default(),
                    kind: Kind::Lost { count, since: None },
                });
            }
            // Switches name the tasks they move: learn before naming this record's task.
            let kind = if r.kind == 10 {
                let prev = self.names.intern_bytes(&comm_bytes(&r.p[2..4]));
                self.learn(r.p[0] as u32 as i32, prev.clone());
                let next = self.next_name(&r.p);
                switch(r.p, prev, next)
            } else if r.kind == 14 {
                // The steal reading alone, where the wait's return is not traced.
                if r.p[2] == 1 {
                    let comm = self.comm(r.pid);
                    events.push(Event {
                        ts: r.ts,
                        cpu: dump.cpu,
                        pid: r.pid,
                        comm,
                        kind: Kind::Steal {
                            ns: r.p[1] as Nanos,
                        },
                    });
                }
                continue;
            } else {
                let Some(kind) = self.kind(r) else { continue };
                kind
            };
            let comm = self.comm(r.pid);
            // A wait's return carries the steal time since the wait began (p[2] = 1: known).
            let steal = (r.kind == 12 && r.p[2] == 1).then(|| Event {
                ts: r.ts,
                cpu: dump.cpu,
                pid: r.pid,
                comm: comm.clone(),
                kind: Kind::Steal {
                    ns: r.p[1] as Nanos,
                },
            });
            events.push(Event {
                ts: r.ts,
                cpu: dump.cpu,
                pid: r.pid,
                comm,
                kind,
            });
            if let Some(steal) = steal {
                events.push(steal);
            }
        }
        self.fill_cpus = events.finish();
        n
    }

    /// Parses and decodes one dump as it came from the ring buffer: [`parse_dump`] then
    /// [`Decoder::decode`], except that the records decoded before are not parsed at all
    /// (consecutive windows of a CPU overlap when late wake-ups come in bursts). Returns the
    /// dump's header (no records), `None` when `b` is shorter than [`DUMP_SIZE`].
    pub fn decode_bytes(&mut self, b: &[u8], out: &mut Vec<Event>) -> Option<Dump> {
        if b.len() < DUMP_SIZE {
            return None;
        }
        let through = self.done.get(&u32_at(b, 12)).copied();
        let mut d = std::mem::take(&mut self.dump);
        parse_dump_into(b, &mut d, through);
        self.decode(&d, out);
        let header = d.clone_header();
        self.dump = d;
        Some(header)
    }

    /// The name of the task a switch record moves to: its own words, learnt; or, where the
    /// program left them zero (the watched thread coming back from its wait, whose name it
    /// does not read: see `on_sched_switch`), the name known for that task.
    fn next_name(&mut self, p: &[u64; 6]) -> Name {
        let pid = (p[0] >> 32) as u32 as i32;
        if p[4] == 0 && p[5] == 0 {
            return self.comm(pid);
        }
        let next = self.names.intern_bytes(&comm_bytes(&p[4..6]));
        self.learn(pid, next.clone());
        next
    }

    fn learn(&mut self, pid: i32, comm: Name) {
        if pid == 0 {
            return;
        }
        if self.comms.get(&pid) == Some(&comm) {
            return;
        }
        if self.comms.len() >= COMMS_KEPT {
            self.comms.clear();
        }
        self.comms.insert(pid, comm);
    }

    fn comm(&mut self, pid: i32) -> Name {
        if pid == 0 {
            return IDLE;
        }
        if let Some(c) = self.comms.get(&pid) {
            return c.clone();
        }
        let c = match self.read_proc {
            true => match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                Ok(s) => self.names.intern(s.trim_end()),
                Err(_) => UNKNOWN,
            },
            false => UNKNOWN,
        };
        self.learn(pid, c.clone());
        c
    }

    fn symbol(&mut self, addr: u64) -> Name {
        if let Some(s) = self.symbols.get(&addr) {
            return s.clone();
        }
        let s = self.names.intern(&format!("0x{addr:x}"));
        self.symbols.insert(addr, s.clone());
        s
    }

    fn irq_name(&mut self, irq: u32) -> Name {
        if !self.irqs.contains_key(&irq) && self.read_proc {
            if let Ok(text) = std::fs::read_to_string("/proc/interrupts") {
                for (n, name) in irq_names(&text) {
                    let name = self.names.intern(&name);
                    self.irqs.insert(n, name);
                }
            }
        }
        if let Some(n) = self.irqs.get(&irq) {
            return n.clone();
        }
        let n = self.names.intern(&irq.to_string());
        self.irqs.insert(irq, n.clone());
        n
    }

    /// Names every timer callback of `records` not known yet: asked of the kernel by address
    /// ([`crate::bpf_ksym::names_of`]: no `CAP_SYSLOG` needed, no pass over the file), else
    /// looked up in `/proc/kallsyms` in one pass that stops once every address is named —
    /// timer callbacks are core kernel functions, in the first fifth of the file — or at once
    /// where the file hides addresses (then never read again). What stays unnamed prints as
    /// hex.
    fn resolve_symbols<'r>(&mut self, records: impl Iterator<Item = &'r Record>) {
        let mut missing: Vec<u64> = records
            .filter(|r| matches!(r.kind, 1 | 2))
            .map(|r| r.p[3])
            .filter(|a| !self.symbols.contains_key(a))
            .collect();
        if missing.is_empty() || !self.read_proc {
            return;
        }
        missing.sort_unstable();
        missing.dedup();
        let asked = match self.printing_refused {
            true => None,
            false => missing
                .chunks(crate::bpf_ksym::MAX_NAMES)
                .map(crate::bpf_ksym::names_of)
                .collect::<Option<Vec<_>>>(),
        };
        self.printing_refused = asked.is_none();
        if let Some(asked) = asked {
            for (a, name) in missing.iter().zip(asked.into_iter().flatten()) {
                if let Some(name) = name {
                    let name = self.names.intern(&name);
                    self.symbols.insert(*a, name);
                }
            }
        } else if !self.kallsyms_hidden {
            // Read line by line: reading the file whole would raise the process's peak
            // memory by its several MB for good.
            if let Ok(file) = std::fs::File::open("/proc/kallsyms") {
                let mut found = 0;
                let read =
                    crate::kallsyms::each_symbol(std::io::BufReader::new(file), |a, name| {
                        // The first name of an address wins (aliases share one).
                        if missing.binary_search(&a).is_ok() && !self.symbols.contains_key(&a) {
                            let name = self.names.intern(&String::from_utf8_lossy(name));
                            self.symbols.insert(a, name);
                            found += 1;
                        }
                        match found < missing.len() {
                            true => std::ops::ControlFlow::Continue(()),
                            false => std::ops::ControlFlow::Break(()),
                        }
                    });
                self.kallsyms_hidden = read == crate::kallsyms::Read::Hidden;
            }
        }
        for a in missing {
            if !self.symbols.contains_key(&a) {
                let hex = self.names.intern(&format!("0x{a:x}"));
                self.symbols.insert(a, hex);
            }
        }
    }

    fn kind(&mut self, r: &Record) -> Option<Kind> {
        let p = r.p;
        Some(match r.kind {
            1 => Kind::HrtimerStart {
                timer: p[0],
                function: self.symbol(p[3]),
                expires: p[1] as Nanos,
                softexpires: Some(p[2] as Nanos),
            },
            2 => Kind::HrtimerExpireEntry {
                timer: p[0],
                function: self.symbol(p[3]),
                now: p[1] as Nanos,
                user: match p[2] {
                    2 => Some(true),
                    1 => Some(false),
                    _ => None,
                },
            },
            3 => Kind::HrtimerExpireExit { timer: p[0] },
            4 => Kind::VectorEntry {
                name: Name::from_static(VECTORS.get(p[0] as usize)?),
            },
            5 => Kind::VectorExit {
                name: Name::from_static(VECTORS.get(p[0] as usize)?),
            },
            6 => Kind::IrqEntry {
                irq: p[0] as u32,
                name: self.irq_name(p[0] as u32),
            },
            7 => Kind::IrqExit { irq: p[0] as u32 },
            8 => Kind::SoftirqEntry {
                action: Name::from_static(SOFTIRQS.get(p[0] as usize)?),
            },
            9 => Kind::SoftirqExit {
                action: Name::from_static(SOFTIRQS.get(p[0] as usize)?),
            },
            10 => {
                let prev = self.names.intern_bytes(&comm_bytes(&p[2..4]));
                switch(p, prev, self.next_name(&p))
            }
            11 => Kind::CpuIdle {
                state: (p[0] as u32 != u32::MAX).then_some(p[0] as u32),
            },
            12 => Kind::SysExit { nr: p[0] as i64 },
            13 => Kind::PageFault {
                address: p[0],
                user: p[1] != 0,
            },
            _ => return None,
        })
    }
}

/// A `sched_switch` record's kind, its task names already interned.
fn switch(p: [u64; 6], prev_comm: Name, next_comm: Name) -> Kind {
    Kind::SchedSwitch {
        prev_pid: p[0] as u32 as i32,
        prev_comm,
        prev_state: Name::from_static(state_letters(p[1] & (1 << 31) != 0, (p[1] & 0xffff) as u32)),
        prev_prio: match (p[1] >> 16) & 0xff {
            0 => None,
            k => Some(k as i32 - 1),
        },
        next_pid: (p[0] >> 32) as u32 as i32,
        next_comm,
        next_prio: (p[1] >> 32) as u32 as i32,
    }
}

/// Puts back, per CPU, the events the BPF programs do not record because they are inside
/// every measured wake-up and what they tell is known from a neighbour:
/// * the local timer vector's entry (`local_timer_entry`), before the first hrtimer callback
///   of an interrupt that is not inside the HRTIMER softirq, at the interrupt's base clock
///   read (`hrtimer_expire_entry.now`, read by `hrtimer_interrupt()` as it starts,
///   kernel/time/hrtimer.c); its exit is recorded. An exit with no callback before it
///   gets an entry at its own time;
/// * the idle exit (`cpu_idle` with no state), just before the switch away from the idle
///   task that follows an idle entry.
///
/// A CPU whose events already have a local timer entry (the text path) is left as it is.
/// Events stay in order per CPU; the output is at most twice as long.
pub fn fill_in(events: &mut Vec<Event>) {
    let mut out = Vec::with_capacity(events.len() + events.len() / 2);
    let mut f = FillIn::onto(&mut out, Vec::new());
    for e in events.drain(..) {
        f.push(e);
    }
    *events = out;
}

/// What [`fill_in`] knows of one CPU so far.
#[derive(Debug, Default)]
struct CpuFill {
    /// A local timer vector put back and not left yet.
    open: bool,
    in_hrtimer_softirq: bool,
    idle: bool,
    has_entries: bool,
    last_ts: Nanos,
}

/// [`fill_in`] one event at a time: each event pushed is appended to `out` with what it
/// puts back before it (the decoder's events go onto its caller's list without a buffer in
/// between).
struct FillIn<'a> {
    out: &'a mut Vec<Event>,
    // Per CPU, by a linear search: a decoder's events are one CPU's, a text trace's a
    // handful of CPUs' (no hashing, no allocation for a single CPU beyond the first).
    cpus: Vec<(u32, CpuFill)>,
}

impl<'a> FillIn<'a> {
    /// Onto `out`, with `cpus` (emptied) as the per-CPU state's buffer.
    fn onto(out: &'a mut Vec<Event>, mut cpus: Vec<(u32, CpuFill)>) -> Self {
        cpus.clear();
        FillIn { out, cpus }
    }

    /// The per-CPU state's buffer, for the next [`FillIn::onto`] (no allocation per dump).
    fn finish(self) -> Vec<(u32, CpuFill)> {
        self.cpus
    }

    fn push(&mut self, e: Event) {
        let out = &mut *self.out;
        let timer_entry = |ts: Nanos, e: &Event| Event {
            ts,
            cpu: e.cpu,
            pid: e.pid,
            comm: e.comm.clone(),
            kind: Kind::VectorEntry {
                name: Name::from_static(VECTORS[0]),
            },
        };
        // A loss marker (the decoder's, stamped with the next record's time) is no event
        // of the CPU's: it changes nothing put back around it.
        if matches!(e.kind, Kind::Lost { .. }) {
            out.push(e);
            return;
        }
        let cpus = &mut self.cpus;
        let at = match cpus.iter().position(|(c, _)| *c == e.cpu) {
            Some(at) => at,
            None => {
                cpus.push((e.cpu, CpuFill::default()));
                cpus.len() - 1
            }
        };
        let st = &mut cpus[at].1;
        match &e.kind {
            Kind::VectorEntry { name } if name == VECTORS[0] => st.has_entries = true,
            Kind::HrtimerExpireEntry { now, .. }
                if !st.open && !st.in_hrtimer_softirq && !st.has_entries =>
            {
                out.push(timer_entry((*now).clamp(st.last_ts.min(e.ts), e.ts), &e));
                st.open = true;
            }
            Kind::VectorExit { name } if name == VECTORS[0] && !st.has_entries => {
                if !st.open {
                    out.push(timer_entry(e.ts, &e));
                }
                st.open = false;
            }
            Kind::SoftirqEntry { action } if action == SOFTIRQS[8] => st.in_hrtimer_softirq = true,
            Kind::SoftirqExit { action } if action == SOFTIRQS[8] => st.in_hrtimer_softirq = false,
            Kind::CpuIdle { state } => st.idle = state.is_some(),
            Kind::SchedSwitch { prev_pid: 0, .. } if st.idle => {
                out.push(Event {
                    kind: Kind::CpuIdle { state: None },
                    ..e.clone()
                });
                st.idle = false;
            }
            _ => {}
        }
        st.last_ts = e.ts;
        out.push(e);
    }
}

/// IRQ number → handler name from the text of `/proc/interrupts` (the last column of each
/// numbered line; "/proc/interrupts", man 5 proc).
pub fn irq_names(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = n.parse().ok()?;
            Some((irq, rest.split_whitespace().last()?.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_the_c_sources() {
        // The C source asserts its layout at compile time (`_Static_assert`, checked each
        // time bpf/build.sh builds the object, and the object against the source by
        // tests/bpf_object.rs); these are the numbers it asserts.
        let c = include_str!("../bpf/capture.bpf.c");
        for (what, n) in [
            ("sizeof(struct rec) == ", RECORD_SIZE),
            ("__builtin_offsetof(struct ring, recs) == ", HEADER_SIZE),
            ("__builtin_offsetof(struct ring, armed_seq) == ", ARMED_AT),
            ("sizeof(struct ring) == ", DUMP_SIZE),
        ] {
            let line = format!("_Static_assert({what}{n},");
            assert!(c.contains(&line), "capture.bpf.c does not assert `{line}`");
        }
    }

    /// A dump as the C program lays it out, from `(ts, pid, kind, payload)`.
    fn dump(head: u64, tid: u32, cpu: u32, recs: &[(u64, u32, u16, [u64; 6])]) -> Vec<u8> {
        let mut b = vec![0u8; DUMP_SIZE];
        b[0..8].copy_from_slice(&head.to_le_bytes());
        b[8..12].copy_from_slice(&tid.to_le_bytes());
        b[12..16].copy_from_slice(&cpu.to_le_bytes());
        b[16..24].copy_from_slice(&1000u64.to_le_bytes());
        b[24..32].copy_from_slice(&2000u64.to_le_bytes());
        let first = head - recs.len() as u64;
        for (i, (ts, pid, kind, p)) in recs.iter().enumerate() {
            let at = HEADER_SIZE + ((first as usize + i) % RING_LEN) * RECORD_SIZE;
            b[at..at + 8].copy_from_slice(&ts.to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(&pid.to_le_bytes());
            b[at + 12..at + 14].copy_from_slice(&kind.to_le_bytes());
            for (j, w) in p.iter().enumerate() {
                b[at + 16 + 8 * j..at + 24 + 8 * j].copy_from_slice(&w.to_le_bytes());
            }
        }
        b
    }

    fn comm_words(s: &str) -> [u64; 2] {
        let mut b = [0u8; 16];
        b[..s.len()].copy_from_slice(s.as_bytes());
        [
            u64::from_le_bytes(b[..8].try_into().unwrap()),
            u64::from_le_bytes(b[8..].try_into().unwrap()),
        ]
    }

    #[test]
    fn decodes_every_kind_in_order_with_names() {
        let [a0, a1] = comm_words("hog");
        let [b0, b1] = comm_words("tickscope-m0");
        let recs = [
            (100, 7, 1, [0xa, 5000, 4990, 0xfff1, 0, 0]),
            (200, 0, 4, [0, 0, 0, 0, 0, 0]),
            // the interrupt came in user mode (p[2] = 2)
            (210, 0, 2, [0xa, 5001, 2, 0xfff1, 0, 0]),
            (220, 0, 3, [0xa, 0, 0, 0, 0, 0]),
            (230, 0, 6, [24, 0, 0, 0, 0, 0]),
            (240, 0, 7, [24, 0, 0, 0, 0, 0]),
            (250, 0, 8, [1, 0, 0, 0, 0, 0]),
            (260, 0, 9, [1, 0, 0, 0, 0, 0]),
            (270, 0, 5, [0, 0, 0, 0, 0, 0]),
            (280, 0, 11, [u32::MAX as u64, 0, 0, 0, 0, 0]),
            // hog (9, prio 120) preempted for the thread (7, prio 9)
            (
                290,
                9,
                10,
                [9 | 7 << 32, 1 << 31 | 121 << 16 | 9 << 32, a0, a1, b0, b1],
            ),
            (300, 7, 12, [230, 0, 0, 0, 0, 0]),
            (310, 0, 11, [1, 0, 0, 0, 0, 0]),
        ];
        let d = parse_dump(&dump(1000, 7, 1, &recs)).unwrap();
        assert_eq!((d.tid, d.cpu, d.expiry, d.woke), (7, 1, 1000, 2000));
        assert_eq!(d.records.len(), recs.len());
        let mut dec = Decoder::offline(
            HashMap::from([(0xfff1, "hrtimer_wakeup".to_string())]),
            HashMap::from([(24, "virtio0-input.0".to_string())]),
        );
        let mut ev = Vec::new();
        assert_eq!(dec.decode(&d, &mut ev), recs.len());
        let kinds: Vec<&Kind> = ev.iter().map(|e| &e.kind).collect();
        assert!(
            matches!(kinds[0], Kind::HrtimerStart { function, expires: 5000, softexpires: Some(4990), .. } if function == "hrtimer_wakeup")
        );
        assert!(matches!(kinds[1], Kind::VectorEntry { name } if name == "local_timer"));
        assert!(matches!(
            kinds[2],
            Kind::HrtimerExpireEntry {
                now: 5001,
                user: Some(true),
                ..
            }
        ));
        assert!(matches!(kinds[4], Kind::IrqEntry { irq: 24, name } if name == "virtio0-input.0"));
        assert!(matches!(kinds[6], Kind::SoftirqEntry { action } if action == "TIMER"));
        assert!(matches!(kinds[9], Kind::CpuIdle { state: None }));
        assert!(matches!(kinds[12], Kind::CpuIdle { state: Some(1) }));
        assert!(matches!(kinds[11], Kind::SysExit { nr: 230 }));
        match kinds[10] {
            Kind::SchedSwitch {
                prev_pid,
                prev_comm,
                prev_state,
                prev_prio,
                next_pid,
                next_comm,
                next_prio,
            } => {
                assert_eq!((*prev_pid, *next_pid, *next_prio), (9, 7, 9));
                assert_eq!(*prev_prio, Some(120));
                assert_eq!((prev_comm.as_str(), prev_state.as_str()), ("hog", "R+"));
                assert_eq!(next_comm, "tickscope-m0");
            }
            k => panic!("{k:?}"),
        }
        // Names learned from the switch name the records' tasks; pid 0 is idle.
        assert_eq!(ev[11].comm, "tickscope-m0");
        assert_eq!(ev[1].comm, "<idle>");
        assert!(ev.windows(2).all(|w| w[0].ts <= w[1].ts));
        // The same records again (a later dump of the same ring) are not repeated.
        assert_eq!(dec.decode(&d, &mut ev), 0);
    }

    #[test]
    fn a_switch_back_to_the_watched_thread_names_it_from_what_is_known() {
        // The program leaves the next task's name out (zero words) when it is the watched
        // thread coming back from its wait; the decoder names it from an earlier switch.
        let [m0, m1] = comm_words("tickscope-m0");
        let [s0, s1] = comm_words("swapper/1");
        let recs = [
            // the thread (7) leaves for idle: its name is learnt as prev
            (100, 7, 10, [7, 1 | 9 << 16, m0, m1, s0, s1]),
            // idle switches back to it: no name recorded
            (200, 0, 10, [7 << 32, 9 << 32, s0, s1, 0, 0]),
            // and to a task never seen (8): no name to give
            (300, 0, 10, [8 << 32, 120 << 32, s0, s1, 0, 0]),
        ];
        let d = parse_dump(&dump(3, 7, 1, &recs)).unwrap();
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut ev = Vec::new();
        dec.decode(&d, &mut ev);
        let next: Vec<&str> = ev
            .iter()
            .filter_map(|e| match &e.kind {
                Kind::SchedSwitch { next_comm, .. } => Some(next_comm.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(next, ["swapper/1", "tickscope-m0", UNKNOWN.as_str()]);
    }

    #[test]
    fn a_wait_return_carries_its_steal_time_only_when_read() {
        // p[1] = steal ns, p[2] = 1 when read (0: not read — never a steal of 0).
        let recs = [
            (100, 7, 12, [230, 0, 0, 0, 0, 0]),
            (200, 7, 12, [230, 0, 1, 0, 0, 0]),
            (300, 7, 12, [230, 812_345, 1, 0, 0, 0]),
            (400, 7, 12, [230, 99, 0, 0, 0, 0]),
        ];
        let d = parse_dump(&dump(1000, 7, 1, &recs)).unwrap();
        let mut ev = Vec::new();
        Decoder::offline(HashMap::new(), HashMap::new()).decode(&d, &mut ev);
        let got: Vec<(Nanos, Option<Nanos>)> = ev
            .iter()
            .map(|e| match e.kind {
                Kind::Steal { ns } => (e.ts, Some(ns)),
                _ => (e.ts, None),
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (100, None),
                (200, None),
                (200, Some(0)),
                (300, None),
                (300, Some(812_345)),
                (400, None)
            ]
        );
        assert!(ev.iter().all(|e| e.pid == 7 && e.cpu == 1));
    }

    #[test]
    fn a_wrapped_ring_keeps_its_newest_records_and_short_input_is_refused() {
        let recs: Vec<(u64, u32, u16, [u64; 6])> = (0..RING_LEN as u64 + 10)
            .map(|i| (1 + i, 1, 12, [i, 0, 0, 0, 0, 0]))
            .collect();
        // Written in order: the ring holds the last RING_LEN.
        let mut b = vec![0u8; DUMP_SIZE];
        for (i, chunk) in recs.chunks(RING_LEN).enumerate() {
            let head = (i * RING_LEN + chunk.len()) as u64;
            let one = dump(head, 1, 0, chunk);
            for (j, _) in chunk.iter().enumerate() {
                let at = HEADER_SIZE + (((head as usize) - chunk.len() + j) % RING_LEN) * 64;
                b[at..at + 64].copy_from_slice(&one[at..at + 64]);
            }
            b[..HEADER_SIZE].copy_from_slice(&one[..HEADER_SIZE]);
        }
        let d = parse_dump(&b).unwrap();
        assert_eq!(d.records.len(), RING_LEN);
        assert_eq!(d.records[0].seq, 10);
        assert_eq!(d.records.last().unwrap().p[0], RING_LEN as u64 + 9);
        assert_eq!(parse_dump(&b[..DUMP_SIZE - 1]), None);
    }

    /// `b` with `rec` as the header's kept arming `k` (0: the newest), number `seq` of the
    /// CPU's records.
    fn with_armed(mut b: Vec<u8>, k: usize, seq: u64, rec: (u64, u32, u16, [u64; 6])) -> Vec<u8> {
        b[ARMED_AT + 8 * k..ARMED_AT + 8 * k + 8].copy_from_slice(&seq.to_le_bytes());
        let at = ARMED_AT + 8 * ARMINGS + k * RECORD_SIZE;
        b[at..at + 8].copy_from_slice(&rec.0.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&rec.1.to_le_bytes());
        b[at + 12..at + 14].copy_from_slice(&rec.2.to_le_bytes());
        for (j, w) in rec.3.iter().enumerate() {
            b[at + 16 + 8 * j..at + 24 + 8 * j].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    #[test]
    fn armings_the_ring_overwrote_come_from_the_header_with_each_gap_marked() {
        let rec = |i: u64| (1000 + 10 * i, 5u32, 12u16, [i, 0, 0, 0, 0, 0]);
        let lost = |ev: &[Event]| -> Vec<(u64, i64)> {
            ev.iter()
                .enumerate()
                .filter_map(|(k, e)| match e.kind {
                    Kind::Lost { count, .. } => match ev[k + 1].kind {
                        Kind::SysExit { nr } => {
                            assert_eq!(e.ts, ev[k + 1].ts, "stamped with the next record");
                            Some((count, nr))
                        }
                        _ => panic!("a marker stands before a record"),
                    },
                    _ => None,
                })
                .collect()
        };
        let nrs = |ev: &[Event]| -> Vec<i64> {
            ev.iter()
                .filter_map(|e| match e.kind {
                    Kind::SysExit { nr } => Some(nr),
                    _ => None,
                })
                .collect()
        };
        // Windows at heads 200 and 900; the ring of the second holds 644..900, and record
        // 500 (the arming) is in its header.
        let w1: Vec<_> = (0..200).map(rec).collect();
        let w2: Vec<_> = (900 - RING_LEN as u64..900).map(rec).collect();
        let second = with_armed(dump(900, 5, 1, &w2), 0, 500, rec(500));
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut ev = Vec::new();
        dec.decode(&parse_dump(&dump(200, 5, 1, &w1)).unwrap(), &mut ev);
        dec.decode(&parse_dump(&second).unwrap(), &mut ev);
        assert_eq!(lost(&ev), vec![(500 - 199 - 1, 500), (644 - 500 - 1, 644)]);
        let want: Vec<i64> = (0..200).chain([500]).chain(644..900).collect();
        assert_eq!(nrs(&ev), want);
        // The same from the bytes (records decoded before are not parsed again).
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut from_bytes = Vec::new();
        dec.decode_bytes(&dump(200, 5, 1, &w1), &mut from_bytes);
        dec.decode_bytes(&second, &mut from_bytes);
        assert_eq!(from_bytes, ev);
        // Sent again (a later window of the same CPU, nothing new before its ring): the
        // arming is not decoded twice, and no gap is marked.
        let w3: Vec<_> = (950 - RING_LEN as u64..950).map(rec).collect();
        let third = with_armed(dump(950, 5, 1, &w3), 0, 500, rec(500));
        let n = ev.len();
        dec.decode_bytes(&third, &mut ev);
        assert_eq!(nrs(&ev[n..]), (900..950).collect::<Vec<_>>());
        assert!(lost(&ev[n..]).is_empty());

        // A CPU's first window: what came before it is unknown (no marker), but the stretch
        // between the arming and the ring is a gap.
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut ev = Vec::new();
        dec.decode(&parse_dump(&second).unwrap(), &mut ev);
        assert_eq!(lost(&ev), vec![(644 - 500 - 1, 644)]);
        assert_eq!(nrs(&ev)[0], 500);
        // An arming the ring still holds comes once, from the ring.
        let held = with_armed(dump(900, 5, 1, &w2), 0, 700, rec(700));
        let d = parse_dump(&held).unwrap();
        assert_eq!(d.records.len(), RING_LEN);
        assert_eq!(d.records.iter().filter(|r| r.seq == 700).count(), 1);
        // A header of zeros (no arming yet) adds nothing.
        assert_eq!(
            parse_dump(&dump(900, 5, 1, &w2)).unwrap().records.len(),
            RING_LEN
        );

        // Where the wait's return is not traced the window is sent after the next arming:
        // the newest (700) is in the ring, the one the late wake-up served (500) only in the
        // header. And both overwritten: a gap before each, and before the ring.
        // (The first window, then the second with armings `newest` and 500 in its header.)
        let after_first = |newest: u64| {
            let second = with_armed(dump(900, 5, 1, &w2), 0, newest, rec(newest));
            let second = with_armed(second, 1, 500, rec(500));
            let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
            let mut ev = Vec::new();
            dec.decode(&parse_dump(&dump(200, 5, 1, &w1)).unwrap(), &mut ev);
            dec.decode(&parse_dump(&second).unwrap(), &mut ev);
            ev
        };
        let ev = after_first(700);
        assert_eq!(lost(&ev), vec![(300, 500), (143, 644)]);
        assert_eq!(
            nrs(&ev),
            (0..200).chain([500]).chain(644..900).collect::<Vec<_>>()
        );
        let ev = after_first(600);
        assert_eq!(lost(&ev), vec![(300, 500), (99, 600), (43, 644)]);
        assert_eq!(
            nrs(&ev),
            (0..200)
                .chain([500, 600])
                .chain(644..900)
                .collect::<Vec<_>>()
        );
        // Every record seen or counted lost, once.
        let counted: u64 = lost(&ev).iter().map(|l| l.0).sum();
        assert_eq!(counted + nrs(&ev).len() as u64, 900);
    }

    #[test]
    fn overlapping_windows_give_each_record_once_and_a_gap_is_marked_lost() {
        let rec = |i: u64| (1000 + 10 * i, 5u32, 12u16, [i, 0, 0, 0, 0, 0]);
        // Windows sent at heads 200, 328 (half a ring later: they overlap) and 900 (records
        // 329..644 were overwritten before any window carried them).
        let w1: Vec<_> = (0..200).map(rec).collect();
        let w2: Vec<_> = (328 - RING_LEN as u64..328).map(rec).collect();
        let w3: Vec<_> = (900 - RING_LEN as u64..900).map(rec).collect();
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut ev = Vec::new();
        for (head, w) in [(200, &w1), (328, &w2), (900, &w3)] {
            let d = parse_dump(&dump(head, 5, 1, w)).unwrap();
            dec.decode(&d, &mut ev);
        }
        let lost: Vec<u64> = ev
            .iter()
            .filter_map(|e| match e.kind {
                Kind::Lost { count, .. } => Some(count),
                _ => None,
            })
            .collect();
        assert_eq!(lost, vec![900 - RING_LEN as u64 - 328]);
        let seqs: Vec<i64> = ev
            .iter()
            .filter_map(|e| match e.kind {
                Kind::SysExit { nr } => Some(nr),
                _ => None,
            })
            .collect();
        let want: Vec<i64> = (0..328).chain(900 - RING_LEN as i64..900).collect();
        assert_eq!(seqs, want, "every record once, in order");
        // The marker stands where the gap ends: right before the first record after it.
        let at = ev
            .iter()
            .position(|e| matches!(e.kind, Kind::Lost { .. }))
            .unwrap();
        assert!(matches!(ev[at + 1].kind, Kind::SysExit { nr } if nr == 900 - RING_LEN as i64));
        assert_eq!(ev[at].ts, ev[at + 1].ts);

        // From the bytes, skipping what was decoded while parsing: the same events, each
        // dump's header, and a short dump refused.
        let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
        let mut from_bytes = Vec::new();
        for (head, w) in [(200, &w1), (328, &w2), (900, &w3)] {
            let h = dec
                .decode_bytes(&dump(head, 5, 1, w), &mut from_bytes)
                .unwrap();
            assert_eq!((h.head, h.tid, h.cpu, h.records.len()), (head, 5, 1, 0));
        }
        assert_eq!(from_bytes, ev);
        assert!(dec.decode_bytes(&[0u8; 64], &mut from_bytes).is_none());
    }

    fn ev(ts: Nanos, cpu: u32, pid: i32, kind: Kind) -> Event {
        Event {
            ts,
            cpu,
            pid,
            comm: if pid == 0 {
                "<idle>".into()
            } else {
                "t".into()
            },
            kind,
        }
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match &e.kind {
                Kind::VectorEntry { name } => format!("{}:{name}>@{}", e.cpu, e.ts),
                Kind::VectorExit { name } => format!("{}:<{name}@{}", e.cpu, e.ts),
                Kind::CpuIdle { state } => format!("{}:idle{state:?}@{}", e.cpu, e.ts),
                Kind::HrtimerExpireEntry { .. } => format!("{}:expire@{}", e.cpu, e.ts),
                Kind::SoftirqEntry { action } => format!("{}:{action}>", e.cpu),
                Kind::SoftirqExit { action } => format!("{}:<{action}", e.cpu),
                Kind::SchedSwitch { next_pid, .. } => format!("{}:switch>{next_pid}", e.cpu),
                k => format!("{k:?}"),
            })
            .collect()
    }

    #[test]
    fn the_timer_vector_entry_and_the_idle_exit_are_put_back() {
        let expire = |timer, now| Kind::HrtimerExpireEntry {
            timer,
            function: "hrtimer_wakeup".into(),
            now,
            user: None,
        };
        let exit = || Kind::VectorExit {
            name: "local_timer".into(),
        };
        let sw = |prev_pid, next_pid| Kind::SchedSwitch {
            prev_pid,
            prev_comm: Name::default(),
            prev_state: "R".into(),
            prev_prio: None,
            next_pid,
            next_comm: Name::default(),
            next_prio: 9,
        };
        let softirq = |entry: bool| match entry {
            true => Kind::SoftirqEntry {
                action: "HRTIMER".into(),
            },
            false => Kind::SoftirqExit {
                action: "HRTIMER".into(),
            },
        };
        let mut events = vec![
            ev(100, 1, 0, Kind::CpuIdle { state: Some(1) }),
            // Two callbacks of one interrupt (one `now`), on CPU 1, while CPU 0 works.
            ev(205, 1, 0, expire(1, 200)),
            ev(206, 0, 9, sw(9, 8)),
            ev(210, 1, 0, expire(2, 200)),
            ev(230, 1, 0, exit()),
            ev(240, 1, 0, sw(0, 7)),
            // A callback in the HRTIMER softirq is not a timer interrupt.
            ev(300, 1, 7, softirq(true)),
            ev(305, 1, 7, expire(3, 301)),
            ev(310, 1, 7, softirq(false)),
            // An exit with no callback before it gets an entry at its own time.
            ev(400, 1, 7, exit()),
            // Back to idle and a switch from it that is not after an idle entry.
            ev(500, 1, 7, sw(7, 0)),
            ev(600, 1, 0, sw(0, 7)),
            // A callback of the hard monotonic base: its record is timed by `now` itself
            // (capture.bpf.c), and the entry put back at the same time comes first.
            ev(700, 1, 7, expire(4, 700)),
            ev(720, 1, 7, exit()),
        ];
        fill_in(&mut events);
        assert_eq!(
            names(&events),
            [
                "1:idleSome(1)@100",
                "1:local_timer>@200",
                "1:expire@205",
                "0:switch>8",
                "1:expire@210",
                "1:<local_timer@230",
                "1:idleNone@240",
                "1:switch>7",
                "1:HRTIMER>",
                "1:expire@305",
                "1:<HRTIMER",
                "1:local_timer>@400",
                "1:<local_timer@400",
                "1:switch>0",
                "1:switch>7",
                "1:local_timer>@700",
                "1:expire@700",
                "1:<local_timer@720",
            ]
        );
        // A stream with the vector's entries (the text path) is left as it is.
        let mut text = vec![
            ev(
                10,
                0,
                0,
                Kind::VectorEntry {
                    name: "local_timer".into(),
                },
            ),
            ev(11, 0, 0, expire(1, 10)),
            ev(12, 0, 0, exit()),
        ];
        let before = text.clone();
        fill_in(&mut text);
        assert_eq!(text, before);
    }

    #[test]
    fn state_letters_follow_the_kernel() {
        assert_eq!(state_letters(true, 0), "R+");
        assert_eq!(state_letters(false, 0), "R");
        assert_eq!(state_letters(false, 1), "S");
        assert_eq!(state_letters(false, 2), "D");
        assert_eq!(state_letters(false, 0x402), "I");
    }

    #[test]
    fn irq_names_are_the_last_column() {
        let t = "           CPU0       CPU1\n  0:         36          0   IO-APIC   2-edge      timer\n 24:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio0-config\nNMI:          0          0   Non-maskable interrupts\n";
        let m = irq_names(t);
        assert_eq!(m.get(&0).map(String::as_str), Some("timer"));
        assert_eq!(m.get(&24).map(String::as_str), Some("virtio0-config"));
        assert_eq!(m.len(), 2);
    }
}
