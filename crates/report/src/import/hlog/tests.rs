use super::*;
use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;
use std::time::Duration;

fn histogram(values: &[u64]) -> Histogram<u64> {
    let mut h = crate::sink::hlog::new_histogram();
    values.iter().for_each(|&v| h.record(v).unwrap());
    h
}

/// The plain V2 encoding of `h`.
fn plain(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2Serializer::new().serialize(h, &mut out).unwrap();
    out
}

/// `plain` compressed as the V2 compressed encoding wraps it.
fn compress(plain: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(plain).unwrap();
    let body = z.finish().unwrap();
    let mut out = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// LEB128-64b9B of the ZigZag of `v`, as HdrHistogram's V2 payload holds numbers.
fn varint(v: i64) -> Vec<u8> {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    for _ in 0..8 {
        if z < 0x80 {
            out.push(z as u8);
            return out;
        }
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
    out
}

/// A plain V2 encoding of a histogram (1..=3_600_000_000_000, 2 figures) whose payload is
/// `numbers`, with a correct payload length.
fn with_payload(numbers: &[i64]) -> Vec<u8> {
    let mut b = plain(&histogram(&[1000]));
    b.truncate(V2_HEADER_BYTES);
    for &n in numbers {
        b.extend(varint(n));
    }
    let len = (b.len() - V2_HEADER_BYTES) as u32;
    put32(&mut b, 4, len);
    b
}

/// An interval line holding `encoded`.
fn line(encoded: &[u8]) -> String {
    format!(
        "Tag=all,0.000,1.000,1.0,{}\n",
        base64::engine::general_purpose::STANDARD.encode(encoded)
    )
}

/// Decodes `encoded` as a reader does: check, then the crate's decoder.
fn decode(encoded: &[u8]) -> Result<Histogram<u64>, String> {
    let text = line(encoded);
    let mut r = Reader::new(text.as_bytes());
    r.next_head()?.ok_or("no interval")?;
    r.histogram()
}

#[test]
fn valid_encodings_pass_the_check_and_decode_equal() {
    let h = histogram(&[1, 999, 123_456, 3_000_000_000]);
    for enc in [plain(&h), compress(&plain(&h))] {
        assert_eq!(decode(&enc).unwrap(), h);
    }
    let mut deflated = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&h, &mut deflated)
        .unwrap();
    assert_eq!(decode(&deflated).unwrap(), h);
}

/// Crafted headers and payloads, plain and compressed: each refused by the check with
/// what is wrong, before the decoder could allocate or panic.
#[test]
fn crafted_headers_are_refused_before_decoding() {
    let good = plain(&histogram(&[1000, 2000]));
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("bad cookie", edit(&|b| put32(b, 0, 0xdead_beef)), "cookie"),
        (
            "V0 cookie",
            edit(&|b| put32(b, 0, 0x1c84_9308)),
            "not HdrHistogram's V2",
        ),
        (
            "negative payload length",
            edit(&|b| put32(b, 4, (-1i32) as u32)),
            "negative payload length",
        ),
        (
            "huge payload length",
            edit(&|b| put32(b, 4, i32::MAX as u32)),
            "payload length",
        ),
        (
            "payload longer than given",
            edit(&|b| {
                let l = (b.len() - V2_HEADER_BYTES + 5) as u32;
                put32(b, 4, l)
            }),
            "shorter than",
        ),
        (
            "normalizing offset",
            edit(&|b| put32(b, 8, 3)),
            "normalizing",
        ),
        ("6 figures", edit(&|b| put32(b, 12, 6)), "significant"),
        (
            "negative figures",
            edit(&|b| put32(b, 12, (-2i32) as u32)),
            "significant",
        ),
        ("lowest 0", edit(&|b| put64(b, 16, 0)), "lowest"),
        (
            "negative lowest",
            edit(&|b| put64(b, 16, (-5i64) as u64)),
            "lowest",
        ),
        (
            "highest below 2x lowest",
            edit(&|b| put64(b, 24, 1)),
            "highest",
        ),
        (
            "double ratio",
            edit(&|b| put64(b, 32, 2.5f64.to_bits())),
            "ratio",
        ),
        (
            "NaN ratio",
            edit(&|b| put64(b, 32, f64::NAN.to_bits())),
            "ratio",
        ),
        (
            "cut header",
            good[..20].to_vec(),
            "shorter than a histogram's header",
        ),
        (
            "counts above i64::MAX",
            with_payload(&[i64::MAX, i64::MAX]),
            "more than 2^53",
        ),
        (
            "one count above 2^53",
            with_payload(&[1 << 60]),
            "more than 2^53",
        ),
        (
            "a zero run of i64::MIN",
            with_payload(&[3, i64::MIN]),
            "more than the",
        ),
        (
            "more counts than the range",
            with_payload(&[-(1 << 40), 1]),
            "more than the",
        ),
        (
            "a count cut short",
            edit(&|b| {
                b.truncate(V2_HEADER_BYTES);
                b.push(0x81);
                put32(b, 4, 1);
            }),
            "cut short",
        ),
    ];
    for (what, enc, why) in &cases {
        for (form, bytes) in [("plain", enc.clone()), ("compressed", compress(enc))] {
            let e = decode(&bytes).expect_err(&format!("{what} ({form}) was accepted"));
            assert!(e.contains(why), "{what} ({form}): {e}");
            assert!(e.starts_with("line 1: "), "{what} ({form}): {e}");
        }
    }
    // The compressed wrapper's own length.
    let z = compress(&good);
    let mut neg = z.clone();
    put32(&mut neg, 4, (-1i32) as u32);
    assert!(decode(&neg)
        .unwrap_err()
        .contains("negative compressed length"));
    let mut long = z.clone();
    put32(&mut long, 4, i32::MAX as u32);
    assert!(decode(&long).unwrap_err().contains("compressed length"));
    let mut inner = good.clone();
    put32(&mut inner, 0, V2_COMPRESSED_COOKIE);
    assert!(decode(&compress(&inner))
        .unwrap_err()
        .contains("inner cookie"));
}

