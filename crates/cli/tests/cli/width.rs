//! Output fitted to an 80-column terminal (`COLUMNS=80`, which the program honours when its
//! output is not a terminal): no line of standard output or standard error is wider, for
//! tables (cut into parts, cells wrapped) and messages (wrapped under their label) alike.
//! Without `COLUMNS`, piped output keeps each row and message on one line.

use super::common::tickscope;

/// Display width of the widest line of `text`, in characters.
fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

/// Runs `tickscope ARGS` with `COLUMNS=80`; every line of both streams fits 80 columns.
/// Returns stdout and stderr.
fn fits_80(args: &[&str]) -> (String, String) {
    let out = tickscope()
        .env("COLUMNS", "80")
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let (n, line) = widest(text);
        assert!(
            n <= 80,
            "tickscope {args:?}: a {n}-column line on {name}:\n{line}\n\n{text}"
        );
    }
    (stdout, stderr)
}

#[test]
fn a_run_its_header_summary_and_overrun_warning_fit_80_columns() {
    let (out, err) = fits_80(&[
        "run",
        "--debug-mock",
        "20us,30us,2.5ms",
        "-t",
        "2",
        "-l",
        "3000",
    ]);
    assert!(out.contains("system:  Linux"), "{out}");
    assert!(err.contains("did not keep up"), "{err}");
    // Six threads: the summary with a row per thread.
    fits_80(&[
        "run",
        "--debug-mock",
        "20us,30us",
        "-t",
        "6",
        "-l",
        "500",
        "-q",
    ]);
}

#[test]
fn the_methods_table_fits_80_columns_without_breaking_a_figure() {
    let (out, _) = fits_80(&[
        "run",
        "--debug-mock",
        "20us,30us,2.5ms",
        "--method",
        "all",
        "-l",
        "300",
    ]);
    // Cut into parts, each repeating the method's name; figures stay with their units.
    assert!(out.matches("│ nanosleep-abs ").count() >= 2, "{out}");
    assert!(out.contains("30.1 µs") && out.contains("2.50 ms"), "{out}");
}

#[test]
fn tasks_plan_scenarios_and_clocks_fit_80_columns() {
    fits_80(&["plan", "--tasks", "1ms:work=50us,2.5ms:work=200us,10ms"]);
    fits_80(&[
        "run",
        "--tasks",
        "1ms:work=50us,2.5ms:work=200us,10ms",
        "-l",
        "200",
    ]);
    let (list, _) = fits_80(&["scenario", "list"]);
    assert!(list.contains("ols-2006"), "{list}");
    fits_80(&["scenario", "run", "periodic-task", "--quick"]);
    fits_80(&["clocks", "--duration", "300ms"]);
    fits_80(&["run", "--help"]);
}

#[test]
fn doctor_fits_80_columns() {
    let (out, _) = fits_80(&["doctor"]);
    assert!(out.contains("checks on CPUs"), "{out}");
}

#[test]
fn piped_output_without_columns_keeps_lines_whole() {
    let out = tickscope().args(["scenario", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ols = text.lines().find(|l| l.starts_with("ols-2006")).unwrap();
    assert!(
        ols.contains("Thomas Gleixner"),
        "one line per scenario: {text}"
    );
}
