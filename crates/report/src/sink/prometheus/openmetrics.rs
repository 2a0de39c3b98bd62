//! The same metrics in the OpenMetrics text format (`Accept: application/openmetrics-text`),
//! encoded by the official client library `prometheus-client`
//! (<https://github.com/prometheus/client_rust>) from what the `prometheus` crate gathers.
//!
//! Why two crates: `prometheus-client` writes only OpenMetrics, which Prometheus negotiates
//! but which Debian's `promtool check metrics` (2.42) and node_exporter's textfile collector
//! reject; the `prometheus` crate writes only the Prometheus text format 0.0.4. So the
//! metrics live in the `prometheus` crate's registry, and this collector hands each gathered
//! family to `prometheus-client`'s encoder — neither format is written by hand. The mapping
//! follows the OpenMetrics 1.0 specification
//! (<https://github.com/prometheus/OpenMetrics/blob/v1.0.0/specification/OpenMetrics.md>):
//! a counter's family name has no `_total` (the encoder adds it to the sample); a name
//! ending in `_seconds` carries the unit `seconds`; a gauge named `…_info` whose value is 1
//! is an info metric.

use prometheus::proto::{MetricFamily, MetricType as PType};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;

/// The content type of [`encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an HTTP `Accept` header prefers OpenMetrics to the Prometheus text format:
/// `application/openmetrics-text` with a quality (`q`, RFC 9110 §12.4.2,
/// <https://www.rfc-editor.org/rfc/rfc9110#section-12.4.2>; 1 when absent) above 0 and not
/// below that of `text/plain`. Prometheus sends OpenMetrics first by default
/// (`application/openmetrics-text;version=1.0.0,…,text/plain;version=0.0.4;q=0.5,…`) and
/// the text format first when its `scrape_protocols` says so.
pub fn accepts(accept: &str) -> bool {
    let quality = |media: &str| {
        accept
            .split(',')
            .filter_map(|part| {
                let mut params = part.split(';').map(str::trim);
                let kind = params.next()?;
                kind.eq_ignore_ascii_case(media).then(|| {
                    params
                        .find_map(|p| p.strip_prefix("q=").and_then(|q| q.parse::<f64>().ok()))
                        .unwrap_or(1.0)
                })
            })
            .fold(None, |best: Option<f64>, q| {
                Some(best.map_or(q, |b| b.max(q)))
            })
    };
    match (
        quality("application/openmetrics-text"),
        quality("text/plain"),
    ) {
        (Some(om), text) => om > 0.0 && om >= text.unwrap_or(0.0),
        (None, _) => false,
    }
}

/// Every family of `registry` in the OpenMetrics text format, `# EOF` last.
pub fn encode(registry: &Arc<prometheus::Registry>) -> String {
    let mut om = Registry::default();
    om.register_collector(Box::new(Bridge(Arc::clone(registry))));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &om)
        .expect("encoding into a String does not fail");
    out
}

/// Hands the `prometheus` crate's families to `prometheus-client`'s encoder.
#[derive(Debug)]
struct Bridge(Arc<prometheus::Registry>);

impl Collector for Bridge {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in self.0.gather() {
            encode_family(&mut encoder, &family)?;
        }
        Ok(())
    }
}

fn encode_family(enc: &mut DescriptorEncoder, f: &MetricFamily) -> Result<(), std::fmt::Error> {
    let ptype = f.get_field_type();
    let metrics = f.get_metric();
    let is_info = ptype == PType::GAUGE
        && f.name().ends_with("_info")
        && metrics.iter().all(|m| m.get_gauge().get_value() == 1.0);
    let (kind, mut name) = match ptype {
        PType::COUNTER => (MetricType::Counter, f.name().trim_end_matches("_total")),
        PType::GAUGE if is_info => (MetricType::Info, f.name().trim_end_matches("_info")),
        PType::GAUGE => (MetricType::Gauge, f.name()),
        PType::HISTOGRAM => (MetricType::Histogram, f.name()),
        _ => return Ok(()), // tickscope exports no summaries or untyped metrics
    };
    let seconds = Unit::Seconds;
    let unit = match name.strip_suffix("_seconds") {
        Some(base) if !is_info => {
            name = base;
            Some(&seconds)
        }
        _ => None,
    };
    let mut family = enc.encode_descriptor(name, f.help(), unit, kind)?;
    for m in metrics {
        let labels: Vec<(String, String)> = m
            .get_label()
            .iter()
            .map(|l| (l.name().to_string(), l.value().to_string()))
            .collect();
        match ptype {
            _ if is_info => family.encode_info(&labels)?,
            PType::COUNTER => family
                .encode_family(&labels)?
                .encode_counter::<NoLabelSet, _, f64>(&m.get_counter().get_value(), None)?,
            PType::GAUGE => family
                .encode_family(&labels)?
                .encode_gauge(&m.get_gauge().get_value())?,
            _ => {
                let h = m.get_histogram();
                // Cumulative counts in, per-bucket counts out (the encoder sums them), with
                // the +Inf bucket the `prometheus` crate leaves implicit.
                let mut buckets = Vec::new();
                let mut below = 0;
                for b in h.get_bucket() {
                    buckets.push((b.upper_bound(), b.cumulative_count() - below));
                    below = b.cumulative_count();
                }
                buckets.push((f64::INFINITY, h.get_sample_count() - below));
                family
                    .encode_family(&labels)?
                    .encode_histogram::<NoLabelSet>(
                        h.get_sample_sum(),
                        h.get_sample_count(),
                        &buckets,
                        None,
                    )?;
            }
        }
    }
    Ok(())
}