/// Random corruption of valid encodings (a fixed-seed xorshift, plain and recompressed):
/// never a panic — either refused with a reason or decoded into a histogram of at most
/// 2^53 values.
#[test]
fn corrupted_encodings_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let sources = [
        plain(&histogram(&[1, 5, 1000, 1_000_000, 3_000_000_000])),
        plain(&histogram(&[])),
        with_payload(&[-100, 7, 1, -3, 2]),
    ];
    let (mut refused, mut decoded) = (0, 0);
    for round in 0..3000 {
        let mut b = sources[round % sources.len()].clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % b.len() as u64) as usize;
            match next() % 3 {
                0 => b[at] = next() as u8,
                1 => b[at] ^= 1 << (next() % 8),
                _ => b.truncate(at.max(1)),
            }
        }
        let bytes = if round % 2 == 0 { b } else { compress(&b) };
        match decode(&bytes) {
            Ok(h) => {
                assert!(h.len() <= MAX_SAMPLES);
                decoded += 1;
            }
            Err(e) => {
                assert!(e.starts_with("line 1: "), "{e}");
                refused += 1;
            }
        }
    }
    assert!(
        refused > 0 && decoded > 0,
        "{refused} refused, {decoded} decoded"
    );
}

/// The counts' length is computed as the crate sizes its histograms.
#[test]
fn counts_len_agrees_with_the_crate() {
    for figures in 0..=5u8 {
        for low in [1u64, 2, 3, 1000, 1 << 20] {
            for high in [
                2 * low,
                1000 * low,
                3_600_000_000_000,
                u64::MAX / 4,
                u64::MAX,
            ] {
                let ours = counts_len(low, high, figures.into());
                match Histogram::<u64>::new_with_bounds(low, high, figures) {
                    Ok(h) => assert_eq!(ours, Some(h.distinct_values()), "{low} {high} {figures}"),
                    Err(_) => assert_eq!(ours, None, "{low} {high} {figures}"),
                }
            }
        }
    }
    assert_eq!(counts_len(0, 10, 2), None);
    assert_eq!(counts_len(10, 15, 2), None);
    assert_eq!(counts_len(1, 10, 6), None);
}

