//! `tickscope compare`: read result files of any known format and print them side by side.

use crate::cli::CompareArgs;
use crate::exit::Failure;
use tickscope_report::compare::{format_by_name, Comparison};
use tickscope_report::import;

/// Reads every file, then prints the comparison in the chosen format on stdout.
///
/// # Errors
/// [`Failure::Usage`] naming the first file that cannot be read or understood, or for more
/// labels than columns. A standard output that cannot be written is handled by
/// [`crate::console`].
pub fn execute(args: &CompareArgs) -> Result<(), Failure> {
    let factor = import::hlog::unit_factor(&args.hlog_unit).ok_or_else(|| {
        Failure::Usage(format!(
            "--hlog-unit '{}' is not a unit; use ns, us or ms",
            args.hlog_unit
        ))
    })?;
    let mut columns = Vec::new();
    for path in &args.files {
        columns.extend(import::read(path).map_err(|e| Failure::Usage(e.to_string()))?);
    }
    for c in &mut columns {
        import::hlog::rescale(c, factor);
    }
    let cmp = Comparison::new(columns, &args.labels).map_err(Failure::Usage)?;
    let format = format_by_name(&args.format)
        .ok_or_else(|| Failure::Usage(format!("unknown format '{}'", args.format)))?;
    crate::console::raw(format.render(&cmp).as_bytes());
    Ok(())
}
