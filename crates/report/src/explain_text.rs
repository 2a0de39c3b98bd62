//! `--explain` as text: the causes summary line, a cause table, one breakdown.

use crate::units::ns_i as format_ns_i;
use tickscope_explain::section::ExplainSection;
use tickscope_explain::table::CauseTable;
use tickscope_explain::Breakdown;

/// Human names of the segments, in order.
const SEGMENT_NAMES: [&str; 6] = [
    "S0 timer slack",
    "S1 timer interrupt delivery",
    "S2 hrtimer queue",
    "S3 wake → on CPU",
    "S4 kernel exit",
    "S5 return to user + read",
];

/// "causes of wake-ups > 100 µs (557): hypervisor 537 · other thread 12 · kernel path 8".
pub fn summary_line(label: &str, table: &CauseTable) -> String {
    let parts: Vec<String> = table
        .ranked()
        .iter()
        .map(|(k, r)| match r.details.iter().max_by_key(|(_, n)| **n) {
            Some((d, _)) if *k == "other thread" || *k == "cpu busy" => {
                format!("{k} {} (mostly {d})", r.count)
            }
            _ => format!("{k} {}", r.count),
        })
        .collect();
    format!(
        "causes of wake-ups > {label} ({}): {}",
        table.total(),
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" · ")
        }
    )
}

/// A cause table: count, total, max per cause.
pub fn cause_table(table: &CauseTable) -> String {
    let mut out = format!(
        "  {:<22} {:>7} {:>12} {:>12}",
        "cause", "count", "total", "max"
    );
    for (k, r) in table.ranked() {
        out.push_str(&format!(
            "\n  {:<22} {:>7} {:>12} {:>12}",
            k,
            r.count,
            format_ns_i(r.total_ns),
            format_ns_i(r.max_ns)
        ));
    }
    out
}

/// One breakdown, a header line then one line per segment with its largest details.
pub fn breakdown(b: &Breakdown) -> String {
    let cpu = b.cpu.map(|c| format!(" cpu{c}")).unwrap_or_default();
    let mut out = format!(
        "late wake-up #{}  T{}{cpu}  +{}  cause: {}",
        b.sample.seq,
        b.sample.thread,
        format_ns_i(b.latency_ns),
        b.cause
    );
    let pct = |ns: i64| match b.latency_ns {
        0 => 0.0,
        l => 100.0 * ns as f64 / l as f64,
    };
    for (name, s) in SEGMENT_NAMES.iter().zip(&b.segments) {
        let details: Vec<String> = s
            .details
            .iter()
            .take(3)
            .map(|d| {
                let who = match d.pid {
                    Some(p) if p > 0 => format!("{} [{p}]", d.name),
                    _ => d.name.clone(),
                };
                format!("{}: {who} {}", d.kind.replace('_', " "), format_ns_i(d.ns))
            })
            .collect();
        out.push_str(&format!(
            "\n  {name:<28} {:>10} {:>5.1} %  {}",
            format_ns_i(s.ns),
            pct(s.ns),
            details.join("; ")
        ));
    }
    out.push_str(&format!(
        "\n  {:<28} {:>10} {:>5.1} %  {}",
        "residual",
        format_ns_i(b.residual_ns),
        pct(b.residual_ns),
        if b.flags.is_empty() {
            String::new()
        } else {
            format!("flags: {}", b.flags.join(", "))
        }
    ));
    out
}

/// The paired observer effect in one line: median of (traced run − the next untraced run of
/// its method) for p50, p99 and max, µs, each with its 95 % interval where there are 6 pairs or
/// more.
fn paired_line(p: &tickscope_explain::section::PairedEffect) -> String {
    let one = |m: &tickscope_explain::section::MedianInterval| {
        let mut s = format!("{:+.2} µs", m.median_ns / 1e3);
        if let (Some(lo), Some(hi)) = (m.low_ns, m.high_ns) {
            s.push_str(&format!(" ({:+.2} … {:+.2})", lo / 1e3, hi / 1e3));
        }
        s
    };
    format!(
        "observer effect, paired (traced run − the next untraced run of its method, {} pairs; median, 95 % interval): p50 {} · p99 {} · max {}",
        p.pairs,
        one(&p.p50),
        one(&p.p99),
        one(&p.max)
    )
}

/// The observer cost of tracing in one line: backend (and why a fallback), events per
/// second written in the kernel, events lost, windows sent, the collector's CPU share, and the
/// CPU time loading the BPF programs took once (when it was measured).
pub fn cost_line(c: &tickscope_explain::section::TracingCost) -> String {
    let mut s = format!(
        "tracing cost ({}): {:.0} events/s in the kernel · {} lost",
        c.backend, c.events_per_s, c.events_lost
    );
    if c.backend == "bpf" {
        s.push_str(&format!(" · {} windows sent", c.windows));
    }
    s.push_str(&format!(" · reading {:.2} % of a CPU", c.read_cpu_percent));
    if c.load_cpu_ns > 0 {
        s.push_str(&format!(
            " · loading {:.0} ms of CPU once",
            c.load_cpu_ns as f64 / 1e6
        ));
    }
    if !c.fallback.is_empty() {
        s.push_str(&format!(" (fallback: {})", c.fallback));
    }
    s
}

