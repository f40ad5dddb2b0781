//! What every phase of one run knows about it from the start.

use std::time::{Duration, Instant};

use super::ExecutionRequest;
use crate::engines::EngineEntry;
use crate::journal::JournalPackage;
use crate::output::EventSink;

/// What a run knows about itself once it is prepared.
pub(super) struct Facts<'k> {
    pub id: String,
    pub entry: &'k EngineEntry,
    pub request: ExecutionRequest,
    pub script_sha256: String,
    /// The locked Python packages it mounts.
    pub packages: Vec<JournalPackage>,
    pub started_at: String,
    pub started: Instant,
    /// The caller's events, and the run's log.
    pub events: EventSink,
}

pub(super) fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}
