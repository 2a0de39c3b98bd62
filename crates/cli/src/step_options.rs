//! A scenario step's options read by the command line's own parser
//! ([`StepRun`], [`StepClocks`]), for the review of what a scenario would do
//! ([`tickscope_session::scenario::review`]).

use crate::cli::{StepClocks, StepRun};
use clap::Parser;
use std::os::unix::ffi::OsStrExt;
use tickscope_session::scenario::format::StepKind;
use tickscope_session::scenario::review::{StepEffects, StepOptions};

/// The command line as the reader of a step's options.
pub struct CommandLine;

impl StepOptions for CommandLine {
    fn effects(&self, kind: StepKind, args: &[String]) -> Option<StepEffects> {
        let argv = std::iter::once(String::new()).chain(args.iter().cloned());
        match kind {
            StepKind::Run => StepRun::try_parse_from(argv).ok().map(|p| run_effects(&p)),
            StepKind::Clocks => StepClocks::try_parse_from(argv)
                .ok()
                .map(|_| StepEffects::default()),
        }
    }
}

/// The load, `--on-late` rules and files of a `run` step.
fn run_effects(p: &StepRun) -> StepEffects {
    let a = &p.args;
    let e = &a.exports;
    let mut paths = Vec::new();
    // A step's --json is refused when the steps are checked: its result goes into the
    // scenario's document.
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
    StepEffects {
        load: a.load.clone(),
        on_late: a.explain.on_late.clone(),
        paths,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_session::scenario::format::Scenario;
    use tickscope_session::scenario::review::{review, Review};

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
        let r = review(&s, &CommandLine);
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
        let r = review(&scenario(&steps), &CommandLine);
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
        assert_eq!(review(&s, &CommandLine), Review::default());
        assert!(review(&s, &CommandLine).show_lines().is_empty());
    }

    #[test]
    fn a_command_with_control_characters_is_shown_escaped() {
        let s = scenario(
            "[[steps]]\nname = \"a\"\nargs = [\"-l\", \"5\"]\n[[steps]]\nname = \"b\\u001b[2J\"\nargs = [\"-l\", \"5\"]\nload = \"exec:printf '\\u001b]0;x\\u0007'\"\n",
        );
        let line = review(&s, &CommandLine).refusal("f", false, false).unwrap();
        assert!(!line.chars().any(char::is_control), "{line}");
        assert!(line.contains("\\u{1b}"), "{line}");
    }
}
