//! One late wake-up on a time line, from its expiry to the moment the thread ran: the
//! segments of its breakdown (`--explain`; timer slack, interrupt delivery, hrtimer queue,
//! wake → on CPU, kernel exit, return to user, and the residual the trace did not cover) as
//! coloured spans in order, and under them what filled each segment — the interrupt
//! handlers, softirqs, other threads, idle or hypervisor time the attribution found, in
//! the order of their size (the breakdown keeps net times, not positions). The categories
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
    /// The chart of `b`; `None` for a wake-up that was not late (latency ≤ 0).
    pub fn new(title: String, b: &Breakdown) -> Option<Self> {
        if b.latency_ns <= 0 {
            return None;
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
            let mut inner = at;
            for d in b
                .segments
                .get(k)
                .map(|s| s.details.as_slice())
                .unwrap_or(&[])
            {
                let end = (inner + d.ns).min(at + ns);
                if end > inner {
                    spans.push(Span {
                        start: inner,
                        end,
                        row: 0,
                        segment: k,
                        label: format!("{}: {}", d.kind.replace('_', " "), d.name),
                    });
                }
                inner = end;
            }
            at += ns;
        }
        Some(LateWakeupChart {
            title,
            latency: b.latency_ns,
            spans,
        })
    }

    /// The spans, segments first in time order, each followed by what filled it.
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        "The worst explained wake-up, from its expiry (0) to the moment its thread ran: top row \
         the segments of the delay in order, bottom row what filled each one (net time of \
         interrupts, softirqs, other threads, idle or hypervisor), largest first; the \
         residual is the part no traced event covered."
            .into()
    }
}

/// The row labels of the y axis.
fn row_label(v: f64) -> String {
    match (v * 2.0).round() as i64 {
        1 => "inside".into(),
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
        let svg = super::super::Plot::LateWakeup(c).svg_stamped(None).unwrap();
        assert!(svg.contains("spin99") && svg.contains("wake → on CPU"));
    }
}
