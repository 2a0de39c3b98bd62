//! Writes the gate's recorded fixture pairs (`crates/cli/tests/fixtures/gate/`) from the
//! synthetic model ([`tickscope_gate::synthetic`]): interval logs as `tickscope run --hlog`
//! writes them (tag `all`, one-second intervals) and cyclictest `--json` files (µs
//! histograms, no windows).
//!
//! Usage: `gate_fixtures DIR`

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};
use tickscope_gate::synthetic::Model;

fn write_hlog(path: &Path, windows: &[Histogram<u64>]) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let mut b = IntervalLogWriterBuilder::new();
    b.add_comment("tool: tickscope (gate fixture, synthetic model)")
        .with_start_time(UNIX_EPOCH + Duration::from_secs(1_764_000_000));
    let mut w = b
        .begin_log_with(&mut buf, &mut ser)
        .map_err(std::io::Error::other)?;
    let all = Tag::new("all").ok_or_else(|| std::io::Error::other("tag"))?;
    for (s, h) in windows.iter().enumerate() {
        w.write_histogram(
            h,
            Duration::from_secs(s as u64),
            Duration::from_secs(1),
            Some(all),
        )
        .map_err(std::io::Error::other)?;
    }
    drop(w);
    std::fs::write(path, buf)
}

fn write_cyclictest(path: &Path, windows: &[Histogram<u64>]) -> std::io::Result<()> {
    let mut us = std::collections::BTreeMap::<u64, u64>::new();
    let (mut n, mut sum, mut min, mut max) = (0u64, 0.0f64, u64::MAX, 0u64);
    for h in windows {
        for v in h.iter_recorded() {
            let value = h.highest_equivalent(v.value_iterated_to());
            *us.entry(value / 1000).or_default() += v.count_at_value();
            n += v.count_at_value();
            sum += value as f64 / 1000.0 * v.count_at_value() as f64;
            min = min.min(value / 1000);
            max = max.max(value / 1000);
        }
    }
    let histogram: serde_json::Map<String, serde_json::Value> = us
        .iter()
        .map(|(k, c)| (k.to_string(), (*c).into()))
        .collect();
    let doc = serde_json::json!({
        "file_version": 1,
        "cmdline:": "cyclictest (gate fixture, synthetic model) -h 10000",
        "rt_test_version:": "2.40",
        "num_threads": 1,
        "resolution_in_ns": 0,
        "thread": { "0": {
            "histogram": histogram,
            "cycles": n,
            "min": min,
            "max": max,
            "avg": sum / n.max(1) as f64,
            "cpu": 1,
            "node": 0
        }}
    });
    std::fs::write(
        path,
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
    )
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let dir = Path::new(&dir);
    let m = Model {
        windows: 150,
        ..Model::default()
    };
    let scaled = |s: f64| Model {
        stall_scale: s,
        ..m.clone()
    };
    let short = Model {
        windows: 20,
        ..m.clone()
    };
    write_hlog(&dir.join("base.hlog"), &m.histograms(1))?;
    write_hlog(&dir.join("same.hlog"), &m.histograms(2))?;
    write_hlog(&dir.join("base2.hlog"), &m.histograms(3))?;
    write_hlog(&dir.join("tail.hlog"), &scaled(2.0).histograms(4))?;
    let faster = Model {
        body_ns: 4_000.0,
        ..m.clone()
    };
    write_hlog(&dir.join("better.hlog"), &faster.histograms(5))?;
    write_hlog(&dir.join("short.hlog"), &short.histograms(6))?;
    write_cyclictest(&dir.join("base.cyclictest.json"), &m.histograms(1))?;
    write_cyclictest(&dir.join("same.cyclictest.json"), &m.histograms(2))?;
    write_cyclictest(
        &dir.join("tail.cyclictest.json"),
        &scaled(2.0).histograms(4),
    )?;
    Ok(())
}
