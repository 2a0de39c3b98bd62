//! The BPF capture backend: the one guard that owns tickscope's BPF programs.
//!
//! [`BpfCapture::load`] loads `bpf/capture.bpf.o` (built from `bpf/capture.bpf.c` by clang
//! and checked in, so that building tickscope needs no clang) with the pure-Rust loader
//! [aya](https://aya-rs.dev), relocates it against the kernel's BTF
//! (`/sys/kernel/btf/vmlinux`) and attaches one BTF-enabled raw tracepoint program (`tp_btf`)
//! per event that the text path enables (timer, scheduler, system-call exit, interrupts,
//! softirqs, idle). Each keeps its CPU's recent events in a per-CPU ring map; only when a
//! measured thread ([`BpfCapture::watch`]) returns from its wait later than its threshold is
//! that ring copied to a BPF ring buffer (`BPF_RB_NO_WAKEUP`: no task is woken) which
//! [`BpfCapture::poll`] drains from the collector, on a housekeeping CPU. Costs per event on
//! the measured CPU: a tracing program's entry (≈ 15–25 ns empty, cloudflare/ebpf_exporter
//! `benchmark/README.md`) plus one per-CPU map lookup and a 64-byte record; nothing is sent
//! for wake-ups that are on time.
//!
//! The programs are loaded by [`crate::bpf_loader`] — in a short-lived helper process when
//! the executable can serve as one (the `tickscope` program), so that the kernel's parsed BTF
//! never counts in tickscope's memory — and attached with `BPF_RAW_TRACEPOINT_OPEN` (bpf(2)):
//! the guard holds only file descriptors, four maps and one link per program. Dropping it,
//! an exit or a kill closes them, which detaches and unloads every program and frees the maps:
//! nothing outlives tickscope. Loading needs `CAP_BPF` and `CAP_PERFMON` (or root), "BPF
//! permissions", <https://docs.kernel.org/bpf/> and capabilities(7).

use crate::bpf_load::{unavailable, Parts};
use crate::bpf_records::{Decoder, Dump};
use crate::events::Event;
use crate::tracefs::Unavailable;
use crate::wakeups::TIMER_FUNCTIONS;
use aya::maps::{Array, Map, MapData, PerCpuArray, RingBuf};
use std::os::fd::{AsFd, OwnedFd};

/// CPUs the `skip` map covers (`MAX_CPUS` in the C source).
const MAX_CPUS: usize = 1024;

/// Timer callbacks that fire on an idle or lightly loaded CPU every few seconds, named by
/// the pass that finds [`TIMER_FUNCTIONS`] (before the measurement starts) rather than by
/// the decoder when their first window arrives: the tick (`tick_nohz_handler` in recent
/// kernels, `tick_sched_timer` before, kernel/time/tick-sched.c), the soft-lockup watchdog
/// (`watchdog_timer_fn`, every 2 × `watchdog_thresh` / 5 = 4 s by default,
/// kernel/watchdog.c), the scheduler's bandwidth and deadline timers (kernel/sched/rt.c,
/// fair.c, deadline.c, core.c) and perf's (kernel/events/core.c). All are core kernel code,
/// linked before `timerfd_tmrproc` (fs/timerfd.c), the farthest of the wait callbacks: on
/// this VM's kernel the pass reads no further for them. A name a kernel lacks costs nothing
/// beyond [`kernel_symbols`]' bound.
const NAMED_AT_START: [&str; 10] = [
    "tick_nohz_handler",
    "tick_sched_timer",
    "watchdog_timer_fn",
    "sched_rt_period_timer",
    "sched_cfs_period_timer",
    "sched_cfs_slack_timer",
    "dl_task_timer",
    "inactive_task_timer",
    "hrtick",
    "perf_swevent_hrtimer",
];

/// `struct thread` of the C source as u64 words: expiry, threshold, late_expiry,
/// late_woke, (pending | late << 32), pending_since, returned, steal_at,
/// (steal_cpu + 1 | tid << 32), ret_head, ret_head_prev, late_from, phase, period.
type ThreadWords = [u64; 14];

/// The words of [`ThreadWords`] that hold a thread's expiry grid (`phase`, `period`;
/// [`BpfCapture::set_grid`]).
const GRID_WORDS: (usize, usize) = (12, 13);

/// The tracepoint of the wait's return ([`BpfCapture::trace_returns`]).
const RETURN_TRACEPOINT: &str = "sys_exit";

/// The `threads` array's slots and how many a thread may be placed in, from `tid %
/// THREAD_SLOTS` on (`THREAD_SLOTS`, `THREAD_PROBES` in the C source, `thread_of()`).
const THREAD_SLOTS: u32 = 1024;
const THREAD_PROBES: u32 = 4;

/// The word of [`ThreadWords`] that holds the slot's thread id (high half).
const TID_WORD: usize = 8;

/// How many of a CPU's newest records [`BpfCapture::read_rings`] takes from its second copy
/// of the ring: a program may be between taking its slot and filling it, and another may
/// nest in it from an interrupt (tracing programs of different tracepoints do nest).
const MID_WRITE: u64 = 4;

/// `struct ring` as u64 words (`crate::bpf_records::DUMP_SIZE` / 8).
type RingWords = [u64; crate::bpf_records::DUMP_SIZE / 8];

