//! `tickscope monitor` under abuse (issue 25): a real monitor, on the mock backend and a
//! free loopback port, takes the requests that once aborted or stalled it — a huge declared
//! body, a partial body left open, a pipelining client that never reads, hundreds of idle
//! connections, a multi-MiB header line, malformed requests, a slow header — and after each
//! one it must still be alive, answer `/metrics` with valid exposition text within 1 s, keep
//! its thread count and stay within its descriptor cap (the server's limits are in
//! `crates/cli/src/http.rs` and docs/monitor.md); SIGTERM must end it within 1 s whatever
//! the clients are doing. And the textfile: a full disk is reported at once, counted in
//! `tickscope_output_errors_total`, retried and its recovery said.
//!
//! The time bounds are the issue's own ("scrapes answered within 1 s", "SIGTERM within
//! 1 s"); a scrape takes milliseconds, so 1 s is already generous. SIGTERM is allowed 2 s:
//! the process also stops its measuring thread, prints its summary and is reaped by this
//! test on a shared 2-CPU CI machine running a debug build — the 1-s goal itself is checked
//! by bench/http-abuse.sh.

use crate::common::bin;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server's connection cap (`tickscope_cli::http::MAX_CONNECTIONS`, a binary crate).
const MAX_CONNECTIONS: usize = 64;

/// How long a request head may take (`http::HEADER_TIMEOUT`).
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// A scrape must be answered within this.
const SCRAPE_BOUND: Duration = Duration::from_secs(1);

/// SIGTERM must end the monitor within this (see the module docs for the margin).
const SIGTERM_BOUND: Duration = Duration::from_secs(2);

/// A monitor, killed and reaped on drop whatever happens in the test.
struct Monitor {
    child: Child,
    port: u16,
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Monitor {
    /// Starts `tickscope monitor` on the mock backend, measuring thread on CPU 0 (so that the
    /// server goes to the others), with `extra` arguments, and waits for the measuring
    /// thread's series in `/metrics`.
    fn start(extra: &[&std::ffi::OsStr], stderr: Stdio) -> Monitor {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin())
            .args(["monitor", "-q", "--debug-mock", "20us,30us", "-a", "0"])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let m = Monitor { child, port };
        let start = Instant::now();
        // The server answers at once; the per-thread series come with the measuring thread.
        while !request(port, b"GET /metrics HTTP/1.0\r\n\r\n")
            .is_some_and(|a| a.contains("tickscope_wakeup_latency_seconds_count{"))
        {
            assert!(start.elapsed() < Duration::from_secs(20), "never served");
            std::thread::sleep(Duration::from_millis(50));
        }
        m
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn count(&self, what: &str) -> usize {
        std::fs::read_dir(format!("/proc/{}/{what}", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// Resident memory, KiB (`VmRSS` of proc(5)).
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        field(&status, "VmRSS:")
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    }

    /// Sends SIGTERM and returns how long the process took to end, and whether it succeeded.
    fn terminate(&mut self) -> (Duration, bool) {
        let t = Instant::now();
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.pid() as i32, libc::SIGTERM) }, 0);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (t.elapsed(), status.success());
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "SIGTERM never ended it"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

/// Sends `raw` on a new connection and reads the whole answer (`None` when nothing
/// listens or nothing came within 5 s).
fn request(port: u16, raw: &[u8]) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(raw).ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Scrapes `/metrics` and checks the answer is whole, valid Prometheus text and timely.
fn scrape_ok(m: &mut Monitor, after: &str) {
    assert!(m.alive(), "the monitor died after {after}");
    let t = Instant::now();
    let answer = request(
        m.port,
        b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .unwrap_or_else(|| panic!("no answer to a scrape after {after}"));
    let took = t.elapsed();
    assert!(took < SCRAPE_BOUND, "a scrape took {took:?} after {after}");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 200 "), "after {after}: {head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    valid_exposition(body, after);
}

/// Every line is a comment or `name{labels} value` with a number as value, the families
/// the monitor always has are there, and the text ends with a newline.
fn valid_exposition(body: &str, after: &str) {
    assert!(body.ends_with('\n'), "cut short after {after}");
    for family in [
        "# TYPE tickscope_build_info gauge",
        "# TYPE tickscope_wakeup_latency_seconds histogram",
    ] {
        assert!(body.contains(family), "no {family:?} after {after}");
    }
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').expect("name value");
        assert!(
            name.starts_with("tickscope_") && (!name.contains('{') || name.ends_with('}')),
            "{line}"
        );
        assert!(
            value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
            "{line}"
        );
    }
}

/// Writes what the server takes of `data` within 2 s, without blocking on a full socket.
fn push(s: &mut TcpStream, data: &[u8]) {
    s.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let mut sent = 0;
    while sent < data.len() && start.elapsed() < Duration::from_secs(2) {
        match s.write(&data[sent..]) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break, // closed by the server
        }
    }
}

/// The first status line that comes back within 2 s, or "" when the server closed.
fn status_line(s: &mut TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(n) => String::from_utf8_lossy(&buf[..n])
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        Err(_) => String::new(),
    }
}

fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).unwrap()
}

