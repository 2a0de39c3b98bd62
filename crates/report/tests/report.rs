//! The HTML report and its plots, on deterministic documents: self-contained, complete,
//! and drawn from the recorded statistics.

mod common;

use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::Exporter;
use tickscope_report::plot::{plots_of, Plot};

fn html(doc: &tickscope_report::RunDocument) -> String {
    let r = HtmlReport {
        source: "result.json".into(),
        ..Default::default()
    };
    String::from_utf8(r.render(doc).unwrap()).unwrap()
}

/// The page with every inline SVG replaced by a placeholder, for a readable snapshot.
fn skeleton(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(start) = rest.find("<svg") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("</svg>").unwrap() + start + "</svg>".len();
        out.push_str("<svg …/>");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn html_has_no_external_references() {
    for doc in [common::document(2, 3), common::two_method_document(2, 3)] {
        let page = html(&doc);
        let lower = page.to_lowercase();
        for forbidden in [
            "http", "src=", "<link", "@import", "url(", "<script", "<img",
        ] {
            assert!(
                !lower.contains(forbidden),
                "the report contains '{forbidden}'"
            );
        }
        assert_eq!(page.matches("<svg").count(), plots_of(&doc).len());
    }
}

#[test]
fn html_single_run() {
    let page = html(&common::document(2, 3));
    assert!(page.contains("Test CPU &lt;2 GHz&gt; &amp; co"));
    insta::assert_snapshot!(skeleton(&page));
}

#[test]
fn html_two_methods_side_by_side() {
    let page = html(&common::two_method_document(1, 2));
    assert!(page.contains("<h2>Methods side by side</h2>"));
    assert!(page.contains("id=\"methods-percentiles\""));
    // The overlays of all methods come first, then the table, then each method's plots.
    let pos = |s: &str| page.find(s).unwrap_or_else(|| panic!("{s}"));
    assert!(pos("id=\"methods-percentiles\"") < pos("id=\"methods-histogram\""));
    assert!(pos("id=\"methods-histogram\"") < pos("<h2>Methods side by side</h2>"));
    assert!(pos("<h2>Methods side by side</h2>") < pos("id=\"00-nanosleep-abs-histogram\""));
    // Each run's own summary is still there, folded, after the comparison and its notes.
    assert!(page.contains("<h3>nanosleep-rel</h3>"));
    assert!(pos("<h2>Methods side by side</h2>") < pos("<summary>Summary: every statistic"));
    assert!(page.contains("|dt−T| p99") && page.contains("step: the coarsest timeout"));
    assert!(page.contains("<p class=\"verdict\" id=\"verdict\">best p99 "));
}

#[test]
fn html_leads_with_the_verdict_and_folds_the_details() {
    let page = html(&common::document(2, 3));
    let pos = |s: &str| page.find(s).unwrap_or_else(|| panic!("{s}"));
    assert!(page.contains(
        "<p class=\"verdict\" id=\"verdict\">p99 20.1 µs, max 2.60 ms, 4 overruns in 3.00 s — \
         FIFO 90 on a KVM guest without PREEMPT_RT</p>"
    ));
    // Verdict, then the key plots, then the rest; the tables folded at the end.
    assert!(pos("id=\"verdict\"") < pos("<figure id=\"histogram\""));
    assert!(pos("<figure id=\"histogram\"") < pos("<figure id=\"timeline\""));
    assert!(pos("<figure id=\"timeline\"") < pos("<h2>More plots</h2>"));
    let details = pos("<h2>Details</h2>");
    for folded in [
        "<h3>What was measured</h3>",
        "<h3>System</h3>",
        "kernel command line",
        "<h3>Settings applied</h3>",
        "<tr><th>latency p99.99</th>",
    ] {
        assert!(
            pos(folded) > details,
            "{folded} is below the details heading"
        );
    }
    assert!(page[details..].contains("<details><summary>What was measured, system, settings"));
    // Numbers stay with their units: numeric cells never wrap.
    assert!(page.contains("white-space:nowrap"));
}

#[test]
fn plot_set_of_one_and_of_several_runs() {
    let stems = |doc: &tickscope_report::RunDocument| {
        plots_of(doc)
            .into_iter()
            .map(|p| p.stem)
            .collect::<Vec<_>>()
    };
    let (one, two) = (common::document(2, 3), common::two_method_document(1, 2));
    assert_eq!(
        stems(&one),
        ["histogram", "percentiles", "period", "timeline"]
    );
    assert_eq!(
        stems(&two),
        [
            "00-nanosleep-abs-histogram",
            "00-nanosleep-abs-percentiles",
            "00-nanosleep-abs-period",
            "00-nanosleep-abs-timeline",
            "01-nanosleep-rel-histogram",
            "01-nanosleep-rel-percentiles",
            "01-nanosleep-rel-period",
            "01-nanosleep-rel-timeline",
            "methods-percentiles",
            "methods-histogram",
        ]
    );
}

#[test]
fn histogram_bins_are_fixed_and_the_tail_keeps_the_maximum() {
    let doc = common::document(2, 3);
    let plots = plots_of(&doc);
    let Plot::Histogram(h) = &plots[0].plot else {
        panic!("first plot is the histogram")
    };
    // 1 µs bins up to the default 1 ms range, whatever the data; the stalls of 2.5 and
    // 2.6 ms are in the logarithmic tail, so every wake-up is drawn.
    assert_eq!(h.bin_ns(), 1_000);
    assert_eq!(h.range_ns(), 1_000_000);
    assert_eq!(h.in_tail(), 2);
    let counted: u64 = h
        .series()
        .iter()
        .flat_map(|s| s.bins.iter().chain(&s.tail).map(|b| b.1))
        .sum();
    assert_eq!(counted, 6000);
    let wide = tickscope_report::plot::plots_with(
        &doc,
        &tickscope_report::plot::PlotOptions {
            range_ns: 5_000_000,
        },
    );
    let Plot::Histogram(w) = &wide[0].plot else {
        panic!("first plot is the histogram")
    };
    assert_eq!(
        (w.bin_ns(), w.in_tail()),
        (5_000, 0),
        "a 5 ms range: 5 µs bins, no tail"
    );
    insta::assert_snapshot!(plots
        .iter()
        .map(|p| format!("{}: {}", p.stem, p.caption))
        .collect::<Vec<_>>()
        .join("\n"));
}

#[test]
fn percentile_curves_rise_to_the_maximum() {
    let doc = common::document(1, 3);
    let plots = plots_of(&doc);
    let Plot::Percentiles(p) = &plots[1].plot else {
        panic!("second plot is the percentile curve")
    };
    let c = &p.curves()[0];
    assert!(c
        .points
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    assert_eq!(c.points.first().unwrap().1, -3_000);
    assert_eq!(c.points.last().unwrap().1, 2_500_000);
    let lines: Vec<String> = c
        .points
        .iter()
        .map(|(x, v)| format!("{x:>10.3} {v:>9}"))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn twelve_series_have_twelve_distinct_styles() {
    let styles: Vec<_> = (0..12).map(tickscope_report::plot::series_style).collect();
    for (i, a) in styles.iter().enumerate() {
        for b in &styles[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn plots_carry_the_system_stamp() {
    let doc = common::document(1, 2);
    let p = &plots_of(&doc)[0];
    assert!(p.stamp.contains(&doc.system.kernel_release), "{}", p.stamp);
    assert!(p.svg().unwrap().contains(&doc.system.kernel_release));
}

#[test]
fn plots_render_as_png_and_svg() {
    for p in plots_of(&common::two_method_document(2, 3)) {
        let png = p.png().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().unwrap();
        assert_eq!(
            (reader.info().width, reader.info().height),
            tickscope_report::plot::SIZE
        );
        let svg = p.svg().unwrap();
        assert!(svg.starts_with("<svg"), "{}", p.stem);
        let axis = if p.stem.ends_with("period") {
            "period dt − interval [µs]"
        } else {
            "wake-up latency [µs]"
        };
        assert!(svg.contains(axis), "{}", p.stem);
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}

/// The `(x, y, text)` of every `<text>` element of an SVG written by plotters.
fn svg_texts(svg: &str) -> Vec<(f64, f64, String)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
    };
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let (tag, rest) = t.split_once('>').unwrap();
            let text = rest.split("</text>").next().unwrap().trim().to_string();
            (attr(tag, "x"), attr(tag, "y"), text)
        })
        .collect()
}

#[test]
fn tail_panel_labels_and_ticks_do_not_collide() {
    // With a 100 µs range, p99.9 (151 µs) and the maximum (2.60 ms) are both in the tail.
    let doc = common::document(2, 3);
    let plots = tickscope_report::plot::plots_with(
        &doc,
        &tickscope_report::plot::PlotOptions { range_ns: 100_000 },
    );
    let svg = plots[0].svg().unwrap();
    let texts = svg_texts(&svg);
    let find = |prefix: &str| {
        texts
            .iter()
            .find(|t| t.2.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} in {texts:?}"))
    };
    let (p999, max) = (find("p99.9 151 µs"), find("max 2.60 ms"));
    assert!(
        (p999.1 - max.1).abs() >= 14.0,
        "the tail's labels are on rows of their own: {p999:?} {max:?}"
    );
    // The tail panel's latency ticks (right of the linear panel) leave room for their labels.
    let split = f64::from(tickscope_report::plot::SIZE.0) * (1.0 - 0.22);
    let mut ticks: Vec<&(f64, f64, String)> = texts
        .iter()
        .filter(|t| t.0 > split && t.2.parse::<f64>().is_ok())
        .collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(ticks.len() >= 2, "{texts:?}");
    for w in ticks.windows(2) {
        let room = (w[0].2.len() + w[1].2.len()) as f64 * 18.0 * 0.6 / 2.0;
        assert!(w[1].0 - w[0].0 >= room, "ticks {w:?} touch");
    }
}

#[test]
fn tick_thinning_keeps_labels_apart() {
    use tickscope_report::plot::axis::{number, Axis, Scale};
    let x = Axis {
        scale: Scale::Log10,
        lo: 1000.0,
        hi: 10000.0,
        desc: String::new(),
        format: number,
    };
    let all = x.ticks().len();
    let kept = tickscope_report::plot::spaced_ticks(&x, 150.0, 18.0);
    assert!(kept.len() < all && kept.len() >= 2, "{kept:?}");
    assert_eq!(kept[0], 3.0, "the lowest tick stays");
    let wide = tickscope_report::plot::spaced_ticks(&x, 2000.0, 18.0);
    assert_eq!(wide.len(), all, "a wide panel keeps them all");
}

#[test]
fn histogram_overlays_are_translucent_outlines() {
    let doc = common::two_method_document(1, 2);
    let plot = plots_of(&doc)
        .into_iter()
        .find(|p| p.stem == "methods-histogram")
        .unwrap();
    let svg = plot.svg().unwrap();
    let series: Vec<&str> = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke=\"#1F77B4\"") || p.contains("stroke=\"#FF7F0E\""))
        .filter(|p| p.contains("stroke-width=\"2\""))
        .collect();
    assert!(series.len() >= 2, "{svg}");
    for p in series {
        assert!(p.contains("fill=\"none\""), "{p}");
        assert!(p.contains("opacity=\"0.75\""), "{p}");
    }
    assert!(!svg.contains("<polygon"), "no filled shapes");
}
