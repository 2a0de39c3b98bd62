//! What a scenario file would do besides measuring, found before anything runs: the commands
//! it would start and the files it would write outside the working directory.
//!
//! A scenario file is meant to be shared, so `scenario run` treats it as untrusted: a step
//! whose load is `exec:"CMD"` or `stress-ng:"ARGS"` (a command line of the file's choosing;
//! stress-ng's own options such as `--log-file` write anywhere), or whose options hold an
//! `--on-late …:exec=CMD` rule, runs only with `--allow-exec`; a step writing a file (`--hlog`,
//! `--csv`, `--samples`, `--histogram-file`, `--export`, `--capture-dir`) by an absolute path or one leading out of the working directory (`..`) runs only
//! with `--allow-paths`. `scenario show` lists both before the file's text. Both the normal and
//! the `--quick` options of every step are reviewed, whichever will run. The working directory
//! is judged by the path's text: a symbolic link under it that leads elsewhere is the user's own
//! doing and is followed.

use crate::load::spec::LoadSpec;
use crate::scenario::format::{Scenario, Step, StepKind};
use std::path::{Component, Path, PathBuf};
use tickscope_report::{escaped, quoted};

/// One thing a step would do: the step's name and a description (`load exec:"sleep 1"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The step's name.
    pub step: String,
    /// What it would do, as written in the file, with control characters escaped.
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step '{}': {}", escaped(&self.step), self.what)
    }
}

/// Everything found in one scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Commands the scenario would run (needs `--allow-exec`).
    pub commands: Vec<Finding>,
    /// Files it would write outside the working directory (needs `--allow-paths`).
    pub outside: Vec<Finding>,
}

/// True when `path` is absolute or leads out of the working directory through `..` (judged
/// by its text). `-` (standard output) is inside.
pub fn outside_working_dir(path: &Path) -> bool {
    if path.as_os_str() == "-" {
        return false;
    }
    let mut depth = 0usize;
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return true,
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            },
            Component::Normal(_) => depth += 1,
        }
    }
    false
}

/// Text of a command for one line: escaped, and shortened to 120 characters.
fn short(text: &str) -> String {
    let e = escaped(text);
    match e.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &e[..i]),
        None => e.into_owned(),
    }
}

/// What a step's options would do besides measuring, as the command line reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepEffects {
    /// The load the options give (`--load`), if any.
    pub load: Option<String>,
    /// The `--on-late` rules, as written.
    pub on_late: Vec<String>,
    /// The files the options write, each with the flag that names it.
    pub paths: Vec<(&'static str, PathBuf)>,
}

/// Reads a step's options: the command line's parser, which the scenario does not know.
pub trait StepOptions {
    /// What `args` (a step of `kind`'s options, as written) would do; `None` when they do
    /// not parse (the step is then refused before anything runs).
    fn effects(&self, kind: StepKind, args: &[String]) -> Option<StepEffects>;
}

/// Reviews every step of `s`, its normal and its `--quick` options, read by `options`.
pub fn review(s: &Scenario, options: &dyn StepOptions) -> Review {
    let mut r = Review::default();
    for step in &s.steps {
        let sets = std::iter::once(&step.args).chain(step.quick_args.as_ref());
        for args in sets {
            review_step(step, args, options, &mut r);
        }
    }
    r
}

fn add(list: &mut Vec<Finding>, f: Finding) {
    if !list.contains(&f) {
        list.push(f);
    }
}

/// The flags by which a step names a file, a load or an `--on-late` rule (clap takes long
/// flags only whole, as `--flag VALUE` or `--flag=VALUE`).
const FLAGS_OF_INTEREST: &[&str] = &[
    "--histogram-file",
    "--histfile",
    "--csv",
    "--samples",
    "--hlog",
    "--export",
    "--capture-dir",
    "--load",
    "--on-late",
];

/// True when `args` may name a command or a file; the others need no parsing (a file of many
/// plain steps is reviewed quickly).
fn of_interest(args: &[String]) -> bool {
    args.iter().any(|a| {
        let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
        FLAGS_OF_INTEREST.contains(&flag) || a.contains("exec") || a.contains("stress-ng")
    })
}