/// The addresses of kernel functions `names`; `None` for a name absent or hidden (all
/// zeros without root or CAP_SYSLOG, proc(5)). Asked of the kernel by name where it answers
/// ([`crate::bpf_ksym`]: no pass over `/proc/kallsyms`), else read from `/proc/kallsyms`
/// in one pass that stops once every name is found (the file is several MB, and each line
/// costs the kernel a formatted print: `s_show()`, kernel/kallsyms.c).
///
/// In that pass the first `required` names are looked for to the end of the file if need
/// be; the others only while the pass has read at most a quarter more lines than the
/// required ones took (a name this kernel lacks must not cost a whole pass: ≈ 40 ms of
/// system time for the 122 000 lines of this VM's kernel).
fn kernel_symbols(names: &[&str], required: usize) -> Vec<Option<u64>> {
    if let Some(found) = crate::bpf_ksym::lookup(names) {
        return found;
    }
    match std::fs::File::open("/proc/kallsyms") {
        Ok(file) => symbols_in(std::io::BufReader::new(file), names, required),
        Err(_) => vec![None; names.len()],
    }
}

/// [`kernel_symbols`] on the text of `lines` (`/proc/kallsyms`' format, [`crate::kallsyms`]):
/// all `None` where the file hides the addresses (its first kernel-text line tells).
fn symbols_in(lines: impl std::io::BufRead, names: &[&str], required: usize) -> Vec<Option<u64>> {
    let mut found = vec![None; names.len()];
    let required = required.min(names.len());
    let (mut left, mut left_required) = (names.len(), required);
    let (mut read, mut limit) = (0usize, usize::MAX);
    crate::kallsyms::each_symbol(lines, |addr, sym| {
        read += 1;
        if let Some(i) = names.iter().position(|n| n.as_bytes() == sym) {
            if found[i].is_none() {
                found[i] = Some(addr).filter(|a| *a != 0);
                left -= 1;
                if i < required {
                    left_required -= 1;
                    if left_required == 0 {
                        limit = read.saturating_add(read / 4);
                    }
                }
            }
        }
        match left > 0 && read < limit {
            true => std::ops::ControlFlow::Continue(()),
            false => std::ops::ControlFlow::Break(()),
        }
    });
    found
}

/// The process (thread group) thread `tid` belongs to, from the `Tgid:` line of
/// `/proc/TID/status` (proc(5)); `None` when the thread is gone or the line is missing.
fn tgid_of(tid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Counters of the BPF path, summed over CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BpfStats {
    /// Events recorded into the per-CPU rings ("BPF hits" that wrote a record).
    pub records: u64,
    /// Windows sent for late wake-ups.
    pub dumps: u64,
    /// Windows the ring buffer had no room for (events lost).
    pub dumps_lost: u64,
}

/// Loaded and attached programs; dropped = detached and unloaded.
pub struct BpfCapture {
    rings: PerCpuArray<MapData, RingWords>,
    threads: Array<MapData, ThreadWords>,
    /// `threads` mapped into this process, for a running thread's threshold: one word
    /// written in place (`None` where the kernel refused the mapping).
    shared_threads: Option<crate::bpf_shared::SharedArray>,
    /// The slot of every watched thread in `threads`.
    slots: std::collections::HashMap<u32, u32>,
    /// `struct config`: the wait calls' numbers, the watched process (low 32 bits), the wait
    /// timers' callbacks.
    config: Array<MapData, [i64; 9]>,
    /// What `config` holds: the wait calls, and the process of every watched thread (`None`
    /// before the first, `Some(0)` when they belong to several).
    wait_nrs: [i64; 4],
    tgid: Option<u32>,
    /// The addresses of [`TIMER_FUNCTIONS`] (0 where hidden or absent), read from
    /// `/proc/kallsyms` when the first thread is watched.
    wait_fns: Option<[u64; 4]>,
    ring: RingBuf<MapData>,
    /// `struct cpu_conf` per CPU: off | fired_tid << 32, fired_fn.
    skip: Array<MapData, [u64; 2]>,
    /// What `skip` holds: CPUs not recorded, and the fired timer's thread and callback.
    off: Vec<bool>,
    fired: (u32, u64),
    /// Per program: its tracepoint, its descriptor and its link. The link is held for its
    /// effect: it keeps the program attached, and with it the tracepoint on; `None` while
    /// [paused](Self::pause).
    programs: Vec<(&'static str, OwnedFd, Option<OwnedFd>)>,
    /// When the programs were last attached again ([`Self::resume`]), ns on
    /// CLOCK_MONOTONIC (0: never paused): records of before are not handed on, since the
    /// CPU's events in between were not recorded.
    recording_since: i64,
    /// Whether the wait's return (`sys_exit`) is left untraced ([`Self::trace_returns`]).
    returns_off: bool,
    decoder: Decoder,
    /// Dumps received.
    pub received: u64,
    /// Programs attached.
    pub attached: usize,
    /// Optional tracepoints this kernel lacks.
    pub missing: Vec<&'static str>,
    /// Optional tracepoints left unrecorded on purpose ([`Self::stop_recording`]); the
    /// result's note names them as not recorded on a virtual machine, the one case that
    /// stops any (the controller's).
    pub unrecorded: Vec<&'static str>,
    /// Whether a run was captured with the wait's return untraced ([`Self::trace_returns`]).
    pub returns_untraced: bool,
    /// The helper process that loaded the programs, when one did.
    pub loader_pid: Option<u32>,
    /// CPU time loading took, ns (user + system, once: parsing the kernel's BTF, relocating,
    /// the kernel's verification of every program and attaching; the helper's when one
    /// loaded).
    pub load_cpu_ns: i64,
}

impl std::fmt::Debug for BpfCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpfCapture")
            .field("received", &self.received)
            .field("attached", &self.attached)
            .field("loader_pid", &self.loader_pid)
            .finish()
    }
}

