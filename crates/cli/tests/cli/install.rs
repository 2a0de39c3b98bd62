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