/// Interval starts and lengths beyond the year 9999 (which `SystemTime` arithmetic would
/// panic on) are refused with the line; so is such a StartTime.
#[test]
fn timestamps_beyond_the_year_9999_are_refused() {
    let enc = base64::engine::general_purpose::STANDARD.encode(plain(&histogram(&[5])));
    for (text, why) in [
        (
            format!("Tag=all,10000000000000000000.000,1.000,1.0,{enc}\n"),
            "start",
        ),
        (
            format!("Tag=all,1.000,18446744073709551615.000,1.0,{enc}\n"),
            "length",
        ),
        (
            format!("Tag=all,253402300799.000,10.000,1.0,{enc}\n"),
            "ends",
        ),
        (
            format!("#[StartTime: 18446744073709551615.000 (x)]\nTag=all,1.000,1.000,1.0,{enc}\n"),
            "StartTime",
        ),
    ] {
        let e = Reader::new(text.as_bytes()).next_head().unwrap_err();
        assert!(e.contains("beyond the year 9999") && e.contains(why), "{e}");
    }
    // The last moment still is a time.
    let ok = format!("Tag=all,253402300789.000,10.000,1.0,{enc}\n");
    assert!(Reader::new(ok.as_bytes()).next_head().unwrap().is_some());
}

/// A source that makes an interval log up as it is read — 1 header, then `n` intervals of
/// three tags — and counts the bytes it has handed out: the log never exists whole, not even
/// here.
struct Generated {
    header: Vec<u8>,
    lines: [Vec<u8>; 3],
    n: usize,
    k: usize,
    pending: Vec<u8>,
    served: Rc<Cell<usize>>,
}

impl std::io::Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            if !self.header.is_empty() {
                self.pending = std::mem::take(&mut self.header);
            } else if self.k < 3 * self.n {
                let (i, tag) = (self.k / 3, self.k % 3);
                self.pending = format!("Tag={},{i}.000,", ["T0", "T1", "all"][tag]).into_bytes();
                self.pending.extend_from_slice(&self.lines[tag]);
                self.k += 1;
            } else {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        self.served.set(self.served.get() + n);
        Ok(n)
    }
}

/// Many intervals go through one pass with one histogram per tag, and the reader reads
/// ahead no more than its buffer: when an interval is looked at, the source has handed out
/// at most that interval's line and one buffer more.
#[test]
fn many_intervals_stream_through_one_histogram_per_tag() {
    let n = 2_000;
    let served = Rc::new(Cell::new(0));
    let mut lines: [Vec<u8>; 3] = Default::default();
    for (t, l) in lines.iter_mut().enumerate() {
        let mut d = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&histogram(&[1000 * (t as u64 + 1), 50_000]), &mut d)
            .unwrap();
        *l = format!(
            "1.000,50000.0,{}\n",
            base64::engine::general_purpose::STANDARD.encode(&d)
        )
        .into_bytes();
    }
    let header = b"#[StartTime: 1700000000.000 (x)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n".to_vec();
    let longest = lines.iter().map(Vec::len).max().unwrap() + 32;
    let src = Generated {
        header: header.clone(),
        lines,
        n,
        k: 0,
        pending: Vec::new(),
        served: served.clone(),
    };
    const BUFFER: usize = 8 << 10;
    let mut reader = Reader::new(std::io::BufReader::with_capacity(BUFFER, src));
    let mut totals = Totals::default();
    let mut seen = 0usize;
    totals
        .add_log(&mut reader, |h| {
            seen += 1;
            assert!(
                served.get() <= header.len() + seen * longest + BUFFER,
                "interval {seen}: {} bytes read ahead",
                served.get()
            );
            assert_eq!(h.start, 1_700_000_000.0 + ((seen - 1) / 3) as f64);
            true
        })
        .unwrap();
    assert_eq!(totals.intervals, 3 * n as u64);
    assert_eq!(totals.tags.len(), 3);
    for (tag, t) in &totals.tags {
        assert_eq!(t.intervals, n as u64, "{tag}");
        assert_eq!(t.histogram.as_ref().unwrap().len(), 2 * n as u64, "{tag}");
    }
    assert_eq!(reader.start_time(), Some(1_700_000_000.0));
}

