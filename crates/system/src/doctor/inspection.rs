//! One look at a machine or a saved tree: its facts, the CPUs to judge, how it describes
//! itself, and every check's findings, most important first.

use super::{by_importance, context, run_checks, Context, Finding};
use crate::facts::{Facts, Root};
use crate::system::{self, SystemInfo};
use std::time::Duration;

/// What `tickscope doctor` looks at and finds.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The facts read from the root.
    pub facts: Facts,
    /// The measured and online CPUs.
    pub ctx: Context,
    /// The machine: detected on the live system, else from the tree's facts (kernel
    /// release/version, online CPUs; no host name).
    pub system: SystemInfo,
    /// Every check's findings, most important first ([`by_importance`]).
    pub findings: Vec<Finding>,
}

/// Reads the facts under `root` (sampling steal time over `steal`, zero: not sampled), picks
/// the measured CPUs (`cpus`, or as [`context`] chooses) and runs every check.
///
/// # Errors
/// One sentence when `cpus` names a CPU that is not online (as [`context`]).
pub fn inspect(
    root: &Root,
    steal: Duration,
    cpus: Option<Vec<usize>>,
) -> Result<Inspection, String> {
    let facts = Facts::gather(root, steal);
    let ctx = context(&facts, cpus, root.is_live())?;
    let system = if root.is_live() {
        system::detect()
    } else {
        SystemInfo {
            kernel_release: facts.kernel.release.value().cloned().unwrap_or_default(),
            kernel_version: facts.kernel.version.value().cloned().unwrap_or_default(),
            cpu_count: ctx.online.len(),
            ..SystemInfo::default()
        }
    };
    let mut findings = run_checks(&facts, &ctx);
    by_importance(&mut findings);
    Ok(Inspection {
        facts,
        ctx,
        system,
        findings,
    })
}
