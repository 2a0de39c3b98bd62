//! What the oracle's tests share: running a script of `bench/oracle/` under python3.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `bench/oracle/<script>` with `python3 -B` and `args`, and checks that it exited 0
/// (its output in the failure message). `None`, after printing that test `test` is skipped
/// and why, where python3 cannot be run.
///
/// # Panics
/// When the script exits with a status other than 0.
pub fn oracle_script<S: AsRef<OsStr>>(test: &str, script: &str, args: &[S]) -> Option<Output> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/oracle")
        .join(script);
    let out = match Command::new("python3")
        .arg("-B")
        .arg(&path)
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping {test}: python3 not runnable ({e})");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{script} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out)
}
