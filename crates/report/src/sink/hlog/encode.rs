//! One interval of `--hlog`: a window's buckets written as HdrHistogram's compressed V2
//! histogram, straight from the non-zero buckets the collector hands over.
//!
//! HdrHistogram's V2 encoding (Gil Tene, HdrHistogram, `AbstractHistogram.encodeIntoByteBuffer`
//! and `ZigZagEncoding`, <https://github.com/HdrHistogram/HdrHistogram>; the `hdrhistogram`
//! crate's `V2Serializer` writes the same) is a 40-byte big-endian header — cookie
//! `0x1c849313`, payload length, normalising index offset 0, significant digits, lowest
//! discernible value, highest trackable value, integer-to-double ratio 1.0 — and then the
//! counts array from index 0 up to the index of the largest value, each count as a ZigZag
//! LEB128 number (at most 9 bytes, the 9th carrying 8 bits) and each run of zero counts as
//! minus its length (a single zero as a count). The compressed form (cookie `0x1c849314`, the length of what follows)
//! wraps those bytes in a zlib stream (RFC 1950/1951), which every HdrHistogram log reader
//! inflates.
//!
//! Walking the non-zero buckets instead of a full counts array keeps a window's lines to a
//! few thousand instructions where building an HdrHistogram and a fresh DEFLATE state per
//! line took about half a million (bench/lightness.sh). The bytes before compression are
//! exactly the `hdrhistogram` crate's for the same histogram (a test checks it).
//!
//! Compression: the V2 counts are already short (small varints, zero runs as one number),
//! and a window of a few hundred buckets (a second of wake-ups) did not get smaller under
//! DEFLATE's fixed code table — it grew by a few percent, for about a third of the line's
//! cost. Up to [`STORED_UP_TO`] bytes the zlib stream therefore holds the bytes as they are
//! (stored blocks, RFC 1951 §3.2.4: 11 bytes more than the input, still inflated by every
//! reader); larger ones (coarse windows merging minutes) are compressed with `fdeflate`
//! (fixed code table, runs of zeros as matches: no hash tables to allocate and clear per
//! stream). Both are `fdeflate`'s encoders.

use std::io::Write;
use tickscope_engine::histogram::{HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES};
use tickscope_engine::window_counts::WindowCounts;
use tickscope_engine::window_histogram::counts_highest;

/// HdrHistogram's V2 encoding cookie: `V2EncodingCookieBase` with the `0x10` its
/// `getEncodingCookie` adds.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
/// HdrHistogram's V2 compressed encoding cookie: `V2CompressedEncodingCookieBase` | `0x10`.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// The largest V2 encoding written into the zlib stream uncompressed (stored blocks), bytes.
pub const STORED_UP_TO: usize = 1024;

/// A histogram as its non-zero counts: `(counts index, count)`, ascending by index, each
/// index once (see [`counts_index`](tickscope_engine::window_histogram::counts_index)).
pub type Sparse = Vec<(usize, u64)>;

/// The counts of one line, read where they are: no copy for a window written as it came.
#[derive(Debug, Clone, Copy)]
pub enum View<'a> {
    /// A counts array by counts index, as a window's [`WindowCounts`] holds each half (the
    /// values ≥ 0, or the magnitudes of the values < 0); the last count is not zero. The V2
    /// encoding lists exactly this array.
    ///
    /// [`WindowCounts`]: tickscope_engine::window_counts::WindowCounts
    Counts(&'a [u32]),
    /// Counts merged over several windows.
    Sparse(&'a Sparse),
}

impl View<'_> {
    /// The non-zero counts, ascending by counts index.
    fn for_each(&self, mut f: impl FnMut(usize, u64)) {
        match self {
            View::Counts(counts) => {
                WindowCounts::for_each_nonzero(counts, &mut |i, c| f(i, u64::from(c)))
            }
            View::Sparse(s) => s.iter().for_each(|&(i, c)| f(i, c)),
        }
    }

    /// The highest counts index holding a count.
    pub fn last(&self) -> Option<usize> {
        match self {
            View::Counts(counts) => counts.len().checked_sub(1),
            View::Sparse(s) => s.last().map(|&(i, _)| i),
        }
    }

    /// An upper bound of the number of non-zero counts.
    fn len(&self) -> usize {
        match self {
            View::Counts(counts) => counts.len(),
            View::Sparse(s) => s.len(),
        }
    }

    /// Whether both hold the same counts, known without walking them apart from a slice
    /// comparison (one thread's window and the merge of every thread's, for instance).
    pub fn same(&self, other: &View<'_>) -> bool {
        match (self, other) {
            (View::Counts(a), View::Counts(b)) => a == b,
            (View::Sparse(a), View::Sparse(b)) => a == b,
            _ => false,
        }
    }

    /// The counts as a [`Sparse`] list.
    pub fn to_sparse(self) -> Sparse {
        let mut s = Sparse::new();
        self.for_each(|i, c| s.push((i, c)));
        s
    }
}

