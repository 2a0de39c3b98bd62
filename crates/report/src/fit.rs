//! Text and tables fitted to the terminal's width.
//!
//! The width is that of the terminal the text goes to; when it goes to a file or a pipe, the
//! `COLUMNS` environment variable if set (so `COLUMNS=80 tickscope clocks | less` fits 80
//! columns), else none: output that is not for a terminal keeps every table row and every
//! message on one line, for `grep` and scripts. The command line sets the width once
//! ([`set_width`]); renderers then:
//!
//! * [`table`] — a table of figures wider than the terminal is cut into several tables
//!   stacked one under the other, each repeating the first column (the row's name), so no
//!   number is broken over two lines; a column too wide even on its own is wrapped;
//! * [`text_table`] — a table of prose (the doctor's findings, the scenarios) wraps its cells
//!   within the width (comfy-table's dynamic arrangement);
//! * [`wrap`] — a message wraps at word boundaries, continuation lines indented under the
//!   text after its label (`system:  `, `tickscope: `).

use comfy_table::{ColumnConstraint, ContentArrangement, Table};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The width text is fitted to, columns; 0 for none.
static WIDTH: AtomicUsize = AtomicUsize::new(0);

/// The narrowest width honoured, columns: below it, text is not fitted at all.
pub const MIN_WIDTH: usize = 20;

/// `COLUMNS` from the environment, when set to a whole number of at least [`MIN_WIDTH`].
pub fn columns_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|w| *w >= MIN_WIDTH)
}

/// The width of the terminal `stream` is, else [`columns_env`].
///
/// The terminal's width is its column count from the `TIOCGWINSZ` ioctl (ioctl_tty(2)); a
/// terminal that reports columns and no rows (a pseudo-terminal given only `stty cols N`, as
/// under `script -c`) still has that width.
pub fn width_of(stream: impl std::os::fd::AsFd) -> Option<usize> {
    terminal_columns(stream.as_fd()).or_else(columns_env)
}

