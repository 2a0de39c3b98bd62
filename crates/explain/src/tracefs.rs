//! The one guard that owns tickscope's private tracefs instance.
//!
//! A trace instance (`instances/NAME`, "Instances" in The Linux kernel's ftrace
//! documentation, <https://docs.kernel.org/trace/ftrace.html>) has its own ring buffer, clock,
//! CPU mask, events and filters, so the global buffer, `current_tracer` and other users are
//! never touched. [`TraceInstance::create`] makes `instances/tickscope-PID` with
//! `trace_clock=mono` (CLOCK_MONOTONIC, `ktime_get_mono_fast_ns`), a per-CPU buffer size, a
//! CPU mask, and the events with field filters ("Event filtering",
//! <https://docs.kernel.org/trace/events.html> §5); dropping it stops tracing and removes the
//! instance. An immediate exit (second Ctrl-C) runs no destructors, so every live instance is
//! also listed, with its open files, for [`remove_all_now`]: the kernel refuses to remove an
//! instance while any of its files is open (`rmdir` fails with EBUSY, `__remove_instance` in
//! kernel/trace/trace.c), so those files are first replaced by `/dev/null`. A
//! `tickscope-PID` instance whose process is gone (a killed run: it keeps tracing into its
//! buffers) is removed by the next [`TraceInstance::create`], and by [`sweep_stale`], which
//! every command that measures calls first.
//!
//! If tracefs is not mounted at `/sys/kernel/tracing` the guard mounts it there, with the
//! source name `tickscope` (tracefs ignores the source; `mount` and `/proc/self/mountinfo`
//! show it), and whichever tickscope process removes the last `tickscope-*` instance
//! unmounts a mount of that name (if nothing else uses it by then: `umount` fails with
//! EBUSY while any file in it is open). The name, not the process that mounted, decides:
//! when only the mounting process unmounted, and only if no other instance was left, two runs
//! at once — the one that mounted it ending first — left it mounted (and so could two
//! instances of one process, `attach --explain`, dropped in that order).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where tracefs lives.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// Prefix of tickscope's instance names; the process id follows.
pub const PREFIX: &str = "tickscope-";

/// An instance this process holds: its directory and the descriptors of its open files.
struct Live {
    dir: PathBuf,
    fds: Vec<RawFd>,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// Why tracing is not available, as one sentence with what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One event to enable, with an optional filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// `group/name`, e.g. `timer/hrtimer_start`.
    pub path: &'static str,
    /// Filter expression, or `None`.
    pub filter: Option<String>,
    /// Whether the instance is refused when the event is missing.
    pub required: bool,
}

/// What the instance records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSpec {
    /// Per-CPU ring buffer size, KiB (> 0).
    pub buffer_kb: u32,
    /// CPUs traced; empty = all.
    pub cpus: Vec<usize>,
    /// Events.
    pub events: Vec<EventSpec>,
}

/// The events `tickscope attach` reads from the tasks it follows ([`TraceInstance::follow`]):
/// the timers they arm and cancel, their system calls' entries and exits (only `wait_nrs`
/// once the waits are known; every call while they are being found: empty), and their exits.
pub fn attach_events(wait_nrs: &[i64]) -> Vec<EventSpec> {
    let nrs = (!wait_nrs.is_empty()).then(|| {
        wait_nrs
            .iter()
            .map(|n| format!("id == {n}"))
            .collect::<Vec<_>>()
            .join(" || ")
    });
    let e = |path, filter: Option<String>| EventSpec {
        path,
        filter,
        required: true,
    };
    vec![
        e("timer/hrtimer_start", None),
        e("timer/hrtimer_cancel", None),
        e("raw_syscalls/sys_enter", nrs.clone()),
        e("raw_syscalls/sys_exit", nrs),
        e("sched/sched_process_exit", None),
    ]
}

