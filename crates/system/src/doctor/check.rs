//! What a doctor check is: [`Check`], one per file in [`super::checks`], and the
//! [`Context`] it is asked about (the measured CPUs among the online ones).

use super::Finding;
use crate::facts::Facts;

/// What the checks are asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The CPUs to be measured (sorted, non-empty).
    pub cpus: Vec<usize>,
    /// The online CPUs (sorted).
    pub online: Vec<usize>,
}

impl Context {
    /// The online CPUs not measured (housekeeping candidates).
    pub fn others(&self) -> Vec<usize> {
        self.online
            .iter()
            .copied()
            .filter(|c| !self.cpus.contains(c))
            .collect()
    }

    /// A concrete split for the fixes: (housekeeping CPUs, CPUs to measure). The CPUs not
    /// measured and the measured ones when some CPU is not measured; when every online CPU
    /// is measured, the first one for housekeeping and the rest to measure; `None` on a
    /// machine with a single CPU (nothing can be set apart).
    pub fn split(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        let others = self.others();
        if !others.is_empty() {
            return Some((others, self.cpus.clone()));
        }
        match self.cpus.split_first() {
            Some((first, rest)) if !rest.is_empty() => Some((vec![*first], rest.to_vec())),
            _ => None,
        }
    }

    /// Whether `set` includes any measured CPU.
    pub fn touches(&self, set: &[usize]) -> bool {
        set.iter().any(|c| self.cpus.contains(c))
    }

    /// The measured CPUs in `set`.
    pub fn measured_in(&self, set: &[usize]) -> Vec<usize> {
        self.cpus
            .iter()
            .copied()
            .filter(|c| set.contains(c))
            .collect()
    }
}

/// One check: facts in, findings out (usually one).
pub trait Check: Sync {
    /// The id of its findings, `area.name`.
    fn id(&self) -> &'static str;
    /// What it looks at, one sentence (the checks table in docs/doctor.md is made from it).
    fn about(&self) -> &'static str;
    /// Whether its findings bear on a measuring run (embedded with a run's result).
    fn bears_on_run(&self) -> bool {
        true
    }
    /// The findings for `facts` and `ctx`; an unreadable fact gives a
    /// [`Severity::Unknown`](super::Severity::Unknown) finding with the reason, never a panic.
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding>;
}
