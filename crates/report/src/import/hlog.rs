//! HdrHistogram interval logs (`.hlog`): reading them, for `tickscope compare`, `tickscope
//! report` and `tickscope hlog`, whoever wrote them — tickscope's `--hlog`, jHiccup,
//! cassandra-stress, HdrHistogram's Java/C/Python/Rust writers.
//!
//! The format (HdrHistogram, `HistogramLogWriter.java`,
//! <https://github.com/HdrHistogram/HdrHistogram/blob/master/src/main/java/org/HdrHistogram/HistogramLogWriter.java>):
//! comment lines `#…`, optional `#[StartTime: s]` and `#[BaseTime: s]`, a legend line,
//! then one line per interval, `[Tag=NAME,]start,length,max,base64(compressed histogram)`.
//! Each line is parsed by the `hdrhistogram` crate (`serialization::interval_log`), each
//! histogram decoded by its `serialization::Deserializer` once [`check_encoded`] has
//! validated it. Interval starts are made absolute (seconds since the epoch) as the Java
//! reader does: a start below a year in seconds is relative to BaseTime, else to StartTime
//! when given (tickscope writes StartTime and relative starts).
//!
//! **Streaming.** A log is read line by line ([`Reader`], at most [`MAX_LINE_BYTES`] a line):
//! one interval's histogram at a time is decoded, added to its tag's total ([`Totals`]) and
//! dropped, so memory grows with the number of tags, never with the number of intervals —
//! a days-long `monitor --hlog` log is read in the memory of one interval per tag. Nothing
//! in this module holds every interval at once.
//!
//! **Bad input.** A last line cut short (a log still being written, or a crash) is left out
//! with a warning; a bad line anywhere else is an error. An encoded histogram is checked
//! before it is decoded (its header against HdrHistogram's V2 encoding, its payload length
//! against the counts its range holds, every count) so that a crafted line cannot make the
//! decoder allocate gigabytes or panic; timestamps beyond the year 9999 and counts beyond
//! [`MAX_SAMPLES`] are refused.

use super::{LatencyFigures, Measurement, Setting, SourceFormat, MAX_SAMPLES};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::io::{BufRead, Read};

/// The tag given to intervals without one (foreign logs usually have none).
pub const UNTAGGED: &str = "";

/// The longest line read, bytes: 16 MiB. A tickscope interval is about 1 KiB; the largest
/// histogram HdrHistogram can encode at 3 significant figures over the whole `u64` range
/// compresses to well under 1 MiB.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The most distinct tags a log may have: 4096 (tickscope writes 2 per measuring thread and
/// `all`). Each tag keeps one histogram while a log is read.
pub const MAX_TAGS: usize = 4096;

/// The most comment lines kept from a log (for its `tool:` and settings lines, which come
/// first); further comments are read and dropped.
pub const MAX_COMMENTS: usize = 256;

/// The latest instant a log may name, seconds since the epoch: 9999-12-31T23:59:59Z, the
/// end of RFC 3339's range. Any later start, end or StartTime is refused.
pub const MAX_TIMESTAMP_S: f64 = 253_402_300_799.0;

/// Seconds below which an interval start is taken as relative (a year, as HdrHistogram's
/// Java reader decides between absolute and relative timestamps).
const RELATIVE_BELOW: f64 = 365.0 * 24.0 * 3600.0;

/// One interval of a log, its histogram decoded.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Its tag ([`UNTAGGED`] when none).
    pub tag: String,
    /// Start, seconds: since the epoch when the log gives StartTime or BaseTime, else as
    /// written.
    pub start: f64,
    /// Length, seconds.
    pub length: f64,
    /// The values recorded in the interval (tickscope: ns).
    pub histogram: Histogram<u64>,
}

/// An interval's line as read, before its histogram is decoded ([`Reader::histogram`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    /// Its tag ([`UNTAGGED`] when none).
    pub tag: String,
    /// Start, seconds, as [`Interval::start`].
    pub start: f64,
    /// Length, seconds.
    pub length: f64,
    /// Its line in the file, from 1.
    pub line: usize,
}

