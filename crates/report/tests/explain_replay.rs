//! `monitor --explain`'s long path at a small volume: the oracle's recordings replayed
//! through the BPF record format, the decoder, the window, the attribution, the cause
//! tables, the `monitor` counters and the textfile (`bench/explain-replay.sh` runs the same
//! code for a virtual day). Structure only: every table the path keeps stays within its
//! bound while names churn, and the cause counters add up to the late wake-ups.

#[path = "../examples/explain_replay/replay.rs"]
#[allow(dead_code)]
mod replay;

use replay::{Replay, KEEP_BREAKDOWNS};
use std::path::Path;
use tickscope_explain::name::NAMES_KEPT;

#[test]
fn the_long_path_keeps_bounded_tables_while_names_churn() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../explain/tests/fixtures/oracle");
    let threads = 16;
    let mut r = Replay::load(&fixtures, threads, 100_000, replay::WINDOW_KEEP_NS)
        .expect("the oracle's recordings load");
    // 16 threads, one late wake-up each per virtual second, for 5 virtual minutes; every
    // task named anew (100 000 variants per recorded name).
    let mut sizes = Vec::new();
    for second in 0..300i64 {
        for k in 0..threads {
            r.late_wakeup(k, second * 1_000_000_000 + k as i64 * 1_000_000);
        }
        if second % 10 == 9 {
            r.publish().expect("textfile written");
            sizes.push(r.sizes());
        }
    }
    let (counted, late) = r.counted();
    assert_eq!(late, 300 * threads as u64);
    assert_eq!(
        counted, late,
        "the cause counters add up to the late wake-ups"
    );
    assert!(r.records > late, "records decoded: {}", r.records);
    for s in &sizes {
        assert!(s.comms <= 4096 && s.names <= NAMES_KEPT, "{s:?}");
        assert!(s.details <= Replay::details_bound(), "{s:?}");
        assert!(s.culprit_series <= 5 * threads, "{s:?}");
        assert!(s.breakdowns <= KEEP_BREAKDOWNS, "{s:?}");
        // The window holds 3 s of events: at most 4 late wake-ups' worth per CPU.
        assert!(s.window <= 4 * 256 * 2 * threads, "{s:?}");
    }
    let last = sizes.last().expect("published");
    // The bounds were reached: names beyond the detail cap went to "(other names)", the
    // culprit series are the top 5 per thread, the slowest breakdowns are kept.
    assert_eq!(last.details, Replay::details_bound(), "{last:?}");
    assert_eq!(last.culprit_series, 5 * threads, "{last:?}");
    assert_eq!(last.breakdowns, KEEP_BREAKDOWNS);
    // Callbacks and IRQs are the recordings' own few, whatever the names do.
    assert!(last.symbols < 64 && last.irqs < 64, "{last:?}");
    // The cause categories are the attribution's: nothing but a few unexplained.
    let causes = r.causes();
    let unexplained: u64 = causes
        .iter()
        .filter(|(c, _)| c == "unexplained")
        .map(|c| c.1)
        .sum();
    assert!(20 * unexplained <= late, "{causes:?}");
}