/// Everything `--explain` prints after the summary.
pub fn report(section: &ExplainSection, worst: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut all = CauseTable::default();
    for t in &section.threads {
        all.merge(&t.causes);
    }
    lines.push(format!("\nexplain ({}): {}", section.backend, section.note));
    lines.push(summary_line(&section.threshold, &all));
    if section.threads.len() > 1 {
        for t in &section.threads {
            lines.push(format!(
                "  T{}: {}",
                t.thread,
                summary_line(&section.threshold, &t.causes)
            ));
        }
    }
    if all.total() > 0 {
        lines.push(cause_table(&all));
    }
    for b in section.breakdowns.iter().take(worst) {
        lines.push(breakdown(b));
    }
    if let Some(o) = &section.observer {
        lines.push(format!(
            "observer effect (traced − untraced, {} and {} runs): p50 {:+.1} µs · p99 {:+.1} µs · max {:+.1} µs{}",
            o.traced_runs,
            o.untraced_runs,
            o.p50_delta_ns / 1e3,
            o.p99_delta_ns / 1e3,
            o.max_delta_ns / 1e3,
            section
                .events_per_s
                .map(|e| format!(" · {e:.0} events/s traced"))
                .unwrap_or_default()
        ));
        if let Some(p) = &o.paired {
            lines.push(paired_line(p));
        }
    }
    if let Some(c) = &section.cost {
        lines.push(cost_line(c));
    }
    // Every hit is in the document; the terminal gets the first few.
    const HITS_SHOWN: usize = 20;
    for c in section.captures.iter().take(HITS_SHOWN) {
        if !c.path.is_empty() {
            lines.push(format!(
                "capture {} (+{}, {}) written to {}",
                c.index,
                format_ns_i(c.latency_ns),
                c.cause,
                crate::quoted(std::path::Path::new(&c.path))
            ));
            continue;
        }
        let actions: Vec<String> = c
            .actions
            .iter()
            .map(|a| format!("{} {}", a.name, a.status))
            .collect();
        lines.push(format!(
            "on-late hit {} (+{}, {}): {}",
            c.index,
            format_ns_i(c.latency_ns),
            c.cause,
            actions.join(", ")
        ));
    }
    let more = section.captures.len().saturating_sub(HITS_SHOWN) as u64 + section.hits_not_kept;
    if more > 0 {
        lines.push(format!(
            "… and {more} more on-late hits (the first 1000 in the result document's \
             explain.captures)"
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_explain::section::TracingCost;

    #[test]
    fn the_paired_line_gives_medians_and_intervals_where_there_are_enough_pairs() {
        use tickscope_explain::section::{MedianInterval, PairedEffect};
        let m = |median_ns: f64, iv: Option<(f64, f64)>| MedianInterval {
            median_ns,
            low_ns: iv.map(|v| v.0),
            high_ns: iv.map(|v| v.1),
        };
        let line = paired_line(&PairedEffect {
            pairs: 80,
            p50: m(2690.0, Some((1920.0, 3330.0))),
            p99: m(-260.0, Some((-900.0, 10750.0))),
            max: m(41400.0, None),
        });
        assert_eq!(
            line,
            "observer effect, paired (traced run − the next untraced run of its method, 80 pairs; \
             median, 95 % interval): p50 +2.69 µs (+1.92 … +3.33) · p99 -0.26 µs (-0.90 … +10.75) · \
             max +41.40 µs"
        );
    }

    #[test]
    fn the_cost_line_names_backend_rate_loss_and_fallback() {
        let mut c = TracingCost {
            backend: "bpf".into(),
            events_per_s: 19_000.4,
            events_lost: 0,
            windows: 3,
            read_cpu_ns: 1,
            read_cpu_percent: 0.126,
            ..Default::default()
        };
        assert_eq!(
            cost_line(&c),
            "tracing cost (bpf): 19000 events/s in the kernel · 0 lost · 3 windows sent · reading 0.13 % of a CPU"
        );
        c.load_cpu_ns = 61_400_000;
        assert!(cost_line(&c).ends_with(" · loading 61 ms of CPU once"));
        c.backend = "tracefs".into();
        c.fallback = "BPF backend: no BTF".into();
        assert!(cost_line(&c).ends_with("(fallback: BPF backend: no BTF)"));
        assert!(!cost_line(&c).contains("windows"));
    }
}
