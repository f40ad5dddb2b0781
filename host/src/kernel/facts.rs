//! What every step of one run knows about it, and the two small helpers they share.

use std::time::{Duration, Instant};

use super::{ExecutionRequest, Lifecycle};
use crate::engines::EngineEntry;
use crate::journal::{ExecutionState, JournalPackage};
use crate::output::EventSink;

/// What a run knows about itself from the start.
pub(super) struct Facts<'a> {
    pub id: &'a str,
    pub entry: &'a EngineEntry,
    pub request: &'a ExecutionRequest,
    pub script_sha256: &'a str,
    /// The locked Python packages it mounts.
    pub packages: &'a [JournalPackage],
    pub started_at: &'a str,
    pub started: Instant,
    pub events: EventSink,
}

pub(super) fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Moves the lifecycle on. The kernel only asks for transitions the diagram allows; a bug here
/// must not take an execution's report down with it, so it is checked in debug builds only.
pub(super) fn advance(life: &mut Lifecycle, to: ExecutionState) {
    let moved = life.advance(to);
    debug_assert!(moved.is_ok(), "{moved:?}");
}
