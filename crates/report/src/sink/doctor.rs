//! The findings of `tickscope doctor` that bear on a run (preemption model, isolation, IRQ
//! affinity, RT throttling, idle states, PM QoS, clocksource, …), read once before the run
//! starts and kept in the result document (`doctor`), so a result carries what on its
//! machine limited it. Only findings that are not `ok` are kept.

use super::{RunSink, SinkError};
use crate::document::RunDocument;
use tickscope_engine::doctor::{Finding, Severity};

/// Adds the run's doctor findings to the document.
pub struct DoctorSink {
    findings: Vec<Finding>,
}

impl DoctorSink {
    /// Reads the findings for a run on `cpus` (all CPUs the process may use when empty).
    /// Reads `/proc` and `/sys`; call it before measuring.
    pub fn new(cpus: &[usize]) -> Self {
        let findings = tickscope_engine::doctor::findings_for_run(cpus)
            .into_iter()
            .filter(|f| f.severity != Severity::Ok)
            .collect();
        DoctorSink { findings }
    }
}

impl RunSink for DoctorSink {
    fn annotate(&mut self, doc: &mut RunDocument) {
        doc.doctor = Some(self.findings.clone());
    }

    fn finish(&mut self, _doc: &RunDocument, _notes: &mut Vec<String>) -> Result<(), SinkError> {
        Ok(())
    }
}
