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
//! Dropping the guard detaches and unloads every program and frees the maps (they are file
//! descriptors of this process, so an immediate exit or a kill frees them too: nothing
//! outlives tickscope). Loading needs `CAP_BPF` and `CAP_PERFMON` (or root), "BPF
//! permissions", <https://docs.kernel.org/bpf/> and capabilities(7).

use crate::bpf_records::{parse_dump, Decoder, Dump};
use crate::events::Event;
use crate::tracefs::Unavailable;
use aya::maps::{Array, HashMap as BpfHashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf};

/// The compiled program (see `bpf/build.sh`).
static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/capture.bpf.o");

/// Program name → tracepoint, and whether loading fails without it.
const PROGRAMS: [(&str, &str, bool); 26] = [
    ("on_hrtimer_start", "hrtimer_start", true),
    ("on_hrtimer_expire_entry", "hrtimer_expire_entry", true),
    ("on_hrtimer_expire_exit", "hrtimer_expire_exit", true),
    ("on_sched_switch", "sched_switch", true),
    ("on_sys_exit", "sys_exit", true),
    ("on_irq_entry", "irq_handler_entry", false),
    ("on_irq_exit", "irq_handler_exit", false),
    ("on_softirq_entry", "softirq_entry", false),
    ("on_softirq_exit", "softirq_exit", false),
    ("on_cpu_idle", "cpu_idle", false),
    ("on_local_timer_entry", "local_timer_entry", false),
    ("on_local_timer_exit", "local_timer_exit", false),
    ("on_reschedule_entry", "reschedule_entry", false),
    ("on_reschedule_exit", "reschedule_exit", false),
    ("on_call_function_entry", "call_function_entry", false),
    ("on_call_function_exit", "call_function_exit", false),
    (
        "on_call_function_single_entry",
        "call_function_single_entry",
        false,
    ),
    (
        "on_call_function_single_exit",
        "call_function_single_exit",
        false,
    ),
    ("on_irq_work_entry", "irq_work_entry", false),
    ("on_irq_work_exit", "irq_work_exit", false),
    ("on_error_apic_entry", "error_apic_entry", false),
    ("on_error_apic_exit", "error_apic_exit", false),
    ("on_spurious_apic_entry", "spurious_apic_entry", false),
    ("on_spurious_apic_exit", "spurious_apic_exit", false),
    ("on_thermal_apic_entry", "thermal_apic_entry", false),
    ("on_thermal_apic_exit", "thermal_apic_exit", false),
];

/// `struct thread` of the C source as u64 words: expiry, threshold, late_expiry,
/// late_woke, (pending | late << 32), pending_since.
type ThreadWords = [u64; 6];
/// `struct ring` as u64 words (`crate::bpf_records::DUMP_SIZE` / 8).
type RingWords = [u64; crate::bpf_records::DUMP_SIZE / 8];

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
    ebpf: Ebpf,
    ring: RingBuf<MapData>,
    decoder: Decoder,
    /// Dumps received.
    pub received: u64,
    /// Programs attached.
    pub attached: usize,
    /// Optional tracepoints this kernel lacks.
    pub missing: Vec<&'static str>,
}

impl std::fmt::Debug for BpfCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpfCapture")
            .field("received", &self.received)
            .field("attached", &self.attached)
            .finish()
    }
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> Unavailable {
    Unavailable(format!(
        "BPF backend: {what}: {e} (needs root, or CAP_BPF and CAP_PERFMON, and the kernel's \
         BTF at /sys/kernel/btf/vmlinux)"
    ))
}

