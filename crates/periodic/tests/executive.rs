//! The executive on the real clock: structure and counts only, never timing thresholds.

use std::process::Command;
use tickscope::{Control, Executive, OverrunPolicy, Strategy, Task};

/// 1 / 2.5 / 10 ms for 2 s: every expiry up to the end is released once (catch-up, so a
/// loaded machine delays releases but loses none), within ±1 of `⌊(2 s − t0)/T⌋ + 1`.
#[test]
fn three_tasks_for_two_seconds_release_the_expected_counts() {
    let mut ex = Executive::new(Strategy::Sleep);
    for period in [1_000_000, 2_500_000, 10_000_000] {
        ex.add(Task::new(period).overrun(OverrunPolicy::CatchUp), |_| {
            Control::Continue
        })
        .unwrap();
    }
    let n = ex.run_for(2_000_000_000).unwrap();
    let s = ex.stats();
    // t0 is one shortest period (1 ms) after the start.
    let expected = [2000u64, 800, 200];
    for (st, e) in s.iter().zip(expected) {
        assert!(
            st.releases.abs_diff(e) <= 1,
            "{} releases, expected {e}",
            st.releases
        );
        assert!(
            st.latency.as_ref().unwrap().min >= 0,
            "absolute sleeps never wake early"
        );
        assert!(st.response.as_ref().unwrap().min >= st.latency.as_ref().unwrap().min);
    }
    assert_eq!(n, s.iter().map(|s| s.releases).sum::<u64>());
}

/// `cargo test` builds the examples next to the test binaries; run the executive one.
#[test]
fn the_rust_example_runs() {
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/executive");
    if !example.exists() {
        eprintln!(
            "skipped: {} was not built (run the whole `cargo test -p tickscope`)",
            example.display()
        );
        return;
    }
    let out = Command::new(&example).arg("200").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("plan: hyperperiod 10000 us"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("task ")).count(),
        3,
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.ends_with("releases in 200 ms")),
        "{text}"
    );
}
