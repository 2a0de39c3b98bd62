use super::*;
use crate::sink::synthetic;

/// The cumulative (le, count) pairs of thread `t`'s series of `name`.
fn buckets(e: &Exposition, name: &str, t: usize) -> (Vec<(f64, u64)>, u64, f64) {
    let fam = e
        .registry
        .gather()
        .into_iter()
        .find(|f| f.name() == name)
        .expect("registered");
    let m = fam
        .get_metric()
        .iter()
        .find(|m| {
            m.get_label()
                .iter()
                .any(|l| l.name() == "thread" && l.value() == t.to_string())
        })
        .expect("thread series");
    let h = m.get_histogram();
    let b = h
        .get_bucket()
        .iter()
        .map(|b| (b.upper_bound(), b.cumulative_count()))
        .collect();
    (b, h.get_sample_count(), h.get_sample_sum())
}

#[test]
fn buckets_are_cumulative_and_agree_with_the_engine_histogram() {
    let run = synthetic::run(2, 5, 1000);
    let (mut sink, expo) = PrometheusSink::new(&run.system, &run.config);
    run.feed(&mut sink);
    for t in 0..2 {
        let (b, count, sum) = buckets(&expo, "tickscope_wakeup_latency_seconds", t);
        assert_eq!(b.len(), BUCKETS_SECONDS.len());
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let engine = run.totals[t].latency_hist.buckets();
        assert_eq!(count, run.totals[t].samples());
        assert!(b.last().unwrap().1 <= count);
        // Each of the engine's buckets holds [lowest equivalent, value]; the count at or
        // below an edge is that of the buckets starting at or below it (HdrHistogram's
        // resolution: 1/128 of the value at 2 significant figures), so it lies between the
        // exact count and that.
        let shape = hdrhistogram::Histogram::<u64>::new_with_bounds(
            1,
            tickscope_engine::histogram::HIGHEST_TRACKABLE,
            tickscope_engine::histogram::SIGNIFICANT_FIGURES,
        )
        .unwrap();
        let low = |v: i64| match v {
            v if v >= 0 => shape.lowest_equivalent(v as u64) as i64,
            v => v, // negative buckets are given by their value closest to zero
        };
        for &(le, n) in &b {
            let le_ns = (le * 1e9).round() as i64;
            let below = |f: &dyn Fn(i64) -> bool| -> u64 {
                engine
                    .buckets
                    .iter()
                    .filter(|(v, _)| f(*v))
                    .map(|(_, c)| c)
                    .sum()
            };
            let (lo, hi) = (below(&|v| v <= le_ns), below(&|v| low(v) <= le_ns));
            assert!(lo <= n, "thread {t}, le {le}: {lo} <= {n}");
            assert_eq!(n, hi, "thread {t}, le {le}");
        }
        let exact: f64 = (0..5000u64).map(|k| synthetic::latency(t, k) as f64).sum();
        assert!((sum - exact / 1e9).abs() < 1e-6);
    }
}

#[test]
fn counters_and_gauges_follow_the_windows() {
    let run = synthetic::run(1, 4, 100);
    let (mut sink, expo) = PrometheusSink::new(&run.system, &run.config);
    run.feed(&mut sink);
    let text = String::from_utf8(expo.encode()).unwrap();
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} missing in\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let labels = r#"{cpu="0",method="nanosleep-abs",policy="other",thread="0"}"#;
    assert_eq!(value(&format!("tickscope_wakeups_total{labels}")), 400.0);
    assert_eq!(value(&format!("tickscope_overruns_total{labels}")), 1.0);
    let early = (0..400).filter(|&k| synthetic::latency(0, k) < 0).count();
    assert_eq!(
        value(&format!("tickscope_early_wakeups_total{labels}")),
        early as f64
    );
    let max = run.totals[0].latency.max().unwrap() as f64 / 1e9;
    assert_eq!(
        value(&format!("tickscope_latency_max_seconds{labels}")),
        max
    );
    let last = run.windows[3].report.threads[0].1.latency_max.unwrap() as f64 / 1e9;
    assert_eq!(
        value(&format!("tickscope_window_latency_max_seconds{labels}")),
        last
    );
    assert!(value("tickscope_last_window_timestamp_seconds") > 1.6e9);
    assert!(text.contains("tickscope_build_info{version=\""));
    assert!(text.contains("tickscope_config_info{"));
    assert!(text.contains("# TYPE tickscope_wakeup_latency_seconds histogram"));
    assert!(text.contains("# TYPE tickscope_period_deviation_seconds histogram"));
    assert!(text.contains("# TYPE tickscope_thread_cpu_seconds_total counter"));
}

