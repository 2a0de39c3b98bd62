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

use crate::cli::{StepClocks, StepRun};
use crate::scenario::format::{Scenario, Step, StepKind};
use clap::Parser;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use tickscope_report::{escaped, quoted};
use tickscope_session::load::spec::LoadSpec;

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

/// Reviews every step of `s`, its normal and its `--quick` options.
pub fn review(s: &Scenario) -> Review {
    let mut r = Review::default();
    for step in &s.steps {
        let sets = std::iter::once(&step.args).chain(step.quick_args.as_ref());
        for args in sets {
            review_step(step, args, &mut r);
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

fn review_step(step: &Step, args: &[String], r: &mut Review) {
    if step.load.is_none() && !of_interest(args) {
        return;
    }
    let finding = |what: String| Finding {
        step: step.name.clone(),
        what,
    };
    let mut load = step.load.clone();
    let mut paths: Vec<(&'static str, std::path::PathBuf)> = Vec::new();
    let mut rules: Vec<String> = Vec::new();
    let argv = std::iter::once(String::new()).chain(args.iter().cloned());
    let parsed = match step.kind {
        StepKind::Run => StepRun::try_parse_from(argv).ok().map(|p| {
            let a = p.args;
            if a.load.is_some() {
                load = a.load.clone();
            }
            rules = a.explain.on_late.clone();
            let e = &a.exports;
            // A step's --json is refused when the steps are checked: its result goes into
            // the scenario's document.
            for (flag, p) in [
                ("--histogram-file", &e.histogram_file),
                ("--csv", &e.csv),
                ("--samples", &e.samples),
                ("--hlog", &e.hlog),
                ("--capture-dir", &a.explain.capture_dir),
            ] {
                if let Some(p) = p {
                    paths.push((flag, p.clone()));
                }
            }
            for spec in &e.export {
                // As `run` reads it: PATH is everything after the first `=`.
                let bytes = spec.as_bytes();
                if let Some(at) = bytes.iter().position(|&b| b == b'=') {
                    let path = std::ffi::OsStr::from_bytes(&bytes[at + 1..]);
                    paths.push(("--export", path.into()));
                }
            }
        }),
        StepKind::Clocks => StepClocks::try_parse_from(argv).ok().map(|_| ()),
    };
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

    fn scenario(steps: &str) -> Scenario {
        let text = format!(
            "name = \"s\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 1\n\
             {steps}\n[table]\ntitle = \"t\"\nrows = [{{label = \"m\", metric = \"latency.max\"}}]\n\
             columns = [\"a\"]\n"
        );
        Scenario::parse(&text, "f").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn commands_and_outside_paths_are_found_in_args_load_and_quick_args() {
        let s = scenario(
            "[[steps]]\nname = \"a\"\nargs = [\"-l\", \"5\", \"--on-late\", \"1us:mark,exec=touch x\"]\n\
             quick_args = [\"-l\", \"5\", \"--hlog\", \"/tmp/a.hlog\", \"--export=csv=../b.csv\"]\n\
             load = 'exec:\"sleep 1\"'\n\
             [[steps]]\nname = \"b\"\nargs = [\"--load=stress-ng:--cpu 1\", \"--csv\", \"ok/c.csv\"]\n\
             [[steps]]\nname = \"c\"\nkind = \"clocks\"\nargs = [\"-D\", \"1s\"]\nload = \"cpu:1\"\n",
        );
        let r = review(&s);
        let cmds: Vec<String> = r.commands.iter().map(ToString::to_string).collect();
        assert_eq!(
            cmds,
            [
                "step 'a': load exec:sleep 1",
                "step 'a': --on-late exec=touch x",
                "step 'b': load stress-ng --cpu 1",
            ]
        );
        let out: Vec<String> = r.outside.iter().map(ToString::to_string).collect();
        assert_eq!(
            out,
            [
                "step 'a': --hlog '/tmp/a.hlog'",
                "step 'a': --export '../b.csv'",
            ]
        );
        let line = r.refusal("'f.toml'", false, false).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.contains("--allow-exec --allow-paths"), "{line}");
        let line = r.refusal("'f.toml'", true, false).unwrap();
        assert!(!line.contains("--allow-exec") && line.contains("--allow-paths"));
        assert_eq!(r.refusal("'f.toml'", true, true), None);
        assert_eq!(r.show_lines().len(), 2 + 3 + 2);
    }

    #[test]
    fn a_long_refusal_names_the_first_steps_and_counts_the_rest() {
        let steps: String = (0..20)
            .map(|i| {
                format!(
                    "[[steps]]\nname = \"{}\"\nargs = [\"-l\", \"5\"]\nload = \"exec:true\"\n",
                    if i == 0 {
                        "a".to_string()
                    } else {
                        format!("s{i}")
                    }
                )
            })
            .collect();
        let r = review(&scenario(&steps));
        assert_eq!(r.commands.len(), 20);
        let line = r.refusal("f", false, true).unwrap();
        assert!(
            line.contains("step 's7'") && !line.contains("step 's8'"),
            "{line}"
        );
        assert!(line.contains("and 12 more"), "{line}");
        assert_eq!(r.show_lines().len(), 21);
    }

    #[test]
    fn named_loads_and_relative_outputs_need_nothing() {
        let s = scenario(
            "[[steps]]\nname = \"a\"\nargs = [\"-l\", \"5\", \"--hlog\", \"a.hlog\", \"--on-late\", \"1ms:capture\"]\nload = \"cpu:1\"\n",
        );
        assert_eq!(review(&s), Review::default());
        assert!(review(&s).show_lines().is_empty());
    }

    #[test]
    fn a_command_with_control_characters_is_shown_escaped() {
        let s = scenario(
            "[[steps]]\nname = \"a\"\nargs = [\"-l\", \"5\"]\n[[steps]]\nname = \"b\\u001b[2J\"\nargs = [\"-l\", \"5\"]\nload = \"exec:printf '\\u001b]0;x\\u0007'\"\n",
        );
        let line = review(&s).refusal("f", false, false).unwrap();
        assert!(!line.chars().any(char::is_control), "{line}");
        assert!(line.contains("\\u{1b}"), "{line}");
    }
}
