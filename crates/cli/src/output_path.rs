//! Every output of a command, prepared and checked before anything is measured.
//!
//! Each destination is checked by [`tickscope_report::Output::prepare`] (directory, missing
//! or read-only directory, name too long, `/proc`, special files and `-`); then no two
//! outputs, and no output and input, may name the same file. All of it fails with one line
//! and exit status 2 before the first wake-up.

use crate::exit::Failure;
use std::path::Path;
use tickscope_report::output::identity::first_clash;
use tickscope_report::output::Identity;
use tickscope_report::{quoted, Output};

/// Outputs by flag, prepared and checked against each other and against `inputs`.
///
/// Sends person-readable text to standard error when one of them is standard output.
///
/// # Errors
/// [`Failure::Usage`] naming the flag and the problem, or the two flags that name one file.
pub fn prepare_outputs(wanted: &[(&str, &Path)], inputs: &[&Path]) -> Result<Vec<Output>, Failure> {
    let mut outputs = Vec::with_capacity(wanted.len());
    for (flag, path) in wanted {
        let out = Output::prepare(path).map_err(|e| Failure::Usage(format!("{flag}: {e}")))?;
        outputs.push(out);
    }
    let ids: Vec<Identity> = outputs.iter().map(Output::identity).collect();
    if let Some((i, j)) = first_clash(&ids) {
        return Err(Failure::Usage(format!(
            "{} and {} both name {}; give each output its own file",
            wanted[i].0,
            wanted[j].0,
            quoted(wanted[j].1)
        )));
    }
    for input in inputs {
        let id = Identity::of_path(input);
        if let Some(i) = ids.iter().position(|o| o.clashes_with(&id)) {
            return Err(Failure::Usage(format!(
                "{} would overwrite the input {}; choose another output file",
                wanted[i].0,
                quoted(input)
            )));
        }
    }
    if outputs.iter().any(Output::is_stdout) {
        crate::console::text_to_stderr();
    }
    Ok(outputs)
}

/// Writes a finished output, naming it in the error.
///
/// # Errors
/// [`Failure::Runtime`] with the path and the OS error.
pub fn finish(out: Output, bytes: &[u8]) -> Result<(), Failure> {
    let q = quoted(out.path());
    out.finish(bytes)
        .map_err(|e| Failure::Runtime(format!("cannot write {q}: {e}")))
}