impl BpfCapture {
    /// Loads and attaches the programs; events are recorded from here on, but nothing is
    /// sent until threads are [watched](Self::watch).
    ///
    /// # Errors
    /// [`Unavailable`] naming the step that failed (no BTF, not permitted, verifier refusal,
    /// a required tracepoint missing) and what to do.
    pub fn load() -> Result<Self, Unavailable> {
        let crate::bpf_loader::Loaded {
            parts,
            helper: loader_pid,
            cpu_ns: load_cpu_ns,
        } = crate::bpf_loader::load()?;
        let Parts {
            maps,
            links,
            progs,
            attached,
            missing,
        } = parts;
        let bad = |e: aya::maps::MapError| unavailable("the maps", e);
        let mut maps = maps.into_iter();
        let mut next = || {
            maps.next()
                .ok_or_else(|| unavailable("the maps", "fewer than the object has"))
        };
        let rings = PerCpuArray::try_from(Map::PerCpuArray(next()?)).map_err(bad)?;
        let threads_data = next()?;
        // Where the kernel refuses the mapping, thresholds go through bpf(2) as whole slots.
        let shared_threads = crate::bpf_shared::SharedArray::map(
            threads_data.fd().as_fd(),
            THREAD_SLOTS as usize,
            std::mem::size_of::<ThreadWords>(),
        )
        .ok();
        let threads = Array::try_from(Map::Array(threads_data)).map_err(bad)?;
        let config = Array::try_from(Map::Array(next()?)).map_err(bad)?;
        let ring = RingBuf::try_from(Map::RingBuf(next()?)).map_err(bad)?;
        let skip = Array::try_from(Map::Array(next()?)).map_err(bad)?;
        // Links come in the object's program order, less the tracepoints this kernel lacks.
        let on = crate::bpf_load::PROGRAMS
            .iter()
            .map(|p| p.1)
            .filter(|t| !missing.contains(t));
        let programs = on
            .zip(progs)
            .zip(links)
            .map(|((t, p), l)| (t, p, Some(l)))
            .collect();
        Ok(BpfCapture {
            rings,
            threads,
            shared_threads,
            slots: std::collections::HashMap::new(),
            config,
            wait_nrs: [-1; 4],
            tgid: None,
            wait_fns: None,
            ring,
            skip,
            off: Vec::new(),
            fired: (0, 0),
            programs,
            recording_since: 0,
            returns_off: false,
            decoder: Decoder::new(),
            received: 0,
            attached,
            missing,
            unrecorded: Vec::new(),
            returns_untraced: false,
            loader_pid,
            load_cpu_ns,
        })
    }

    /// Detaches the program on an optional `tracepoint` (closing its link), so that it no
    /// longer runs at all: returns whether one was attached. A required one (the timer,
    /// switch and system-call programs, whose records every breakdown needs) is kept.
    ///
    /// The controller does this for `cpu_idle` on a virtual machine: the program runs on
    /// every idle entry and exit — the exit inside each measured wake-up, before the thread
    /// runs — and a vCPU's idle state says nothing about when the host delivers its
    /// interrupts (a halted vCPU waits for the host either way), so there it is cost
    /// without evidence (docs/explain.md, "Lean on the measured CPU").
    pub fn stop_recording(&mut self, tracepoint: &str) -> bool {
        let required = crate::bpf_load::PROGRAMS
            .iter()
            .any(|p| p.1 == tracepoint && p.2);
        let Some(i) = self.programs.iter().position(|(t, ..)| *t == tracepoint) else {
            return false;
        };
        if required {
            return false;
        }
        let (name, ..) = self.programs.remove(i);
        self.attached -= 1;
        self.unrecorded.push(name);
        true
    }

    /// Detaches every program (closes its link) and keeps it loaded: for a run that is not
    /// traced (`--rounds`, every second run), the kernel then runs no program of ours at
    /// all, as in a run without `--explain`, and [`Self::resume`] attaches them again.
    /// Closing a link unregisters its program from the tracepoint, and the last one turns
    /// the tracepoint off (its static key: "Using the Linux Kernel Tracepoints",
    /// <https://docs.kernel.org/trace/tracepoints.html>); the kernel waits for the
    /// programs running on other CPUs to finish before the close returns (an RCU grace
    /// period), so this takes milliseconds, on the calling thread.
    pub fn pause(&mut self) {
        for (_, _, link) in &mut self.programs {
            *link = None;
        }
    }

    /// Whether the programs are detached ([`Self::pause`]).
    pub fn paused(&self) -> bool {
        self.programs
            .iter()
            .any(|(t, _, l)| l.is_none() && self.wanted(t))
    }

    /// Whether the program on `tracepoint` is to be attached while recording.
    fn wanted(&self, tracepoint: &str) -> bool {
        !(self.returns_off && tracepoint == RETURN_TRACEPOINT)
    }