/// Reads an interval log one line at a time (see the module docs): [`Reader::next_head`]
/// gives the next interval's tag and times, [`Reader::histogram`] decodes its histogram
/// when wanted; as an [`Iterator`] it yields each [`Interval`] decoded, one at a time.
pub struct Reader<R> {
    src: R,
    line: Vec<u8>,
    line_no: usize,
    start_time: Option<f64>,
    base_time: Option<f64>,
    comments: Vec<String>,
    warnings: Vec<String>,
    /// A line that did not parse: an error if anything but blank lines follows.
    bad_line: Option<usize>,
    ended: bool,
    de: Deserializer,
    /// The base64 of the interval last given by `next_head`, and its line.
    encoded: String,
    current: Option<usize>,
    bytes: Vec<u8>,
    plain: Vec<u8>,
}

impl<R: BufRead> Reader<R> {
    /// A reader of the log `src` gives (a file through a `BufReader`, or `text.as_bytes()`).
    pub fn new(src: R) -> Self {
        Reader {
            src,
            line: Vec::new(),
            line_no: 0,
            start_time: None,
            base_time: None,
            comments: Vec::new(),
            warnings: Vec::new(),
            bad_line: None,
            ended: false,
            de: Deserializer::new(),
            encoded: String::new(),
            current: None,
            bytes: Vec::new(),
            plain: Vec::new(),
        }
    }

    /// StartTime, seconds since the epoch, once its line has been read (it precedes the
    /// intervals).
    pub fn start_time(&self) -> Option<f64> {
        self.start_time
    }

    /// The comment lines read so far (without `#`; at most [`MAX_COMMENTS`]), e.g.
    /// tickscope's settings.
    pub fn comments(&self) -> &[String] {
        &self.comments
    }

    /// Remarks on what was left out (a cut-short last line), once the end is reached.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The next interval's tag and times; its histogram stays encoded until
    /// [`Reader::histogram`]. `None` at the end of the log.
    ///
    /// # Errors
    /// One sentence naming the line: unreadable, longer than [`MAX_LINE_BYTES`], not an
    /// interval, comment or legend (unless it is the last, cut short: then a warning), or a
    /// time beyond [`MAX_TIMESTAMP_S`]. The reader ends after an error.
    pub fn next_head(&mut self) -> Result<Option<Head>, String> {
        let found = self.read_head();
        if !matches!(found, Ok(Some(_))) {
            self.ended = true;
            self.current = None;
        }
        found
    }

