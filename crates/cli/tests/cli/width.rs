//! Output fitted to an 80-column terminal (`COLUMNS=80`, which the program honours when its
//! output is not a terminal): no line of standard output or standard error is wider, for
//! tables (cut into parts, cells wrapped) and messages (wrapped under their label) alike.
//! Without `COLUMNS`, piped output keeps each row and message on one line. A task set's
//! run, comparison and gate at 80, 100 and 120 columns, and on a pseudo-terminal that
//! reports columns and no rows (as `script -c 'stty cols 100; …'` makes).

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
    fits(80, args)
}

/// Runs `tickscope ARGS` with `COLUMNS=width`; every line of both streams fits `width`
/// columns. Returns stdout and stderr.
fn fits(width: usize, args: &[&str]) -> (String, String) {
    let out = tickscope()
        .env("COLUMNS", width.to_string())
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
            n <= width,
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

/// `tickscope ARGS` with its standard output and error on a pseudo-terminal whose window is
/// `cols` columns and 0 rows; what it printed, or `None` when no pseudo-terminal can be made.
fn on_terminal(cols: u16, args: &[&str]) -> Option<String> {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let size = libc::winsize {
        ws_row: 0,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let (mut controller, mut terminal) = (-1, -1);
    // SAFETY: the ints receive the descriptors; name and termios may be null; the winsize
    // pointer points to one (openpty(3)).
    let rc = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: openpty succeeded; the two descriptors are ours alone.
    let (controller, terminal) = unsafe {
        (
            OwnedFd::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    };
    let mut child = std::process::Command::new(super::common::bin())
        .env_remove("COLUMNS")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(terminal.try_clone().unwrap())
        .stderr(terminal)
        .spawn()
        .unwrap();
    // The child holds the only terminal descriptors: reading ends (EIO) when it exits.
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(controller);
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = file.read(&mut chunk) {
            bytes.extend_from_slice(&chunk[..n]);
        }
        bytes
    });
    let status = child.wait().unwrap();
    let text = String::from_utf8_lossy(&reader.join().unwrap()).replace('\r', "");
    assert!(status.success(), "tickscope {args:?}: {status}\n{text}");
    Some(text)
}

#[test]
fn a_task_set_fits_80_100_and_120_columns_run_compare_and_gate() {
    let dir = tempfile::tempdir().unwrap();
    let t1 = dir.path().join("t1.json");
    let t2 = dir.path().join("t2.json");
    let (t1, t2) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let tasks = "1ms:work=50us,2.5ms:work=200us,10ms";
    // On a terminal that reports 100 columns and no rows, the 13-column task table is cut.
    let Some(text) = on_terminal(100, &["run", "--tasks", tasks, "-l", "300", "--json", t1]) else {
        eprintln!(
            "skipping the pseudo-terminal part: openpty failed: {}",
            std::io::Error::last_os_error()
        );
        fits(100, &["run", "--tasks", tasks, "-l", "300", "--json", t1]);
        fits(100, &["run", "--tasks", tasks, "-l", "300", "--json", t2]);
        return;
    };
    let (n, line) = widest(&text);
    assert!(
        n <= 100,
        "a {n}-column line on the terminal:\n{line}\n\n{text}"
    );
    assert!(text.matches("│ 2.5ms (2.50 ms) ").count() >= 2, "{text}");
    for width in [80, 100, 120] {
        let (out, _) = fits(width, &["run", "--tasks", tasks, "-l", "300", "--json", t2]);
        assert!(out.contains("deadline misses"), "{out}");
        let (out, _) = fits(width, &["compare", t1, t2]);
        assert!(out.contains("t2: 2.5ms") || out.contains("2.5ms"), "{out}");
        let out = tickscope()
            .env("COLUMNS", width.to_string())
            .args(["gate", t1, t2])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let (n, line) = widest(&text);
        assert!(n <= width, "gate: a {n}-column line:\n{line}\n\n{text}");
        assert!(text.contains("task 2.5ms"), "{text}");
    }
    // Neither a terminal nor COLUMNS: the task table stays whole, one row per line.
    let out = tickscope()
        .args(["run", "--tasks", tasks, "-l", "300", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains("task ") && l.contains("budget overruns")),
        "{text}"
    );
}