impl BpfCapture {
    /// Loads and attaches the programs; events are recorded from here on, but nothing is
    /// sent until threads are [watched](Self::watch).
    ///
    /// # Errors
    /// [`Unavailable`] naming the step that failed (no BTF, not permitted, verifier refusal,
    /// a required tracepoint missing) and what to do.
    pub fn load() -> Result<Self, Unavailable> {
        if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
            return Err(Unavailable(
                "BPF backend: the kernel has no BTF (/sys/kernel/btf/vmlinux, \
                 CONFIG_DEBUG_INFO_BTF)"
                    .into(),
            ));
        }
        let btf = Btf::from_sys_fs().map_err(|e| unavailable("reading the kernel's BTF", e))?;
        let mut ebpf = aya::EbpfLoader::new()
            .btf(Some(&btf))
            .load(OBJECT)
            .map_err(|e| unavailable("loading", e))?;
        let mut attached = 0;
        let mut missing = Vec::new();
        for (name, tracepoint, required) in PROGRAMS {
            let result = (|| -> Result<(), String> {
                let prog: &mut BtfTracePoint = ebpf
                    .program_mut(name)
                    .ok_or("not in the object")?
                    .try_into()
                    .map_err(|e| format!("{e}"))?;
                prog.load(tracepoint, &btf).map_err(|e| format!("{e}"))?;
                prog.attach().map_err(|e| format!("{e}"))?;
                Ok(())
            })();
            match result {
                Ok(()) => attached += 1,
                Err(e) if required => {
                    return Err(unavailable(&format!("attaching to {tracepoint}"), e))
                }
                Err(_) => missing.push(tracepoint),
            }
        }
        let map = ebpf
            .take_map("dumps")
            .ok_or_else(|| unavailable("the object", "no map `dumps`"))?;
        let ring = RingBuf::try_from(map).map_err(|e| unavailable("the ring buffer", e))?;
        Ok(BpfCapture {
            ebpf,
            ring,
            decoder: Decoder::new(),
            received: 0,
            attached,
            missing,
        })
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
        let mut config: Array<_, [i64; 4]> =
            Array::try_from(self.ebpf.map_mut("config").ok_or("no map `config`")?)
                .map_err(|e| e.to_string())?;
        config.set(0, nrs, 0).map_err(|e| e.to_string())?;
        for &tid in tids {
            self.set_threshold(tid, threshold_ns)?;
        }
        Ok(())
    }

    fn threads(&mut self) -> Result<BpfHashMap<&mut MapData, u32, ThreadWords>, String> {
        BpfHashMap::try_from(self.ebpf.map_mut("threads").ok_or("no map `threads`")?)
            .map_err(|e| e.to_string())
    }

    /// Sets a watched thread's threshold, ns (a thread not watched yet is added).
    ///
    /// # Errors
    /// A map update refused by the kernel, as text.
    pub fn set_threshold(&mut self, tid: i32, threshold_ns: i64) -> Result<(), String> {
        let mut threads = self.threads()?;
        let mut v: ThreadWords = threads.get(&(tid as u32), 0).unwrap_or_default();
        v[1] = threshold_ns as u64;
        threads
            .insert(tid as u32, v, 0)
            .map_err(|e| format!("thread {tid}: {e}"))
    }

    /// Stops watching every thread (their events are still recorded, no window is sent).
    pub fn unwatch(&mut self) {
        if let Ok(mut threads) = self.threads() {
            let tids: Vec<u32> = threads.keys().filter_map(Result::ok).collect();
            for tid in tids {
                let _ = threads.remove(&tid);
            }
        }
    }

    /// Late wake-ups the kernel side saw for `tid` (windows asked for).
    pub fn late_seen(&mut self, tid: i32) -> u64 {
        self.threads()
            .ok()
            .and_then(|t| t.get(&(tid as u32), 0).ok())
            .map_or(0, |v| v[4] >> 32)
    }

    /// Drains the ring buffer: each window's new events are appended to `out` (oldest first
    /// per CPU) and each dump's header to `dumps`. Never blocks.
    pub fn poll(&mut self, out: &mut Vec<Event>, dumps: &mut Vec<Dump>) {
        while let Some(item) = self.ring.next() {
            if let Some(mut d) = parse_dump(&item) {
                self.received += 1;
                self.decoder.decode(&d, out);
                d.records = Vec::new();
                dumps.push(d);
            }
        }
    }

    /// The counters, summed over CPUs (one map read: for the result, not per wake-up).
    pub fn stats(&self) -> BpfStats {
        let Some(map) = self.ebpf.map("rings") else {
            return BpfStats::default();
        };
        let Ok(rings) = PerCpuArray::<_, RingWords>::try_from(map) else {
            return BpfStats::default();
        };
        let Ok(values) = rings.get(&0, 0) else {
            return BpfStats::default();
        };
        values.iter().fold(BpfStats::default(), |s, r| BpfStats {
            records: s.records + r[0],
            dumps: s.dumps + r[4],
            dumps_lost: s.dumps_lost + r[5],
        })
    }
}
