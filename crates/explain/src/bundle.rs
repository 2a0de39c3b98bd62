//! A capture bundle (`--on-late …:capture`): what is kept of one late wake-up — its
//! breakdown, the decoded trace window around it, the latest window's `/proc` context and
//! the run's settings. The [`crate::controller`] fills it; the report crate writes it as a
//! directory.

use crate::context::WindowContext;
use crate::{Breakdown, Event, LateSample};
use serde::Serialize;

/// What a bundle holds.
#[derive(Debug, Clone, Serialize)]
pub struct Bundle {
    /// The late wake-up.
    pub sample: LateSample,
    /// Its breakdown (absent without a trace).
    pub breakdown: Option<Breakdown>,
    /// The decoded trace events around it (empty without a trace).
    pub events: Vec<Event>,
    /// Why the trace is missing, if it is.
    pub trace_note: Option<String>,
    /// The newest window's `/proc` context.
    pub context: Option<WindowContext>,
    /// The run's configuration and applied settings.
    pub settings: serde_json::Value,
}
