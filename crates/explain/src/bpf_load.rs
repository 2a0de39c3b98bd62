//! Loading tickscope's BPF object in this process: the object, the maps and programs it
//! must have, attaching each program (`BPF_RAW_TRACEPOINT_OPEN`), and the [`Parts`] that
//! loading leaves — the work [`crate::bpf_loader`]'s helper process does, or the process
//! itself when there is no helper. [`crate::bpf::BpfCapture`] keeps the parts.

use crate::tracefs::Unavailable;
use aya::maps::{Map, MapData};
use aya::programs::BtfTracePoint;
use aya::Btf;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

/// The compiled program (see `bpf/build.sh`).
static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/capture.bpf.o");

/// The maps the guard keeps, in the order [`Parts::maps`] holds them.
pub(crate) const MAPS: [&str; 5] = ["rings", "threads", "config", "dumps", "skip"];

/// Program name → tracepoint, and whether loading fails without it. The local timer
/// vector's entry and `hrtimer_expire_exit` have no program (the decoder puts the entry back:
/// [`crate::bpf_records::fill_in`]).
pub(crate) const PROGRAMS: [(&str, &str, bool); 26] = [
    ("on_hrtimer_start", "hrtimer_start", true),
    ("on_hrtimer_expire_entry", "hrtimer_expire_entry", true),
    ("on_sched_switch", "sched_switch", true),
    ("on_sys_exit", "sys_exit", true),
    ("on_irq_entry", "irq_handler_entry", false),
    ("on_irq_exit", "irq_handler_exit", false),
    ("on_softirq_entry", "softirq_entry", false),
    ("on_softirq_exit", "softirq_exit", false),
    ("on_cpu_idle", "cpu_idle", false),
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
    ("on_page_fault_user", "page_fault_user", false),
    ("on_page_fault_kernel", "page_fault_kernel", false),
];

/// What loading leaves: the maps (in [`MAPS`] order), and one link and one program
/// descriptor per attached program.
#[derive(Debug)]
pub(crate) struct Parts {
    /// `rings`, `threads`, `config`, `dumps`, `skip`.
    pub maps: Vec<MapData>,
    /// The attachments (`BPF_RAW_TRACEPOINT_OPEN` descriptors).
    pub links: Vec<OwnedFd>,
    /// The programs of `links`, in the same order: held so that a program detached for a
    /// run that is not traced can be attached again ([`attach`]).
    pub progs: Vec<OwnedFd>,
    /// Programs attached.
    pub attached: usize,
    /// Optional tracepoints this kernel lacks.
    pub missing: Vec<&'static str>,
}

pub(crate) fn unavailable(what: &str, e: impl std::fmt::Display) -> Unavailable {
    Unavailable(format!(
        "BPF backend: {what}: {e} (needs root, or CAP_BPF and CAP_PERFMON, and the kernel's \
         BTF at /sys/kernel/btf/vmlinux)"
    ))
}

/// Attaches a loaded BTF-enabled tracing program where its load named (`attach_btf_id`):
/// `BPF_RAW_TRACEPOINT_OPEN` with no name (bpf(2); include/uapi/linux/bpf.h `raw_tracepoint`),
/// which returns the link's descriptor.
///
/// # Errors
/// The kernel's refusal (bpf(2) `errno`).
pub(crate) fn attach(prog: std::os::fd::BorrowedFd<'_>) -> std::io::Result<OwnedFd> {
    const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;
    // union bpf_attr's raw_tracepoint member: u64 name (0: the program's own target),
    // u32 prog_fd, 4 bytes of padding.
    let mut attr = [0u64; 2];
    attr[1] = prog.as_raw_fd() as u32 as u64;
    // SAFETY: `attr` is the 16 bytes of the member, passed with its size; the kernel returns
    // a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_RAW_TRACEPOINT_OPEN,
            attr.as_mut_ptr(),
            std::mem::size_of_val(&attr) as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// What becomes of the parsed kernel BTF once loading is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// Freed: the process goes on (loading in process).
    Free,
    /// Left to the process's exit, which is next (the helper): freeing the parsed BTF's
    /// small allocations took ≈ 2.5 ms of CPU on this VM (the exit's unmapping frees them
    /// at once).
    LeftToExit,
}

/// Loads the object and attaches its programs in this process (the helper's work, or the
/// fallback when there is no helper).
pub(crate) fn load_parts(parsed: Parsed) -> Result<Parts, Unavailable> {
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(Unavailable(
            "BPF backend: the kernel has no BTF (/sys/kernel/btf/vmlinux, \
             CONFIG_DEBUG_INFO_BTF)"
                .into(),
        ));
    }
    // `EbpfLoader::new()` parses a copy of its own, which `btf()` replaces and frees: aya
    // 0.13.1 has no constructor without that parse (0.15 has, but needs a newer Rust than
    // this workspace's 1.88). Handing it ours is what makes sure it relocates at all: its
    // own parse failing would leave the CO-RE offsets unrelocated, silently. Its copy is
    // dropped (`btf(None)`) before ours is parsed, so that the two are never held at once:
    // ours reuses the freed heap, and the helper's peak RSS holds one parse, not two.
    let mut loader = aya::EbpfLoader::new();
    loader.btf(None);
    let btf = Btf::from_sys_fs().map_err(|e| unavailable("reading the kernel's BTF", e))?;
    let loaded = loader.btf(Some(&btf)).load(OBJECT);
    drop(loader);
    let mut ebpf = loaded.map_err(|e| unavailable("loading", e))?;
    let mut links = Vec::new();
    let mut progs = Vec::new();
    let mut missing = Vec::new();
    for (name, tracepoint, required) in PROGRAMS {
        let result = (|| -> Result<(OwnedFd, OwnedFd), String> {
            let prog: &mut BtfTracePoint = ebpf
                .program_mut(name)
                .ok_or("not in the object")?
                .try_into()
                .map_err(|e| format!("{e}"))?;
            prog.load(tracepoint, &btf).map_err(|e| format!("{e}"))?;
            let fd = prog.fd().map_err(|e| format!("{e}"))?;
            let link = attach(fd.as_fd()).map_err(|e| format!("{e}"))?;
            // A descriptor of our own (dup): the object's closes with it below.
            let own = fd
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| format!("{e}"))?;
            Ok((link, own))
        })();
        match result {
            Ok((link, prog)) => {
                links.push(link);
                progs.push(prog);
            }
            Err(e) if required => {
                return Err(unavailable(&format!("attaching to {tracepoint}"), e))
            }
            Err(_) => missing.push(tracepoint),
        }
    }
    let mut maps = Vec::new();
    for name in MAPS {
        let map = ebpf
            .take_map(name)
            .ok_or_else(|| unavailable("the object", format!("no map `{name}`")))?;
        maps.push(match map {
            Map::PerCpuArray(m) | Map::HashMap(m) | Map::Array(m) | Map::RingBuf(m) => m,
            _ => {
                return Err(unavailable(
                    "the object",
                    format!("map `{name}` of another type"),
                ))
            }
        });
    }
    if parsed == Parsed::LeftToExit {
        std::mem::forget(btf);
    }
    Ok(Parts {
        maps,
        attached: links.len(),
        links,
        progs,
        missing,
    })
}
