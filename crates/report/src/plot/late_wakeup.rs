//! One late wake-up on a time line, from its expiry to the moment the thread ran: the
//! segments of its breakdown (`--explain`; timer slack, interrupt delivery, hrtimer queue,
//! wake → on CPU, kernel exit, return to user, and the residual the trace did not cover) as
//! coloured spans in order, and under them what held the CPU meanwhile — interrupt
//! handlers, softirqs and other threads where they ran ([`Breakdown::marks`]); for results
//! written before marks were recorded, each segment's net contents in the order of their
//! size. The categories
//! follow rtla's timerlat auto-analysis (Daniel Bristot de Oliveira, `timerlat_aa.c`,
//! Linux `tools/tracing/rtla`, 2023).

use super::axis::{number, Axis, Scale};
use super::{color, frame, legend, Chart};
use plotters::coord::Shift;
use plotters::prelude::*;
use tickscope_engine::time::Nanos;
use tickscope_explain::Breakdown;

/// The segments' names, in order ([`tickscope_explain::attribution::SEGMENTS`]), then the
/// residual.
pub const NAMES: [&str; 7] = [
    "timer slack",
    "interrupt delivery",
    "hrtimer queue",
    "wake → on CPU",
    "kernel exit",
    "return to user",
    "residual (not traced)",
];

/// Kinds of segment detail that no trace event marks (no IRQ, softirq or thread ran):
/// drawn from the segment's details even when the breakdown has marks.
const QUIET: [&str; 3] = ["hypervisor", "exit_from_idle", "idle"];

/// One span of the chart: from `start` to `end` ns after the expiry, on `row` (1: the
/// segments, 0: what filled them), coloured as segment `segment`.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Start, ns after the expiry.
    pub start: Nanos,
    /// End, ns after the expiry.
    pub end: Nanos,
    /// 1 for a segment, 0 for what filled it.
    pub row: u8,
    /// Index into [`NAMES`].
    pub segment: usize,
    /// What the span is (`irq: virtio1-req.0`, or the segment's name).
    pub label: String,
}

/// The chart of one breakdown.
#[derive(Debug, Clone, PartialEq)]
pub struct LateWakeupChart {
    title: String,
    latency: Nanos,
    spans: Vec<Span>,
}

impl LateWakeupChart {
    /// The chart of `b`; `None` for a wake-up that was not late (latency ≤ 0). Where the
    /// breakdown places its segments and what ran on the CPU in time
    /// ([`Breakdown::spans`], [`Breakdown::marks`]) they are drawn where they happened;
    /// otherwise (documents written before) the segments are laid end to end and what
    /// filled each is packed into it, largest first.
    pub fn new(title: String, b: &Breakdown) -> Option<Self> {
        if b.latency_ns <= 0 {
            return None;
        }
        if !b.spans.is_empty() {
            return Some(Self::placed(title, b));
        }
        let mut spans = Vec::new();
        let mut at = 0;
        let lengths = b.segments.iter().map(|s| s.ns).chain([b.residual_ns]);
        for (k, ns) in lengths.enumerate() {
            if ns <= 0 {
                continue;
            }
            spans.push(Span {
                start: at,
                end: at + ns,
                row: 1,
                segment: k,
                label: NAMES[k].to_string(),
            });
            let details = b
                .segments
                .get(k)
                .map(|s| s.details.as_slice())
                .unwrap_or(&[]);
            spans.extend(pack(details.iter(), k, at, at + ns));
            at += ns;
        }
        Some(LateWakeupChart {
            title,
            latency: b.latency_ns,
            spans,
        })
    }

