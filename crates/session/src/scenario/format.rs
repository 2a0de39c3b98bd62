//! The scenario file: a small TOML document (TOML v1.0.0, <https://toml.io/en/v1.0.0>) read
//! with serde and the `toml` crate. Field by field: `docs/scenarios.md`.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use tickscope_report::escaped;

/// The document a scenario reproduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Its title.
    pub title: String,
    /// Its author(s).
    pub author: String,
    /// Year of publication.
    pub year: u32,
    /// Where it was published (empty when not known).
    #[serde(default)]
    pub url: String,
}

/// What a step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// `tickscope run` with the step's arguments.
    #[default]
    Run,
    /// `tickscope clocks` with the step's arguments.
    Clocks,
}

/// A timed action on the measuring threads, done by tickscope as `chrt -p` would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// When, from the start of the step's measurement (`5s`, `500ms`).
    pub at: String,
    /// When with `--quick`; default: `at`.
    #[serde(default)]
    pub quick_at: Option<String>,
    /// The policy to switch every measuring thread to: `fifo`, `rr` or `other`.
    pub policy: String,
    /// Real-time priority for fifo and rr (1–99); ignored for other.
    #[serde(default)]
    pub priority: Option<i32>,
}

/// One measurement of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// A short name, unique in the scenario; table columns refer to it.
    pub name: String,
    /// `run` (default) or `clocks`.
    #[serde(default)]
    pub kind: StepKind,
    /// The options of `tickscope run` (or `clocks`), exactly as on the command line.
    pub args: Vec<String>,
    /// The options with `--quick` (replacing `args`); default: `args`.
    #[serde(default)]
    pub quick_args: Option<Vec<String>>,
    /// A load for the step's length (`--load` syntax).
    #[serde(default)]
    pub load: Option<String>,
    /// Timed actions (run steps only).
    #[serde(default)]
    pub actions: Vec<Action>,
}

/// A row of a `rows` table: a figure of every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The row's label, as in the source.
    pub label: String,
    /// The figure (see `docs/scenarios.md` for the names).
    pub metric: String,
    /// Unit of the published values and of the printed ones: ns, us, count, %, Hz;
    /// default: the table's.
    #[serde(default)]
    pub unit: Option<String>,
}

/// The layout of the table printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Named rows (`rows`), one column per step (`columns`).
    #[default]
    Rows,
    /// One line per window of one step (`step`): n, mean, SD, min, max with % of the
    /// period, then a total line — the 2013 `rt` post's table.
    Windows,
}

/// The table printed at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// A title line.
    pub title: String,
    /// `rows` or `windows`.
    #[serde(default)]
    pub layout: Layout,
    /// Default unit of the rows.
    #[serde(default)]
    pub unit: Option<String>,
    /// Rows (layout `rows`).
    #[serde(default)]
    pub rows: Vec<Row>,
    /// The steps shown as columns, in order (layout `rows`).
    #[serde(default)]
    pub columns: Vec<String>,
    /// The step whose windows are shown (layout `windows`).
    #[serde(default)]
    pub step: Option<String>,
}

/// Numbers published in the source, from one machine and kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// A short column label (`2.6.20-hrt`).
    pub label: String,
    /// The machine, as the source describes it.
    pub machine: String,
    /// The kernel, as the source names it.
    pub kernel: String,
    /// Layout `rows`: per column (step name), one value per row (in the row's unit).
    #[serde(default)]
    pub values: std::collections::BTreeMap<String, Vec<f64>>,
    /// Layout `windows`: the source's lines, each n, mean, SD, SD%, min, min%, max, max% (µs).
    #[serde(default)]
    pub windows: Vec<Vec<f64>>,
    /// Layout `windows`: the source's total line.
    #[serde(default)]
    pub total: Option<Vec<f64>>,
}

/// A scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name (`hrtimers-2007`).
    pub name: String,
    /// One sentence on what it measures.
    pub about: String,
    /// The document it reproduces.
    pub source: Source,
    /// What differs on purpose from the source (printed under the table).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The measurements, in order.
    pub steps: Vec<Step>,
    /// The source's numbers.
    #[serde(default)]
    pub published: Vec<Published>,
    /// The table.
    pub table: Table,
}

/// The longest name or label a scenario may give (a step's name, a row's label or unit, a
/// published column's label), in characters: they become table cells and column headers.
pub const MAX_LABEL_CHARS: usize = 200;

/// The longest free text (`about`, a title, a note, a machine, …), in characters.
pub const MAX_TEXT_CHARS: usize = 4096;