    fn read_head(&mut self) -> Result<Option<Head>, String> {
        self.current = None;
        loop {
            if self.ended {
                return Ok(None);
            }
            self.line.clear();
            let n = (&mut self.src)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .map_err(|e| format!("cannot read: {e}"))?;
            if n == 0 {
                if let Some(bad) = self.bad_line.take() {
                    self.warnings.push(format!(
                        "line {bad} is cut short and was left out (a log still being written?)"
                    ));
                }
                return Ok(None);
            }
            self.line_no += 1;
            let at = self.line_no;
            if self.line.len() > MAX_LINE_BYTES {
                return Err(format!(
                    "line {at} is longer than {} MiB: not an interval log",
                    MAX_LINE_BYTES >> 20
                ));
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if let Some(bad) = self.bad_line {
                return Err(format!(
                    "line {bad} is not an interval, a comment or the legend"
                ));
            }
            if self.line.starts_with(b"#")
                && !self.line.starts_with(b"#[")
                && self.comments.len() < MAX_COMMENTS
            {
                let text = String::from_utf8_lossy(&self.line[1..]);
                self.comments
                    .push(text.trim_end_matches(['\n', '\r']).to_string());
            }
            let time = |d: std::time::Duration, what: &str| {
                let s = d.as_secs_f64();
                if s > MAX_TIMESTAMP_S {
                    Err(format!("line {at}: {what} {s} s is beyond the year 9999"))
                } else {
                    Ok(s)
                }
            };
            match IntervalLogIterator::new(&self.line).next() {
                None => {}
                Some(Ok(LogEntry::StartTime(t))) => {
                    self.start_time = Some(time(t, "StartTime")?);
                }
                Some(Ok(LogEntry::BaseTime(t))) => self.base_time = Some(time(t, "BaseTime")?),
                Some(Ok(LogEntry::Interval(i))) => {
                    let mut start = time(i.start_timestamp(), "the interval's start")?;
                    let length = time(i.duration(), "the interval's length")?;
                    if start < RELATIVE_BELOW {
                        start += self.base_time.or(self.start_time).unwrap_or(0.0);
                    }
                    if start + length > MAX_TIMESTAMP_S {
                        return Err(format!(
                            "line {at}: the interval ends {} s after the epoch, beyond the \
                             year 9999",
                            start + length
                        ));
                    }
                    self.encoded.clear();
                    self.encoded.push_str(i.encoded_histogram());
                    self.current = Some(at);
                    return Ok(Some(Head {
                        tag: i.tag().map_or(UNTAGGED, |t| t.as_str()).to_string(),
                        start,
                        length,
                        line: at,
                    }));
                }
                Some(Err(_)) => self.bad_line = Some(at),
            }
        }
    }

    /// Decodes the histogram of the interval [`Reader::next_head`] gave last, after checking
    /// it ([`check_encoded`]).
    ///
    /// # Errors
    /// One sentence naming the line: no interval given, not base64, or an encoding
    /// [`check_encoded`] or the decoder refuses.
    pub fn histogram(&mut self) -> Result<Histogram<u64>, String> {
        use base64::Engine;
        let at = self
            .current
            .take()
            .ok_or("no interval to decode (next_head gave none)")?;
        self.bytes.clear();
        base64::engine::general_purpose::STANDARD
            .decode_vec(self.encoded.trim(), &mut self.bytes)
            .map_err(|e| format!("line {at}: the histogram is not base64: {e}"))?;
        check_encoded(&self.bytes, &mut self.plain)
            .map_err(|e| format!("line {at}: the histogram cannot be decoded: {e}"))?;
        let h: Histogram<u64> = self
            .de
            .deserialize(&mut &self.plain[..])
            .map_err(|e| format!("line {at}: the histogram cannot be decoded: {e}"))?;
        if h.len() > MAX_SAMPLES {
            return Err(format!(
                "line {at}: the histogram holds more than 2^53 values, more than any run"
            ));
        }
        Ok(h)
    }

    /// Where the log's time starts, read through to the end without decoding a histogram:
    /// StartTime when the log gives one before its first interval, else the earliest
    /// interval start; `None` for a log without either.
    ///
    /// # Errors
    /// As [`Reader::next_head`].
    pub fn origin(&mut self) -> Result<Option<f64>, String> {
        let mut first: Option<f64> = None;
        while let Some(h) = self.next_head()? {
            if let Some(t) = self.start_time {
                return Ok(Some(t));
            }
            first = Some(first.map_or(h.start, |f| f.min(h.start)));
        }
        Ok(self.start_time.or(first))
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Interval, String>;

    /// The next interval, decoded; an error ends the iteration.
    fn next(&mut self) -> Option<Self::Item> {
        let head = match self.next_head() {
            Ok(Some(h)) => h,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let decoded = self.histogram();
        if decoded.is_err() {
            self.ended = true;
        }
        Some(decoded.map(|histogram| Interval {
            tag: head.tag,
            start: head.start,
            length: head.length,
            histogram,
        }))
    }
}

/// HdrHistogram's V2 encoding cookie (`0x1c849303`, with the word size 8 as `0x10` ored in,
/// as the Java `AbstractHistogram` and the `hdrhistogram` crate write it).
const V2_COOKIE: u32 = 0x1c84_9313;
/// The cookie of the DEFLATE-compressed V2 encoding (`0x1c849304 | 0x10`).
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// The V2 header: cookie, payload length, normalizing index offset, significant figures
/// (4 bytes each, big-endian), lowest and highest trackable value (8 bytes each), the
/// integer-to-double conversion ratio (an IEEE 754 double).
const V2_HEADER_BYTES: usize = 40;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(s))
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    let s: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_be_bytes(s))
}

