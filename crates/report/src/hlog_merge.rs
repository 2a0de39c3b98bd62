//! Merging HdrHistogram interval logs — a fleet's hosts or a run's pieces — into one log
//! whose intervals are the sums of the inputs' intervals with the same start and tag.
//!
//! Adding histograms is exact, unlike averaging percentiles (HdrHistogram's interval-log
//! rationale: "correctly calculate the 99.99th percentile for the entire hour",
//! <https://docs.rs/hdrhistogram/7.5.4/hdrhistogram/serialization/index.html>). Intervals are
//! matched by their start rounded to the millisecond (the log format's resolution) and their tag.

use crate::import::hlog::{add_into, Head, Reader};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::io::BufRead;

/// One interval of the merged log.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Start, seconds since the Unix epoch (as [`Head::start`]).
    pub start: f64,
    /// Length, seconds: the longest of the intervals added.
    pub length: f64,
    /// The sum of the intervals' histograms; `None` when none was decoded.
    pub histogram: Option<Histogram<u64>>,
}

/// Why a merge stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError<E> {
    /// Input `index` (into the caller's list) could not be read as an interval log, or its
    /// histograms cannot be added: one sentence.
    Read {
        /// Which input, as the caller numbered them.
        index: usize,
        /// What went wrong.
        message: String,
    },
    /// The caller's `open` or `emit` failed: its error, as given.
    Caller(E),
}

/// The key intervals are merged by: start in ms since the epoch, tag.
type Key = (i64, String);

fn key(start: f64, tag: String) -> Key {
    ((start * 1000.0).round() as i64, tag)
}

fn read<E>(index: usize) -> impl Fn(String) -> MergeError<E> {
    move |message| MergeError::Read { index, message }
}

/// Adds an interval read from input `index` to `pending`.
fn add<E>(
    pending: &mut BTreeMap<Key, Merged>,
    head: Head,
    h: &Histogram<u64>,
    index: usize,
) -> Result<(), MergeError<E>> {
    let line = head.line;
    let m = pending.entry(key(head.start, head.tag)).or_insert(Merged {
        start: head.start,
        length: head.length,
        histogram: None,
    });
    m.length = m.length.max(head.length);
    add_into(&mut m.histogram, h).map_err(|e| read(index)(format!("line {line}: {e}")))
}

/// The earliest interval start over all inputs (seconds since the epoch; `None` when no
/// input holds an interval), and whether every input is in time order (as every
/// HdrHistogram writer writes) — one pass that decodes no histogram.
///
/// # Errors
/// [`MergeError::Caller`] as `open` fails; [`MergeError::Read`] for an input that is not an
/// interval log.
pub fn survey<R: BufRead, E>(
    inputs: usize,
    open: &mut dyn FnMut(usize) -> Result<Reader<R>, E>,
) -> Result<(Option<f64>, bool), MergeError<E>> {
    let mut origin: Option<f64> = None;
    let mut ordered = true;
    for i in 0..inputs {
        let mut reader = open(i).map_err(MergeError::Caller)?;
        let mut last = f64::NEG_INFINITY;
        while let Some(h) = reader.next_head().map_err(read(i))? {
            ordered &= h.start >= last;
            last = last.max(h.start);
            origin = Some(origin.map_or(h.start, |o| o.min(h.start)));
        }
    }
    Ok((origin, ordered))
}

/// Merges `inputs` logs (opened by `open(0..inputs)`), handing each merged interval to
/// `emit` with its tag in start order, and returns how many were emitted.
///
/// With `ordered` (every log in time order, see [`survey`]) the logs are merged as they
/// stream: always the one whose next interval starts first is read, and an interval is
/// emitted as soon as no log can add to it any more (memory: the intervals of one start,
/// tags × logs). Otherwise every interval is held until all logs are read.
/// `done(index, reader)` is called when a log has been read to its end (e.g. to report its
/// warnings).
///
/// # Errors
/// [`MergeError::Read`] for a log that cannot be read or whose histograms cannot be added
/// (the line named); [`MergeError::Caller`] as `open` or `emit` fails.
pub fn merge<R: BufRead, E>(
    inputs: usize,
    ordered: bool,
    open: &mut dyn FnMut(usize) -> Result<Reader<R>, E>,
    done: &mut dyn FnMut(usize, &Reader<R>),
    emit: &mut dyn FnMut(&str, &Merged) -> Result<(), E>,
) -> Result<u64, MergeError<E>> {
    if !ordered {
        let mut merged: BTreeMap<Key, Merged> = BTreeMap::new();
        for i in 0..inputs {
            let mut reader = open(i).map_err(MergeError::Caller)?;
            while let Some(head) = reader.next_head().map_err(read(i))? {
                let h = reader.histogram().map_err(read(i))?;
                add(&mut merged, head, &h, i)?;
            }
            done(i, &reader);
        }
        let written = merged.len() as u64;
        for ((_, tag), m) in merged {
            emit(&tag, &m).map_err(MergeError::Caller)?;
        }
        return Ok(written);
    }
    let mut sources = Vec::with_capacity(inputs);
    for i in 0..inputs {
        let mut reader = open(i).map_err(MergeError::Caller)?;
        let next = reader.next_head().map_err(read(i))?;
        sources.push((reader, next));
    }
    let mut pending: BTreeMap<Key, Merged> = BTreeMap::new();
    let mut written = 0;
    loop {
        let first = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.1.as_ref().map(|h| (i, h.start)))
            .min_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((i, _)) = first {
            let (reader, next) = &mut sources[i];
            if let Some(head) = next.take() {
                let h = reader.histogram().map_err(read(i))?;
                add(&mut pending, head, &h, i)?;
            }
            *next = reader.next_head().map_err(read(i))?;
            if next.is_none() {
                done(i, reader);
            }
        }
        let horizon = sources
            .iter()
            .filter_map(|s| s.1.as_ref())
            .map(|h| key(h.start, String::new()).0)
            .min();
        while let Some(e) = pending.first_entry() {
            if horizon.is_some_and(|t| e.key().0 >= t) {
                break;
            }
            let ((_, tag), m) = e.remove_entry();
            emit(&tag, &m).map_err(MergeError::Caller)?;
            written += 1;
        }
        if first.is_none() {
            return Ok(written);
        }
    }
}
