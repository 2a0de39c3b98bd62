//! `/proc/kallsyms` read line by line, as bytes: one symbol per line, "address type name
//! [module]" (proc(5); `s_show()`, kernel/kallsyms.c). The file is several MB and every
//! line costs the kernel a formatted print (≈ 30–40 ms of system time for the 122 000 lines
//! of this VM's kernel), so a reader stops as soon as it has what it wants — and at the
//! first line if the file hides the addresses from this process: without `CAP_SYSLOG`
//! (`kernel.kptr_restrict`, `kernel.perf_event_paranoid`; `kallsyms_show_value()`,
//! kernel/kallsyms.c) every address reads as zeros, and a whole pass would find nothing.

use std::io::BufRead;
use std::ops::ControlFlow;

/// Whether the reader saw the addresses, as [`each_symbol`] ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Real addresses: read to the end, or until the visitor stopped.
    Addresses,
    /// Zeros where kernel text must have an address (a `T`/`t` symbol at 0): the file hides
    /// addresses from this process, and the read stopped there.
    Hidden,
}

/// Calls `visit(address, name)` for each line of `lines` in the file's format, until it
/// returns [`ControlFlow::Break`], the input ends or a read fails. The name is the third
/// field (a module's symbols carry `[module]` after it, not part of the name).
pub(crate) fn each_symbol(
    mut lines: impl BufRead,
    mut visit: impl FnMut(u64, &[u8]) -> ControlFlow<()>,
) -> Read {
    let mut line = Vec::new();
    while matches!(lines.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        let mut f = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        if let (Some(addr), Some(kind), Some(name)) = (f.next(), f.next(), f.next()) {
            let addr = std::str::from_utf8(addr)
                .ok()
                .and_then(|a| u64::from_str_radix(a, 16).ok());
            if let Some(addr) = addr {
                if addr == 0 && matches!(kind, b"T" | b"t") {
                    return Read::Hidden;
                }
                if visit(addr, name).is_break() {
                    break;
                }
            }
        }
        line.clear();
    }
    Read::Addresses
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> (Vec<(u64, String)>, Read) {
        let mut seen = Vec::new();
        let read = each_symbol(text.as_bytes(), |a, n| {
            seen.push((a, String::from_utf8_lossy(n).into_owned()));
            ControlFlow::Continue(())
        });
        (seen, read)
    }

    #[test]
    fn lines_give_address_and_name_without_the_module() {
        let (seen, read) = names(
            "ffffffff81000000 T _stext\n\
             0000000000001000 A fixed_percpu_data\n\
             ffffffffc0a00010 t nf_timer_fn\t[nf_conntrack]\n\
             junk\n",
        );
        assert_eq!(read, Read::Addresses);
        assert_eq!(
            seen,
            [
                (0xffffffff81000000, "_stext".to_string()),
                (0x1000, "fixed_percpu_data".into()),
                (0xffffffffc0a00010, "nf_timer_fn".into()),
            ]
        );
    }

    #[test]
    fn zeros_for_kernel_text_mean_hidden_and_stop_the_read() {
        let (seen, read) = names(
            "0000000000000000 A fixed_percpu_data\n\
             0000000000000000 T _stext\n\
             0000000000000000 T hrtimer_wakeup\n",
        );
        assert_eq!(read, Read::Hidden);
        // A per-CPU symbol may sit at 0 with addresses shown: it is visited.
        assert_eq!(seen, [(0, "fixed_percpu_data".to_string())]);
    }

    #[test]
    fn the_visitor_stops_the_read() {
        let mut n = 0;
        let read = each_symbol(&b"1 T a\n2 T b\n3 T c\n"[..], |_, _| {
            n += 1;
            if n == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!((n, read), (2, Read::Addresses));
    }
}
