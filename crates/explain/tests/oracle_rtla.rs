//! rtla's verdict beside ours: `bench/oracle.sh` runs each plant again with `rtla timerlat
//! top -a` where the timerlat tracer exists, and `bench/oracle/rtla.py` reads rtla's
//! auto-analysis into the oracle's vocabulary. This project's VM has no timerlat tracer, so
//! the parser is checked here on samples laid out as rtla prints them (its self-test), not
//! on a live run.

mod common;

#[test]
fn rtla_auto_analysis_samples_parse_into_the_oracle_vocabulary() {
    let Some(out) = common::oracle_script(
        "rtla_auto_analysis_samples_parse_into_the_oracle_vocabulary",
        "rtla.py",
        &["--self-test"],
    ) else {
        return;
    };
    assert!(String::from_utf8_lossy(&out.stdout).contains("samples parsed as expected"));
}