    /// The chart from the breakdown's own placement: its spans (segments and residual)
    /// on the top row, its marks (IRQs, softirqs, other threads) on the bottom row, each
    /// coloured as the segment it falls in.
    fn placed(title: String, b: &Breakdown) -> Self {
        let index = |id: &str| {
            tickscope_explain::attribution::SEGMENTS
                .iter()
                .position(|s| *s == id)
                .unwrap_or(NAMES.len() - 1)
        };
        let mut spans: Vec<Span> = b
            .spans
            .iter()
            .map(|s| Span {
                start: s.from_ns,
                end: s.to_ns,
                row: 1,
                segment: index(&s.id),
                label: NAMES[index(&s.id)].to_string(),
            })
            .collect();
        let segment_at = |t: Nanos| {
            b.spans
                .iter()
                .find(|s| s.from_ns <= t && t < s.to_ns)
                .map_or(NAMES.len() - 1, |s| index(&s.id))
        };
        // Time no event marks: the hypervisor or idle share of a segment, packed at its start.
        for placed in &b.spans {
            let k = index(&placed.id);
            let details = b
                .segments
                .get(k)
                .map(|s| s.details.as_slice())
                .unwrap_or(&[]);
            let quiet = details.iter().filter(|d| QUIET.contains(&d.kind.as_str()));
            spans.extend(pack(quiet, k, placed.from_ns, placed.to_ns));
        }
        spans.extend(
            b.marks
                .iter()
                .filter(|m| m.to_ns > m.from_ns)
                .map(|m| Span {
                    start: m.from_ns,
                    end: m.to_ns,
                    row: 0,
                    segment: segment_at(m.from_ns),
                    label: format!("{}: {}", m.kind, m.name),
                }),
        );
        LateWakeupChart {
            title,
            latency: b.latency_ns,
            spans,
        }
    }

    /// The spans, segments first in time order, each followed by what filled it.
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        "The worst explained wake-up, from its expiry (0) to the moment its thread ran: top row \
         the segments of the delay, bottom row what held the CPU meanwhile (interrupts, \
         softirqs, other threads, where they ran; in results written before positions were \
         recorded, each segment's net contents packed largest first); the residual is the part \
         no traced event covered."
            .into()
    }
}

/// `details` of segment `segment` laid end to end from `from`, cut at `to` (net times have
/// no position of their own).
fn pack<'a>(
    details: impl Iterator<Item = &'a tickscope_explain::attribution::Detail>,
    segment: usize,
    from: Nanos,
    to: Nanos,
) -> Vec<Span> {
    let mut at = from;
    let mut out = Vec::new();
    for d in details {
        let end = (at + d.ns).min(to);
        if end > at {
            out.push(Span {
                start: at,
                end,
                row: 0,
                segment,
                label: format!("{}: {}", d.kind.replace('_', " "), d.name),
            });
        }
        at = end;
    }
    out
}

/// The row labels of the y axis.
fn row_label(v: f64) -> String {
    match (v * 2.0).round() as i64 {
        1 => "on the CPU".into(),
        3 => "segments".into(),
        _ => String::new(),
    }
}