/// The events `--explain` needs for threads `tids` waiting in system calls `wait_nrs`
/// (empty: any system call of the threads): the timer, the CPU's interrupts and softirqs,
/// scheduling and idle, all unfiltered but limited by the CPU mask, except the two high-rate
/// ones: `hrtimer_start` from the threads only and `sys_exit` of their waits only (an
/// unfiltered `sys_exit` overran an 8 MiB buffer in seconds on this machine).
pub fn explain_events(tids: &[i32], wait_nrs: &[i64]) -> Vec<EventSpec> {
    let pids = tids
        .iter()
        .map(|t| format!("common_pid == {t}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let nrs = wait_nrs
        .iter()
        .map(|n| format!("id == {n}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let exit_filter = match nrs.is_empty() {
        true => format!("({pids})"),
        false => format!("({pids}) && ({nrs})"),
    };
    let e = |path, required| EventSpec {
        path,
        filter: None,
        required,
    };
    let mut v = vec![
        EventSpec {
            path: "timer/hrtimer_start",
            filter: Some(format!("({pids})")),
            required: true,
        },
        e("timer/hrtimer_expire_entry", true),
        e("timer/hrtimer_expire_exit", true),
        e("sched/sched_switch", true),
        EventSpec {
            path: "raw_syscalls/sys_exit",
            filter: Some(exit_filter),
            required: true,
        },
        e("irq/irq_handler_entry", false),
        e("irq/irq_handler_exit", false),
        e("irq/softirq_entry", false),
        e("irq/softirq_exit", false),
        e("power/cpu_idle", false),
        // Page faults of the measured threads only (every task's would flood the buffer:
        // 37 000 a second on a CPU shared with a compiler here).
        EventSpec {
            path: "exceptions/page_fault_user",
            filter: Some(format!("({pids})")),
            required: false,
        },
        EventSpec {
            path: "exceptions/page_fault_kernel",
            filter: Some(format!("({pids})")),
            required: false,
        },
    ];
    for vector in [
        "local_timer",
        "reschedule",
        "call_function",
        "call_function_single",
        "irq_work",
        "error_apic",
        "spurious_apic",
        "thermal_apic",
    ] {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        v.push(e(leak(format!("irq_vectors/{vector}_entry")), false));
        v.push(e(leak(format!("irq_vectors/{vector}_exit")), false));
    }
    v
}

/// A private tracefs instance, removed when dropped.
#[derive(Debug)]
pub struct TraceInstance {
    dir: PathBuf,
    pipe: Option<File>,
    marker: Option<File>,
    /// Events that were asked for but are absent on this kernel.
    pub missing_events: Vec<&'static str>,
}

/// Whether tracing could be set up by this process: tracefs present or mountable and
/// writable. `Err` says why not and how to allow it.
///
/// # Errors
/// [`Unavailable`] when not root (no `CAP_SYS_ADMIN`-owned tracefs access), or when tracefs
/// is neither mounted nor mountable.
pub fn check_available() -> Result<(), Unavailable> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Unavailable(format!(
            "tracing needs root (tracefs at {TRACEFS} is root's); run as root or use --explain=context"
        )));
    }
    if !Path::new(TRACEFS).is_dir() {
        return Err(Unavailable(format!(
            "{TRACEFS} does not exist: the kernel has no tracefs (CONFIG_TRACING)"
        )));
    }
    Ok(())
}

/// Mounts tracefs at [`TRACEFS`] if it is not mounted; true if this call mounted it.
fn ensure_mounted() -> Result<bool, Unavailable> {
    if Path::new(TRACEFS).join("instances").is_dir() {
        return Ok(false);
    }
    let target = std::ffi::CString::new(TRACEFS).expect("no NUL");
    let fstype = c"tracefs";
    let source = MOUNT_SOURCE;
    // SAFETY: every pointer is a valid NUL-terminated string; data is null.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(Unavailable(format!(
            "tracefs is not mounted and cannot be mounted ({e}); mount it with \
             'mount -t tracefs nodev {TRACEFS}'"
        )));
    }
    if !Path::new(TRACEFS).join("instances").is_dir() {
        unmount();
        return Err(Unavailable(format!(
            "tracefs at {TRACEFS} has no instances directory (kernel too old)"
        )));
    }
    Ok(true)
}

fn unmount() {
    let target = std::ffi::CString::new(TRACEFS).expect("no NUL");
    // SAFETY: valid NUL-terminated path. EBUSY (someone else uses it) leaves it mounted.
    unsafe { libc::umount2(target.as_ptr(), 0) };
}

/// The source name tickscope mounts tracefs with: what marks a mount as tickscope's.
const MOUNT_SOURCE: &std::ffi::CStr = c"tickscope";

/// Whether the mount on top at [`TRACEFS`] is a tracefs that tickscope mounted (source
/// [`MOUNT_SOURCE`]), from `/proc/self/mountinfo`.
fn mounted_by_tickscope() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|text| ours_on_top(&text))
}

/// [`mounted_by_tickscope`] on the text of a `mountinfo` file (proc(5): the mount point is
/// the fifth field; after the ` - ` separator come the file system type and the source; a
/// later line for the same mount point is a mount on top of an earlier one).
fn ours_on_top(mountinfo: &str) -> bool {
    let source = MOUNT_SOURCE.to_str().expect("ASCII");
    mountinfo
        .lines()
        .rev()
        .find(|l| l.split(' ').nth(4) == Some(TRACEFS))
        .and_then(|l| l.split_once(" - "))
        .is_some_and(|(_, tail)| {
            let mut f = tail.split(' ');
            f.next() == Some("tracefs") && f.next() == Some(source)
        })
}

