//! Where `--explain`'s events come from: the BPF backend ([`crate::bpf`], preferred) or the
//! text of a private tracefs instance ([`crate::tracefs`], the fallback), behind one type.
//!
//! Both fill the same [`EventWindow`] with the same [`crate::Event`]s, so attribution is the
//! same code whichever ran. What differs is the cost on the measured CPU and when a late
//! wake-up's events are complete:
//!
//! * `tracefs` writes every event (≈ 19 per wake-up at 1 kHz, ≈ 0.29 µs each when hot,
//!   kernel `CONFIG_TRACEPOINT_BENCHMARK` help) and the collector reads and parses all of
//!   them as text; a wake-up is complete once the trace has run 2 ms past it.
//! * `bpf` records each event as 64 bytes in a per-CPU ring and sends a CPU's ring only when
//!   a watched thread was late; a wake-up is complete once its window has arrived (or
//!   [`BPF_WAIT_NS`] after it was received, when the kernel side did not find it late).

use crate::bpf::BpfCapture;
use crate::bpf_records::Dump;
use crate::events::{LineParser, Nanos};
use crate::tracefs::{InstanceSpec, TraceInstance, Unavailable};
use crate::window::EventWindow;
use std::collections::HashMap;

/// The kernel side's threshold is this fraction (×1/4 … ×3/4) of the user's: its "woke" is
/// the return from the wait, a little before the thread's clock read, so a wake-up just over
/// the user's threshold must not be missed.
const KERNEL_SHARE: (i64, i64) = (3, 4);

/// How long a late wake-up waits for its BPF window after the collector received it, ns
/// (the window is sent when the thread next sleeps, i.e. within about one period).
pub const BPF_WAIT_NS: i64 = 20_000_000;

/// How far behind its newest event the BPF backend's [`EventWindow`] keeps events, ns.
/// A late wake-up's events arrive together, in its window, within about one period of the
/// wake-up, and every wake-up still waiting holds its own events however old
/// ([`EventWindow::hold_from`]); the age limit is only a margin for a collector that lags.
/// 1 s rather than the text path's 3 s: at a 64-CPU host's volume with 1 % of wake-ups late
/// the 3 s window held ≈ 10 MiB of events (`bench/explain-replay.sh`, docs/explain.md
/// "Memory over days").
pub const BPF_WINDOW_KEEP_NS: Nanos = 1_000_000_000;

/// The same for the tracefs text path, ns: its events arrive as the kernel writes them and
/// a wake-up is complete only once the trace has run past it, so it keeps more.
pub const TRACEFS_WINDOW_KEEP_NS: Nanos = 3_000_000_000;

/// The events' source.
#[derive(Debug)]
pub enum Capture {
    /// BPF programs; `windows` holds, per thread, the newest late wake-up's return (ns) whose
    /// window has arrived.
    Bpf {
        /// The programs (boxed: the loader's state is large).
        cap: Box<BpfCapture>,
        /// Per tid, the `woke` of the newest window received.
        windows: HashMap<i32, Nanos>,
        /// Reused per poll.
        dumps: Vec<Dump>,
        /// The events of a poll, reused (its capacity kept).
        events: Vec<crate::Event>,
        /// The system's `trace_marker` (tracefs' top level), opened by the first mark.
        marker: Option<SystemMarker>,
    },
    /// A tracefs instance read as text.
    Tracefs {
        /// The instance.
        inst: TraceInstance,
        /// Bytes read but not yet parsed (an incomplete last line).
        buf: Vec<u8>,
        /// The line decoder and its table of names (kept for the run).
        parser: LineParser,
    },
}

/// What the backend costs and did, for the result.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CaptureCost {
    /// Events written in the kernel on the traced CPUs (BPF: records into the per-CPU rings;
    /// tracefs: events read).
    pub events: u64,
    /// Events lost: BPF windows the ring buffer had no room for (× their records), tracefs
    /// ring overruns.
    pub lost: u64,
    /// Windows sent for late wake-ups (BPF only).
    pub windows: u64,
    /// CPU time the collector spent reading and decoding, ns (CLOCK_THREAD_CPUTIME_ID).
    pub read_cpu_ns: i64,
    /// CPU time loading the BPF programs took once, ns (0 for tracefs).
    pub load_cpu_ns: i64,
}

