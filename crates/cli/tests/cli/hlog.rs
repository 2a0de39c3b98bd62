//! `tickscope hlog stat` / `merge` on logs a careless or hostile user could give: a long
//! generated log read through the streaming path, interval times beyond what a clock can
//! hold, counts beyond any run, and a FIFO or directory where a log should be (refused at
//! once, exit 2, one line). A full disk under `--hlog` is said at once.

use super::common::{bin, tickscope};
use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
use hdrhistogram::Histogram;
use std::io::BufRead;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, UNIX_EPOCH};

fn histogram(values: &[u64]) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
    values.iter().for_each(|&v| h.record(v).unwrap());
    h
}

/// A log of `seconds` one-second intervals of tags T0, T1 and all, as a 2-thread `--hlog`
/// run writes it (StartTime 2023-11-14T22:13:20Z).
fn write_log(path: &Path, seconds: u64) {
    write_log_at(path, 1_700_000_000, (0..seconds).collect());
}

/// A log like [`write_log`]'s, StartTime `start` (s since the epoch), intervals at `at`
/// (s after StartTime) in that order.
fn write_log_at(path: &Path, start: u64, at: Vec<u64>) {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment("tool: tickscope (test)")
            .with_start_time(UNIX_EPOCH + Duration::from_secs(start));
        let mut w = b.begin_log_with(&mut buf, &mut ser).unwrap();
        let one = Duration::from_secs(1);
        for s in at {
            let at = Duration::from_secs(s);
            let t0 = histogram(&[1_000, 2_000 + s]);
            let t1 = histogram(&[3_000]);
            let mut all = t0.clone();
            all.add(&t1).unwrap();
            w.write_histogram(&t0, at, one, Tag::new("T0")).unwrap();
            w.write_histogram(&t1, at, one, Tag::new("T1")).unwrap();
            w.write_histogram(&all, at, one, Tag::new("all")).unwrap();
        }
    }
    std::fs::write(path, buf).unwrap();
}

/// The `intervals` and `count` columns of `stat`'s row for `tag`.
fn row(stdout: &[u8], tag: &str) -> (u64, u64) {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(tag))
        .unwrap_or_else(|| panic!("no row {tag}: {text}"));
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    (f[0], f[1])
}

/// An hour of a 2-thread log (10 800 intervals) through `hlog stat`: every interval counted,
/// a range cut by StartTime; and through `compare`. (The reader's streaming — one histogram
/// per tag, nothing read ahead — is asserted at library level, in the report crate's
/// `many_intervals_stream_through_one_histogram_per_tag`.)
#[test]
fn stat_reads_an_hour_long_log_through_the_streaming_path() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hour.hlog");
    write_log(&log, 3600);
    let out = tickscope()
        .args(["hlog", "stat"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&out.stdout, "all"), (3600, 3 * 3600));
    assert_eq!(row(&out.stdout, "T0"), (3600, 2 * 3600));
    assert_eq!(row(&out.stdout, "T1"), (3600, 3600));
    let out = tickscope()
        .args([
            "hlog", "stat", "--from", "10m", "--to", "20m", "--tag", "T1",
        ])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&out.stdout, "T1"), (600, 600));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("all "));
    let out = tickscope()
        .args(["compare", "--format", "csv"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("10800"));
}

/// Logs in time order are merged as they stream; a log out of order is merged in memory;
/// both give the same log, in time order, with every count.
#[test]
fn merge_in_order_and_out_of_order_give_the_same_log() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    write_log_at(&p("a.hlog"), 1_700_000_000, (0..50).collect());
    write_log_at(&p("b.hlog"), 1_700_000_020, (0..50).collect());
    write_log_at(&p("b-rev.hlog"), 1_700_000_020, (0..50).rev().collect());
    for (b, out) in [("b.hlog", "m1.hlog"), ("b-rev.hlog", "m2.hlog")] {
        let o = tickscope()
            .args(["hlog", "merge"])
            .arg(p("a.hlog"))
            .arg(p(b))
            .arg("-o")
            .arg(p(out))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(said.contains("210 intervals from 2 logs"), "{said}");
    }
    let m1 = std::fs::read_to_string(p("m1.hlog")).unwrap();
    assert_eq!(m1, std::fs::read_to_string(p("m2.hlog")).unwrap());
    let starts: Vec<f64> = m1
        .lines()
        .filter_map(|l| l.strip_prefix("Tag="))
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(starts.len(), 210);
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "in time order");
    let out = tickscope()
        .args(["hlog", "stat"])
        .arg(p("m1.hlog"))
        .output()
        .unwrap();
    assert_eq!(row(&out.stdout, "all"), (70, 3 * 100));
}

