//! What `compare` arranges: the [`Comparison`] of measurements, its rows and cells, and the
//! [`CompareFormat`] each output format implements.

use crate::import::{LatencyFigures, Measurement, Setting};
use crate::statistics::Statistic;
use crate::units::{ns, ns_i};
use tickscope_engine::time::Nanos;

/// Measurements to be put side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The columns, in the order given.
    pub columns: Vec<Measurement>,
}

/// One figure of a column, typed so that each format writes it its own way.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A time, integer ns.
    Nanos(Nanos),
    /// A time, ns (means, standard deviations).
    NanosF(f64),
    /// A lower bound of a time, integer ns: the value lies at or above it.
    AtLeast(Nanos),
    /// A count.
    Count(u64),
    /// A percentage.
    Percent(f64),
    /// Text (settings).
    Text(String),
    /// Not recorded by the file's format.
    Missing,
}

impl Cell {
    /// The cell for people: times with units, `-` when missing.
    pub fn human(&self) -> String {
        match self {
            Cell::Nanos(v) => ns_i(*v),
            Cell::NanosF(v) => ns(*v),
            Cell::AtLeast(v) => format!("≥ {}", ns_i(*v)),
            Cell::Count(c) => c.to_string(),
            Cell::Percent(p) => format!("{p:.2} %"),
            Cell::Text(t) => t.clone(),
            Cell::Missing => "-".into(),
        }
    }

    /// The cell for programs: plain numbers (ns, counts, percent), `>=N` for a lower bound,
    /// empty when missing.
    pub fn raw(&self) -> String {
        match self {
            Cell::Nanos(v) => v.to_string(),
            Cell::NanosF(v) => format!("{v:.1}"),
            Cell::AtLeast(v) => format!(">={v}"),
            Cell::Count(c) => c.to_string(),
            Cell::Percent(p) => format!("{p:.3}"),
            Cell::Text(t) => t.clone(),
            Cell::Missing => String::new(),
        }
    }
}

/// A row of the comparison: a name for people, a key for programs (with its unit) and one
/// cell per column.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Label for people (`latency p99`).
    pub name: String,
    /// Column-safe key for programs, with the unit (`latency_p99_ns`).
    pub key: String,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// An output format of `tickscope compare`.
pub trait CompareFormat {
    /// Renders the comparison as the text of this format (ends with a newline).
    fn render(&self, cmp: &Comparison) -> String;
}

impl Comparison {
    /// Puts measurements side by side. `labels` replace the columns' own labels in order
    /// (fewer labels leave the rest as they are); labels that repeat get ` (2)`, ` (3)`, ….
    ///
    /// # Errors
    /// More labels than columns, or no columns at all.
    pub fn new(mut columns: Vec<Measurement>, labels: &[String]) -> Result<Self, String> {
        if columns.is_empty() {
            return Err("nothing to compare: give at least one result file".into());
        }
        if labels.len() > columns.len() {
            return Err(format!(
                "{} labels for {} columns; give at most one --label per column",
                labels.len(),
                columns.len()
            ));
        }
        for (c, l) in columns.iter_mut().zip(labels) {
            c.label = l.clone();
        }
        for i in 1..columns.len() {
            let base = columns[i].label.clone();
            let mut n = 1;
            while columns[..i].iter().any(|c| c.label == columns[i].label) {
                n += 1;
                columns[i].label = format!("{base} ({n})");
            }
        }
        Ok(Comparison { columns })
    }

    /// The measured figures, one row each ([`FIGURES`]): samples, latency
    /// min/avg/p50/p99/p99.9/max, dt SD, overruns, CPU.
    pub fn figure_rows(&self) -> Vec<Row> {
        FIGURES
            .iter()
            .map(|&(label, stat)| Row {
                name: label.unwrap_or(stat.label()).to_string(),
                key: stat.key().to_string(),
                cells: self.columns.iter().map(|m| figure(m, stat)).collect(),
            })
            .collect()
    }

