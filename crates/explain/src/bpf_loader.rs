//! Loading the BPF programs in a short-lived helper process, so that tickscope itself never
//! holds the kernel's parsed BTF.
//!
//! Relocating the object against `/sys/kernel/btf/vmlinux` makes the loader (aya) parse the
//! whole kernel type graph: about 13 MiB above a plain run's peak RSS for a few hundred
//! milliseconds (`bench/observer-cost.sh`, its `+children` line; 23 MiB while aya's own copy
//! was held beside ours, see `load_parts`), which a process's peak RSS keeps for good. When
//! the running executable can serve as the loader (the `tickscope` program calls
//! [`serve_if_asked`] first thing in `main`), loading runs it
//! again (`/proc/self/exe`) with [`LOADER_ENV`] naming one end of a Unix socket pair; the
//! helper loads and attaches the programs, sends the descriptors of the maps, of the
//! attachments ("links", `BPF_RAW_TRACEPOINT_OPEN`) and of the programs back with `SCM_RIGHTS` (unix(7),
//! cmsg(3)) and exits. tickscope then holds only file descriptors: when it exits — or is
//! killed — the last descriptor of each link closes, which detaches its program, and the
//! kernel frees programs and maps ("BPF link", <https://docs.kernel.org/bpf/>; bpf(2)).
//! Executables that do not serve (tests, other programs using this crate) load in process.

use crate::bpf_load::Parts;
use crate::tracefs::Unavailable;
use aya::maps::MapData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// The environment variable that makes the executable a loader: its value is the number of
/// the inherited socket descriptor to answer on. Internal; not a user setting.
pub const LOADER_ENV: &str = "TICKSCOPE_INTERNAL_BPF_LOADER_FD";

/// Set when the running executable calls [`serve_if_asked`], i.e. can serve as the loader.
static SERVES: AtomicBool = AtomicBool::new(false);

/// Most descriptors one answer carries (5 maps, and one link and one program descriptor per
/// program: 57 for the 26 programs).
const MAX_FDS: usize = 64;

/// Bytes of an answer's text.
const MAX_TEXT: usize = 4096;

/// How long the helper may take to answer, s.
const ANSWER_WITHIN_S: libc::time_t = 30;

/// Called first thing in `main` of an executable that can serve as the loader: when this
/// process was started as the loader, loads the programs, answers on the socket and returns
/// the exit status (0 answered, 2 no usable socket); otherwise notes that the executable can
/// serve and returns `None` at once.
pub fn serve_if_asked() -> Option<i32> {
    let Some(value) = std::env::var_os(LOADER_ENV) else {
        SERVES.store(true, Ordering::Relaxed);
        return None;
    };
    let Some(fd) = value.to_str().and_then(|v| v.parse::<RawFd>().ok()) else {
        return Some(2);
    };
    // SAFETY: the parent passed this descriptor, open and ours alone, under this name; a
    // wrong number fails below (EBADF/ENOTSOCK) and the socket is closed on return.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Some(2);
    }
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let sent = match crate::bpf_load::load_parts(crate::bpf_load::Parsed::LeftToExit) {
        Ok(parts) => {
            let mut fds: Vec<BorrowedFd<'_>> = parts.maps.iter().map(|m| m.fd().as_fd()).collect();
            fds.extend(parts.links.iter().map(|l| l.as_fd()));
            fds.extend(parts.progs.iter().map(|p| p.as_fd()));
            let text = format!("ok {}\n{}", parts.attached, parts.missing.join(","));
            send(&sock, text.as_bytes(), &fds)
        }
        Err(Unavailable(e)) => send(&sock, format!("err {e}").as_bytes(), &[]),
    };
    Some(if sent.is_ok() { 0 } else { 2 })
}

/// What loading left and cost: the parts, the helper's process id (when a helper loaded) and
/// the CPU time loading took, ns (user + system: the helper's as wait4(2) reports it, or this
/// thread's, getrusage(2) `RUSAGE_THREAD`, when loading ran here).
pub(crate) struct Loaded {
    pub parts: Parts,
    pub helper: Option<u32>,
    pub cpu_ns: i64,
}

/// User + system time of a `rusage`, ns.
fn rusage_ns(r: &libc::rusage) -> i64 {
    let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
    (us(r.ru_utime) + us(r.ru_stime)) * 1_000
}

/// This thread's CPU time so far, ns (getrusage(2) `RUSAGE_THREAD`; 0 if refused).
fn thread_cpu_ns() -> i64 {
    // SAFETY: rusage is plain data, which the call fills in.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid rusage for the call to write.
    match unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut r) } {
        0 => rusage_ns(&r),
        _ => 0,
    }
}

/// Loads the programs: in a helper process when this executable serves as the loader, else
/// in this process.
///
/// # Errors
/// [`Unavailable`] as [`crate::bpf::BpfCapture::load`] describes.
pub(crate) fn load() -> Result<Loaded, Unavailable> {
    if SERVES.load(Ordering::Relaxed) {
        if let Some(answer) = load_in_helper() {
            return answer;
        }
    }
    let t0 = thread_cpu_ns();
    let parts = crate::bpf_load::load_parts(crate::bpf_load::Parsed::Free)?;
    Ok(Loaded {
        parts,
        helper: None,
        cpu_ns: thread_cpu_ns() - t0,
    })
}

