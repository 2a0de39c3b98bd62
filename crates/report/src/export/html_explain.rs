//! The "Why was it late?" section of the HTML report (`--explain`): the causes of the late
//! wake-ups (one line per thread and a table over all threads: count, total, max per
//! cause) and the worst breakdown, segment by segment; its time line is the
//! [`crate::plot::late_wakeup`] plot among the report's plots.

use super::html_escape::escape;
use crate::explain_text::summary_line;
use crate::units::ns_i;
use std::fmt::Write as _;
use tickscope_explain::section::ExplainSection;
use tickscope_explain::table::CauseTable;

/// The segments' names in the order of the breakdown, then the residual.
const SEGMENTS: [&str; 6] = [
    "S0 timer slack",
    "S1 timer interrupt delivery",
    "S2 hrtimer queue",
    "S3 wake → on CPU",
    "S4 kernel exit",
    "S5 return to user + clock read",
];

/// The section's HTML.
pub fn section(e: &ExplainSection) -> String {
    let mut out = String::from("<h2>Why was it late? (--explain)</h2>\n");
    let resolution = e
        .timestamp_resolution_ns
        .map(|r| format!("; event timestamps to {}", ns_i(r)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p>{} ({}{resolution}; {} events read, {} lost).</p>",
        escape(&e.note),
        escape(&e.backend),
        e.events_read,
        e.events_lost
    );
    let mut all = CauseTable::default();
    for t in &e.threads {
        all.merge(&t.causes);
        let _ = writeln!(
            out,
            "<p>T{} (tid {}): {}</p>",
            t.thread,
            t.tid,
            escape(&summary_line(&e.threshold, &t.causes))
        );
    }
    if all.total() > 0 {
        out += "<table>\n<tr><th>cause</th><th>count</th><th>total</th><th>max</th><th>mostly</th></tr>\n";
        for (cause, row) in all.ranked() {
            let mostly = row
                .details
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(d, n)| format!("{d} ({n})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(cause),
                row.count,
                ns_i(row.total_ns),
                ns_i(row.max_ns),
                escape(&mostly)
            );
        }
        out += "</table>\n";
    }
    if let Some(b) = e.breakdowns.first() {
        let cpu = b.cpu.map(|c| format!(", CPU {c}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>The worst explained wake-up: T{} wake-up #{}{cpu}, {} late; cause: {}{}.</p>",
            b.sample.thread,
            b.sample.seq,
            ns_i(b.latency_ns),
            escape(&b.cause.to_string()),
            if b.flags.is_empty() {
                String::new()
            } else {
                format!(" (flags: {})", escape(&b.flags.join(", ")))
            }
        );
        out += "<table>\n<tr><th>segment</th><th>length</th><th>share</th><th>what filled it</th></tr>\n";
        let pct = |ns: i64| 100.0 * ns as f64 / b.latency_ns.max(1) as f64;
        let rows = SEGMENTS
            .iter()
            .zip(&b.segments)
            .map(|(name, s)| {
                let details: Vec<String> = s
                    .details
                    .iter()
                    .map(|d| format!("{} {} {}", d.kind.replace('_', " "), d.name, ns_i(d.ns)))
                    .collect();
                (*name, s.ns, details.join("; "))
            })
            .chain([("residual (no traced event)", b.residual_ns, String::new())]);
        for (name, ns, details) in rows {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{:.1} %</td><td>{}</td></tr>",
                escape(name),
                ns_i(ns),
                pct(ns),
                escape(&details)
            );
        }
        out += "</table>\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_and_the_worst_breakdown_are_tables() {
        let e: ExplainSection = serde_json::from_value(serde_json::json!({
            "backend": "tracefs",
            "note": "trace instance tickscope-1 <private>",
            "threshold": "100 µs",
            "timestamp_resolution_ns": 1000,
            "events_read": 5000,
            "events_lost": 0,
            "threads": [{"thread": 0, "tid": 42, "late": 3, "causes": {
                "hypervisor": {"count": 2, "total_ns": 900000, "max_ns": 600000},
                "other thread": {"count": 1, "total_ns": 2000000, "max_ns": 2000000,
                                 "details": {"spin99": 1}}}}],
            "breakdowns": [{
                "sample": {"thread": 0, "tid": 42, "seq": 9, "expiry": 0, "woke": 2000000},
                "cpu": 1, "latency_ns": 2000000,
                "segments": [
                    {"id": "timer_slack", "ns": 0},
                    {"id": "interrupt_delivery", "ns": 5000},
                    {"id": "hrtimer_queue", "ns": 0},
                    {"id": "wake_to_cpu", "ns": 1990000, "details": [
                        {"kind": "blocking_thread", "name": "spin99", "pid": 7, "ns": 1980000}]},
                    {"id": "kernel_exit", "ns": 3000},
                    {"id": "return_to_user", "ns": 2000}],
                "residual_ns": 0,
                "cause": {"category": "other thread", "detail": "spin99"}}]
        }))
        .unwrap();
        let html = section(&e);
        assert!(html.contains("<h2>Why was it late? (--explain)</h2>"));
        assert!(html.contains("event timestamps to 1.00 µs"), "{html}");
        assert!(html.contains("<td>other thread</td><td>1</td>"));
        assert!(html.contains("spin99 (1)"));
        assert!(html.contains("wake-up #9, CPU 1, 2.00 ms late; cause: other thread (spin99)"));
        assert!(html.contains("blocking thread spin99 1.98 ms"));
        assert_eq!(
            html.matches("<tr><td>").count(),
            2 + 7,
            "2 causes, 6 segments + residual"
        );
        assert!(!html.contains("<private>"), "text is escaped");
    }
}