    /// Settings rows: with `only_differing`, those whose value is not the same in every
    /// column (a setting a file does not record counts as different); otherwise every
    /// setting any column records. The recorded command line is never a row (see notes).
    pub fn setting_rows(&self, only_differing: bool) -> Vec<Row> {
        let mut settings: Vec<Setting> = self
            .columns
            .iter()
            .flat_map(|c| c.settings.keys().copied())
            .filter(|s| *s != Setting::Command)
            .collect();
        settings.sort();
        settings.dedup();
        settings
            .into_iter()
            .filter(|s| !only_differing || !self.is_common(*s))
            .map(|s| Row {
                name: s.label().to_string(),
                key: s.key().to_string(),
                cells: self
                    .columns
                    .iter()
                    .map(|c| {
                        c.settings
                            .get(&s)
                            .map_or(Cell::Missing, |v| Cell::Text(v.clone()))
                    })
                    .collect(),
            })
            .collect()
    }

    /// Settings recorded with the same value in every column, as `(label, value)`.
    pub fn common_settings(&self) -> Vec<(&'static str, String)> {
        let Some(first) = self.columns.first().map(|c| &c.settings) else {
            return Vec::new();
        };
        first
            .iter()
            .filter(|(s, _)| **s != Setting::Command && self.is_common(**s))
            .map(|(s, v)| (s.label(), v.clone()))
            .collect()
    }

    fn is_common(&self, s: Setting) -> bool {
        let first = self.columns.first().and_then(|c| c.settings.get(&s));
        first.is_some() && self.columns.iter().all(|c| c.settings.get(&s) == first)
    }

    /// Footnotes: per column, where it came from and how its figures were obtained.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.columns {
            let mut parts = vec![format!("{} ({})", c.source, c.format.name())];
            if let Some(cmd) = c.settings.get(&Setting::Command) {
                parts.push(format!("command: {cmd}"));
            }
            parts.extend(c.notes.iter().cloned());
            out.push(format!("{}: {}", c.label, parts.join("; ")));
        }
        out
    }
}

/// A percentile's cell: its value, or a lower bound when the file's histogram ended
/// before it.
/// The figure rows of a comparison, in order: a statistic, with the label the comparison
/// gives it where that differs from [`Statistic::label`] (the source documents' tables say
/// "avg"). Keys and labels come from [`crate::statistics`].
pub const FIGURES: [(Option<&str>, Statistic); 10] = [
    (None, Statistic::Samples),
    (None, Statistic::LatencyMin),
    (Some("latency avg"), Statistic::LatencyMean),
    (None, Statistic::LatencyP50),
    (None, Statistic::LatencyP99),
    (None, Statistic::LatencyP99_9),
    (None, Statistic::LatencyMax),
    (None, Statistic::DtSd),
    (None, Statistic::Overruns),
    (None, Statistic::CpuPercent),
];

/// The cell of statistic `stat` in column `m`: what the file recorded, [`Cell::Missing`]
/// where its format does not record it, [`Cell::AtLeast`] for a percentile beyond the source
/// histogram's range.
pub fn figure(m: &Measurement, stat: Statistic) -> Cell {
    let lat = |f: fn(&LatencyFigures) -> Cell| m.latency_ns.as_ref().map_or(Cell::Missing, f);
    match stat {
        Statistic::Samples => Cell::Count(m.samples),
        Statistic::LatencyMin => lat(|l| Cell::Nanos(l.min)),
        Statistic::LatencyMean => lat(|l| Cell::NanosF(l.mean)),
        Statistic::LatencyP50 => percentile(m, "p50", |l| l.p50),
        Statistic::LatencyP99 => percentile(m, "p99", |l| l.p99),
        Statistic::LatencyP99_9 => percentile(m, "p99_9", |l| l.p99_9),
        Statistic::LatencyMax => lat(|l| Cell::Nanos(l.max)),
        Statistic::DtSd => m.dt_sd_ns.map_or(Cell::Missing, Cell::NanosF),
        Statistic::Overruns => m.overruns.map_or(Cell::Missing, Cell::Count),
        Statistic::CpuPercent => m.cpu_percent.map_or(Cell::Missing, Cell::Percent),
        _ => Cell::Missing,
    }
}

fn percentile(m: &Measurement, key: &str, get: fn(&LatencyFigures) -> Option<Nanos>) -> Cell {
    let Some(l) = &m.latency_ns else {
        return Cell::Missing;
    };
    match get(l) {
        Some(v) if l.lower_bounds.contains(&key) => Cell::AtLeast(v),
        Some(v) => Cell::Nanos(v),
        None => Cell::Missing,
    }
}
