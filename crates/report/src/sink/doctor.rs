//! The findings of `tickscope doctor` that bear on a run (preemption model, isolation, IRQ
//! affinity, RT throttling, idle states, PM QoS, clocksource, …), read once and kept in the
//! result document (`doctor`), so a result carries what on its machine limited it. Only
//! findings that are not `ok` are kept.
//!
//! They are read when the first document is built — after the first run's last wake-up —
//! not before measuring: reading `/proc` and `/sys` (the kernel configuration among them)
//! was most of the instructions from exec to the first expiry, and nothing the run needs.
//! The content is the same: every setting a run changes (policy, PM QoS, timer slack,
//! memory lock) is back as it was when the run ends.

use super::{RunSink, SinkError};
use crate::document::RunDocument;
use tickscope_system::doctor::{Finding, Severity};

/// Adds the run's doctor findings to the document.
pub struct DoctorSink {
    cpus: Vec<usize>,
    findings: Option<Vec<Finding>>,
}

impl DoctorSink {
    /// The findings for a run on `cpus` (all CPUs the process may use when empty), read
    /// from `/proc` and `/sys` when the first document is annotated (see the module docs).
    pub fn new(cpus: &[usize]) -> Self {
        DoctorSink {
            cpus: cpus.to_vec(),
            findings: None,
        }
    }
}

impl RunSink for DoctorSink {
    fn annotate(&mut self, doc: &mut RunDocument) {
        let cpus = &self.cpus;
        let findings = self.findings.get_or_insert_with(|| {
            tickscope_system::doctor::findings_for_run(cpus)
                .into_iter()
                .filter(|f| f.severity != Severity::Ok)
                .collect()
        });
        doc.doctor = Some(findings.clone());
    }

    fn finish(&mut self, _doc: &RunDocument, _notes: &mut Vec<String>) -> Result<(), SinkError> {
        Ok(())
    }
}