/// Line (from 1) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Scenario {
    /// Reads a scenario from TOML text; `file` names it in messages.
    ///
    /// # Errors
    /// One line: `FILE line N: problem`.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|r| line_of(text, r.start)).unwrap_or(1);
            let msg = e
                .message()
                .lines()
                .next()
                .unwrap_or("invalid")
                .trim()
                .to_string();
            format!("{file} line {line}: {}", escaped(&msg))
        })?;
        s.validate().map_err(|m| {
            let line = text
                .lines()
                .position(|l| !m.1.is_empty() && l.contains(&m.1))
                .map_or(1, |i| i + 1);
            format!("{file} line {line}: {}", escaped(&m.0))
        })?;
        Ok(s)
    }

    /// Checks what serde cannot: names, references, counts. Returns the problem and a
    /// piece of text to locate it by.
    fn validate(&self) -> Result<(), (String, String)> {
        if self.steps.is_empty() {
            return Err((
                "a scenario needs at least one [[steps]]".into(),
                "name".into(),
            ));
        }
        self.check_lengths()?;
        // Sets, not scans, so that a file of many steps is read in linear time.
        let mut names: HashSet<&str> = HashSet::with_capacity(self.steps.len());
        for s in &self.steps {
            let q = |v: &str| format!("\"{v}\"");
            if !names.insert(&s.name) {
                return Err((format!("step name '{}' is used twice", s.name), q(&s.name)));
            }
            if s.kind == StepKind::Clocks && !s.actions.is_empty() {
                return Err((
                    format!("step '{}': actions apply to run steps only", s.name),
                    q(&s.name),
                ));
            }
            for a in &s.actions {
                for at in std::iter::once(&a.at).chain(a.quick_at.as_ref()) {
                    crate::text::parse_duration(at, "at", tickscope_engine::time::NS_PER_SEC)
                        .map_err(|e| (format!("step '{}': {e}", s.name), q(at)))?;
                }
                if !["fifo", "rr", "other"].contains(&a.policy.as_str()) {
                    return Err((
                        format!(
                            "step '{}': action policy '{}' is not fifo, rr or other",
                            s.name, a.policy
                        ),
                        q(&a.policy),
                    ));
                }
                if a.policy != "other" && !a.priority.is_some_and(|p| (1..=99).contains(&p)) {
                    return Err((
                        format!(
                            "step '{}': a {} action needs priority 1..99",
                            s.name, a.policy
                        ),
                        q(&a.policy),
                    ));
                }
            }
        }
        let step = |n: &str| names.contains(n);
        match self.table.layout {
            Layout::Rows => {
                if self.table.rows.is_empty() || self.table.columns.is_empty() {
                    return Err(("[table] needs rows and columns".into(), "[table]".into()));
                }
                for c in &self.table.columns {
                    if !step(c) {
                        return Err((
                            format!("[table] column '{c}' is not a step"),
                            format!("\"{c}\""),
                        ));
                    }
                }
                for r in &self.table.rows {
                    if !super::metrics::known(&r.metric) {
                        return Err((
                            format!("[table] unknown metric '{}'", r.metric),
                            format!("\"{}\"", r.metric),
                        ));
                    }
                }
                let columns: HashSet<&str> =
                    self.table.columns.iter().map(String::as_str).collect();
                for p in &self.published {
                    for (c, v) in &p.values {
                        if !columns.contains(c.as_str()) || v.len() != self.table.rows.len() {
                            return Err((
                                format!("published '{}': values.{c} needs a column of the table and one value per row ({})", p.label, self.table.rows.len()),
                                format!("{c} ="),
                            ));
                        }
                    }
                }
            }
            Layout::Windows => {
                if !self.table.step.as_deref().is_some_and(step) {
                    return Err((
                        "[table] layout windows needs step = a step's name".into(),
                        "layout".into(),
                    ));
                }
                for p in &self.published {
                    if p.windows.iter().chain(p.total.iter()).any(|w| w.len() != 8) {
                        return Err((
                            format!("published '{}': each window line needs 8 numbers", p.label),
                            "windows".into(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Bounds every name and text by [`MAX_LABEL_CHARS`] or [`MAX_TEXT_CHARS`].
    fn check_lengths(&self) -> Result<(), (String, String)> {
        let long = |what: &str, v: &str, max: usize| -> Result<(), (String, String)> {
            match v.chars().count() > max {
                true => Err((
                    format!(
                        "{what} is {} characters long; at most {max} are accepted",
                        v.chars().count()
                    ),
                    v.chars().take(40).collect(),
                )),
                false => Ok(()),
            }
        };
        let (l, t) = (MAX_LABEL_CHARS, MAX_TEXT_CHARS);
        long("name", &self.name, l)?;
        long("about", &self.about, t)?;
        let src = &self.source;
        for (what, v) in [
            ("[source] title", &src.title),
            ("[source] author", &src.author),
            ("[source] url", &src.url),
        ] {
            long(what, v, t)?;
        }
        for n in &self.notes {
            long("a note", n, t)?;
        }
        for s in &self.steps {
            long("a step's name", &s.name, l)?;
        }
        long("[table] title", &self.table.title, t)?;
        for u in self.table.unit.iter().chain(self.table.step.iter()) {
            long("[table] unit or step", u, l)?;
        }
        for r in &self.table.rows {
            long("a row's label", &r.label, l)?;
            long("a row's metric", &r.metric, l)?;
            if let Some(u) = &r.unit {
                long("a row's unit", u, l)?;
            }
        }
        for c in &self.table.columns {
            long("a [table] column", c, l)?;
        }
        for p in &self.published {
            long("a published label", &p.label, l)?;
            long("a published machine", &p.machine, t)?;
            long("a published kernel", &p.kernel, t)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
name = "mine"
about = "x"
[source]
title = "t"
author = "a"
year = 2024
[[steps]]
name = "a"
args = ["-l", "10"]
[table]
title = "t"
unit = "us"
rows = [{ label = "max", metric = "latency.max" }]
columns = ["a"]
"#;

    #[test]
    fn parses_and_refuses_with_the_line() {
        assert!(Scenario::parse(OK, "f.toml").is_ok());
        let bad = OK.replace("year = 2024", "year = \"soon\"");
        let e = Scenario::parse(&bad, "f.toml").unwrap_err();
        assert!(e.starts_with("f.toml line 7: "), "{e}");
        let bad = OK.replace("columns = [\"a\"]", "columns = [\"b\"]");
        let e = Scenario::parse(&bad, "f.toml").unwrap_err();
        assert!(
            e.starts_with("f.toml line 15: ") && e.contains("'b'"),
            "{e}"
        );
        let bad = OK.replace("latency.max", "latency.maxx");
        assert!(Scenario::parse(&bad, "f.toml")
            .unwrap_err()
            .contains("unknown metric"));
        let bad = OK.replace("[table]", "colour = 1\n[table]");
        assert!(Scenario::parse(&bad, "f.toml")
            .unwrap_err()
            .contains("unknown field"));
        let bad = OK.replace("args = [\"-l\", \"10\"]", "args = [\"-l\", \"10\"]\n[[steps.actions]]\nat = \"soon\"\npolicy = \"fifo\"\npriority = 1");
        assert!(Scenario::parse(&bad, "f.toml")
            .unwrap_err()
            .contains("not a duration"));
    }

    /// A scenario of `n` plain steps.
    fn many_steps(n: usize) -> String {
        let mut t = String::from(
            "name = \"big\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 1\n",
        );
        for i in 0..n {
            t.push_str(&format!(
                "[[steps]]\nname = \"s{i}\"\nargs = [\"-l\", \"1\"]\n"
            ));
        }
        t.push_str(&format!(
            "[table]\ntitle = \"t\"\nrows = [{{label = \"m\", metric = \"latency.max\"}}]\n\
             columns = [\"s0\", \"s{}\"]\n",
            n - 1
        ));
        t
    }

    #[test]
    fn fifty_thousand_steps_parse() {
        let text = many_steps(50_000);
        let t0 = std::time::Instant::now();
        let s = Scenario::parse(&text, "big.toml").unwrap();
        assert_eq!(s.steps.len(), 50_000);
        // A generous bound, only to catch a return of the quadratic name check (it took 11 s
        // in a release build; the linear one takes about 1 s in a debug build).
        assert!(t0.elapsed() < std::time::Duration::from_secs(60));
        let dup = text.replace("name = \"s49999\"", "name = \"s3\"");
        let e = Scenario::parse(&dup, "big.toml").unwrap_err();
        assert!(e.contains("'s3' is used twice"), "{e}");
    }

    #[test]
    fn long_labels_are_refused_with_the_limit() {
        let long = "x".repeat(MAX_LABEL_CHARS + 1);
        let bad = OK.replace("label = \"max\"", &format!("label = \"{long}\""));
        let e = Scenario::parse(&bad, "f.toml").unwrap_err();
        assert!(
            e.starts_with("f.toml line 14: a row's label is 201 characters long; at most 200"),
            "{e}"
        );
        let ok = OK.replace("label = \"max\"", &format!("label = \"{}\"", &long[1..]));
        assert!(Scenario::parse(&ok, "f.toml").is_ok());
        let bad = OK.replace(
            "about = \"x\"",
            &format!("about = \"{}\"", "y".repeat(70_000)),
        );
        assert!(Scenario::parse(&bad, "f.toml")
            .unwrap_err()
            .contains("about is 70000 characters long"));
    }

    #[test]
    fn errors_escape_control_characters() {
        let bad = OK.replace("columns = [\"a\"]", "columns = [\"\\u001b]0;x\\u0007\"]");
        let e = Scenario::parse(&bad, "f.toml").unwrap_err();
        assert!(!e.chars().any(char::is_control), "{e}");
        assert!(e.contains("\\u{1b}]0;x\\u{7}"), "{e}");
    }
}