    /// Traces the wait's return (`sys_exit`) or not, from now on (`on` = true: the default).
    ///
    /// `sys_exit` is the one program a measured wake-up runs after the switch that brings
    /// the thread back, and the dearest on its path: it runs in the kernel's slow system-call
    /// exit, which a registered `sys_exit` tracepoint turns on for every task
    /// (`SYSCALL_WORK_SYSCALL_TRACEPOINT`, kernel/tracepoint.c `syscall_regfunc`), and it
    /// looks the thread up and reads the steal clock. Left off, each wake-up is settled
    /// when the thread next arms its wait timer, after its clock read (see `returned()` in
    /// bpf/capture.bpf.c): a window is still sent for every wake-up that a later switch
    /// shows late, and the steal time comes as a record of its own. What is lost is the
    /// boundary between the kernel's exit and the return to user mode: the attribution
    /// then folds the two into one segment ([`crate::attribution::Setting::returns_traced`]).
    /// For a run's own threads, whose samples say which wake-ups were late, and whose wait
    /// arms its own timer (not setitimer's, re-armed by another thread).
    ///
    /// # Errors
    /// The kernel's refusal to attach the program again, as text.
    pub fn trace_returns(&mut self, on: bool) -> Result<(), String> {
        self.returns_off = !on;
        self.returns_untraced |= !on;
        let paused = self
            .programs
            .iter()
            .filter(|(t, ..)| *t != RETURN_TRACEPOINT)
            .any(|(_, _, l)| l.is_none());
        for (tracepoint, prog, link) in &mut self.programs {
            if *tracepoint != RETURN_TRACEPOINT {
                continue;
            }
            match (on, link.is_some()) {
                (false, true) => *link = None,
                (true, false) if !paused => {
                    *link = Some(
                        crate::bpf_load::attach(prog.as_fd())
                            .map_err(|e| format!("attaching to {tracepoint} again: {e}"))?,
                    )
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Attaches again every program [`Self::pause`] detached. The per-CPU rings still hold
    /// the records of before the pause, and a window sent soon after may reach back into
    /// them; [`Self::poll`] hands on none recorded before this call, since what the CPU did
    /// during the pause was not recorded and the last record before an expiry could be
    /// seconds stale.
    ///
    /// # Errors
    /// The kernel's refusal, naming the tracepoint; the programs attached before it stay
    /// attached.
    pub fn resume(&mut self) -> Result<(), String> {
        if self.paused() {
            self.recording_since = tickscope_engine::time::read_clock(libc::CLOCK_MONOTONIC);
        }
        let returns_off = self.returns_off;
        for (tracepoint, prog, link) in &mut self.programs {
            if link.is_none() && !(returns_off && *tracepoint == RETURN_TRACEPOINT) {
                *link = Some(
                    crate::bpf_load::attach(prog.as_fd())
                        .map_err(|e| format!("attaching to {tracepoint} again: {e}"))?,
                );
            }
        }
        Ok(())
    }

    /// Watches the measured threads: `wait_nrs` are the system calls their wait returns from
    /// (at most 4; empty = any), `threshold_ns` the lateness above which their window is sent.
    ///
    /// # Errors
    /// A map update refused by the kernel, as text.
    pub fn watch(
        &mut self,
        tids: &[i32],
        wait_nrs: &[i64],
        threshold_ns: i64,
    ) -> Result<(), String> {
        let mut nrs = [-1i64; 4];
        for (slot, nr) in nrs.iter_mut().zip(wait_nrs) {
            *slot = *nr;
        }
        if wait_nrs.len() > 4 {
            nrs = [-1; 4];
        }
        self.wait_nrs = nrs;
        self.write_config()?;
        for &tid in tids {
            self.set_threshold(tid, threshold_ns)?;
        }
        Ok(())
    }

    /// Records events only on `cpus` (the CPUs the measured threads are pinned to; empty =
    /// every CPU). Elsewhere each program returns after one array lookup: the rest of the
    /// machine no longer pays for a record, and those CPUs' rings were never sent anyway (a
    /// window is the ring of the CPU the late thread ran on).
    ///
    /// # Errors
    /// A map update refused by the kernel, as text.
    pub fn record_only_on(&mut self, cpus: &[usize]) -> Result<(), String> {
        // SAFETY: sysconf has no memory effects.
        let conf = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        let n = usize::try_from(conf).unwrap_or(MAX_CPUS).clamp(1, MAX_CPUS);
        self.off = (0..n)
            .map(|cpu| !cpus.is_empty() && !cpus.contains(&cpu))
            .collect();
        self.write_cpu_conf()
    }

    /// Writes `struct cpu_conf` of every CPU from `off` and `fired`.
    fn write_cpu_conf(&mut self) -> Result<(), String> {
        for (cpu, off) in self.off.iter().enumerate() {
            let words = [
                u64::from(*off) | u64::from(self.fired.0) << 32,
                self.fired.1,
            ];
            self.skip
                .set(cpu as u32, words, 0)
                .map_err(|e| format!("CPU {cpu}: {e}"))?;
        }
        Ok(())
    }

    /// For a timer that another thread re-arms (setitimer's, whose SIGALRM any thread of the
    /// process may take and re-arm: `dequeue_signal`, kernel/signal.c), `Some((tid,
    /// function))`: thread `tid`'s expiry is the soft expiry of the timer with callback
    /// `function` when it fires, instead of the one its own `hrtimer_start` armed; `None`:
    /// every thread's own (the default). The callback's address is read from
    /// `/proc/kallsyms` (real addresses need root or CAP_SYSLOG).
    ///
    /// # Errors
    /// The callback not found in `/proc/kallsyms`, or a map update refused, as text.
    pub fn expiry_when_fired(&mut self, fired: Option<(i32, &str)>) -> Result<(), String> {
        self.fired = match fired {
            Some((tid, function)) => {
                let known = TIMER_FUNCTIONS.iter().position(|f| *f == function);
                let address = match known {
                    Some(i) => self.wait_fns()[i],
                    None => kernel_symbols(&[function], 1)[0].unwrap_or(0),
                };
                if address == 0 {
                    return Err(format!("{function} not found in /proc/kallsyms"));
                }
                (tid as u32, address)
            }
            None => (0, 0),
        };
        if self.off.is_empty() {
            self.record_only_on(&[])
        } else {
            self.write_cpu_conf()
        }
    }

    /// Sets a watched thread's threshold, ns (a thread not watched yet is added). For a
    /// thread already watched it is one 8-byte store into the mapped array, so that what
    /// the programs write into its slot meanwhile is kept (`--explain-threshold p99`
    /// changes it every second while they run); without the mapping, the slot is read and
    /// written back whole.
    ///
    /// # Errors
    /// A map update refused by the kernel, as text.
    pub fn set_threshold(&mut self, tid: i32, threshold_ns: i64) -> Result<(), String> {
        let tid_key = tid as u32;
        let known = self.slots.get(&tid_key).copied();
        if known.is_none() {
            // A new thread: the process filter widens before the thread is added, so that
            // none of its system calls is filtered out once it is watched.
            let tgid = tgid_of(tid).unwrap_or(0);
            let wider = match self.tgid {
                None => tgid,
                Some(t) if t == tgid => t,
                Some(_) => 0,
            };
            if self.tgid != Some(wider) {
                self.tgid = Some(wider);
                self.write_config()?;
            }
        }
        // A watched thread's slot is the programs' to write too: its threshold is stored in
        // place, one word, where the array is mapped.
        if let (Some(slot), Some(shared)) = (known, self.shared_threads.as_mut()) {
            if shared.store(slot as usize, 1, threshold_ns as u64) {
                return Ok(());
            }
        }
        let (slot, mut v) = match known {
            Some(slot) => (
                slot,
                self.threads
                    .get(&slot, 0)
                    .map_err(|e| format!("thread {tid}: {e}"))?,
            ),
            None => {
                let slot = free_slot(tid_key, |k| self.slots.values().any(|s| *s == k))
                    .ok_or_else(|| {
                        format!(
                            "thread {tid}: the {THREAD_PROBES} slots it may take are held by other watched threads"
                        )
                    })?;
                let mut v = ThreadWords::default();
                v[TID_WORD] = u64::from(tid_key) << 32;
                (slot, v)
            }
        };
        v[1] = threshold_ns as u64;
        self.threads
            .set(slot, v, 0)
            .map_err(|e| format!("thread {tid}: {e}"))?;
        self.slots.insert(tid_key, slot);
        Ok(())
    }

    /// Gives watched thread `tid` its expiry grid: `period` ns (> 0) through the grid point
    /// `phase` (ns on CLOCK_MONOTONIC). For a thread whose sleep ends a margin before its
    /// expiry and spins the rest (`hybrid`), the kernel then judges each wake-up against the
    /// first grid point at or after the sleep's timer instead of the timer itself, which
    /// made nearly every wake-up look late (a window sent for each, the ring buffer
    /// overrun). Two 8-byte stores into the mapped array, the phase first (a program that
    /// reads the new period reads the new phase on x86-64; elsewhere a torn pair costs one
    /// judgment), or the slot written back whole without the mapping.
    ///
    /// # Errors
    /// A thread not watched, or a map update refused by the kernel, as text.
    pub fn set_grid(&mut self, tid: i32, period: i64, phase: i64) -> Result<(), String> {
        let slot = *self
            .slots
            .get(&(tid as u32))
            .ok_or_else(|| format!("thread {tid} is not watched"))?;
        if let Some(shared) = self.shared_threads.as_mut() {
            if shared.store(slot as usize, GRID_WORDS.0, phase as u64) {
                std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
                if shared.store(slot as usize, GRID_WORDS.1, period as u64) {
                    return Ok(());
                }
            }
        }
        let mut v = self
            .threads
            .get(&slot, 0)
            .map_err(|e| format!("thread {tid}: {e}"))?;
        v[GRID_WORDS.0] = phase as u64;
        v[GRID_WORDS.1] = period as u64;
        self.threads
            .set(slot, v, 0)
            .map_err(|e| format!("thread {tid}: {e}"))
    }

    /// Stops watching every thread (their events are still recorded, no window is sent).
    pub fn unwatch(&mut self) {
        for (_, slot) in self.slots.drain() {
            let _ = self.threads.set(slot, ThreadWords::default(), 0);
        }
        // The next thread watched sets the process filter afresh.
        self.tgid = None;
    }

    /// Whether the callbacks of the wait timers ([`TIMER_FUNCTIONS`]) were found: by name
    /// (root or `CAP_SYSLOG`: `kallsyms_show_value()`, kernel/kallsyms.c), else by BTF id
    /// (with `CAP_PERFMON`, through BPF). Where neither answers, every
    /// timer a watched thread starts gives its expiry ([`Self::watch`]'s filter is off), as
    /// before that filter.
    pub fn wait_callbacks_found(&mut self) -> bool {
        self.wait_fns().iter().any(|f| *f != 0)
    }

    /// The addresses of [`TIMER_FUNCTIONS`], in that order (0 where the kernel hides or
    /// lacks one), looked up once. The decoder learns their names with them, and with the
    /// same lookup those of [`NAMED_AT_START`]: where the kernel names addresses only
    /// through `/proc/kallsyms`, the first window that holds one of those callbacks would
    /// otherwise cost the collector a pass of its own mid-run (≈ 10 ms each for the tick's,
    /// a bandwidth timer's and the watchdog's, which arrive seconds apart).
    fn wait_fns(&mut self) -> [u64; 4] {
        if let Some(f) = self.wait_fns {
            return f;
        }
        let mut names: Vec<&str> = TIMER_FUNCTIONS.to_vec();
        names.extend(NAMED_AT_START);
        let mut fns = [0u64; 4];
        let mut found = kernel_symbols(&names, TIMER_FUNCTIONS.len());
        // Where the kernel gives none by name (neither root nor CAP_SYSLOG), by BTF id.
        if found[..TIMER_FUNCTIONS.len()].iter().all(Option::is_none) {
            for (f, a) in found
                .iter_mut()
                .zip(crate::bpf_ksym::addresses_by_name_in_btf(&TIMER_FUNCTIONS))
            {
                *f = a;
            }
        }
        for (i, a) in found.into_iter().enumerate() {
            if let Some(a) = a {
                if let Some(f) = fns.get_mut(i) {
                    *f = a;
                }
                self.decoder.know_symbol(a, names[i]);
            }
        }
        self.wait_fns = Some(fns);
        fns
    }

    /// Writes `struct config` from `wait_nrs`, `tgid` and the wait timers' callbacks.
    fn write_config(&mut self) -> Result<(), String> {
        let mut words = [0i64; 9];
        words[..4].copy_from_slice(&self.wait_nrs);
        words[4] = i64::from(self.tgid.unwrap_or(0));
        // The callbacks found, first: a kernel without one (no timerfd, say) leaves its slot
        // 0, which matches no timer. With none found (addresses hidden) every slot is 0 and
        // every timer a watched thread starts gives its expiry, as before this filter.
        let found = self.wait_fns().into_iter().filter(|f| *f != 0);
        for (w, f) in words[5..].iter_mut().zip(found) {
            *w = f as i64;
        }
        self.config.set(0, words, 0).map_err(|e| e.to_string())
    }

    /// Late wake-ups the kernel side saw for `tid` (windows asked for).
    pub fn late_seen(&mut self, tid: i32) -> u64 {
        self.slots
            .get(&(tid as u32))
            .and_then(|slot| self.threads.get(slot, 0).ok())
            .map_or(0, |v| v[4] >> 32)
    }

    /// Drains the ring buffer: each window's new events are appended to `out` (oldest first
    /// per CPU) and each dump's header to `dumps`. Never blocks.
    pub fn poll(&mut self, out: &mut Vec<Event>, dumps: &mut Vec<Dump>) {
        let from = out.len();
        while let Some(item) = self.ring.next() {
            if let Some(d) = self.decoder.decode_bytes(&item, out) {
                self.received += 1;
                dumps.push(d);
            }
        }
        drop_before(out, from, self.recording_since);
    }

    /// Copies the rings of the recorded CPUs as they stand now and appends their records not
    /// handed on before to `out` (oldest first per CPU, as [`Self::poll`] does), for late
    /// wake-ups the kernel side cannot judge: a thread that spins to its expiry (`--method
    /// busy`) arms no timer, so no window is ever sent for it. Returns the records decoded.
    ///
    /// The copy is the `bpf(2)` map lookup of the per-CPU array, made on the calling
    /// (housekeeping) CPU: nothing runs on the measured CPUs, which keep writing meanwhile
    /// (the kernel copies each CPU's value without a lock: `bpf_percpu_array_copy()`,
    /// kernel/bpf/arraymap.c). So the map is read twice: the records written between the two
    /// reads of the head overwrote the oldest slots while the first copy was made — those
    /// are dropped — and the newest four records before the first head, which may
    /// have been mid-write (the programs take a slot before they fill it), are taken from the
    /// second copy. A CPU whose whole ring turned over between the two reads gives nothing.
    ///
    /// # Errors
    /// The map lookup's, as one line.
    pub fn read_rings(&mut self, out: &mut Vec<Event>) -> Result<usize, String> {
        let read = |rings: &PerCpuArray<MapData, RingWords>| {
            rings
                .get(&0, 0)
                .map_err(|e| format!("reading the BPF rings: {e}"))
        };
        let (first, second) = (read(&self.rings)?, read(&self.rings)?);
        let from = out.len();
        let mut bytes = vec![0u8; crate::bpf_records::DUMP_SIZE];
        for (cpu, (a, b)) in first.iter().zip(second.iter()).enumerate() {
            if self.off.get(cpu).copied().unwrap_or(false) {
                continue;
            }
            let Some(words) = settled(a, b, cpu as u32) else {
                continue;
            };
            for (chunk, w) in bytes.chunks_exact_mut(8).zip(words.iter()) {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            self.decoder.decode_bytes(&bytes, out);
        }
        drop_before(out, from, self.recording_since);
        Ok(out.len() - from)
    }

    /// The counters, summed over CPUs (one map read: for the result, not per wake-up).
    pub fn stats(&self) -> BpfStats {
        let Ok(values) = self.rings.get(&0, 0) else {
            return BpfStats::default();
        };
        values.iter().fold(BpfStats::default(), |s, r| BpfStats {
            records: s.records + r[0],
            dumps: s.dumps + r[4],
            dumps_lost: s.dumps_lost + r[5],
        })
    }
}

/// Removes the events of `out[from..]` recorded before `since` (ns; 0: none), keeping the
/// order of the rest. Events are moved only when one is removed (after a resumed recording);
/// otherwise nothing is touched.
fn drop_before(out: &mut Vec<Event>, from: usize, since: i64) {
    if since > 0 && out[from..].iter().any(|e| e.ts < since) {
        let mut i = 0;
        out.retain(|e| {
            i += 1;
            i <= from || e.ts >= since
        });
    }
}

/// One CPU's ring from two copies made one after the other while its programs kept
/// writing (`a` first; see [`BpfCapture::read_rings`]), as a dump of CPU `cpu` with no late
/// thread (a carry copy's header): `a`'s records, less the slots written between the two
/// copies' heads (time 0: never written), the newest [`MID_WRITE`] before `a`'s head taken
/// from `b`. `None` when nothing was recorded or the whole ring turned over in between.
fn settled(a: &RingWords, b: &RingWords, cpu: u32) -> Option<Box<RingWords>> {
    use crate::bpf_records::{HEADER_SIZE, RECORD_SIZE, RING_LEN};
    let ring = RING_LEN as u64;
    let record_word = |seq: u64| (HEADER_SIZE + (seq % ring) as usize * RECORD_SIZE) / 8;
    let (head, later) = (a[0], b[0]);
    if head == 0 || later.saturating_sub(head) >= ring {
        return None;
    }
    let mut words = Box::new(*a);
    for seq in head..later {
        words[record_word(seq)] = 0;
    }
    for seq in head.saturating_sub(MID_WRITE)..head {
        if seq + ring > later {
            let w = record_word(seq);
            words[w..w + RECORD_SIZE / 8].copy_from_slice(&b[w..w + RECORD_SIZE / 8]);
        }
    }
    // The header as a carry copy's: this CPU (high half of word 1), no late thread.
    words[1] = u64::from(cpu) << 32;
    Some(words)
}

/// The first slot thread `tid` may take (`tid % THREAD_SLOTS` and the next
/// `THREAD_PROBES - 1`, as `thread_of()` in the C source looks) that `taken` does not hold.
fn free_slot(tid: u32, taken: impl Fn(u32) -> bool) -> Option<u32> {
    (0..THREAD_PROBES)
        .map(|i| tid.wrapping_add(i) % THREAD_SLOTS)
        .find(|k| !taken(*k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_before_a_resumed_recording_are_dropped_from_the_new_part_only() {
        use crate::events::Kind;
        let ev = |ts: i64| Event {
            ts,
            cpu: 1,
            pid: 7,
            comm: "t".into(),
            kind: Kind::SysExit { nr: 230 },
        };
        let ts = |v: &Vec<Event>| v.iter().map(|e| e.ts).collect::<Vec<_>>();
        // Events before `from` are earlier polls': kept whatever their time.
        let mut out = vec![ev(5), ev(50), ev(8), ev(60), ev(9)];
        drop_before(&mut out, 1, 40);
        assert_eq!(ts(&out), [5, 50, 60]);
        // Nothing recorded before: the list is left as it is; 0 means no resume yet.
        let mut out = vec![ev(5), ev(50), ev(60)];
        drop_before(&mut out, 1, 40);
        assert_eq!(ts(&out), [5, 50, 60]);
        drop_before(&mut out, 0, 0);
        assert_eq!(ts(&out), [5, 50, 60]);
    }

    #[test]
    fn a_thread_takes_the_first_free_of_its_slots_as_the_kernel_side_looks() {
        // tid 5 in slot 5; tid 1029 (5 + 1024) next to it; the last slot wraps to 0.
        assert_eq!(free_slot(5, |_| false), Some(5));
        assert_eq!(free_slot(1029, |k| k == 5), Some(6));
        assert_eq!(free_slot(1023, |k| k == 1023), Some(0));
        // All four taken: no slot (set_threshold then refuses the thread).
        assert_eq!(free_slot(5, |k| (5..9).contains(&k)), None);
    }

    /// Live (root, BTF): a watched thread's new threshold lands in the kernel's map through
    /// the mapping, one word, and the slot's other words stay as they were.
    #[test]
    fn a_running_threads_threshold_is_stored_in_place_in_the_kernels_map() {
        // SAFETY: geteuid has no memory effects.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping a_running_threads_threshold_is_stored_in_place: not root");
            return;
        }
        let mut cap = match BpfCapture::load() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipping a_running_threads_threshold_is_stored_in_place: {e}");
                return;
            }
        };
        assert!(
            cap.shared_threads.is_some(),
            "the threads array is mmapable"
        );
        // SAFETY: gettid has no memory effects.
        let tid = unsafe { libc::gettid() };
        cap.set_threshold(tid, 1_000).unwrap();
        let slot = cap.slots[&(tid as u32)];
        // A word the programs own (late_woke, written only for a late wake-up: this thread
        // arms no timer, so never), set here through bpf(2) as a program would.
        let mut v = cap.threads.get(&slot, 0).unwrap();
        v[3] = 42;
        cap.threads.set(slot, v, 0).unwrap();
        cap.set_threshold(tid, 2_000).unwrap();
        let v = cap.threads.get(&slot, 0).unwrap();
        assert_eq!(v[1], 2_000, "the threshold, in the kernel's map");
        assert_eq!(v[3], 42, "the rest of the slot untouched");
        assert_eq!(v[TID_WORD] >> 32, u64::from(tid as u32));
        let shared = cap.shared_threads.as_ref().unwrap();
        assert_eq!(shared.load(slot as usize, 1), Some(2_000));
        // The grid: two words in place, the rest kept.
        cap.set_grid(tid, 1_000_000, 123_456).unwrap();
        let v = cap.threads.get(&slot, 0).unwrap();
        assert_eq!((v[GRID_WORDS.0], v[GRID_WORDS.1]), (123_456, 1_000_000));
        assert_eq!((v[1], v[3]), (2_000, 42));
        assert!(cap.set_grid(tid + 1, 1_000_000, 0).is_err(), "not watched");
        cap.unwatch();
    }

    #[test]
    fn two_copies_of_a_ring_settle_into_the_records_that_stood_still() {
        use crate::bpf_records::{parse_dump, HEADER_SIZE, RECORD_SIZE, RING_LEN};
        let word = |seq: u64| (HEADER_SIZE + (seq as usize % RING_LEN) * RECORD_SIZE) / 8;
        // 300 records written when the first copy was made, 302 by the second: records
        // 300 and 301 overwrote 44 and 45 meanwhile; 299 was still being filled at first.
        let ring = |head: u64, filled: &dyn Fn(u64) -> bool| {
            let mut w = Box::new([0u64; crate::bpf_records::DUMP_SIZE / 8]);
            w[0] = head;
            for seq in head.saturating_sub(RING_LEN as u64)..head {
                w[word(seq)] = if filled(seq) { 1_000 + seq } else { 0 };
                w[word(seq) + 1] = 7; // pid 7, kind 0
            }
            w
        };
        let a = ring(300, &|seq| seq != 299);
        let b = ring(302, &|_| true);
        let w = settled(&a, &b, 3).unwrap();
        let mut bytes = Vec::new();
        for x in w.iter() {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let d = parse_dump(&bytes).unwrap();
        assert_eq!((d.cpu, d.tid, d.head), (3, 0, 300));
        let seqs: Vec<u64> = d.records.iter().map(|r| r.seq).collect();
        // 44..=45 dropped (overwritten), 46..=299 kept, 299 from the second copy.
        assert_eq!(seqs, (46..300).collect::<Vec<_>>());
        assert!(d.records.iter().all(|r| r.ts == 1_000 + r.seq as i64));
        // Nothing recorded, or the whole ring turned over between the copies: nothing.
        assert!(settled(&ring(0, &|_| true), &b, 3).is_none());
        assert!(settled(&a, &ring(300 + RING_LEN as u64, &|_| true), 3).is_none());
    }

    #[test]
    fn the_thread_layout_is_the_c_sources() {
        // As `the_layout_is_the_c_sources` (bpf_records.rs) for the ring: what the C source
        // asserts of `struct thread`.
        let c = include_str!("../bpf/capture.bpf.c");
        let size = std::mem::size_of::<ThreadWords>();
        let (phase, period) = (8 * GRID_WORDS.0, 8 * GRID_WORDS.1);
        for line in [
            format!("_Static_assert(sizeof(struct thread) == {size},"),
            format!("_Static_assert(__builtin_offsetof(struct thread, phase) == {phase} &&"),
            format!("__builtin_offsetof(struct thread, period) == {period},"),
        ] {
            assert!(c.contains(&line), "capture.bpf.c does not assert `{line}`");
        }
    }

    #[test]
    fn optional_symbols_are_looked_for_a_quarter_further_than_the_required_ones() {
        let mut text = String::from("ffff0001 t a\nffff0002 t opt1\n");
        for i in 3..=7 {
            text.push_str(&format!("ffff{i:04x} t x\n"));
        }
        text.push_str("ffff0008 T b\nffff0009 t x\nffff000a t opt2\tmod\nffff000b t opt3\n");
        let get = |names: &[&str], required| symbols_in(text.as_bytes(), names, required);
        // Required a and b found by line 8: the optional ones up to line 10 only.
        assert_eq!(
            get(&["a", "b", "opt1", "opt2", "opt3"], 2),
            vec![
                Some(0xffff0001),
                Some(0xffff0008),
                Some(0xffff0002),
                Some(0xffff000a),
                None
            ]
        );
        // A required name is looked for to the end; optional ones too, meanwhile.
        assert_eq!(
            get(&["opt3", "missing", "a"], 2),
            vec![Some(0xffff000b), None, Some(0xffff0001)]
        );
        // Hidden addresses (all zeros without root) are not addresses.
        assert_eq!(
            symbols_in("0000000000000000 t a\n".as_bytes(), &["a"], 1),
            vec![None]
        );
    }

    #[test]
    fn a_threads_process_is_read_from_proc() {
        // SAFETY: gettid and getpid have no memory effects.
        let (tid, pid) = unsafe { (libc::gettid(), libc::getpid()) };
        assert_eq!(tgid_of(tid), Some(pid as u32));
        let other = std::thread::spawn(|| unsafe { libc::gettid() })
            .join()
            .unwrap();
        // An ended thread has no /proc entry left, or still names this process while reaped.
        assert!(tgid_of(other).is_none_or(|p| p == pid as u32));
        assert_eq!(tgid_of(-1), None);
    }
}
