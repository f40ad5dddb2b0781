//! The execution journal in the data directory's redb file: one record per
//! execution and one per nested call, the state machine enforced by compare-and-set on every
//! transition, and restart reconciliation of executions a dead process left open.
//!
//! The record types it persists are defined in its schema module and re-exported here
//! ([`ExecutionRecord`], [`CallRecord`], [`ExecutionState`], ...): the on-disk format is the
//! journal's, and the kernel builds these records rather than defining them.
//!
//! Only hashes of scripts, inputs and tool inputs are kept, never their contents or results;
//! the one exception is a run's replay record (its tape), which keeps the tool responses it
//! received, by sha256, in an owner-only blob store, so that the run can be replayed.
//! Every write is one short durable transaction (about 0.4 ms here). An execution costs two:
//! it is created when its guest is about to start (already `running`, with its inputs), and
//! closed with its nested calls, metrics and publication. One that fails before it runs is
//! written once, already terminal. A crash between the two leaves a `running` record that
//! reconciliation closes. The two writes of executions that run at the same time are committed
//! in groups, one durable transaction for many of them (`group`).

mod blobs;
mod group;
mod owner;
mod reconcile;
mod resume;
mod schema;
mod store;
mod tape;
mod tapes;
mod transaction;

pub use blobs::{BlobError, Blobs};
pub use owner::Owner;
pub use resume::ResumeRefused;
pub use schema::{
    CallRecord, CallStatus, EndReason, ExecutionRecord, ExecutionState, JournalInput,
    JournalPackage, Metrics, PendingApproval, PublishedFile, SCHEMA_VERSION, SchemaError,
    StateCommitMark, Step,
};
pub use store::{Journal, ListFilter};
pub use tape::{
    BeginOutcome, CompletionOutcome, RecordMode, RecordedEntry, RecordedOutcome, RecordedTool,
    Tape, TapeEvent,
};
pub use tapes::Pruned;

/// Reads one stored record (an [`ExecutionRecord`], a [`CallRecord`], a [`StateCommitMark`])
/// from its bytes. Any bytes give the record or [`JournalError::Corrupt`], never a panic (the
/// fuzz target `journal_records`).
pub fn decode_record<T: serde::de::DeserializeOwned>(
    key: &str,
    bytes: &[u8],
) -> Result<T, JournalError> {
    transaction::decode(key, bytes)
}

use crate::datadir::DataDirError;
use crate::error::{Error, ErrorCode};

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
    pub calls: Vec<CallRecord>,
    /// Publication.
    pub out_dir: Option<String>,
    /// Published files.
    pub outputs: Vec<PublishedFile>,
    /// States passed through since the last durable step (collecting, committing).
    pub passed: Vec<ExecutionState>,
    /// The replay record, unless recording was off.
    pub tape: Option<Tape>,
    /// For a paused run, the call waiting for approval.
    pub pending: Option<PendingApproval>,
}

/// A journal operation that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// No execution has that id.
    #[error("no execution `{0}` in the journal")]
    NotFound(String),
    /// The state machine does not allow it (a second close, a skipped step).
    #[error("execution `{id}` cannot go from {} to {}", from.as_str(), to.as_str())]
    Transition {
        /// Execution id.
        id: String,
        /// Its state.
        from: ExecutionState,
        /// The state asked for.
        to: ExecutionState,
    },
    /// `advance` was asked for a terminal state, or `close` for one that is not.
    #[error("execution `{id}`: `{}` is not a state this operation moves to", to.as_str())]
    WrongOperation {
        /// Execution id.
        id: String,
        /// The state asked for.
        to: ExecutionState,
    },
    /// An execution with that id exists already.
    #[error("execution `{0}` is already in the journal")]
    Duplicate(String),
    /// The data directory's database could not be opened.
    #[error("journal")]
    Open(#[source] DataDirError),
    /// The database could not be opened again after an I/O failure.
    #[error("journal")]
    Reopen(#[source] std::sync::Arc<DataDirError>),
    /// The database is of a schema this version cannot read.
    #[error("journal")]
    Schema(#[from] SchemaError),
    /// The database failed.
    #[error("journal database")]
    Database(#[source] redb::Error),
    /// The thread that commits executions' changes is gone.
    #[error("the journal's committing thread stopped")]
    Stopped,
    /// The blob store of replay records failed.
    #[error("journal blobs")]
    Blobs(#[source] Box<BlobError>),
    /// A record does not read back.
    #[error("journal record `{key}` does not read back")]
    Corrupt {
        /// The record's key.
        key: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

impl JournalError {
    /// Whether the database met an I/O failure (a full disk, say): the same change may succeed
    /// later, on a fresh handle.
    pub fn is_io_failure(&self) -> bool {
        match self {
            JournalError::Database(error) => crate::datadir::io_failed(error),
            JournalError::Reopen(_) => true,
            _ => false,
        }
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            JournalError::NotFound(_) => ErrorCode::InvalidInput,
            _ => ErrorCode::IsolateFailure,
        }
    }
}

impl From<JournalError> for Error {
    fn from(error: JournalError) -> Self {
        Error::from_source(error.code(), error)
    }
}