/// Adds every count of `from` to `into` (both ascending).
pub fn merge(into: &mut Sparse, from: View<'_>) {
    if into.is_empty() {
        *into = from.to_sparse();
        return;
    }
    let mut out = Vec::with_capacity(into.len() + from.len());
    let mut rest = into.iter().copied().peekable();
    from.for_each(|i, c| {
        while let Some(&(j, d)) = rest.peek() {
            if j >= i {
                break;
            }
            out.push((j, d));
            rest.next();
        }
        match rest.peek() {
            Some(&(j, d)) if j == i => {
                out.push((i, c + d));
                rest.next();
            }
            _ => out.push((i, c)),
        }
    });
    out.extend(rest);
    *into = out;
}

/// The largest value of `h` as HdrHistogram states it (`max()`: the highest value of the
/// bucket holding the largest value recorded; 0 when empty), ns.
pub fn max(h: View<'_>) -> u64 {
    h.last().map_or(0, counts_highest)
}

/// Appends ZigZag LEB128 (HdrHistogram's 9-byte variant) of `v` to `out`.
#[inline]
fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    for _ in 0..8 {
        if u >> 7 == 0 {
            out.push(u as u8);
            return;
        }
        out.push((u as u8 & 0x7f) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// Appends `h`'s V2 encoding (uncompressed) to `out`.
pub fn v2(h: View<'_>, out: &mut Vec<u8>) {
    // At most a zero run and a count of at most 9 bytes each per count.
    out.reserve(40 + 18 * h.len() + 1);
    let start = out.len();
    out.extend_from_slice(&V2_COOKIE.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // payload length, filled in below
    out.extend_from_slice(&0u32.to_be_bytes()); // normalising index offset
    out.extend_from_slice(&u32::from(SIGNIFICANT_FIGURES).to_be_bytes());
    out.extend_from_slice(&1u64.to_be_bytes()); // lowest discernible value
    out.extend_from_slice(&HIGHEST_TRACKABLE.to_be_bytes());
    out.extend_from_slice(&1.0f64.to_be_bytes()); // integer to double conversion ratio
    let counts = out.len();
    if h.last().is_none() {
        // The counts up to index_of(max = 0): one count, zero.
        put_zigzag(out, 0);
    }
    let mut next = 0;
    h.for_each(|i, c| {
        match i - next {
            0 => {}
            // A single zero count is written as a count, a longer run as minus its length.
            1 => put_zigzag(out, 0),
            run => put_zigzag(out, -(run as i64)),
        }
        put_zigzag(out, c.min(i64::MAX as u64) as i64);
        next = i + 1;
    });
    let len = (out.len() - counts) as u32;
    out[start + 4..start + 8].copy_from_slice(&len.to_be_bytes());
}

/// Appends `h`'s compressed V2 encoding to `out`; `raw` holds the uncompressed bytes
/// (reused between calls).
pub fn v2_compressed(h: View<'_>, raw: &mut Vec<u8>, out: &mut Vec<u8>) {
    raw.clear();
    v2(h, raw);
    let start = out.len();
    out.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    // Writing into a Vec cannot fail.
    if raw.len() <= STORED_UP_TO {
        let mut at = std::io::Cursor::new(&mut *out);
        at.set_position(at.get_ref().len() as u64);
        let _ = fdeflate::StoredOnlyCompressor::new(at)
            .and_then(|mut c| c.write_data(raw).map(|_| c))
            .and_then(|c| c.finish());
    } else {
        let _ = fdeflate::Compressor::new(&mut *out)
            .and_then(|mut c| c.write_data(raw).map(|_| c))
            .and_then(|c| c.finish());
    }
    let len = (out.len() - start - 8) as u32;
    out[start + 4..start + 8].copy_from_slice(&len.to_be_bytes());
}

/// Buffers reused from line to line: the V2 bytes, their compressed form, its base64 text.
#[derive(Debug, Default)]
pub struct Scratch {
    raw: Vec<u8>,
    compressed: Vec<u8>,
    text: String,
}

/// Appends one interval line (see [`line`]) whose counts are those of a line already in
/// `out`, whose base64 text lies at `text` (a range [`line`] returned): that text is copied
/// instead of encoding the counts again (the `all` line of a run with one thread).
pub fn line_again(
    tag: &str,
    times: (u64, u64),
    h: View<'_>,
    text: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) {
    line_head(tag, times, h, out);
    out.extend_from_within(text);
    out.push(b'\n');
}

/// `Tag=<tag>,<start s>,<length s>,<max>,`
fn line_head(tag: &str, (start_ns, length_ns): (u64, u64), h: View<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"Tag=");
    out.extend_from_slice(tag.as_bytes());
    out.push(b',');
    put_seconds(out, start_ns);
    out.push(b',');
    put_seconds(out, length_ns);
    out.push(b',');
    let max = max(h);
    if max < 1 << 53 {
        // An integer below 2^53 is exact as f64: `{:.3}` prints it with ".000".
        let _ = write!(out, "{max}.000,");
    } else {
        let _ = write!(out, "{:.3},", max as f64);
    }
}

/// Appends `ns` as seconds with three decimals, the text `{:.3}` gives for `ns as f64 / 1e9`
/// (what HdrHistogram's log writers print), from integers: formatting an `f64` with a
/// precision takes the exact (slow) path of `core::fmt`, and the times are whole
/// milliseconds. Below 2^53 ns the quotient's rounding error (< 2^-53 relative, under
/// 1 ns) cannot move it across a rounding boundary unless it lies on one (a remainder of
/// exactly 0.5 ms), which is left to `f64` formatting, as are larger times.
fn put_seconds(out: &mut Vec<u8>, ns: u64) {
    let (ms, rest) = (ns / 1_000_000, ns % 1_000_000);
    if ns >= 1 << 53 || rest == 500_000 {
        let _ = write!(out, "{:.3}", ns as f64 / 1e9);
        return;
    }
    let ms = ms + u64::from(rest > 500_000);
    let _ = write!(out, "{}.{:03}", ms / 1000, ms % 1000);
}

/// Appends one interval line: `Tag=<tag>,<start s>,<length s>,<max>,<base64>` and a newline,
/// as the `hdrhistogram` crate's `IntervalLogWriter` and HdrHistogram's
/// `HistogramLogWriter` write it (times with three decimals, the max in ns).
/// Returns where in `out` the base64 text lies (for [`line_again`]).
pub fn line(
    tag: &str,
    times: (u64, u64),
    h: View<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> std::ops::Range<usize> {
    use base64::Engine;
    line_head(tag, times, h, out);
    scratch.compressed.clear();
    v2_compressed(h, &mut scratch.raw, &mut scratch.compressed);
    scratch.text.clear();
    base64::engine::general_purpose::STANDARD.encode_string(&scratch.compressed, &mut scratch.text);
    let at = out.len();
    out.extend_from_slice(scratch.text.as_bytes());
    let text = at..out.len();
    out.push(b'\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
    use hdrhistogram::Histogram;
    use proptest::prelude::*;
    use tickscope_engine::window_histogram::counts_index;

    /// Adds `count` values of magnitude `magnitude` ns to `into`, keeping it ascending.
    fn add(into: &mut Sparse, magnitude: u64, count: u64) {
        let i = counts_index(magnitude);
        match into.last_mut() {
            Some(last) if last.0 == i => last.1 += count,
            Some(last) if last.0 < i => into.push((i, count)),
            None => into.push((i, count)),
            Some(_) => match into.binary_search_by_key(&i, |e| e.0) {
                Ok(k) => into[k].1 += count,
                Err(k) => into.insert(k, (i, count)),
            },
        }
    }

    fn reference(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h =
            Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES).unwrap();
        for &(v, n) in values {
            h.record_n(v.min(HIGHEST_TRACKABLE), n).unwrap();
        }
        h
    }

    fn sparse(values: &[(u64, u64)]) -> Sparse {
        let mut s = Sparse::new();
        for &(v, n) in values {
            if n > 0 {
                add(&mut s, v, n);
            }
        }
        s
    }

    #[test]
    fn seconds_read_as_f64_formatting_writes_them() {
        let cases = [
            0u64,
            1,
            499_999,
            500_000,
            500_001,
            999_999,
            1_000_000,
            1_234_567_890,
            86_400_000_000_000,
            (1 << 53) - 1,
            1 << 53,
            u64::MAX,
        ];
        for ns in cases {
            let mut got = Vec::new();
            put_seconds(&mut got, ns);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                format!("{:.3}", ns as f64 / 1e9),
                "{ns}"
            );
        }
    }

    #[test]
    fn an_empty_histogram_encodes_as_the_crate_does() {
        let mut want = Vec::new();
        V2Serializer::new()
            .serialize(&reference(&[]), &mut want)
            .unwrap();
        let mut got = Vec::new();
        v2(View::Sparse(&Sparse::new()), &mut got);
        assert_eq!(got, want);
        assert_eq!(max(View::Sparse(&Sparse::new())), 0);
    }

    #[test]
    fn a_large_histogram_is_compressed_and_read_back() {
        let values: Vec<(u64, u64)> = (0..2000u64).map(|v| (v, (1 << 40) + v)).collect();
        let (h, s) = (reference(&values), sparse(&values));
        let (mut raw, mut compressed) = (Vec::new(), Vec::new());
        v2_compressed(View::Sparse(&s), &mut raw, &mut compressed);
        assert!(raw.len() > STORED_UP_TO);
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &compressed[..])
            .unwrap();
        assert_eq!(back, h);
    }

    proptest! {
        /// The same bytes as the crate's V2 serializer, and the crate's reader gives back
        /// the same histogram from the compressed form.
        #[test]
        fn the_same_bytes_and_histogram_as_the_crate(
            values in proptest::collection::vec(
                (prop_oneof![0u64..300, 0u64..5_000_000, 0u64..4_000_000_000_000],
                 prop_oneof![1u64..3, 1u64..1_000_000, (1u64 << 40)..(1u64 << 50)]),
                0..200),
        ) {
            let h = reference(&values);
            let s = sparse(&values);
            let mut want = Vec::new();
            V2Serializer::new().serialize(&h, &mut want).unwrap();
            let mut got = Vec::new();
            v2(View::Sparse(&s), &mut got);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(max(View::Sparse(&s)), h.max());

            let (mut raw, mut compressed) = (Vec::new(), Vec::new());
            v2_compressed(View::Sparse(&s), &mut raw, &mut compressed);
            let back: Histogram<u64> =
                Deserializer::new().deserialize(&mut &compressed[..]).unwrap();
            prop_assert_eq!(back, h);
        }

        /// Times printed from integers are those of `f64` formatting.
        #[test]
        fn seconds_as_f64_formatting(ns in prop_oneof![0u64..10_000_000_000, 0u64..(1 << 54)]) {
            let mut got = Vec::new();
            put_seconds(&mut got, ns);
            prop_assert_eq!(String::from_utf8(got).unwrap(), format!("{:.3}", ns as f64 / 1e9));
        }

        #[test]
        fn merging_adds_the_counts(
            a in proptest::collection::vec((0u64..10_000_000, 1u64..100), 0..100),
            b in proptest::collection::vec((0u64..10_000_000, 1u64..100), 0..100),
        ) {
            let mut m = sparse(&a);
            merge(&mut m, View::Sparse(&sparse(&b)));
            let all: Vec<(u64, u64)> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(m, sparse(&all));
        }
    }
}