/// The length of the counts array of a histogram with these bounds and precision, as
/// HdrHistogram sizes it (`AbstractHistogram.init` and `getBucketsNeededToCoverValue` in
/// HdrHistogram's Java implementation, <https://github.com/HdrHistogram/HdrHistogram>, and the
/// `hdrhistogram` crate, which follows it): sub-buckets of `2·10^figures` values rounded up to
/// a power of two, doubled in range once per bucket until `high` is covered. `None` for
/// bounds no histogram has (`low` 0, `high` below `2·low`, more than 5 figures, or a unit
/// too large).
pub fn counts_len(low: u64, high: u64, figures: u32) -> Option<usize> {
    if low == 0 || figures > 5 || high < low.checked_mul(2)? {
        return None;
    }
    let single_unit = 2 * 10u64.pow(figures);
    let unit_magnitude = 63 - low.leading_zeros();
    let count_magnitude = 64 - (single_unit - 1).leading_zeros();
    let half_magnitude = count_magnitude.max(1) - 1;
    if unit_magnitude + half_magnitude > 61 {
        return None;
    }
    let sub_buckets = 1u64 << (half_magnitude + 1);
    let mut untrackable = sub_buckets << unit_magnitude;
    let mut buckets = 1u64;
    while untrackable <= high {
        if untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        untrackable <<= 1;
        buckets += 1;
    }
    usize::try_from((buckets + 1) * (sub_buckets / 2)).ok()
}

/// Checks a V2 header (uncompressed, [`V2_HEADER_BYTES`] long); gives the payload length
/// and the length of the counts array.
fn check_header(h: &[u8]) -> Result<(usize, usize), String> {
    let short = || "shorter than a histogram's header".to_string();
    let cookie = be32(h, 0).ok_or_else(short)?;
    if cookie != V2_COOKIE {
        return Err(format!(
            "inner cookie {cookie:#010x} is not HdrHistogram's V2 encoding"
        ));
    }
    let payload = be32(h, 4).ok_or_else(short)? as i32;
    let offset = be32(h, 8).ok_or_else(short)? as i32;
    let figures = be32(h, 12).ok_or_else(short)? as i32;
    let low = be64(h, 16).ok_or_else(short)? as i64;
    let high = be64(h, 24).ok_or_else(short)? as i64;
    let ratio = f64::from_bits(be64(h, 32).ok_or_else(short)?);
    if payload < 0 {
        return Err(format!("negative payload length {payload}"));
    }
    if offset != 0 {
        return Err(format!(
            "normalizing index offset {offset} (a shifted histogram) is not supported"
        ));
    }
    if ratio != 1.0 {
        return Err(format!(
            "integer-to-double ratio {ratio} (a DoubleHistogram) is not supported"
        ));
    }
    let len = u32::try_from(figures)
        .ok()
        .zip(u64::try_from(low).ok())
        .zip(u64::try_from(high).ok())
        .and_then(|((f, l), h)| counts_len(l, h, f))
        .ok_or_else(|| {
            format!(
                "no histogram has lowest value {low}, highest {high} and {figures} \
                 significant figures"
            )
        })?;
    // Every count or run of zeros takes 1 to 9 bytes and covers at least one count.
    if payload as usize > len.saturating_mul(9) {
        return Err(format!(
            "payload length {payload} is more than the {len} counts of its range can take"
        ));
    }
    Ok((payload as usize, len))
}

