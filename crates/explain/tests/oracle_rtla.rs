//! rtla's verdict beside ours: `bench/oracle.sh` runs each plant again with `rtla timerlat
//! top -a` where the timerlat tracer exists, and `bench/oracle/rtla.py` reads rtla's
//! auto-analysis into the oracle's vocabulary. This project's VM has no timerlat tracer, so
//! the parser is checked here on samples laid out as rtla prints them (its self-test), not
//! on a live run.

use std::path::Path;
use std::process::Command;

#[test]
fn rtla_auto_analysis_samples_parse_into_the_oracle_vocabulary() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/oracle/rtla.py");
    let out = match Command::new("python3")
        .arg("-B")
        .arg(&script)
        .arg("--self-test")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping rtla_auto_analysis_samples_parse_into_the_oracle_vocabulary: python3 not runnable ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "rtla.py --self-test failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("samples parsed as expected"));
}