#[test]
fn deviation_histogram_counts_every_period_after_the_first() {
    let run = synthetic::run(1, 3, 50);
    let (mut sink, expo) = PrometheusSink::new(&run.system, &run.config);
    run.feed(&mut sink);
    let (_, count, sum) = buckets(&expo, "tickscope_period_deviation_seconds", 0);
    assert_eq!(count, 149);
    // The sum takes each value at its bucket's middle: within 1/256 of each |dt − period|.
    let mut exact = 0.0;
    let mut last = None;
    for w in &run.windows {
        for s in &w.samples[0] {
            if let Some(prev) = last {
                exact += ((s.woke - prev - synthetic::PERIOD) as f64).abs() / 1e9;
            }
            last = Some(s.woke);
        }
    }
    assert!((sum - exact).abs() <= exact / 256.0, "{sum} vs {exact}");
}

/// Nothing streamed per wake-up: the histograms come from the window histograms.
#[test]
fn the_sink_needs_window_histograms_and_no_raw_samples() {
    let run = synthetic::run(1, 1, 10);
    let (sink, _) = PrometheusSink::new(&run.system, &run.config);
    assert!(!sink.needs().raw_samples);
    assert!(sink.needs().window_histograms);
}

#[test]
fn promtool_accepts_the_exposition() {
    let Ok(promtool) = which("promtool") else {
        eprintln!("skipped: promtool not found (Debian package 'prometheus')");
        return;
    };
    let run = synthetic::run(2, 2, 100);
    let (mut sink, expo) = PrometheusSink::new(&run.system, &run.config);
    run.feed(&mut sink);
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&expo.encode())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The path of `name` on PATH.
fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

/// OpenMetrics: the same families and values, by the OpenMetrics rules — `# EOF` last,
/// counters' families without `_total` and their samples with it, the `seconds` unit
/// declared, `_info` gauges as info metrics, histogram buckets ending at `+Inf` equal to
/// the count — and the same cumulative bucket counts as the Prometheus text format.
#[test]
fn openmetrics_carries_the_same_values() {
    let run = synthetic::run(2, 3, 500);
    let (mut sink, expo) = PrometheusSink::new(&run.system, &run.config);
    run.feed(&mut sink);
    let om = expo.encode_openmetrics();
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert!(om.contains("# TYPE tickscope_wakeups counter\n"));
    assert!(om.contains("tickscope_wakeups_total{"));
    assert!(om.contains("# TYPE tickscope_overruns counter\n"));
    assert!(om.contains("# UNIT tickscope_wakeup_latency_seconds seconds\n"));
    assert!(om.contains("# TYPE tickscope_wakeup_latency_seconds histogram\n"));
    assert!(om.contains("# TYPE tickscope_build info\n"));
    assert!(om.contains("tickscope_build_info{"));
    let text = String::from_utf8(expo.encode()).unwrap();
    // Every bucket line of the Prometheus format is in the OpenMetrics output with the same
    // count (label order and number formatting aside: compare by thread, le and count).
    let key = |line: &str| -> Option<(String, String, String)> {
        let rest = line.strip_prefix("tickscope_wakeup_latency_seconds_bucket{")?;
        let (labels, count) = rest.rsplit_once("} ")?;
        let get = |k: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=\"")))
                .map(|v| v.trim_end_matches('"').to_string())
        };
        let le: f64 = match get("le")?.as_str() {
            "+Inf" => f64::INFINITY,
            v => v.parse().ok()?,
        };
        Some((get("thread")?, format!("{le:e}"), count.trim().to_string()))
    };
    let mut a: Vec<_> = text.lines().filter_map(key).collect();
    let mut b: Vec<_> = om.lines().filter_map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a.len(), 2 * (BUCKETS_SECONDS.len() + 1));
    assert_eq!(a, b);
    assert!(openmetrics::accepts(
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    ));
    assert!(!openmetrics::accepts("text/plain;version=0.0.4"));
    // Prometheus 3's default order, OpenMetrics first by quality.
    assert!(openmetrics::accepts(
        "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,\
         application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"
    ));
    // scrape_protocols with the text format first; OpenMetrics refused; anything.
    assert!(!openmetrics::accepts(
        "text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4"
    ));
    assert!(!openmetrics::accepts("application/openmetrics-text;q=0"));
    assert!(!openmetrics::accepts("*/*"));
}