/// Checks the payload: LEB128-64b9B ZigZag numbers, a count when ≥ 0, a run of that many
/// zero counts when negative (HdrHistogram's V2 encoding); every one complete, all within
/// `len` counts, and adding up to at most [`MAX_SAMPLES`].
fn check_payload(payload: &[u8], len: usize) -> Result<(), String> {
    let (mut at, mut index, mut total) = (0usize, 0u64, 0u64);
    while at < payload.len() {
        let mut v = 0u64;
        let mut n = 0;
        loop {
            let b = *payload.get(at + n).ok_or("the last count is cut short")?;
            if n == 8 {
                v |= u64::from(b) << 56;
                n += 1;
                break;
            }
            v |= u64::from(b & 0x7f) << (7 * n);
            n += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        at += n;
        let z = ((v >> 1) as i64) ^ -((v & 1) as i64);
        if z < 0 {
            index = index.saturating_add(z.unsigned_abs());
        } else {
            index += 1;
            total = total.saturating_add(z as u64);
            if total > MAX_SAMPLES {
                return Err("its counts add up to more than 2^53, more than any run holds".into());
            }
        }
        if index > len as u64 {
            return Err(format!("it holds more than the {len} counts of its range"));
        }
    }
    Ok(())
}

/// Checks an encoded histogram (HdrHistogram's V2 encoding, plain or DEFLATE-compressed)
/// before the `hdrhistogram` decoder sees it, and leaves its plain V2 form in `plain`
/// (inflated when compressed), which the decoder then reads without allocating more than
/// the histogram's own counts. Refused: a cookie other than V2's, a negative or too large
/// compressed or payload length, a normalizing offset or double ratio (unsupported), bounds
/// no histogram has, a payload longer than its range's counts can take, cut short, with more
/// counts than the range holds, or counts adding up to more than [`MAX_SAMPLES`] (whose
/// merge would overflow the encoding's signed 64-bit counts).
///
/// The layout: HdrHistogram's `AbstractHistogram.encodeIntoByteBuffer` and
/// `encodeIntoCompressedByteBuffer`
/// (<https://github.com/HdrHistogram/HdrHistogram/blob/master/src/main/java/org/HdrHistogram/AbstractHistogram.java>).
///
/// # Errors
/// One phrase saying what is wrong.
pub fn check_encoded(bytes: &[u8], plain: &mut Vec<u8>) -> Result<(), String> {
    plain.clear();
    let cookie = be32(bytes, 0).ok_or("shorter than a histogram's header")?;
    let len = match cookie {
        V2_COMPRESSED_COOKIE => {
            let clen = be32(bytes, 4).ok_or("shorter than a histogram's header")? as i32;
            if clen < 0 {
                return Err(format!("negative compressed length {clen}"));
            }
            let body = bytes.get(8..8 + clen as usize).ok_or_else(|| {
                format!(
                    "compressed length {clen} is more than the {} bytes given",
                    bytes.len() - 8
                )
            })?;
            let mut z = flate2::read::ZlibDecoder::new(body);
            plain.resize(V2_HEADER_BYTES, 0);
            z.read_exact(plain).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    "shorter than a histogram's header".to_string()
                }
                _ => format!("its header cannot be inflated: {e}"),
            })?;
            let (payload, len) = check_header(plain)?;
            plain.reserve(payload);
            (&mut z)
                .take(payload as u64)
                .read_to_end(plain)
                .map_err(|e| format!("its payload cannot be inflated: {e}"))?;
            if plain.len() != V2_HEADER_BYTES + payload {
                return Err(format!(
                    "its payload is shorter than the {payload} bytes its header says"
                ));
            }
            len
        }
        V2_COOKIE => {
            let (payload, len) = check_header(bytes)?;
            let whole = bytes.get(..V2_HEADER_BYTES + payload).ok_or_else(|| {
                format!("its payload is shorter than the {payload} bytes its header says")
            })?;
            plain.extend_from_slice(whole);
            len
        }
        other => {
            return Err(format!(
                "cookie {other:#010x} is not HdrHistogram's V2 encoding (the only one read)"
            ))
        }
    };
    check_payload(&plain[V2_HEADER_BYTES..], len)
}

/// One tag's intervals as [`Totals`] keeps them.
#[derive(Debug, Clone, Default)]
pub struct TagTotal {
    /// Intervals of the tag kept (the filter passed).
    pub intervals: u64,
    /// Their histograms merged; `None` when none was kept.
    pub histogram: Option<Histogram<u64>>,
}

/// What one pass over one or more logs adds up to: per tag, the intervals kept, merged —
/// one histogram per tag, whatever the number of intervals.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Every tag seen (kept or not), sorted.
    pub tags: BTreeMap<String, TagTotal>,
    /// Intervals read, all tags, kept or not.
    pub intervals: u64,
    /// The earliest interval start read, seconds as [`Interval::start`].
    pub first_start: Option<f64>,
}