/// The kernel side's threshold for a user threshold, ns.
pub fn kernel_threshold(threshold_ns: i64) -> i64 {
    threshold_ns.max(0) * KERNEL_SHARE.0 / KERNEL_SHARE.1
}

fn thread_cpu_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call writes.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    match rc {
        0 => ts.tv_sec * 1_000_000_000 + ts.tv_nsec,
        _ => 0,
    }
}

/// The system's `trace_marker`, open for marks under BPF. Dropped, it closes the file and
/// then unmounts tracefs if tickscope mounted it and no tickscope instance is left: an open
/// file keeps a tracefs run's unmount from succeeding (EBUSY), and whoever holds the last
/// file does it instead (see [`crate::tracefs`]).
#[derive(Debug)]
pub struct SystemMarker(Option<std::fs::File>);

impl Drop for SystemMarker {
    fn drop(&mut self) {
        drop(self.0.take());
        crate::tracefs::release();
    }
}

impl Capture {
    /// `bpf` or `tracefs`.
    pub fn name(&self) -> &'static str {
        match self {
            Capture::Bpf { .. } => "bpf",
            Capture::Tracefs { .. } => "tracefs",
        }
    }

    /// How far behind its newest event the window keeps events, ns
    /// ([`BPF_WINDOW_KEEP_NS`] or [`TRACEFS_WINDOW_KEEP_NS`]).
    pub fn window_keep_ns(&self) -> Nanos {
        match self {
            Capture::Bpf { .. } => BPF_WINDOW_KEEP_NS,
            Capture::Tracefs { .. } => TRACEFS_WINDOW_KEEP_NS,
        }
    }

    /// Resolution of event timestamps, ns.
    pub fn resolution_ns(&self) -> i64 {
        match self {
            Capture::Bpf { .. } => 1,
            Capture::Tracefs { .. } => 1000,
        }
    }

    /// One sentence for the result's note.
    pub fn describe(&self) -> String {
        match self {
            Capture::Bpf { cap, .. } => {
                let mut s = format!(
                    "BPF: {} tracepoint programs keep each CPU's recent events in a ring; a \
                     late wake-up's CPU ring is sent (event timestamps ns)",
                    cap.attached - usize::from(cap.returns_untraced)
                );
                if !cap.missing.is_empty() {
                    s.push_str(&format!("; not on this kernel: {}", cap.missing.join(", ")));
                }
                if !cap.unrecorded.is_empty() {
                    s.push_str(&format!(
                        "; not recorded on a virtual machine, where they are no evidence: {}",
                        cap.unrecorded.join(", ")
                    ));
                }
                if cap.returns_untraced {
                    s.push_str(
                        "; the wait's return (sys_exit) is not traced where the run's own \
                         samples say which wake-ups were late: each is settled when the thread \
                         next arms its timer",
                    );
                }
                if let Some(pid) = cap.loader_pid {
                    s.push_str(&format!(
                        "; loaded by a helper process (pid {pid}, ended) that parsed the \
                         kernel's BTF, so that tickscope holds only the descriptors"
                    ));
                }
                s
            }
            Capture::Tracefs { inst, .. } => format!(
                "trace instance {} (event timestamps µs, timer fields ns)",
                inst.dir().display()
            ),
        }
    }

    /// Starts capturing for threads `tids` waiting in `wait_nrs`, threshold `threshold_ns`,
    /// on `spec`'s CPUs (empty: all; tracefs also enables `spec`'s events). `fired_by`: the
    /// callback of a timer that another thread re-arms, whose firing gives the one thread's
    /// expiry (BPF; see [`BpfCapture::expiry_when_fired`]).
    ///
    /// # Errors
    /// [`Unavailable`] when the kernel refuses.
    pub fn start(
        &mut self,
        tids: &[i32],
        wait_nrs: &[i64],
        threshold_ns: i64,
        spec: &InstanceSpec,
        fired_by: Option<&str>,
    ) -> Result<(), Unavailable> {
        match self {
            Capture::Bpf { cap, .. } => cap
                .resume()
                .and_then(|()| cap.record_only_on(&spec.cpus))
                .and_then(|()| cap.watch(tids, wait_nrs, kernel_threshold(threshold_ns)))
                .and_then(|()| match (fired_by, tids) {
                    (Some(f), [tid]) => cap.expiry_when_fired(Some((*tid, f))),
                    _ => cap.expiry_when_fired(None),
                })
                .map_err(|e| Unavailable(format!("BPF backend: {e}"))),
            Capture::Tracefs { inst, .. } => inst.start(spec),
        }
    }

    /// Adds thread `tid` to a capture already started for others (a thread that joined
    /// the run), with threshold `threshold_ns`: BPF watches it from now on; the text path
    /// takes `spec` (every thread's filters) as [`Capture::start`] does.
    ///
    /// # Errors
    /// [`Unavailable`] when the kernel refuses.
    pub fn add_thread(
        &mut self,
        tid: i32,
        threshold_ns: i64,
        spec: &InstanceSpec,
    ) -> Result<(), Unavailable> {
        match self {
            Capture::Bpf { cap, .. } => cap
                .set_threshold(tid, kernel_threshold(threshold_ns))
                .map_err(|e| Unavailable(format!("BPF backend: {e}"))),
            Capture::Tracefs { inst, .. } => inst.start(spec),
        }
    }

    /// Gives thread `tid` its expiry grid, `period` ns through `phase` (ns on
    /// CLOCK_MONOTONIC), for a method whose timer ends before the expiry (BPF:
    /// [`BpfCapture::set_grid`]; the text path judges nothing in the kernel).
    pub fn set_grid(&mut self, tid: i32, period: i64, phase: i64) {
        if let Capture::Bpf { cap, .. } = self {
            // A refused update keeps judging against the timer: more windows, none missed.
            let _ = cap.set_grid(tid, period, phase);
        }
    }

    /// Sets one thread's threshold (BPF; the text path records everything anyway).
    pub fn set_threshold(&mut self, tid: i32, threshold_ns: i64) {
        if let Capture::Bpf { cap, .. } = self {
            // A refused update keeps the previous threshold.
            let _ = cap.set_threshold(tid, kernel_threshold(threshold_ns));
        }
    }

    /// Stops recording (a run that is not traced, with `--rounds`): BPF detaches its
    /// programs, tracefs turns its events off, so that the kernel runs nothing of ours
    /// until [`Capture::start`] (the observer effect is then against a run with nothing
    /// attached, as without `--explain`).
    pub fn freeze(&mut self) {
        match self {
            Capture::Bpf { cap, .. } => {
                cap.unwatch();
                cap.pause();
            }
            Capture::Tracefs { inst, .. } => inst.freeze(),
        }
    }

    /// Whether the wait's return is traced from the next [`Capture::start`] on (BPF only:
    /// [`BpfCapture::trace_returns`]; the text path always traces it). Returns whether it
    /// is.
    ///
    /// # Errors
    /// [`Unavailable`] when the kernel refuses to attach the program again.
    pub fn trace_returns(&mut self, on: bool) -> Result<bool, Unavailable> {
        match self {
            Capture::Bpf { cap, .. } => cap
                .trace_returns(on)
                .map(|()| on)
                .map_err(|e| Unavailable(format!("BPF backend: {e}"))),
            Capture::Tracefs { .. } => Ok(true),
        }
    }

    /// Moves what the backend holds into `window`; returns the CPU time it took, ns.
    pub fn read(&mut self, window: &mut EventWindow) -> i64 {
        let t0 = thread_cpu_ns();
        match self {
            Capture::Bpf {
                cap,
                windows,
                dumps,
                events,
                ..
            } => {
                cap.poll(events, dumps);
                window.extend(events.drain(..));
                // A carry copy (tid 0) holds events only: no thread's window arrived.
                for d in dumps.drain(..).filter(|d| d.tid != 0) {
                    let w = windows.entry(d.tid).or_insert(d.woke);
                    *w = (*w).max(d.woke);
                }
            }
            Capture::Tracefs { inst, buf, parser } => {
                if inst.read_available(buf).is_ok() {
                    if let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
                        // Borrowed unless the text is not UTF-8: no copy per read.
                        let text = String::from_utf8_lossy(&buf[..=end]);
                        for e in text.lines().filter_map(|l| parser.parse(l)) {
                            window.push(e);
                        }
                        drop(text);
                        buf.drain(..=end);
                    }
                }
            }
        }
        thread_cpu_ns() - t0
    }

    /// Reads what the capture holds for late wake-ups it sends no window for — those of a
    /// thread that spins to its expiry — into `window`, and counts each of `late` (thread
    /// id, `woke`) as having its window: BPF copies the rings as they stand
    /// ([`BpfCapture::read_rings`]); tracefs has every event already and does nothing.
    /// Returns the CPU time it took, ns.
    pub fn fetch(&mut self, window: &mut EventWindow, late: &[(i32, Nanos)]) -> i64 {
        let t0 = thread_cpu_ns();
        if let Capture::Bpf {
            cap,
            windows,
            events,
            ..
        } = self
        {
            if cap.read_rings(events).is_ok() {
                window.extend(events.drain(..));
                for &(tid, woke) in late {
                    let w = windows.entry(tid).or_insert(woke);
                    *w = (*w).max(woke);
                }
            }
        }
        thread_cpu_ns() - t0
    }

    /// Whether the events of thread `tid`'s wake-up `[expiry, woke]` are complete: tracefs
    /// when the trace has run `catch_up_ns` past it, BPF when its window (or a later one of
    /// the thread) has arrived or `received_ns` (the newest wake-up the collector has) is
    /// [`BPF_WAIT_NS`] past it.
    pub fn caught_up(
        &self,
        window: &EventWindow,
        tid: i32,
        expiry: Nanos,
        woke: Nanos,
        catch_up_ns: i64,
        received_ns: Option<Nanos>,
    ) -> bool {
        match self {
            Capture::Bpf { windows, .. } => {
                windows.get(&tid).is_some_and(|&w| w >= expiry)
                    || received_ns.is_some_and(|r| r >= woke + BPF_WAIT_NS)
            }
            Capture::Tracefs { .. } => window.newest() >= woke + catch_up_ns,
        }
    }

    /// Writes a line into the trace: the instance's `trace_marker` (tracefs), or with BPF,
    /// which has no text trace of its own, the system's (`/sys/kernel/tracing/trace_marker`,
    /// where a tracer the user runs — trace-cmd, perf — sees it, as cyclictest's
    /// `--tracemark` writes it). Returns the file written, or `None` with BPF when tracefs is
    /// not mounted at [`crate::tracefs::TRACEFS`]: then no tracer reads the system's
    /// `trace_marker` and there is nothing to write (tickscope does not mount it for a line
    /// nobody reads; a tracer started later mounts it, and the next mark finds it).
    ///
    /// # Errors
    /// Opening or writing the file.
    pub fn mark(&mut self, text: &str) -> std::io::Result<Option<&'static str>> {
        match self {
            Capture::Bpf { marker, .. } => {
                if marker.is_none() {
                    let top = std::path::Path::new(crate::tracefs::TRACEFS);
                    if !top.join("instances").is_dir() {
                        return Ok(None);
                    }
                    let path = top.join("trace_marker");
                    let file = std::fs::OpenOptions::new().write(true).open(path)?;
                    *marker = Some(SystemMarker(Some(file)));
                }
                match marker.as_mut().and_then(|m| m.0.as_mut()) {
                    Some(m) => std::io::Write::write_all(m, text.as_bytes())
                        .map(|_| Some("the system's trace_marker")),
                    None => Err(std::io::ErrorKind::NotFound.into()),
                }
            }
            Capture::Tracefs { inst, .. } => {
                inst.mark(text).map(|_| Some("the instance's trace_marker"))
            }
        }
    }

    /// The backend's counters (`window` supplies tracefs' events read and lost).
    pub fn cost(&self, window: &EventWindow, read_cpu_ns: i64) -> CaptureCost {
        match self {
            Capture::Bpf { cap, .. } => {
                let s = cap.stats();
                CaptureCost {
                    events: s.records,
                    lost: s.dumps_lost * crate::bpf_records::RING_LEN as u64,
                    windows: s.dumps,
                    read_cpu_ns,
                    load_cpu_ns: cap.load_cpu_ns,
                }
            }
            Capture::Tracefs { .. } => CaptureCost {
                events: window.seen,
                lost: window.lost,
                windows: 0,
                read_cpu_ns,
                load_cpu_ns: 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_threshold_is_below_the_users() {
        assert_eq!(kernel_threshold(100_000), 75_000);
        assert_eq!(kernel_threshold(-5), 0);
        assert!(kernel_threshold(i64::MAX / 4) < i64::MAX / 4);
    }
}