#[test]
fn monitor_keeps_serving_under_abuse_and_stops_on_sigterm() {
    let mut m = Monitor::start(&[], Stdio::null());
    scrape_ok(&mut m, "start");
    // The routes: 404 for another path, 405 naming GET for another method, queries ignored.
    let answer = |raw: &[u8]| request(m.port, raw).unwrap_or_default();
    let a = answer(b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(a.starts_with("HTTP/1.1 404 "), "{a}");
    let a = answer(b"DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(a.starts_with("HTTP/1.1 405 "), "{a}");
    assert!(a.to_ascii_lowercase().contains("allow: get\r\n"), "{a}");
    let a = answer(b"GET /healthz?probe=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(
        a.starts_with("HTTP/1.1 200 ") && a.ends_with("\r\n\r\nok\n"),
        "{a}"
    );
    let threads = m.count("task");
    let fds = m.count("fd");
    let rss = m.rss_kib();
    let within_caps = |m: &mut Monitor, after: &str| {
        scrape_ok(m, after);
        let (t, f) = (m.count("task"), m.count("fd"));
        assert!(
            t <= threads,
            "{t} threads after {after} (at start {threads})"
        );
        // +1: a connection just closed to make room may not be dropped yet.
        assert!(
            f <= fds + MAX_CONNECTIONS + 1,
            "{f} descriptors after {after} (at start {fds})"
        );
    };

    // The server thread runs on the housekeeping CPUs (the CPUs other than the measured 0).
    let allowed = Path::new("/proc/self/status");
    let ours = std::fs::read_to_string(allowed).unwrap();
    let tasks = std::fs::read_dir(format!("/proc/{}/task", m.pid())).unwrap();
    let server: Vec<String> = tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "tickscope-http")
        })
        .map(|t| std::fs::read_to_string(t.path().join("status")).unwrap())
        .collect();
    assert_eq!(server.len(), 1, "one server thread");
    let cpus = field(&server[0], "Cpus_allowed_list:").unwrap();
    match field(&ours, "Cpus_allowed_list:") {
        Some("0") => eprintln!("skipping the placement check: only CPU 0 is allowed"),
        _ => assert!(
            !cpus.split(',').any(|r| r == "0" || r.starts_with("0-")),
            "the server thread may run on the measured CPU 0: {cpus}"
        ),
    }

    // A slow client: half a request head, then nothing. Checked after the other attacks.
    let mut slow = connect(m.port);
    slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let slow_since = Instant::now();

    // A body of 10^12 bytes declared, one sent: answered 405 at once, never read.
    let mut huge = connect(m.port);
    huge.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\nA")
        .unwrap();
    let line = status_line(&mut huge);
    assert!(line.starts_with("HTTP/1.1 405"), "{line:?}");
    within_caps(&mut m, "a declared body of 10^12 bytes");

    // A body over 1 KiB declared, 2 bytes sent, the connection left open.
    let mut partial = connect(m.port);
    partial
        .write_all(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\nab")
        .unwrap();
    within_caps(&mut m, "a partial body left open");

    // A pipelining client that never reads its responses.
    let mut pipelined = connect(m.port);
    let one = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    push(&mut pipelined, &one.repeat(20_000));
    within_caps(&mut m, "a pipelining client that never reads");

    // A multi-MiB header line: refused (431) or closed, never buffered whole.
    let mut long = connect(m.port);
    let mut head = b"GET /metrics HTTP/1.1\r\nX-Long: ".to_vec();
    head.resize(head.len() + 8 * 1024 * 1024, b'a');
    push(&mut long, &head);
    let line = status_line(&mut long);
    assert!(
        line.is_empty() || line.starts_with("HTTP/1.1 431"),
        "{line:?}"
    );
    within_caps(&mut m, "an 8 MiB header line");
    let grown = m.rss_kib().saturating_sub(rss);
    assert!(grown < 4096, "RSS grew by {grown} KiB");

    // Malformed requests: each answered with an error status or closed.
    let many_headers: Vec<u8> = (0..200)
        .flat_map(|i| format!("X-{i}: y\r\n").into_bytes())
        .collect();
    let malformed: Vec<Vec<u8>> = vec![
        b"GARBAGE\r\n\r\n".to_vec(),
        b"GET /metrics HTTP/9.9\r\n\r\n".to_vec(),
        b"\x00\xff\xfe\r\n\r\n".to_vec(),
        b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            .to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n".to_vec(),
        [
            b"GET /metrics HTTP/1.1\r\n".as_slice(),
            &many_headers,
            b"\r\n",
        ]
        .concat(),
        [
            b"GET /".as_slice(),
            &vec![b'a'; 100_000],
            b" HTTP/1.1\r\n\r\n",
        ]
        .concat(),
    ];
    for raw in &malformed {
        let mut s = connect(m.port);
        push(&mut s, raw);
        let line = status_line(&mut s);
        assert!(
            line.is_empty() || line.starts_with("HTTP/1.1 4"),
            "{line:?} for {:?}",
            String::from_utf8_lossy(&raw[..raw.len().min(60)])
        );
    }
    within_caps(&mut m, "malformed requests");

    // The slow client is closed once its head is HEADER_TIMEOUT late (hyper says nothing;
    // a 408 would do as well).
    let wait = (HEADER_TIMEOUT + Duration::from_secs(1)).saturating_sub(slow_since.elapsed());
    std::thread::sleep(wait);
    let line = status_line(&mut slow);
    assert!(
        line.is_empty() || line.starts_with("HTTP/1.1 408"),
        "{line:?}"
    );
    let mut rest = Vec::new();
    slow.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    assert!(
        slow.read_to_end(&mut rest).is_ok(),
        "the slow client's connection is still open"
    );

    // Hundreds of idle connections, held: the oldest are closed to make room, scrapes go on.
    let idle: Vec<TcpStream> = (0..300).map(|_| connect(m.port)).collect();
    within_caps(&mut m, "300 idle connections");

    // SIGTERM with every attacking connection still open.
    let (took, ok) = m.terminate();
    assert!(ok, "the monitor failed on SIGTERM");
    assert!(took < SIGTERM_BOUND, "SIGTERM took {took:?}");
    drop((huge, partial, pipelined, long, idle));
}

