//! jitterdebugger's JSON results (`results.json` in its `-o DIR`, or its JSON on stdout).
//!
//! Shape (jitterdebugger 0.3, `jitterdebugger.c`, `dump_stats`):
//! `{"version": 3, "sysinfo": {"release": …, "cpus_online": N, "resolution_in_ns": 1000|1},
//! "cpu": {"0": {"histogram": {"<µs>": count}, "count", "min", "max", "avg"}}}`.
//!
//! Values are in units of `resolution_in_ns` (1000: whole µs, the default; 1 with `-N`);
//! files without it (older versions) are µs. The histogram holds values below its size;
//! samples beyond show as `count` minus the histogram's total.
//! jitterdebugger sleeps with absolute `clock_nanosleep` (tickscope's `nanosleep-abs`).
//! It does not record its command line, so policy, priority and interval are
//! unknown here.

use super::{text, tool_measurement, tool_threads, Importer, Measurement, Setting, SourceFormat};
use serde_json::Value;
use std::collections::BTreeMap;

/// Reads jitterdebugger JSON.
#[derive(Debug, Clone, Copy)]
pub struct JitterdebuggerImporter;

impl Importer for JitterdebuggerImporter {
    fn format(&self) -> SourceFormat {
        SourceFormat::Jitterdebugger
    }

    fn recognizes(&self, json: &Value) -> bool {
        json.get("cpu").is_some()
    }

    fn import(&self, json: Value, stem: &str) -> Result<Vec<Measurement>, String> {
        let cpus = json
            .get("cpu")
            .and_then(Value::as_object)
            .ok_or("'cpu' is not an object")?;
        let unit_ns = json
            .pointer("/sysinfo/resolution_in_ns")
            .and_then(Value::as_i64)
            .unwrap_or(1000);
        if unit_ns != 1 && unit_ns != 1000 {
            return Err(format!(
                "resolution_in_ns is {unit_ns}; only 1000 (µs) and 1 (ns) are known"
            ));
        }
        let parsed = tool_threads(cpus, "cpu", "count", unit_ns)?;
        let mut settings = BTreeMap::new();
        settings.insert(
            Setting::Tool,
            match json.get("version").and_then(Value::as_u64) {
                Some(v) => format!("jitterdebugger (JSON v{v})"),
                None => "jitterdebugger".into(),
            },
        );
        if let Some(k) = text(&json, "/sysinfo/release") {
            settings.insert(Setting::Kernel, k);
        }
        settings.insert(Setting::Method, "nanosleep-abs".into());
        Ok(vec![tool_measurement(
            SourceFormat::Jitterdebugger,
            stem,
            &parsed,
            (unit_ns, None),
            settings,
        )])
    }
}
