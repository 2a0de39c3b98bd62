//! What installing tickscope gives besides the binary: shell completions and manual pages,
//! both generated from the command line's definition.

use super::common::tickscope;

#[test]
fn completions_generate_for_every_shell() {
    for (shell, marker) in [
        ("bash", "_tickscope()"),
        ("zsh", "#compdef tickscope"),
        ("fish", "complete -c tickscope"),
    ] {
        let out = tickscope().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        assert!(text.contains("interval"), "{shell} completes run's flags");
    }
    let out = tickscope().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_pages_generate_one_per_command() {
    let out = tickscope().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH tickscope 1"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let mandir = dir.path().join("man1");
    tickscope()
        .args(["man", "--dir", mandir.to_str().unwrap()])
        .assert()
        .success();
    for name in [
        "tickscope.1",
        "tickscope-run.1",
        "tickscope-clocks.1",
        "tickscope-report.1",
    ] {
        let text = std::fs::read_to_string(mandir.join(name)).expect(name);
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{name}");
    }
    let run = std::fs::read_to_string(mandir.join("tickscope-run.1")).unwrap();
    assert!(run.contains("\\-\\-interval"), "run's page lists its flags");
}

/// The values of --method, --policy, --clock, --overrun and the scenario names complete,
/// from the registries (every method name of the engine, every built-in scenario).
#[test]
fn completions_offer_the_registries_values() {
    let methods = [
        "nanosleep-abs",
        "timerfd",
        "posix-timer",
        "hybrid",
        "busy",
        "all",
    ];
    for shell in ["bash", "zsh", "fish"] {
        let out = tickscope().args(["completions", shell]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for value in methods
            .iter()
            .chain(&["fifo", "deadline", "boottime", "tai", "catch-up"])
        {
            assert!(text.contains(value), "{shell} completes {value}");
        }
        // clap_complete's fish script completes options only, not positional arguments.
        if shell != "fish" {
            for name in ["ols-2006", "rt-2013", "hrtimers-2007", "clock-gettime-2010"] {
                assert!(text.contains(name), "{shell} completes scenario {name}");
            }
        }
    }
    // A list of methods is still accepted (the completion values do not restrict input).
    tickscope()
        .args([
            "run",
            "--method",
            "nanosleep-abs,timerfd",
            "-l",
            "3",
            "--debug-mock",
            "5us",
            "-q",
        ])
        .assert()
        .success();
}

/// Nested commands get their own pages; every page has EXIT STATUS; run's examples keep
/// their lines (unfilled, under EXAMPLES, not clap_mangen's re-flowed EXTRA).
#[test]
fn man_pages_nest_and_say_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let mandir = dir.path().join("man1");
    tickscope()
        .args(["man", "--dir", mandir.to_str().unwrap()])
        .assert()
        .success();
    let mut names: Vec<String> = std::fs::read_dir(&mandir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for nested in [
        "tickscope-hlog-stat.1",
        "tickscope-hlog-merge.1",
        "tickscope-scenario-list.1",
        "tickscope-scenario-show.1",
        "tickscope-scenario-run.1",
    ] {
        assert!(names.iter().any(|n| n == nested), "{nested} in {names:?}");
    }
    for name in &names {
        let text = std::fs::read_to_string(mandir.join(name)).unwrap();
        assert!(
            text.contains(".SH \"EXIT STATUS\""),
            "{name} has EXIT STATUS"
        );
        assert!(!text.contains(".SH EXTRA"), "{name}: no EXTRA section");
    }
    let run = std::fs::read_to_string(mandir.join("tickscope-run.1")).unwrap();
    let examples = run.find(".SH EXAMPLES").expect("run's EXAMPLES");
    let nf = run[examples..].find(".nf").unwrap();
    let fi = run[examples..].find(".fi").unwrap();
    let block = &run[examples + nf..examples + fi];
    assert!(block.contains("\\-Sp90"), "{block}");
    assert!(
        block.lines().count() >= 6,
        "one line per line of --help: {block}"
    );
    let doctor = std::fs::read_to_string(mandir.join("tickscope-doctor.1")).unwrap();
    assert!(doctor.contains("\\-\\-fail\\-on"), "{doctor}");
    assert!(
        doctor.contains("invalid"),
        "doctor's exit status 3 is explained"
    );
    let monitor = std::fs::read_to_string(mandir.join("tickscope-monitor.1")).unwrap();
    assert!(
        !monitor.contains("\\-\\-rounds"),
        "monitor's page has only its flags"
    );
}
