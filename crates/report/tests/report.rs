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
    // Each run's own summary is still there, folded, after the comparison and its notes.
    assert!(page.contains("<summary>nanosleep-rel</summary>"));
    let comparison = page.find("<h2>Methods side by side</h2>").unwrap();
    assert!(comparison < page.find("<h2>Summary</h2>").unwrap());
    assert!(page.contains("|dt−T| p99") && page.contains("step: the coarsest timeout"));
}

#[test]
fn html_has_the_command_line_the_seconds_and_the_period_plot() {
    let mut doc = common::document(2, 3);
    doc.command_line = vec!["tickscope".into(), "run".into(), "-t".into(), "2".into()];
    let page = html(&doc);
    assert!(page.contains("<td>tickscope run -t 2</td>"));
    assert!(page.contains("<h2>Second by second</h2>"));
    assert_eq!(
        page.matches("<th>3 s</th>").count(),
        1,
        "one row per window"
    );
    assert!(page.contains("id=\"period\""), "the dt plot is drawn");
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