/// Adds `h` to `total`, refusing a sum beyond [`MAX_SAMPLES`].
///
/// # Errors
/// One sentence when the sum would hold more than [`MAX_SAMPLES`] values or a value
/// outside the range the merge can hold.
pub fn add_into(total: &mut Option<Histogram<u64>>, h: &Histogram<u64>) -> Result<(), String> {
    let sum = match total {
        Some(t) => {
            t.add(h)
                .map_err(|e| format!("histograms cannot be merged: {e:?}"))?;
            t
        }
        None => {
            let mut c = h.clone();
            c.auto(true);
            total.insert(c)
        }
    };
    if sum.len() > MAX_SAMPLES {
        return Err("the merged histograms hold more than 2^53 values, more than any run".into());
    }
    Ok(())
}

impl Totals {
    /// Reads `reader` to its end, decoding only the intervals `keep` accepts, and adds them
    /// to their tags.
    ///
    /// # Errors
    /// As [`Reader::next_head`] and [`Reader::histogram`], more than [`MAX_TAGS`] tags, or
    /// a merge beyond [`MAX_SAMPLES`] (the line named).
    pub fn add_log<R: BufRead>(
        &mut self,
        reader: &mut Reader<R>,
        mut keep: impl FnMut(&Head) -> bool,
    ) -> Result<(), String> {
        self.add_log_with(reader, |h, _| keep(h))
    }

    /// [`Totals::add_log`] whose `keep` also sees the comment lines read so far (the
    /// header, which precedes the intervals).
    ///
    /// # Errors
    /// As [`Totals::add_log`].
    pub fn add_log_with<R: BufRead>(
        &mut self,
        reader: &mut Reader<R>,
        mut keep: impl FnMut(&Head, &[String]) -> bool,
    ) -> Result<(), String> {
        while let Some(head) = reader.next_head()? {
            self.intervals += 1;
            self.first_start = Some(self.first_start.map_or(head.start, |f| f.min(head.start)));
            if !self.tags.contains_key(&head.tag) && self.tags.len() >= MAX_TAGS {
                return Err(format!(
                    "line {}: more than {MAX_TAGS} tags: not a log this reads",
                    head.line
                ));
            }
            let keep = keep(&head, reader.comments());
            let total = self.tags.entry(head.tag.clone()).or_default();
            if !keep {
                continue;
            }
            let h = reader.histogram()?;
            total.intervals += 1;
            add_into(&mut total.histogram, &h).map_err(|e| format!("line {}: {e}", head.line))?;
        }
        Ok(())
    }

    /// The tags seen, sorted.
    pub fn tag_names(&self) -> Vec<&str> {
        self.tags.keys().map(String::as_str).collect()
    }
}

/// Whether `text` (a file's start is enough) looks like an interval log rather than JSON.
pub fn looks_like_hlog(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('#') || t.starts_with("\"StartTimestamp\"") || t.starts_with("Tag=")
}

/// The unit of a foreign interval log's values, as `compare --hlog-unit` names it: the
/// factor to ns. tickscope's own logs are always ns.
pub fn unit_factor(name: &str) -> Option<i64> {
    match name {
        "ns" => Some(1),
        "us" | "µs" => Some(1_000),
        "ms" => Some(1_000_000),
        _ => None,
    }
}

/// Whether a column read from an interval log comes from another tool (its values' unit is
/// the writer's choice; tickscope writes ns and says so in its header).
pub fn is_foreign(m: &Measurement) -> bool {
    m.format == SourceFormat::Hlog
        && !m
            .settings
            .get(&Setting::Tool)
            .is_some_and(|t| t.starts_with("tickscope"))
}