/// Unmounts tracefs when no `tickscope-*` instance is left and tickscope mounted it; a
/// tracefs mounted by anyone else (systemd, a tracer, the administrator) is never touched.
pub(crate) fn release() {
    if list_instances().is_empty() && mounted_by_tickscope() {
        unmount();
    }
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(text.as_bytes())
}

/// Whether process `pid` exists.
fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes `tickscope-PID` (and `tickscope-PID-TAG`) instances under `instances` whose process is gone; returns
/// their names.
pub fn remove_stale(instances: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(dir) = std::fs::read_dir(instances) else {
        return removed;
    };
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|p| p.split('-').next()?.parse::<i32>().ok())
        else {
            continue;
        };
        if !alive(pid) && std::fs::remove_dir(entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// Removes stale `tickscope-PID` instances (see [`remove_stale`]) when tracefs is mounted
/// and this process is root; for an ordinary user, or without tracefs, it does nothing and
/// costs one `geteuid` and at most one `stat`. Never mounts tracefs; unmounts it where it
/// removed the last instance and tickscope had mounted it (a killed run's). Returns the
/// names removed.
pub fn sweep_stale() -> Vec<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Vec::new();
    }
    let instances = Path::new(TRACEFS).join("instances");
    if !instances.is_dir() {
        return Vec::new();
    }
    let removed = remove_stale(&instances);
    if !removed.is_empty() {
        release();
    }
    removed
}