impl Chart for LateWakeupChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let us = |ns: Nanos| ns as f64 / 1e3;
        let x = Axis {
            scale: Scale::Linear,
            lo: 0.0,
            hi: us(self.latency),
            desc: "time since the expiry [µs]".into(),
            format: number,
        };
        let y = Axis {
            scale: Scale::Linear,
            lo: 0.0,
            hi: 2.8, // room above the rows for the legend
            desc: String::new(),
            format: row_label,
        };
        let mut chart = frame(root, &self.title, &x, &y)?;
        let fill = |k: usize, row: u8| {
            let c = color(k);
            if row == 1 {
                c.filled()
            } else {
                c.mix(0.55).filled()
            }
        };
        let mut seen = [false; NAMES.len()];
        for s in &self.spans {
            let (y0, y1) = if s.row == 1 { (1.1, 1.9) } else { (0.1, 0.9) };
            let rect = Rectangle::new([(us(s.start), y0), (us(s.end), y1)], fill(s.segment, s.row));
            let series = chart.draw_series(std::iter::once(rect)).map_err(err)?;
            if s.row == 1 && !seen[s.segment] {
                seen[s.segment] = true;
                let style = fill(s.segment, 1);
                series.label(NAMES[s.segment]).legend(move |(px, py)| {
                    Rectangle::new([(px, py - 6), (px + 18, py + 6)], style)
                });
            }
            // Name the span where it is wide enough to hold the text.
            if (s.end - s.start) as f64 >= 0.12 * self.latency as f64 {
                let text = Text::new(
                    s.label.clone(),
                    (
                        us(s.start) + 0.01 * us(self.latency),
                        (y0 + y1) / 2.0 + 0.08,
                    ),
                    (super::font::FAMILY, 16).into_font().color(&BLACK),
                );
                chart.draw_series(std::iter::once(text)).map_err(err)?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_explain::attribution::{Detail, Segment, SEGMENTS};
    use tickscope_explain::{Cause, LateSample};

    fn breakdown() -> Breakdown {
        let seg = |k: usize, ns: Nanos, details: Vec<Detail>| Segment {
            id: SEGMENTS[k].into(),
            ns,
            details,
        };
        let detail = |kind: &str, name: &str, ns| Detail {
            kind: kind.into(),
            name: name.into(),
            pid: None,
            ns,
        };
        Breakdown {
            sample: LateSample {
                thread: 0,
                tid: 1,
                seq: 7,
                expiry: 1_000_000,
                woke: 3_100_000,
            },
            cpu: Some(1),
            latency_ns: 2_100_000,
            segments: vec![
                seg(0, 0, vec![]),
                seg(1, 5_000, vec![]),
                seg(2, 1_000, vec![]),
                seg(
                    3,
                    2_050_000,
                    vec![
                        detail("blocking_thread", "spin99", 2_000_000),
                        detail("irq", "virtio3-tx", 30_000),
                    ],
                ),
                seg(4, 20_000, vec![]),
                seg(5, 4_000, vec![]),
            ],
            residual_ns: 20_000,
            cause: Cause {
                category: "other thread".into(),
                detail: Some("spin99".into()),
            },
            flags: vec![],
            spans: vec![],
            marks: vec![],
            steal_ns: None,
        }
    }

    #[test]
    fn segments_in_order_sum_to_the_latency_and_details_stay_inside() {
        let c = LateWakeupChart::new("t".into(), &breakdown()).unwrap();
        let segs: Vec<&Span> = c.spans().iter().filter(|s| s.row == 1).collect();
        assert_eq!(segs.len(), 6, "the empty timer-slack segment is left out");
        assert_eq!(segs[0].start, 0);
        assert!(
            segs.windows(2).all(|w| w[0].end == w[1].start),
            "contiguous, in order"
        );
        assert_eq!(
            segs.last().unwrap().end,
            2_100_000,
            "they sum to the latency"
        );
        assert_eq!(segs.last().unwrap().label, "residual (not traced)");
        let wake = segs.iter().find(|s| s.segment == 3).unwrap();
        let inside: Vec<&Span> = c.spans().iter().filter(|s| s.row == 0).collect();
        assert_eq!(inside.len(), 2);
        assert!(inside
            .iter()
            .all(|d| d.start >= wake.start && d.end <= wake.end));
        assert_eq!(inside[0].label, "blocking thread: spin99");
        let svg = super::super::draw::svg_of(&c);
        assert!(svg.contains("spin99") && svg.contains("wake → on CPU"));
    }

    /// With the breakdown's own placement, spans and marks are drawn where they happened.
    #[test]
    fn placed_spans_and_marks_keep_their_times() {
        use tickscope_explain::attribution::{Mark, Span as Placed};
        let mut b = breakdown();
        let span = |id: &str, from, to| Placed {
            id: id.into(),
            from_ns: from,
            to_ns: to,
        };
        b.spans = vec![
            span("interrupt_delivery", 0, 5_000),
            span("hrtimer_queue", 5_000, 6_000),
            span("residual", 6_000, 26_000),
            span("wake_to_cpu", 26_000, 2_076_000),
            span("kernel_exit", 2_076_000, 2_096_000),
            span("return_to_user", 2_096_000, 2_100_000),
        ];
        b.marks = vec![Mark {
            kind: "thread".into(),
            name: "spin99".into(),
            pid: Some(7),
            from_ns: 40_000,
            to_ns: 2_040_000,
        }];
        let c = LateWakeupChart::new("t".into(), &b).unwrap();
        let top: Vec<&Span> = c.spans().iter().filter(|s| s.row == 1).collect();
        assert_eq!(top.len(), 6);
        assert_eq!(
            top[2].label, "residual (not traced)",
            "the residual where it was"
        );
        let mark = c.spans().iter().find(|s| s.row == 0).unwrap();
        assert_eq!((mark.start, mark.end), (40_000, 2_040_000));
        assert_eq!(mark.segment, 3, "coloured as the segment it ran in");
        assert_eq!(mark.label, "thread: spin99");
    }
}