fn refused(args: &[&std::ffi::OsStr], why: &str) {
    let out = tickscope()
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(why), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Interval times a `SystemTime` cannot hold (start 1e19 s, length u64::MAX s) and counts
/// beyond any run: `merge` and `stat` say which line, exit 2, never a panic.
#[test]
fn merge_and_stat_refuse_times_and_counts_beyond_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut small = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram(&[5_000]), &mut small)
        .unwrap();
    let small = b64(&small);
    // A count of 2^62: beyond any run (2^53); two of them would pass i64::MAX when merged.
    let mut big = Vec::new();
    let mut h = histogram(&[]);
    h.record_n(5_000, 1 << 62).unwrap();
    V2Serializer::new().serialize(&h, &mut big).unwrap();
    let big = b64(&big);
    let good = dir.path().join("good.hlog");
    write_log(&good, 3);
    for (name, body, why) in [
        (
            "start.hlog",
            format!("Tag=all,10000000000000000000.000,1.000,5.0,{small}\n"),
            "line 2: the interval's start",
        ),
        (
            "length.hlog",
            format!("Tag=all,1700000000.000,18446744073709551615.000,5.0,{small}\n"),
            "line 2: the interval's length",
        ),
        (
            "counts.hlog",
            format!("Tag=all,1.000,1.000,5.0,{big}\n"),
            "line 2: the histogram cannot be decoded: its counts add up to more than 2^53",
        ),
        (
            "negative.hlog",
            {
                let mut enc = Vec::new();
                V2Serializer::new()
                    .serialize(&histogram(&[7]), &mut enc)
                    .unwrap();
                enc[4..8].copy_from_slice(&(-1i32).to_be_bytes());
                format!("#x\nTag=all,1.000,1.000,5.0,{}\n", b64(&enc))
            },
            "line 3: the histogram cannot be decoded: negative payload length -1",
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("#[StartTime: 1700000000.000 (x)]\n{body}")).unwrap();
        let out = dir.path().join("m.hlog");
        refused(
            &[
                "hlog".as_ref(),
                "merge".as_ref(),
                good.as_os_str(),
                p.as_os_str(),
                "-o".as_ref(),
                out.as_os_str(),
            ],
            why,
        );
        assert!(!out.exists(), "{name}: nothing written");
        refused(&["hlog".as_ref(), "stat".as_ref(), p.as_os_str()], why);
    }
    // No temporary file of a refused merge is left behind.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "counts.hlog",
            "good.hlog",
            "length.hlog",
            "negative.hlog",
            "start.hlog"
        ]
    );
}

/// A FIFO (no writer: opening it for reading would block forever) and a directory where a
/// log should be: refused at once by `hlog stat`, `hlog merge`, `compare`, `report` and
/// `report --hlog` — exit 2, one line. The 20-s limit is a generous bound for "at once".
#[test]
fn a_fifo_or_directory_as_a_log_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.hlog");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let good = dir.path().join("good.hlog");
    write_log(&good, 2);
    let out = dir.path().join("m.hlog");
    let html = dir.path().join("r.html");
    for bad in [fifo.as_os_str(), dir.path().as_os_str()] {
        for args in [
            vec!["hlog".as_ref(), "stat".as_ref(), bad],
            vec!["hlog".as_ref(), "stat".as_ref(), good.as_os_str(), bad],
            vec![
                "hlog".as_ref(),
                "merge".as_ref(),
                good.as_os_str(),
                bad,
                "-o".as_ref(),
                out.as_os_str(),
            ],
            vec!["compare".as_ref(), good.as_os_str(), bad],
            vec!["report".as_ref(), bad, "-o".as_ref(), html.as_os_str()],
            vec![
                "report".as_ref(),
                good.as_os_str(),
                "--hlog".as_ref(),
                bad,
                "-o".as_ref(),
                html.as_os_str(),
            ],
        ] {
            refused(&args, "not a regular file");
        }
    }
}

/// `--hlog` on a full device (`/dev/full`, ENOSPC like a full disk): the error is said on
/// stderr while the run is still going — one line, once — and the run fails at its end
/// (exit 1) as before.
#[test]
fn a_full_disk_under_hlog_is_said_while_the_run_goes_on() {
    if std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .is_err()
    {
        eprintln!("skipping a_full_disk_under_hlog_is_said_while_the_run_goes_on: no /dev/full");
        return;
    }
    let mut child = std::process::Command::new(bin())
        .args([
            "run",
            "-D",
            "8s",
            "-i",
            "1ms",
            "--policy",
            "other",
            "--hlog",
            "/dev/full",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = 0;
    let mut running_when_said = None;
    for l in lines.by_ref() {
        let l = l.unwrap();
        if l.contains("--hlog: cannot write '/dev/full'") {
            said += 1;
            running_when_said.get_or_insert_with(|| child.try_wait().unwrap().is_none());
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(said, 1, "said once");
    assert_eq!(running_when_said, Some(true), "said while the run went on");
    assert_eq!(status.code(), Some(1));
}

/// A log without header or tags (the format allows it) is read; a JSON result given to
/// `hlog stat` is named as such.
#[test]
fn a_headerless_untagged_log_is_read_and_json_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut enc = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram(&[4_000, 6_000]), &mut enc)
        .unwrap();
    let enc = base64::engine::general_purpose::STANDARD.encode(&enc);
    let log = dir.path().join("bare.hlog");
    std::fs::write(
        &log,
        format!("0.000,1.000,6.0,{enc}\n1.000,1.000,6.0,{enc}\n"),
    )
    .unwrap();
    let out = tickscope()
        .args(["hlog", "stat"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&out.stdout, "(none)"), (2, 4));
    let json = dir.path().join("r.json");
    std::fs::write(&json, "{\"schema\": \"tickscope.run/2\"}\n").unwrap();
    refused(
        &["hlog".as_ref(), "stat".as_ref(), json.as_os_str()],
        "a JSON result, not an interval log",
    );
}
