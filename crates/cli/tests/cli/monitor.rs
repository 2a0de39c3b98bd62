//! `tickscope monitor` end to end: the loopback default, the housekeeping-CPU overlap, the
//! textfile never half-written, the hlog commands, and a real Prometheus scraping it (skipped
//! with a reason when the `prometheus` binary is missing).

use crate::common::bin;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills and reaps a child on drop, whatever happens in the test.
pub(super) struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound then released).
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` on 127.0.0.1:`port`; the body, or `None` while nothing listens.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

pub(super) fn wait_for(port: u16, path: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some(b) = get(port, path) {
            return b;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(super) fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Starts `binary` (Prometheus) with its data in `dir`, scraping 127.0.0.1:`target` every
/// second and serving its API on 127.0.0.1:`port`; returns once it is ready (killed on drop).
pub(super) fn start_prometheus(binary: &Path, dir: &Path, target: u16, port: u16) -> Killed {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tickscope\n    \
             static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    let prom = Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prom = Killed(prom);
    wait_for(port, "/-/ready");
    prom
}

#[test]
fn default_listen_address_is_loopback() {
    let help = Command::new(bin())
        .args(["monitor", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("[default: 127.0.0.1:9802]"), "{text}");
}

/// monitor's help is its own: no run-only flags, no "Default 10s", its own examples; and the
/// run-only flags are refused with the reason, not ignored.
#[test]
fn monitor_help_has_only_its_flags_and_refuses_runs() {
    let help = Command::new(bin())
        .args(["monitor", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for absent in [
        "--rounds <",
        "--load <",
        "--csv <",
        "Default 10s",
        "tickscope run",
        "'all' run one after another",
    ] {
        assert!(
            !text.contains(absent),
            "{absent} in monitor --help:\n{text}"
        );
    }
    assert!(
        text.contains("Default: run until SIGTERM or Ctrl-C") && text.contains("--tasks <"),
        "{text}"
    );
    let examples: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("tickscope "))
        .collect();
    assert!(!examples.is_empty());
    assert!(
        examples
            .iter()
            .all(|l| l.trim_start().starts_with("tickscope monitor")),
        "{examples:?}"
    );
    for (args, said) in [
        (
            &["monitor", "--tasks", "1ms:50us"][..],
            "has a budget (50.0 µs) and no work",
        ),
        (&["monitor", "--rounds", "2"][..], "--rounds"),
        (&["monitor", "--load", "cpu"][..], "--load"),
        (&["monitor", "--csv", "x.csv"][..], "--csv"),
        (&["monitor", "--method", "all"][..], "one method"),
    ] {
        let out = Command::new(bin()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    // run's help is unchanged.
    let run = Command::new(bin())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        text.contains("--rounds") && text.contains("Default 10s"),
        "{text}"
    );
}

#[test]
fn housekeeping_overlap_is_refused_with_exit_2() {
    let out = Command::new(bin())
        .args(["monitor", "-a", "0", "--housekeeping-cpus", "0", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("overlaps the measured CPUs"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn bad_listen_address_is_exit_2() {
    let out = Command::new(bin())
        .args(["monitor", "--listen", "nowhere", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn serves_metrics_and_rewrites_the_textfile_whole() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("tickscope.prom");
    let port = free_port();
    let child = Command::new(bin())
        .args(["monitor", "-q", "-i", "1ms", "-D", "6s", "--no-pm-qos"])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--textfile")
        .arg(&prom)
        .args(["--textfile-interval", "1s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    assert_eq!(wait_for(port, "/healthz"), "ok\n");
    // Read the textfile as often as possible: every read is a whole exposition.
    let start = Instant::now();
    let mut reads = 0;
    while start.elapsed() < Duration::from_secs(4) {
        if let Ok(text) = std::fs::read_to_string(&prom) {
            reads += 1;
            assert!(text.contains("tickscope_build_info"), "partial: {text:?}");
            assert!(text.ends_with('\n'));
            assert!(text.contains("tickscope_last_window_timestamp_seconds"));
        }
    }
    assert!(reads > 0, "the textfile never appeared");
    let metrics = wait_for(port, "/metrics");
    assert!(metrics.contains("# TYPE tickscope_wakeup_latency_seconds histogram"));
    assert!(metrics.contains("le=\"+Inf\""));
    // No temporary file is left beside the textfile when the monitor ends.
    let status = child.0.wait().unwrap();
    assert!(status.success());
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn hlog_from_run_feeds_stat_merge_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.hlog");
    let st = Command::new(bin())
        .args(["run", "-q", "-D", "3s", "--no-pm-qos", "--hlog"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let stat = Command::new(bin())
        .args(["hlog", "stat"])
        .arg(&log)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stat.stdout);
    assert!(stat.status.success(), "{text}");
    assert!(text.lines().any(|l| l.starts_with("all ")), "{text}");
    let merged = dir.path().join("m.hlog");
    let m = Command::new(bin())
        .args(["hlog", "merge"])
        .arg(&log)
        .arg(&log)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    let count = |p: &std::path::Path| -> u64 {
        let out = Command::new(bin())
            .args(["hlog", "stat", "--tag", "all"])
            .arg(p)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let row = text
            .lines()
            .find(|l| l.starts_with("all "))
            .unwrap()
            .to_string();
        row.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert_eq!(count(&merged), 2 * count(&log));
    let c = Command::new(bin())
        .arg("compare")
        .arg(&log)
        .arg(env!("CARGO_MANIFEST_DIR").to_string() + "/tests/data/foreign.hlog")
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
}

#[test]
fn prometheus_histogram_quantile_matches_tickscope_median() {
    let Some(prometheus) = which("prometheus") else {
        eprintln!("skipped: the 'prometheus' binary is not installed (Debian package prometheus)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (tport, pport) = (free_port(), free_port());
    let log = dir.path().join("m.hlog");
    let monitor = Command::new(bin())
        .args(["monitor", "-q", "-i", "1ms", "--no-pm-qos"])
        .args(["--listen", &format!("127.0.0.1:{tport}"), "--hlog"])
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut monitor = Killed(monitor);
    wait_for(tport, "/healthz");
    let _prom = start_prometheus(&prometheus, dir.path(), tport, pport);
    std::thread::sleep(Duration::from_secs(10));
    let query = "histogram_quantile(0.5,sum%20by%20(le)(tickscope_wakeup_latency_seconds_bucket))";
    let body = wait_for(pport, &format!("/api/v1/query?query={query}"));
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let result = &json["data"]["result"];
    assert!(result.as_array().is_some_and(|r| !r.is_empty()), "{body}");
    let p50: f64 = result[0]["value"][1].as_str().unwrap().parse().unwrap();
    // Stop tickscope (SIGTERM, as systemd does) and read its own median from the hlog.
    // SAFETY: the pid is our own child's.
    unsafe { libc::kill(monitor.0.id() as i32, libc::SIGTERM) };
    assert!(monitor.0.wait().unwrap().success());
    let out = Command::new(bin())
        .args(["hlog", "stat", "--tag", "all"])
        .arg(&log)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = text.lines().find(|l| l.starts_with("all ")).unwrap();
    let own_p50_s: f64 = row
        .split_whitespace()
        .nth(4)
        .unwrap()
        .parse::<f64>()
        .unwrap()
        / 1e6;
    // Within the bucket resolution: the same 1-2-5 bucket, or its neighbour (the spans differ
    // by up to a scrape interval), and histogram_quantile interpolates inside the bucket.
    let edges = [
        0.0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2,
    ];
    let bucket = |v: f64| edges.iter().position(|&e| v <= e).unwrap_or(edges.len());
    let (a, b) = (bucket(p50), bucket(own_p50_s));
    assert!(
        a.abs_diff(b) <= 1,
        "Prometheus p50 {p50} s (bucket {a}) vs tickscope p50 {own_p50_s} s (bucket {b})"
    );
}

/// `tickscope compare --format csv ARGS FILE` must succeed; returns the value of row `key`.
fn compare_csv_field(args: &[&str], file: &std::path::Path, key: &str) -> String {
    let out = crate::common::tickscope()
        .args(["compare", "--format", "csv"])
        .args(args)
        .arg(file)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key},")).map(str::to_string))
        .unwrap_or_else(|| panic!("no {key}"))
}

/// `compare --hlog-unit us` reads another tool's µs values as µs (×1000 in the ns columns)
/// and says so; a bad unit is exit 2.
#[test]
fn compare_reads_a_foreign_log_in_the_unit_given() {
    let foreign = env!("CARGO_MANIFEST_DIR").to_string() + "/tests/data/foreign.hlog";
    let field = |args: &[&str], key: &str| compare_csv_field(args, foreign.as_ref(), key);
    assert_eq!(field(&[], "latency_max_ns"), "900");
    assert_eq!(field(&["--hlog-unit", "us"], "latency_max_ns"), "900000");
    assert_eq!(field(&["--hlog-unit", "us"], "samples"), "5005");
    let bad = Command::new(bin())
        .args(["compare", "--hlog-unit", "s"])
        .arg(&foreign)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// GET `path` on 127.0.0.1:`port` with `Accept: accept`: the header block and the body.
fn get_accepting(port: u16, path: &str, accept: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: localhost\r\nAccept: {accept}\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_ascii_lowercase(), body.to_string())
}

/// Every entry of an interval log, read by the `hdrhistogram` crate's own reader and
/// decoder: the number of intervals per tag. A last line cut short (a write under way) is
/// allowed and left out; anything else that does not parse fails the test.
fn intervals_per_tag(text: &str) -> std::collections::BTreeMap<String, usize> {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let mut out = std::collections::BTreeMap::new();
    let mut de = Deserializer::new();
    // Whole lines only: a read that races a write, or a write cut short by SIGKILL (the
    // kernel may end a write early on a fatal signal), can leave the last line incomplete.
    let text = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        match entry {
            Ok(LogEntry::Interval(i)) => {
                let bytes = base64_decode(i.encoded_histogram());
                let _: hdrhistogram::Histogram<u64> = de.deserialize(&mut &bytes[..]).unwrap();
                let tag = i.tag().map_or("", |t| t.as_str()).to_string();
                *out.entry(tag).or_insert(0) += 1;
            }
            Ok(_) => {}
            Err(hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                offset,
            }) => {
                assert!(
                    !text[offset..].trim_end().contains('\n'),
                    "a line other than the last does not parse: {:?}",
                    &text[offset..]
                );
                break;
            }
        }
    }
    out
}

/// Standard base64 with padding, what the `hdrhistogram` crate writes.
fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .unwrap()
}

/// A days-long `monitor --hlog` can be read while it runs: the log is at its own path,
/// grows by whole windows, and parses with the `hdrhistogram` crate's reader at any
/// moment — after SIGKILL too. `/metrics` is OpenMetrics (its content type, `# EOF` last)
/// when the scraper asks for it, the Prometheus text format 0.0.4 otherwise.
#[test]
fn the_hlog_grows_while_monitor_runs_and_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("live.hlog");
    let port = free_port();
    let child = Command::new(bin())
        .args(["monitor", "-q", "-i", "1ms", "--no-pm-qos"])
        .args(["--listen", &format!("127.0.0.1:{port}"), "--hlog"])
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    wait_for(port, "/healthz");
    // The HTTP server answers before the measuring threads are set up; their series exist
    // from then on (at 0). Wait for them rather than race the setup.
    let start = Instant::now();
    while !wait_for(port, "/metrics").contains("tickscope_overruns_total{") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no series on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Content negotiation.
    let (head, body) = get_accepting(
        port,
        "/metrics",
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
    );
    assert!(
        head.contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    assert_eq!(body.matches("# EOF").count(), 1);
    assert!(body.contains("tickscope_overruns_total{"), "{body}");
    let (head, body) = get_accepting(port, "/metrics", "text/plain;version=0.0.4");
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(!body.contains("# EOF"));
    assert!(
        body.contains("# TYPE tickscope_overruns_total counter"),
        "{body}"
    );

    // The log appears and grows while the monitor runs.
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_secs(30) {
        if let Ok(text) = std::fs::read_to_string(&log) {
            let all = intervals_per_tag(&text).get("all").copied().unwrap_or(0);
            if seen.last() != Some(&all) {
                seen.push(all);
            }
            if all >= 3 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        seen.last().is_some_and(|&n| n >= 3),
        "windows seen in the log while running: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert!(child.0.try_wait().unwrap().is_none(), "still running");

    // Killed without a chance to clean up: every whole window is still there and valid.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let tags = intervals_per_tag(&text);
    assert!(tags["all"] >= 3, "{tags:?}");
    // Each window is written T0 then `all`; a write cut short may keep the T0 line only.
    let (t0, all) = (tags["T0"], tags["all"]);
    assert!(t0 == all || t0 == all + 1, "{tags:?}");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file beside the log");
    let stat = Command::new(bin())
        .args(["hlog", "stat", "--tag", "all"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        stat.status.success(),
        "{}",
        String::from_utf8_lossy(&stat.stderr)
    );
}

/// `--hlog-unit` rescales only another tool's logs: tickscope's own logs say they are ns
/// and keep their values whatever unit is given.
#[test]
fn hlog_unit_leaves_tickscopes_own_logs_exact() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("own.hlog");
    let run = Command::new(bin())
        .args([
            "run",
            "--debug-mock",
            "20us,30us,2.5ms",
            "-D",
            "3s",
            "-q",
            "--hlog",
        ])
        .arg(&own)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let max = |unit: &[&str]| compare_csv_field(unit, &own, "latency_max_ns");
    let ns = max(&[]);
    assert_eq!(ns.parse::<i64>().unwrap() / 100_000, 25, "2.5 ms: {ns}");
    assert_eq!(max(&["--hlog-unit", "ms"]), ns);
    assert_eq!(max(&["--hlog-unit", "us"]), ns);
}

/// The value of the one sample of `name{…}` whose labels contain `with`, summed over series,
/// in Prometheus text.
pub(super) fn text_sum(text: &str, name: &str, with: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

fn prom_query(port: u16, query: &str) -> f64 {
    let body = wait_for(port, &format!("/api/v1/query?query={query}"));
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

#[test]
fn monitor_explain_cause_counters_add_up() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping monitor_explain_cause_counters_add_up: not root (--explain traces)");
        return;
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists()
        && !std::path::Path::new("/sys/kernel/tracing").is_dir()
    {
        eprintln!("skipping monitor_explain_cause_counters_add_up: neither BTF nor tracefs");
        return;
    }
    let Some(prometheus) = which("prometheus") else {
        eprintln!("skipping monitor_explain_cause_counters_add_up: the 'prometheus' binary is not installed (Debian package prometheus)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (tport, pport) = (free_port(), free_port());
    let textfile = dir.path().join("tickscope.prom");
    let _prom = start_prometheus(&prometheus, dir.path(), tport, pport);
    // Late = above 10 µs, a bucket edge (`le` is 0.00001 as exposed, 1e-05 once Prometheus 3
    // normalises it). The histogram comes from the loop's HdrHistograms: a wake-up within
    // 1/128 above 10 µs (10 001 … 10 047 ns) is counted at or below the edge, so the late
    // wake-ups lie between the count above 10 µs and the count above 5 µs.
    let monitor = Command::new(bin())
        .args([
            "monitor", "-q", "-a", "1", "-p", "90", "-i", "1ms", "-D", "8s",
        ])
        .args(["--explain", "--explain-threshold", "10us"])
        .args(["--listen", &format!("127.0.0.1:{tport}"), "--textfile"])
        .arg(&textfile)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut monitor = Killed(monitor);
    wait_for(tport, "/healthz");
    // Scraped while running: the backend (once the first window has been published; the
    // programs are loaded and the threads started after the endpoint is up), and causes +
    // pending a count (explain takes late wake-ups as they come, the histogram once per
    // finished window, so neither bounds the other while the run goes on).
    let start = Instant::now();
    let backend = loop {
        let b = wait_for(pport, "/api/v1/query?query=tickscope_explain_info");
        if !b.contains("\"backend\":\"off\"") && b.contains("backend") {
            break b;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{b}");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        backend.contains("\"backend\":\"bpf\"") || backend.contains("\"backend\":\"tracefs\""),
        "{backend}"
    );
    let explained = prom_query(
        pport,
        "sum(tickscope_late_wakeups_total)%2Bsum(tickscope_late_pending)",
    );
    assert!(explained >= 0.0, "{explained}");
    let status = monitor.0.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = monitor.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "{err}");
    // The textfile's last write: every late wake-up counted under exactly one cause.
    let text = std::fs::read_to_string(&textfile).unwrap();
    let by_cause = text_sum(&text, "tickscope_late_wakeups_total", "cause=");
    let pending = text_sum(&text, "tickscope_late_pending", "thread=");
    let count = text_sum(&text, "tickscope_wakeup_latency_seconds_count", "thread=");
    let above = |le: &str| {
        count
            - text_sum(
                &text,
                "tickscope_wakeup_latency_seconds_bucket",
                &format!("le=\"{le}\""),
            )
    };
    let (late, at_most) = (above("0.00001"), above("0.000005"));
    assert_eq!(pending, 0.0, "{text}");
    assert!(late <= by_cause && by_cause <= at_most, "{text}");
    if by_cause == 0.0 {
        eprintln!("note: no wake-up was later than 10 µs; the counters add up trivially");
    }
    let causes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("tickscope_late_wakeups_total{"))
        .filter_map(|l| l.split("cause=\"").nth(1)?.split('"').next())
        .collect();
    // The closed set is the sink's own list (the attribution's categories).
    let closed = tickscope_report::sink::prometheus::why::CAUSES;
    assert!(causes.iter().all(|c| closed.contains(c)), "{causes:?}");
}

/// The value of `name{…task="<task>"…}` in Prometheus text (the first such sample).
fn task_value(text: &str, name: &str, task: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(&format!("task=\"{task}\"")))
        .and_then(|l| l.rsplit_once(' ')?.1.parse().ok())
}

/// `monitor --tasks`: one series per task with a `task` label; releases, latency, response
/// and execution counts agree (all from the same finished windows), work shows as CPU time.
#[test]
fn monitor_tasks_exports_per_task_series() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let textfile = dir.path().join("tasks.prom");
    let out = Command::new(bin())
        .args(["monitor", "-q", "-D", "3s", "--no-pm-qos"])
        .args(["--tasks", "1ms:work=50us,2.5ms:work=200us,10ms:name=log"])
        .args(["--listen", &format!("127.0.0.1:{port}"), "--textfile"])
        .arg(&textfile)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&textfile).unwrap();
    for task in ["1ms", "2.5ms", "log"] {
        let v = |name: &str| {
            task_value(&text, name, task).unwrap_or_else(|| panic!("{name} {task}\n{text}"))
        };
        let releases = v("tickscope_task_releases_total");
        assert!(releases > 0.0, "{task}");
        for family in [
            "tickscope_task_release_latency_seconds_count",
            "tickscope_task_response_seconds_count",
            "tickscope_task_execution_seconds_count",
        ] {
            assert_eq!(v(family), releases, "{family} {task}");
        }
        // Response = latency + execution (+ the clock reads between them): never below.
        assert!(
            v("tickscope_task_response_seconds_sum")
                >= v("tickscope_task_release_latency_seconds_sum"),
            "{task}"
        );
        assert!(v("tickscope_task_deadline_misses_total") <= releases);
        assert_eq!(
            v("tickscope_task_cpu_seconds_total"),
            v("tickscope_task_execution_seconds_sum"),
            "{task}"
        );
    }
    // The tasks with work use the CPU for it; releases of the 1 ms task outnumber the 10 ms
    // task's (structure, not timing: both ran for the same windows).
    let cpu = |t| task_value(&text, "tickscope_task_cpu_seconds_total", t).unwrap();
    assert!(
        cpu("2.5ms") > cpu("log") && cpu("1ms") > cpu("log"),
        "{text}"
    );
    let rel = |t| task_value(&text, "tickscope_task_releases_total", t).unwrap();
    assert!(
        rel("1ms") > rel("2.5ms") && rel("2.5ms") > rel("log"),
        "{text}"
    );
    assert!(
        text.contains(r#"task="2.5ms",work_seconds="0.0002"} 1"#),
        "tickscope_task_info\n{text}"
    );
}

/// A real Prometheus scrapes `monitor --tasks`: the per-task series are there by task, and
/// a per-task quantile comes out of the response-time histogram.
#[test]
fn prometheus_scrapes_per_task_series() {
    let Some(prometheus) = which("prometheus") else {
        eprintln!("skipping prometheus_scrapes_per_task_series: the 'prometheus' binary is not installed (Debian package prometheus)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (tport, pport) = (free_port(), free_port());
    let monitor = Command::new(bin())
        .args(["monitor", "-q", "--no-pm-qos"])
        .args(["--tasks", "1ms:work=50us,2.5ms:work=200us,10ms:name=log"])
        .args(["--listen", &format!("127.0.0.1:{tport}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut monitor = Killed(monitor);
    wait_for(tport, "/healthz");
    let _prom = start_prometheus(&prometheus, dir.path(), tport, pport);
    // Until Prometheus has scraped a window with releases of every task (bounded).
    let start = Instant::now();
    let by_task = loop {
        let body = wait_for(
            pport,
            "/api/v1/query?query=sum%20by%20(task)(tickscope_task_releases_total)%3E0",
        );
        // (Not JSON while Prometheus is still starting its query engine: ask again.)
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let mut tasks: Vec<String> = json["data"]["result"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["metric"]["task"].as_str().map(str::to_string))
            .collect();
        tasks.sort();
        if tasks.len() == 3 {
            break tasks;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{body}");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(by_task, ["1ms", "2.5ms", "log"]);
    // The 2.5 ms task's median response: its 200 µs of work at least (a structure, not a
    // timing bound: the work spins until 200 µs have passed on the clock).
    let p50 = prom_query(
        pport,
        "histogram_quantile(0.5,sum%20by%20(le)(tickscope_task_response_seconds_bucket%7Btask%3D%222.5ms%22%7D))",
    );
    assert!(p50 >= 100e-6, "p50 {p50}");
    let misses = prom_query(pport, "count(tickscope_task_deadline_misses_total)");
    assert_eq!(misses, 3.0);
    // SAFETY: the pid is our own child's.
    unsafe { libc::kill(monitor.0.id() as i32, libc::SIGTERM) };
    assert!(monitor.0.wait().unwrap().success());
}