/// Rescales a foreign interval log's column whose values are in units of `factor` ns (1000
/// for µs) to ns; does nothing to tickscope's own logs or with a factor of 1.
pub fn rescale(m: &mut Measurement, factor: i64) {
    if factor == 1 || !is_foreign(m) {
        return;
    }
    if let Some(l) = m.latency_ns.as_mut() {
        let f = |v: i64| v.saturating_mul(factor);
        l.min = f(l.min);
        l.max = f(l.max);
        l.mean *= factor as f64;
        for p in [&mut l.p50, &mut l.p99, &mut l.p99_9] {
            *p = p.map(f);
        }
    }
    for n in &mut m.notes {
        if let Some(head) = n.strip_suffix("values taken as ns") {
            *n = format!("{head}values taken as {} ns each (--hlog-unit)", factor);
        }
    }
}

/// The settings a tickscope interval log's header records (`method: timerfd`,
/// `interval_ns: 1000000`, …), in the words the result file's importer uses
/// ([`super::tickscope`]), so that the log and the result of one run compare equal. Empty
/// for another tool's log.
pub fn header_settings(comments: &[String]) -> BTreeMap<Setting, String> {
    let mut out = BTreeMap::new();
    let ours = comments
        .iter()
        .any(|c| c.trim().starts_with("tool: tickscope"));
    if !ours {
        return out;
    }
    for c in comments {
        let Some((key, value)) = c.trim().split_once(": ") else {
            continue;
        };
        let value = value.trim().to_string();
        let setting = match key {
            "method" => Setting::Method,
            "policy" => Setting::Policy,
            "priority" => Setting::Priority,
            "clock" => Setting::Clock,
            "kernel" => Setting::Kernel,
            "preemption" => Setting::Preemption,
            "pm_qos" => Setting::PmQos,
            "timer_slack" => Setting::TimerSlack,
            "interval_ns" => match value.parse::<i64>() {
                Ok(ns) => {
                    out.insert(Setting::Interval, crate::units::interval(ns));
                    continue;
                }
                Err(_) => continue,
            },
            "threads (cpu)" => {
                out.insert(Setting::Threads, value.split(',').count().to_string());
                continue;
            }
            _ => continue,
        };
        out.insert(setting, value);
    }
    out
}

/// One comparison column from an interval log given as text (values taken as ns; see
/// [`import_from`]).
///
/// # Errors
/// As [`import_from`].
pub fn import(text: &str, stem: &str) -> Result<Measurement, String> {
    import_from(text.as_bytes(), stem)
}

/// One comparison column from the interval log `src` gives, read in one pass
/// ([`Totals`]): tag `all` (tickscope's merge of every thread) when present, else the
/// untagged intervals, else every tag but `.early` ones merged. Values are taken as ns.
///
/// # Errors
/// As [`Totals::add_log`], or a log without intervals.
pub fn import_from<R: BufRead>(src: R, stem: &str) -> Result<Measurement, String> {
    read_columns(src, stem, false).map(|(merged, _)| merged)
}

/// The comparison columns of the interval log `src` gives: for a task set's log
/// (`run --tasks … --hlog`, whose header names the tasks: [`task_names`]) one column per
/// task, from its tag `T<k>`, labelled `stem: name` as a task-set result's columns are;
/// for any other log the one column of [`import_from`].
///
/// # Errors
/// As [`import_from`].
pub fn import_columns_from<R: BufRead>(src: R, stem: &str) -> Result<Vec<Measurement>, String> {
    let (merged, tasks) = read_columns(src, stem, true)?;
    Ok(match tasks {
        Some(columns) if !columns.is_empty() => columns,
        _ => vec![merged],
    })
}

/// The names of a task set's tasks from its log's header line
/// ([`crate::sink::hlog::TASKS_PREFIX`]), task `k` being tag `T<k>`; `None` for any other
/// log.
pub fn task_names(comments: &[String]) -> Option<Vec<String>> {
    comments
        .iter()
        .find_map(|c| c.trim().strip_prefix(crate::sink::hlog::TASKS_PREFIX))
        .and_then(|names| serde_json::from_str(names).ok())
}