#[test]
fn output_errors_appear_at_zero_when_watched_and_count_failures() {
    let run = synthetic::run(1, 2, 1000);
    let (_, expo) = PrometheusSink::new(&run.system, &run.config);
    let text = |e: &Exposition| String::from_utf8(e.encode()).unwrap();
    // Unwatched, the family is absent (a run without a rewritten output says nothing).
    assert!(!text(&expo).contains("tickscope_output_errors_total"));
    expo.watch_output("textfile");
    assert!(text(&expo).contains("tickscope_output_errors_total{output=\"textfile\"} 0\n"));
    expo.output_failed("textfile");
    expo.output_failed("textfile");
    assert!(text(&expo).contains("tickscope_output_errors_total{output=\"textfile\"} 2\n"));
    assert!(text(&expo).contains("# TYPE tickscope_output_errors_total counter"));
    let om = expo.encode_openmetrics();
    assert!(
        om.contains("# TYPE tickscope_output_errors counter"),
        "{om}"
    );
    assert!(
        om.contains("tickscope_output_errors_total{output=\"textfile\"} 2"),
        "{om}"
    );
}

proptest::proptest! {
    /// Classic buckets and sums from a window's counters are those from its explicit buckets.
    #[test]
    fn counters_and_buckets_give_the_same_series(
        values in proptest::collection::vec(
            proptest::prop_oneof![-3_000_000i64..3_000_000, -300i64..300, 0i64..400_000_000],
            0..300),
    ) {
        let mut h = tickscope_engine::window_histogram::WindowHistogram::<u32>::default();
        for &v in &values {
            h.record(v);
        }
        let counts = tickscope_engine::window_counts::WindowCounts::of(&h).unwrap();
        for kind in [window_buckets::Values::Signed, window_buckets::Values::Magnitude] {
            let from_counts = WindowBuckets::new("a", "a", kind, &THREAD_LABELS).unwrap();
            let from_buckets = WindowBuckets::new("b", "b", kind, &THREAD_LABELS).unwrap();
            let labels = vec![vec!["0".to_string(), "0".into(), "m".into(), "p".into()]];
            from_counts.threads(&labels);
            from_buckets.threads(&labels);
            from_counts.add_counts(0, &counts, None);
            from_buckets.add(0, &counts.buckets(), None);
            let series = |w: &WindowBuckets| {
                use prometheus::core::Collector;
                let h = w.collect()[0].get_metric()[0].get_histogram().clone();
                let b: Vec<u64> = h.get_bucket().iter().map(|b| b.cumulative_count()).collect();
                (b, h.get_sample_count(), h.get_sample_sum())
            };
            let (a, b) = (series(&from_counts), series(&from_buckets));
            proptest::prop_assert_eq!(&a.0, &b.0);
            proptest::prop_assert_eq!(a.1, b.1);
            proptest::prop_assert!((a.2 - b.2).abs() <= 1e-9 * b.2.abs().max(1.0), "{} {}", a.2, b.2);
        }
    }
}