/// Merged intervals whose counts together pass 2^53 are refused at the line that does it.
#[test]
fn merged_counts_beyond_2_53_are_refused() {
    let big = with_payload(&[1 << 52, 1 << 52]);
    let text = [line(&big), line(&big)].concat();
    let e = Totals::default()
        .add_log(&mut Reader::new(text.as_bytes()), |_| true)
        .unwrap_err();
    assert!(e.starts_with("line 2: ") && e.contains("2^53"), "{e}");
}

/// A bad line followed by more is an error; a bad last line is a warning; blank lines and
/// comments are skipped; an over-long line is refused without reading it all.
#[test]
fn bad_lines_cut_short_lines_and_long_lines() {
    let enc = base64::engine::general_purpose::STANDARD.encode(plain(&histogram(&[5])));
    let ok = format!("Tag=all,1.000,1.000,1.0,{enc}\n");
    let text = format!("#tool: x\n\n{ok}garbage\n{ok}");
    let e = Reader::new(text.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
    assert_eq!(e, "line 4 is not an interval, a comment or the legend");
    let text = format!("#tool: x\n{ok}{}", &ok[..ok.len() - 9]);
    let mut r = Reader::new(text.as_bytes());
    assert_eq!(r.by_ref().count(), 1);
    assert_eq!(r.comments(), ["tool: x"]);
    assert_eq!(r.warnings().len(), 1, "{:?}", r.warnings());
    let long = std::io::repeat(b'A').take(MAX_LINE_BYTES as u64 * 4);
    let e = Reader::new(std::io::BufReader::new(long))
        .next_head()
        .unwrap_err();
    assert!(e.contains("longer than 16 MiB"), "{e}");
}

/// A log written by the crate's own writer, through `import`: the column is tag `all`.
#[test]
fn import_reads_the_all_column() {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment("tool: tickscope test");
        let mut w = b.begin_log_with(&mut buf, &mut ser).unwrap();
        for s in 0..3 {
            let at = Duration::from_secs(s);
            let one = Duration::from_secs(1);
            w.write_histogram(&histogram(&[10]), at, one, Tag::new("T0"))
                .unwrap();
            w.write_histogram(&histogram(&[10, 20]), at, one, Tag::new("all"))
                .unwrap();
        }
    }
    let m = import(std::str::from_utf8(&buf).unwrap(), "x").unwrap();
    assert_eq!(m.samples, 6);
    assert_eq!(m.settings[&Setting::Tool], "tickscope test");
    assert!(m
        .notes
        .iter()
        .any(|n| n.contains("6 intervals, tags T0, all")));
}

#[test]
fn a_tickscope_header_gives_the_settings_and_another_tools_none() {
    let ours: Vec<String> = [
        "tool: tickscope 0.1.0",
        "method: timerfd",
        "policy: fifo",
        "priority: 90",
        "interval_ns: 250000",
        "clock: monotonic",
        "threads (cpu): 0,1,unpinned",
        "timer_slack: 1 ns",
        "unit: ns; tags T<k> thread k",
    ]
    .map(String::from)
    .to_vec();
    let s = header_settings(&ours);
    assert_eq!(s[&Setting::Method], "timerfd");
    assert_eq!(s[&Setting::Priority], "90");
    assert_eq!(s[&Setting::Interval], "250 µs");
    assert_eq!(s[&Setting::Threads], "3");
    assert_eq!(s[&Setting::TimerSlack], "1 ns");
    assert!(
        !s.contains_key(&Setting::Load),
        "a log does not record the load"
    );
    let theirs = vec!["method: timerfd".to_string()];
    assert!(header_settings(&theirs).is_empty());
}