/// Adds what `step` with `args` would do to `r`.
fn review_step(step: &Step, args: &[String], options: &dyn StepOptions, r: &mut Review) {
    if step.load.is_none() && !of_interest(args) {
        return;
    }
    let finding = |what: String| Finding {
        step: step.name.clone(),
        what,
    };
    let parsed = options.effects(step.kind, args);
    let mut load = step.load.clone();
    let (mut rules, mut paths) = (Vec::new(), Vec::new());
    if let Some(e) = &parsed {
        if e.load.is_some() {
            load = e.load.clone();
        }
        rules = e.on_late.clone();
        paths = e.paths.clone();
    }
    if parsed.is_none() {
        // Options that do not parse are refused before anything runs; until then, any word
        // that looks like a command counts as one.
        for a in args {
            if a.contains("exec:") || a.contains("exec=") || a.contains("stress-ng:") {
                add(&mut r.commands, finding(format!("option {}", short(a))));
            }
        }
    }
    if let Some(l) = &load {
        match LoadSpec::parse(l) {
            Ok(LoadSpec::Exec(cmd)) => {
                add(
                    &mut r.commands,
                    finding(format!("load exec:{}", short(&cmd))),
                );
            }
            Ok(LoadSpec::StressNg(words)) => add(
                &mut r.commands,
                finding(format!("load stress-ng {}", short(&words.join(" ")))),
            ),
            Ok(LoadSpec::Source { .. }) => {}
            Err(_) if l.contains("exec") || l.contains("stress-ng") => {
                add(&mut r.commands, finding(format!("load {}", short(l))));
            }
            Err(_) => {}
        }
    }
    for rule in &rules {
        // As `--on-late` reads it: `exec=` starts the command, which takes the rest.
        if let Some(i) = rule.find("exec=") {
            add(
                &mut r.commands,
                finding(format!("--on-late exec={}", short(&rule[i + 5..]))),
            );
        }
    }
    for (flag, p) in paths {
        if outside_working_dir(&p) {
            add(&mut r.outside, finding(format!("{flag} {}", quoted(&p))));
        }
    }
}

impl Review {
    /// The refusal of `scenario run` without `--allow-exec` / `--allow-paths`, as one line;
    /// `None` when what is found is allowed.
    pub fn refusal(&self, from: &str, allow_exec: bool, allow_paths: bool) -> Option<String> {
        // The first few; `scenario show` lists them all.
        const SHOWN: usize = 8;
        let list = |v: &[Finding]| {
            let mut items: Vec<String> = v.iter().take(SHOWN).map(ToString::to_string).collect();
            if v.len() > SHOWN {
                items.push(format!("and {} more", v.len() - SHOWN));
            }
            items.join("; ")
        };
        let mut parts = Vec::new();
        let mut flags = Vec::new();
        if !allow_exec && !self.commands.is_empty() {
            parts.push(format!("runs commands ({})", list(&self.commands)));
            flags.push("--allow-exec");
        }
        if !allow_paths && !self.outside.is_empty() {
            parts.push(format!(
                "writes outside the working directory ({})",
                list(&self.outside)
            ));
            flags.push("--allow-paths");
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "{from} {}; nothing was run: review it ('tickscope scenario show') and give {} to \
             allow it",
            parts.join(" and "),
            flags.join(" ")
        ))
    }

    /// The lines `scenario show` prints before the file's text (TOML comments, so that the
    /// whole output still reads as the scenario); none when there is nothing to say.
    pub fn show_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.commands.is_empty() {
            out.push(format!(
                "# WARNING: this scenario runs {} command(s), as you ('scenario run' needs \
                 --allow-exec):",
                self.commands.len()
            ));
            out.extend(self.commands.iter().map(|f| format!("#   {f}")));
        }
        if !self.outside.is_empty() {
            out.push(format!(
                "# WARNING: this scenario writes {} file(s) outside the working directory \
                 ('scenario run' needs --allow-paths):",
                self.outside.len()
            ));
            out.extend(self.outside.iter().map(|f| format!("#   {f}")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_is_absolute_or_above_the_working_directory() {
        for p in ["/tmp/x", "../x", "a/../../x", "./../x"] {
            assert!(outside_working_dir(Path::new(p)), "{p}");
        }
        for p in ["x", "a/b.hlog", "./x", "a/../x", "-", "a/./b"] {
            assert!(!outside_working_dir(Path::new(p)), "{p}");
        }
    }
}