/// The column count of the terminal `fd` is, `None` when it is not a terminal or reports 0.
fn terminal_columns(fd: std::os::fd::BorrowedFd<'_>) -> Option<usize> {
    use std::os::fd::AsRawFd;
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `fd` is open for the borrow's lifetime; TIOCGWINSZ writes one `winsize` to the
    // pointer, which points to one; on anything but a terminal it fails with ENOTTY.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
    (rc == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// The width of standard error's terminal (warnings), else [`columns_env`].
pub fn stderr_width() -> Option<usize> {
    width_of(std::io::stderr())
}

/// Sets the width tables and messages are fitted to from now on; `None`: not fitted.
pub fn set_width(width: Option<usize>) {
    WIDTH.store(
        width.filter(|w| *w >= MIN_WIDTH).unwrap_or(0),
        Ordering::Relaxed,
    );
}

/// The width set by [`set_width`], if any.
pub fn width() -> Option<usize> {
    match WIDTH.load(Ordering::Relaxed) {
        0 => None,
        w => Some(w),
    }
}

/// The widest line of `text`, in characters (the tables' box drawing is one column each).
pub fn text_width(text: &str) -> usize {
    text.lines()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(0)
}

/// `t` showing only the columns in `shown`.
fn with_columns(t: &Table, shown: &[usize]) -> Table {
    let mut part = t.clone();
    for (i, col) in part.column_iter_mut().enumerate() {
        if !shown.contains(&i) {
            col.set_constraint(ColumnConstraint::Hidden);
        }
    }
    part
}

/// A table of figures rendered within [`width`]: as it is when it fits; else cut into
/// tables of consecutive columns that each fit, every one starting with the first column,
/// stacked with a blank line between them. A first column with one other column that still
/// does not fit is wrapped (comfy-table's dynamic arrangement).
pub fn table(t: &Table) -> String {
    table_within(t, width())
}

/// [`table`] for an explicit width (`None`: as it is).
pub fn table_within(t: &Table, width: Option<usize>) -> String {
    let whole = t.to_string();
    let Some(w) = width else { return whole };
    let columns = t.column_iter().count();
    if text_width(&whole) <= w || columns < 2 {
        return if text_width(&whole) <= w {
            whole
        } else {
            text_table_within(t, Some(w))
        };
    }
    let fits = |shown: &[usize]| text_width(&with_columns(t, shown).to_string()) <= w;
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut current = vec![0];
    for c in 1..columns {
        current.push(c);
        if current.len() > 2 && !fits(&current) {
            current.pop();
            parts.push(std::mem::replace(&mut current, vec![0, c]));
        }
    }
    parts.push(current);
    parts
        .iter()
        .map(|shown| {
            let part = with_columns(t, shown);
            match fits(shown) {
                true => part.to_string(),
                false => text_table_within(&part, Some(w)),
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A table of prose rendered within [`width`], its cells wrapped to fit.
pub fn text_table(t: &Table) -> String {
    text_table_within(t, width())
}

/// [`text_table`] for an explicit width (`None`: as it is).
pub fn text_table_within(t: &Table, width: Option<usize>) -> String {
    let Some(w) = width else {
        return t.to_string();
    };
    let mut t = t.clone();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(u16::try_from(w).unwrap_or(u16::MAX));
    t.to_string()
}

/// Where a line's text starts after its label: after `label:` and its spaces
/// (`system:  `, `tickscope: `), or after a first word and the run of two or more spaces
/// that follows it (`ols-2006        …`); `None` when the line has no such label.
fn label_end(line: &str) -> Option<usize> {
    let first = line.find(|c: char| c.is_whitespace())?;
    let word = &line[..first];
    let spaces = line[first..]
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(0);
    if spaces == 0 {
        return None;
    }
    let labelled = word.ends_with(':') || spaces >= 2;
    labelled.then_some(first + spaces)
}

/// Wraps every line of `text` that is wider than `width` at word boundaries, each
/// continuation indented under the text after the line's label (see the module
/// documentation), or by two spaces more than the line when it has none — or when the
/// label takes more than half the width. Lines of tables (box drawing) are left alone.
pub fn wrap_within(text: &str, width: Option<usize>) -> String {
    let Some(w) = width else {
        return text.to_string();
    };
    let mut out: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let boxed = line.contains(['│', '┌', '└', '├', '╞', '┆', '─']);
        if boxed || textwrap::core::display_width(line) <= w {
            out.push(line.to_string());
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let indent = match label_end(line.trim_start()) {
            Some(end) if lead + end <= w / 2 => lead + end,
            _ => lead + 2,
        };
        let rest = " ".repeat(indent);
        let opts = textwrap::Options::new(w)
            .subsequent_indent(&rest)
            .break_words(true);
        out.extend(
            textwrap::wrap(line, opts)
                .into_iter()
                .map(|l| l.into_owned()),
        );
    }
    out.join("\n")
}

/// [`wrap_within`] at [`width`].
pub fn wrap(text: &str) -> String {
    wrap_within(text, width())
}

/// Prints `tickscope: {message}` on standard error, wrapped to its terminal's width
/// ([`stderr_width`]).
pub fn warn(message: &str) {
    eprintln!(
        "{}",
        wrap_within(&format!("tickscope: {message}"), stderr_width())
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::presets::UTF8_FULL_CONDENSED;

    fn wide() -> Table {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(vec![
            "method", "samples", "lat p50", "lat p99", "lat max", "dt SD", "overruns", "CPU",
            "notes",
        ]);
        t.add_row(vec![
            "nanosleep-abs",
            "10000",
            "30.1 µs",
            "2.50 ms",
            "7.23 ms",
            "1.29 ms",
            "1332",
            "0.4 %",
            "margin 127 µs (auto 56.0 µs–373 µs), 51/9996 sleeps late",
        ]);
        t
    }

    #[test]
    fn a_wide_table_of_figures_is_cut_into_tables_that_fit() {
        let t = wide();
        assert!(text_width(&t.to_string()) > 80);
        let fitted = table_within(&t, Some(80));
        assert!(text_width(&fitted) <= 80, "{fitted}");
        // Every part repeats the row's name; no figure is broken from its unit.
        assert!(fitted.matches("nanosleep-abs").count() >= 2, "{fitted}");
        for figure in ["30.1 µs", "2.50 ms", "7.23 ms", "1.29 ms", "0.4 %"] {
            assert!(fitted.contains(figure), "{figure} in {fitted}");
        }
        assert_eq!(table_within(&t, None), t.to_string(), "no width: as it is");
    }

    /// A pseudo-terminal whose window size is `cols` × `rows`: (controller, terminal).
    fn pty(cols: u16, rows: u16) -> Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
        use std::os::fd::FromRawFd;
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let (mut controller, mut terminal) = (-1, -1);
        // SAFETY: the two ints receive the new descriptors, the name pointer may be null, the
        // termios pointer may be null, the winsize pointer points to one (openpty(3)).
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
        // SAFETY: openpty succeeded: both descriptors are open and owned by nobody else.
        unsafe {
            Some((
                std::os::fd::OwnedFd::from_raw_fd(controller),
                std::os::fd::OwnedFd::from_raw_fd(terminal),
            ))
        }
    }

    #[test]
    fn a_terminal_reporting_columns_and_no_rows_has_its_width() {
        let Some((_controller, terminal)) = pty(100, 0) else {
            eprintln!(
                "skipping: openpty failed (no /dev/ptmx): {}",
                std::io::Error::last_os_error()
            );
            return;
        };
        assert_eq!(
            terminal_columns(std::os::fd::AsFd::as_fd(&terminal)),
            Some(100)
        );
        let Some((_controller, terminal)) = pty(132, 40) else {
            return;
        };
        assert_eq!(
            terminal_columns(std::os::fd::AsFd::as_fd(&terminal)),
            Some(132)
        );
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(
            terminal_columns(std::os::fd::AsFd::as_fd(&null)),
            None,
            "not a terminal"
        );
    }

    #[test]
    fn a_table_of_prose_wraps_its_cells() {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(vec!["check", "fix"]);
        t.add_row(vec![
            "kernel.preempt",
            &"boot with preempt=full and then ".repeat(8),
        ]);
        let fitted = text_table_within(&t, Some(80));
        assert!(text_width(&fitted) <= 80, "{fitted}");
    }

    #[test]
    fn messages_wrap_under_their_label() {
        let line = format!(
            "system:  Linux {}",
            "6.18.44 x86_64, 2 × AMD EPYC, ".repeat(5)
        );
        let wrapped = wrap_within(&line, Some(80));
        assert!(text_width(&wrapped) <= 80, "{wrapped}");
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 1);
        assert!(lines[1..]
            .iter()
            .all(|l| l.starts_with("         ") && !l.starts_with("          ")));
        let name = format!("ols-2006        {}", "a sentence that is long ".repeat(6));
        let wrapped = wrap_within(&name, Some(80));
        assert!(wrapped.lines().nth(1).unwrap().starts_with(&" ".repeat(16)));
        assert_eq!(wrap_within(&line, None), line, "no width: one line");
        let boxed = format!("│ {} │", "x".repeat(100));
        assert_eq!(
            wrap_within(&boxed, Some(80)),
            boxed,
            "tables are left alone"
        );
    }
}