/// The merged column and, when `per_task` and the log is a task set's, a column per task.
fn read_columns<R: BufRead>(
    src: R,
    stem: &str,
    per_task: bool,
) -> Result<(Measurement, Option<Vec<Measurement>>), String> {
    let mut reader = Reader::new(src);
    let mut totals = Totals::default();
    // Once `all` is seen, the other tags are not needed (a task set's `T<k>` tags aside, when
    // its columns are asked for): left encoded.
    let mut all_seen = false;
    let mut tasks: Option<Option<Vec<String>>> = None;
    totals.add_log_with(&mut reader, |h, comments| {
        let names = tasks.get_or_insert_with(|| task_names(comments).filter(|_| per_task));
        let task_tag = names.as_ref().is_some_and(|n| {
            h.tag
                .strip_prefix('T')
                .and_then(|k| k.parse::<usize>().ok())
                .is_some_and(|k| k < n.len())
        });
        all_seen |= h.tag == "all";
        h.tag == "all" || task_tag || (!all_seen && !h.tag.ends_with(".early"))
    })?;
    let mut settings = header_settings(reader.comments());
    let tool = reader
        .comments()
        .iter()
        .find_map(|c| c.trim().strip_prefix("tool: "))
        .unwrap_or("HdrHistogram interval log");
    settings.insert(Setting::Tool, tool.to_string());
    let columns = tasks.flatten().map(|names| {
        names
            .iter()
            .enumerate()
            .filter_map(|(k, name)| {
                let tag = format!("T{k}");
                let t = totals.tags.get(&tag)?;
                let hist = t.histogram.as_ref()?;
                let mut settings = settings.clone();
                // The header's interval is the shortest task's period, not this task's.
                settings.remove(&Setting::Interval);
                settings.insert(
                    Setting::Threads,
                    format!("task {} of {}", k + 1, names.len()),
                );
                let notes = vec![format!(
                    "task {name} of a task set's interval log (tag {tag}, {} intervals); values \
                     taken as ns",
                    t.intervals
                )];
                Some(column(hist, format!("{stem}: {name}"), settings, notes))
            })
            .collect::<Vec<_>>()
    });
    let merged = merged_column(&totals, &reader, stem, settings)?;
    Ok((merged, columns))
}

/// The column of every thread merged: tag `all`, else the untagged intervals, else every
/// tag but `.early` ones.
fn merged_column<R: BufRead>(
    totals: &Totals,
    reader: &Reader<R>,
    stem: &str,
    settings: BTreeMap<Setting, String>,
) -> Result<Measurement, String> {
    let of = |t: &str| totals.tags.get(t).and_then(|t| t.histogram.as_ref());
    let hist = match ["all", UNTAGGED]
        .into_iter()
        .find(|t| totals.tags.contains_key(*t))
    {
        Some(tag) => of(tag).cloned(),
        None => {
            let mut all = None;
            for h in totals
                .tags
                .iter()
                .filter(|(t, _)| !t.ends_with(".early"))
                .filter_map(|(_, t)| t.histogram.as_ref())
            {
                add_into(&mut all, h)?;
            }
            all
        }
    }
    .ok_or("the log has no intervals")?;
    let mut notes = reader.warnings().to_vec();
    notes.push(format!(
        "from an interval log ({} intervals, tags {}); values taken as ns",
        totals.intervals,
        totals
            .tag_names()
            .iter()
            .map(|t| if t.is_empty() { "(none)" } else { t })
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(column(&hist, stem.to_string(), settings, notes))
}

/// A comparison column of one histogram of ns values.
fn column(
    hist: &Histogram<u64>,
    label: String,
    settings: BTreeMap<Setting, String>,
    notes: Vec<String>,
) -> Measurement {
    let q = |p: f64| Some(hist.highest_equivalent(hist.value_at_quantile(p)) as i64);
    Measurement {
        label,
        source: String::new(),
        format: SourceFormat::Hlog,
        settings,
        samples: hist.len(),
        latency_ns: Some(LatencyFigures {
            min: hist.min() as i64,
            mean: hist.mean(),
            p50: q(0.5),
            p99: q(0.99),
            p99_9: q(0.999),
            max: hist.max() as i64,
            lower_bounds: Vec::new(),
        }),
        resolution_ns: None,
        dt_sd_ns: None,
        overruns: None,
        cpu_percent: None,
        notes,
        threads: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