/// Lists the `tickscope-*` instances present (for tests and checks).
pub fn list_instances() -> Vec<String> {
    std::fs::read_dir(Path::new(TRACEFS).join("instances"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

/// A CPU list as tracefs' hexadecimal `tracing_cpumask` (comma-separated 32-bit groups).
pub fn cpumask(cpus: &[usize]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0);
    let mut words = vec![0u32; top / 32 + 1];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl TraceInstance {
    /// Creates and starts the instance `tickscope-<this pid>`; also notes (returns in
    /// `stale`) any stale instance removed.
    ///
    /// # Errors
    /// [`Unavailable`] when tracing is not permitted or tracefs is missing, or when a
    /// required event or filter cannot be set (the instance is removed again).
    pub fn create(spec: &InstanceSpec) -> Result<(TraceInstance, Vec<String>), Unavailable> {
        Self::create_named(spec, None)
    }

    /// [`TraceInstance::create`] for a second instance of this process, named
    /// `tickscope-<pid>-<tag>` (`tickscope attach` reads the target's wake-ups from one while
    /// `--explain` reads its own).
    ///
    /// # Errors
    /// As [`TraceInstance::create`].
    pub fn create_named(
        spec: &InstanceSpec,
        tag: Option<&str>,
    ) -> Result<(TraceInstance, Vec<String>), Unavailable> {
        check_available()?;
        let mounted = ensure_mounted()?;
        let instances = Path::new(TRACEFS).join("instances");
        let stale = remove_stale(&instances);
        let dir = instances.join(match tag {
            Some(t) => format!("{PREFIX}{}-{t}", std::process::id()),
            None => format!("{PREFIX}{}", std::process::id()),
        });
        if dir.exists() {
            let _ = std::fs::remove_dir(&dir);
        }
        // Listed before it exists, so that an immediate exit at any point removes it.
        lock().push(Live {
            dir: dir.clone(),
            fds: Vec::new(),
        });
        if let Err(e) = std::fs::create_dir(&dir) {
            lock().retain(|l| l.dir != dir);
            if mounted {
                unmount();
            }
            return Err(Unavailable(format!("cannot create a trace instance: {e}")));
        }
        let mut inst = TraceInstance {
            dir,
            pipe: None,
            marker: None,
            missing_events: Vec::new(),
        };
        inst.base(spec)
            .map_err(|e| Unavailable(format!("cannot set up the trace instance: {e}")))?;
        if !spec.events.is_empty() {
            inst.start(spec)?;
        }
        Ok((inst, stale))
    }

    /// Tracing off, the clock and the buffer size.
    fn base(&mut self, spec: &InstanceSpec) -> io::Result<()> {
        let d = self.dir.clone();
        let ctx = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        write(&d.join("tracing_on"), "0").map_err(|e| ctx("tracing_on", e))?;
        write(&d.join("trace_clock"), "mono").map_err(|e| ctx("trace_clock mono", e))?;
        write(&d.join("buffer_size_kb"), &spec.buffer_kb.to_string())
            .map_err(|e| ctx("buffer_size_kb", e))
    }

    /// Sets the CPU mask, enables the events with their filters (for threads known only
    /// now), opens `trace_pipe` and starts recording. Called again for a later run, it
    /// replaces the filters.
    ///
    /// # Errors
    /// [`Unavailable`] when a required event is missing or a filter is refused.
    pub fn start(&mut self, spec: &InstanceSpec) -> Result<(), Unavailable> {
        self.configure(spec)
            .map_err(|e| Unavailable(format!("cannot start tracing: {e}")))
    }

    fn configure(&mut self, spec: &InstanceSpec) -> io::Result<()> {
        let d = self.dir.clone();
        let ctx = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        write(&d.join("tracing_on"), "0").map_err(|e| ctx("tracing_on", e))?;
        if !spec.cpus.is_empty() {
            write(&d.join("tracing_cpumask"), &cpumask(&spec.cpus))
                .map_err(|e| ctx("tracing_cpumask", e))?;
        }
        for ev in &spec.events {
            let dir = d.join("events").join(ev.path);
            if !dir.is_dir() {
                if ev.required {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("the kernel has no event {}", ev.path),
                    ));
                }
                self.missing_events.push(ev.path);
                continue;
            }
            if let Some(f) = &ev.filter {
                write(&dir.join("filter"), f)
                    .map_err(|e| ctx(&format!("filter '{f}' on {}", ev.path), e))?;
            }
            write(&dir.join("enable"), "1").map_err(|e| ctx(ev.path, e))?;
        }
        if self.pipe.is_none() {
            self.pipe = Some(
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(d.join("trace_pipe"))
                    .map_err(|e| ctx("trace_pipe", e))?,
            );
            self.marker = OpenOptions::new()
                .write(true)
                .open(d.join("trace_marker"))
                .ok();
            let fds = [self.pipe.as_ref(), self.marker.as_ref()]
                .into_iter()
                .flatten()
                .map(|f| f.as_raw_fd());
            if let Some(live) = lock().iter_mut().find(|l| l.dir == self.dir) {
                live.fds.extend(fds);
            }
        }
        write(&d.join("tracing_on"), "1").map_err(|e| ctx("tracing_on", e))
    }

    /// Records only the events of tasks `pids` and of the threads and processes they
    /// create from now on: tracefs' `set_event_pid` and its `event-fork` option (The Linux
    /// kernel, <https://docs.kernel.org/trace/ftrace.html>, "set_event_pid"). Call before
    /// [`TraceInstance::start`].
    ///
    /// # Errors
    /// [`Unavailable`] when either file cannot be written (a kernel without them).
    pub fn follow(&mut self, pids: &[i32]) -> Result<(), Unavailable> {
        let list = pids
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        write(&self.dir.join("set_event_pid"), &list)
            .and_then(|_| write(&self.dir.join("options/event-fork"), "1"))
            .map_err(|e| Unavailable(format!("cannot follow process {list}: {e}")))
    }

    /// The instance's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads what `trace_pipe` holds now (never blocks); appends to `buf`, returns bytes read.
    ///
    /// # Errors
    /// The OS error of the read (EAGAIN, nothing to read, is `Ok(0)`).
    pub fn read_available(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let Some(pipe) = self.pipe.as_mut() else {
            return Ok(0);
        };
        let mut chunk = [0u8; 64 * 1024];
        let mut total = 0;
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => return Ok(total),
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    total += n;
                    if total > 16 << 20 {
                        return Ok(total);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes one line to the instance's `trace_marker`.
    ///
    /// # Errors
    /// The OS error of the write.
    pub fn mark(&mut self, text: &str) -> io::Result<()> {
        match self.marker.as_mut() {
            Some(m) => m.write_all(text.as_bytes()),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no trace_marker")),
        }
    }

    /// The instance's ring-buffer statistics for `cpu` (`per_cpu/cpuN/stats`: overruns,
    /// dropped events).
    pub fn stats(&self, cpu: usize) -> Option<String> {
        std::fs::read_to_string(self.dir.join(format!("per_cpu/cpu{cpu}/stats"))).ok()
    }

    /// Stops recording and turns the instance's events off (the buffer stays readable):
    /// with `tracing_on` 0 alone an enabled event's handler still runs at every hit and
    /// only finds the buffer off; with its `enable` 0 (and no other user) the tracepoint is
    /// off again ("Event Tracing", <https://docs.kernel.org/trace/events.html>). Starting
    /// again enables the events it names.
    pub fn freeze(&self) {
        let _ = write(&self.dir.join("tracing_on"), "0");
        let _ = write(&self.dir.join("events/enable"), "0");
    }
}

impl Drop for TraceInstance {
    fn drop(&mut self) {
        self.freeze();
        // Unlisted before they are closed, so that remove_all_now never touches a
        // descriptor number that has been reused.
        if let Some(live) = lock().iter_mut().find(|l| l.dir == self.dir) {
            live.fds.clear();
        }
        self.pipe = None;
        self.marker = None;
        let _ = std::fs::remove_dir(&self.dir);
        release();
        lock().retain(|l| l.dir != self.dir);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// How often, and how far apart, `rmdir` is retried while the kernel still holds a file of
/// the instance (a read in progress on another thread): 40 × 5 ms.
const RMDIR_TRIES: u32 = 40;

/// Removes every instance this process created and still holds, and unmounts tracefs if
/// tickscope mounted it and no instance is left: for an immediate exit, where no destructor
/// runs. Tracing is turned off, the instance's open files (`trace_pipe`, `trace_marker`) are
/// replaced by `/dev/null` (dup2(2): their owners stay valid, the kernel's references are
/// dropped), and `rmdir` is retried for up to 200 ms while it fails with EBUSY.
pub fn remove_all_now() {
    let mut live = lock();
    let null = OpenOptions::new().read(true).write(true).open("/dev/null");
    for l in live.drain(..) {
        let _ = write(&l.dir.join("tracing_on"), "0");
        for fd in l.fds {
            match &null {
                // SAFETY: fd is open (its owner unlists it, under this lock, before closing
                // it); dup2 atomically makes it refer to /dev/null instead.
                Ok(n) => unsafe { libc::dup2(n.as_raw_fd(), fd) },
                // SAFETY: as above; the process exits next, so no owner closes it again.
                Err(_) => unsafe { libc::close(fd) },
            };
        }
        for _ in 0..RMDIR_TRIES {
            match std::fs::remove_dir(&l.dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                _ => break,
            }
        }
    }
    drop(live);
    release();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_tracefs_mounted_as_tickscopes_on_top_is_ours() {
        let systemd = "42 23 0:13 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:17 - tracefs tracefs rw\n";
        let by_hand = "42 23 0:13 / /sys/kernel/tracing rw,relatime - tracefs nodev rw\n";
        let ours = "61 23 0:13 / /sys/kernel/tracing rw,relatime - tracefs tickscope rw\n";
        let debug = "30 23 0:7 / /sys/kernel/debug rw,relatime - debugfs tickscope rw\n";
        assert!(ours_on_top(ours));
        assert!(ours_on_top(&format!("{debug}{ours}")));
        assert!(!ours_on_top(systemd));
        assert!(!ours_on_top(by_hand));
        assert!(!ours_on_top(debug), "another mount point");
        assert!(!ours_on_top(""));
        // Stacked: the later line is the mount on top.
        assert!(ours_on_top(&format!("{by_hand}{ours}")));
        assert!(!ours_on_top(&format!("{ours}{by_hand}")));
    }

    #[test]
    fn cpumask_is_hex_words() {
        assert_eq!(cpumask(&[1]), "00000002");
        assert_eq!(cpumask(&[0, 33]), "00000002,00000001");
    }

    #[test]
    fn filters_name_threads_and_wait() {
        let ev = explain_events(&[10, 11], &[230]);
        assert_eq!(
            ev[0].filter.as_deref(),
            Some("(common_pid == 10 || common_pid == 11)")
        );
        let exit = ev
            .iter()
            .find(|e| e.path == "raw_syscalls/sys_exit")
            .unwrap();
        assert_eq!(
            exit.filter.as_deref(),
            Some("(common_pid == 10 || common_pid == 11) && (id == 230)")
        );
    }

    #[test]
    fn stale_instances_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(format!("{PREFIX}999999999"));
        let dead_tagged = dir.path().join(format!("{PREFIX}999999998-attach"));
        std::fs::create_dir(&dead_tagged).unwrap();
        let live = dir.path().join(format!("{PREFIX}{}", std::process::id()));
        let other = dir.path().join("someone-else");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
        }
        let mut removed = remove_stale(dir.path());
        removed.sort();
        assert_eq!(
            removed,
            vec![
                format!("{PREFIX}999999998-attach"),
                format!("{PREFIX}999999999")
            ]
        );
        assert!(live.exists() && other.exists() && !dead.exists());
    }
}
