//! What every module of the CLI tests needs: the binary under test.

use assert_cmd::Command;
use std::path::PathBuf;

/// `tickscope`, as cargo built it for this test run.
pub fn tickscope() -> Command {
    Command::cargo_bin("tickscope").unwrap()
}

/// The path of the `tickscope` binary, for `std::process::Command` (signals, pipes).
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("tickscope")
}
