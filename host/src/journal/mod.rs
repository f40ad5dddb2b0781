//! The execution journal (SPEC §4, §8, §9) in the data directory's redb file: one record per
//! execution and one per nested call, the state machine enforced by compare-and-set on every
//! transition, and restart reconciliation of executions a dead process left open.
//!
//! Only hashes of scripts, inputs and tool inputs are kept, never their contents or results.
//! Every write is one short durable transaction (about 0.4 ms here). An execution costs two:
//! it is created when its guest is about to start (already `running`, with its inputs), and
//! closed with its nested calls, metrics and publication. One that fails before it runs is
//! written once, already terminal. A crash between the two leaves a `running` record that
//! reconciliation closes.

mod reconcile;
mod schema;
mod store;

use serde::{Deserialize, Serialize};

pub use reconcile::Owner;
pub use schema::SCHEMA_VERSION;
pub use store::{Journal, ListFilter};

use crate::error::ErrorCode;
use crate::files::PublishedFile;
use crate::kernel::{ExecutionState, Metrics};
use crate::limits::Limits;
use crate::permissions::Policy;

/// An input as the journal keeps it: where it came from and the hash of what was copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalInput {
    /// Path below `/input`.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// sha256 of the copied bytes.
    pub sha256: String,
    /// The caller's path it was copied from (what `rerun` copies again).
    pub source: String,
}

/// One step of the lifecycle, with when it was reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The state reached.
    pub state: ExecutionState,
    /// When, RFC 3339 UTC.
    pub at: String,
}

/// One execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRecord {
    /// Execution id.
    pub id: String,
    /// Session whose state it used.
    pub session: String,
    /// Engine id.
    pub engine: String,
    /// sha256 of the engine component.
    pub engine_sha256: String,
    /// The script's file name.
    pub script: String,
    /// sha256 of the script source (the source itself is in the data directory's script store).
    pub script_sha256: String,
    /// Inputs as copied.
    #[serde(default)]
    pub inputs: Vec<JournalInput>,
    /// The limits it ran under (JSON, so that a later version's extra limits still read).
    pub limits: serde_json::Value,
    /// The permission policy.
    #[serde(default)]
    pub policy: Policy,
    /// Current state.
    pub status: ExecutionState,
    /// Every state reached, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Error code, once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Error message (truncated), once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Why the host ended it on its own (`interrupted` for reconciliation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Measurements, once ended by its own process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Where its outputs were published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_dir: Option<String>,
    /// Published files.
    #[serde(default)]
    pub outputs: Vec<PublishedFile>,
    /// The process that ran it (`owner_pid`, `owner_start_ticks`).
    #[serde(flatten)]
    pub owner: Owner,
}

impl ExecutionRecord {
    /// The limits it ran under; limits this version does not know are ignored.
    pub fn limits(&self) -> Limits {
        let known = serde_json::to_value(Limits::default()).unwrap_or_default();
        let mut limits = self.limits.clone();
        if let (Some(fields), Some(known)) = (limits.as_object_mut(), known.as_object()) {
            fields.retain(|key, _| known.contains_key(key));
        }
        serde_json::from_value(limits).unwrap_or_default()
    }
}

/// How an execution ended, as its own process closes it.
#[derive(Debug, Clone)]
pub struct Closing {
    /// Terminal state.
    pub status: ExecutionState,
    /// Error, unless it succeeded.
    pub error: Option<(ErrorCode, String)>,
    /// Measurements.
    pub metrics: Option<Metrics>,
    /// Nested calls.
    pub calls: Vec<crate::tools::CallRecord>,
    /// Publication.
    pub out_dir: Option<String>,
    /// Published files.
    pub outputs: Vec<PublishedFile>,
    /// States passed through since the last durable step (collecting, committing).
    pub passed: Vec<ExecutionState>,
}

/// A journal operation that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// No execution has that id.
    #[error("no execution `{0}` in the journal")]
    NotFound(String),
    /// The state machine does not allow it (a second close, a skipped step).
    #[error("execution `{id}` cannot go from {from} to {to}")]
    Transition {
        /// Execution id.
        id: String,
        /// Its state.
        from: &'static str,
        /// The state asked for.
        to: &'static str,
    },
    /// An execution with that id exists already.
    #[error("execution `{0}` is already in the journal")]
    Duplicate(String),
    /// The database failed or is from an unknown schema.
    #[error("journal: {0}")]
    Storage(String),
}

impl JournalError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            JournalError::NotFound(_) => ErrorCode::InvalidInput,
            _ => ErrorCode::IsolateFailure,
        }
    }
}

impl From<JournalError> for crate::error::Error {
    fn from(error: JournalError) -> Self {
        crate::error::Error::new(error.code(), error.to_string())
    }
}