/// `None` when no helper could be started or it gave no answer (then the caller loads in
/// process); else the helper's answer.
fn load_in_helper() -> Option<Result<Loaded, Unavailable>> {
    let mut pair = [0 as RawFd; 2];
    // SAFETY: `pair` has room for the two descriptors socketpair(2) writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    let their_fd = theirs.as_raw_fd();
    let mut cmd = Command::new("/proc/self/exe");
    cmd.env(LOADER_ENV, their_fd.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: fcntl(2) is async-signal-safe; it only lets the helper inherit its end.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            if libc::fcntl(their_fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().ok()?;
    drop(theirs);
    // Loading takes well under a second; a helper that hangs is ended, and loading falls
    // back to this process.
    let timeout = libc::timeval {
        tv_sec: ANSWER_WITHIN_S,
        tv_usec: 0,
    };
    // SAFETY: SO_RCVTIMEO takes a timeval of the size given (socket(7)).
    unsafe {
        libc::setsockopt(
            ours.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &timeout as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let answer = recv(&ours);
    if answer.is_err() {
        let _ = child.kill();
    }
    let pid = child.id();
    let cpu_ns = reap(child);
    let (text, fds) = answer.ok()?;
    let text = String::from_utf8_lossy(&text).into_owned();
    if let Some(e) = text.strip_prefix("err ") {
        return Some(Err(Unavailable(e.to_string())));
    }
    let (head, missing) = text.split_once('\n')?;
    let attached: usize = head.strip_prefix("ok ")?.parse().ok()?;
    if fds.len() != crate::bpf_load::MAPS.len() + 2 * attached {
        return None;
    }
    let mut fds = fds.into_iter();
    let mut maps = Vec::new();
    for fd in fds.by_ref().take(crate::bpf_load::MAPS.len()) {
        maps.push(MapData::from_fd(fd).ok()?);
    }
    let missing = crate::bpf_load::PROGRAMS
        .iter()
        .map(|p| p.1)
        .filter(|t| missing.split(',').any(|m| m == *t))
        .collect();
    let links: Vec<OwnedFd> = fds.by_ref().take(attached).collect();
    Some(Ok(Loaded {
        parts: Parts {
            maps,
            links,
            progs: fds.collect(),
            attached,
            missing,
        },
        helper: Some(pid),
        cpu_ns,
    }))
}

/// Waits for the helper to exit; returns the CPU time it used, ns (wait4(2)'s rusage; 0 when
/// it could not be reaped that way, and then it is reaped as `Child` does).
fn reap(mut child: std::process::Child) -> i64 {
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        let _ = child.wait();
        return 0;
    };
    // SAFETY: rusage is plain data, which the call fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our own child, not reaped yet; `status` and `usage` are valid for
        // the call to write.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return rusage_ns(&usage);
        }
        if rc < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        let _ = child.wait();
        return 0;
    }
}

/// Sends `text` and the descriptors `fds` as one message (sendmsg(2), `SCM_RIGHTS`).
fn send(sock: &OwnedFd, text: &[u8], fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let data_len = std::mem::size_of_val(raw.as_slice());
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(data_len as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8).max(1)];
    let mut iov = libc::iovec {
        iov_base: text.as_ptr() as *mut libc::c_void,
        iov_len: text.len(),
    };
    // SAFETY: msghdr is plain data; every pointer set below outlives the sendmsg call, and
    // the control buffer is CMSG_SPACE bytes, aligned for cmsghdr.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !raw.is_empty() {
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = space as _;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(data_len as u32) as _;
            std::ptr::copy_nonoverlapping(raw.as_ptr() as *const u8, libc::CMSG_DATA(c), data_len);
        }
        if libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one message: its text and the descriptors it carried (close-on-exec).
fn recv(sock: &OwnedFd) -> std::io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut text = vec![0u8; MAX_TEXT];
    let data_len = MAX_FDS * std::mem::size_of::<RawFd>();
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(data_len as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: text.as_mut_ptr() as *mut libc::c_void,
        iov_len: text.len(),
    };
    let mut fds = Vec::new();
    // SAFETY: as in `send`; the kernel writes at most the lengths given, and every
    // descriptor it passed is taken into an OwnedFd exactly once.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let bytes = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let data = libc::CMSG_DATA(c) as *const RawFd;
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        n as usize
    };
    if n == 0 && fds.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the BPF loader ended without an answer",
        ));
    }
    text.truncate(n);
    Ok((text, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn descriptors_and_text_cross_a_socket_pair() {
        let mut pair = [0 as RawFd; 2];
        // SAFETY: room for two descriptors.
        assert_eq!(
            unsafe {
                libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                    0,
                    pair.as_mut_ptr(),
                )
            },
            0
        );
        let (a, b) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut &file, b"carried").unwrap();
        send(&a, b"ok 1\nx", &[file.as_fd(), file.as_fd()]).unwrap();
        drop(file);
        let (text, fds) = recv(&b).unwrap();
        assert_eq!(text, b"ok 1\nx");
        assert_eq!(fds.len(), 2);
        let mut got = String::new();
        let mut f = std::fs::File::from(fds.into_iter().next().unwrap());
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_string(&mut got).unwrap();
        assert_eq!(got, "carried");
        // A peer that closes without answering is an error, not a hang.
        drop(a);
        assert!(recv(&b).is_err());
    }
}