/// Whether this process may mount (root, in the initial user namespace or not).
fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A tiny tmpfs mounted on a new temporary directory, unmounted on drop.
struct TinyTmpfs {
    dir: tempfile::TempDir,
}

impl TinyTmpfs {
    fn mount(kib: u32) -> Result<TinyTmpfs, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
        let opts = std::ffi::CString::new(format!("size={kib}k,mode=0755")).unwrap();
        // SAFETY: NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                opts.as_ptr().cast(),
            )
        };
        match rc {
            0 => Ok(TinyTmpfs { dir }),
            _ => Err(std::io::Error::last_os_error().to_string()),
        }
    }
}

impl Drop for TinyTmpfs {
    fn drop(&mut self) {
        let path = std::ffi::CString::new(self.dir.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; MNT_DETACH never blocks.
        unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
    }
}

/// The value of `tickscope_output_errors_total{output="textfile"}` in a scrape.
fn textfile_errors(port: u16) -> Option<f64> {
    let answer = request(port, b"GET /metrics HTTP/1.0\r\n\r\n")?;
    answer
        .lines()
        .find_map(|l| l.strip_prefix("tickscope_output_errors_total{output=\"textfile\"} "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn textfile_on_a_full_disk_is_reported_counted_retried_and_recovers() {
    if !is_root() {
        eprintln!("skipping the full-disk textfile test: mounting a tiny tmpfs needs root");
        return;
    }
    let fs = match TinyTmpfs::mount(64) {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!("skipping the full-disk textfile test: cannot mount a tmpfs: {e}");
            return;
        }
    };
    let filler = fs.dir.path().join("filler");
    // Fill the file system: writes stop at ENOSPC.
    let mut f = std::fs::File::create(&filler).unwrap();
    while f.write_all(&[0u8; 4096]).is_ok() {}
    drop(f);
    let prom = fs.dir.path().join("tickscope.prom");
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut m = Monitor::start(
        &[
            "--textfile".as_ref(),
            prom.as_os_str(),
            "--textfile-interval".as_ref(),
            "200ms".as_ref(),
        ],
        Stdio::from(log.reopen().unwrap()),
    );
    let stderr = || std::fs::read_to_string(log.path()).unwrap();
    // The error is said at once and counted, and counted again at each retry.
    let start = Instant::now();
    while !stderr().contains("cannot write") || textfile_errors(m.port).unwrap_or(0.0) < 3.0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no error reported: {}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(stderr().contains("No space left on device"), "{}", stderr());
    // Space again: the next rewrite succeeds and says so.
    std::fs::remove_file(&filler).unwrap();
    let start = Instant::now();
    while !stderr().contains("written again") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no recovery: {}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("tickscope_output_errors_total{output=\"textfile\"}"));
    let (_, ok) = m.terminate();
    assert!(ok, "{}", stderr());
    let err = stderr();
    // Once per distinct error, however many intervals failed; no error at the end.
    assert_eq!(err.matches("cannot write").count(), 1, "{err}");
    assert_eq!(err.matches("written again").count(), 1, "{err}");
    let names: Vec<_> = std::fs::read_dir(fs.dir.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(names.len(), 1, "only the textfile is left: {names:?}");
}
