//! The messages workers and front doors exchange over NATS, as JSON. A request carries hashes;
//! the bytes (script, inputs, reports) are in the object store.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode};
use crate::journal::{ExecutionRecord, RecordMode};
use crate::kernel::RunReport;
use crate::limits::Limits;
use crate::permissions::Policy;

/// Scripts and reports up to this size travel inside the messages and records that name them,
/// sparing the object store's round trips; larger ones go to the object store.
pub const MAX_INLINE_BYTES: usize = 64 << 10;

/// A run request, as queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunMessage {
    /// The submission's id: the queue's deduplication id, and the key of its run record.
    pub id: String,
    /// The script: its file name (which picks the engine) and its text's sha256.
    pub script: FileRef,
    /// The script's text itself when it is small ([`MAX_INLINE_BYTES`]); otherwise it is in the
    /// object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_text: Option<String>,
    /// An engine id that overrides the choice by extension.
    pub engine: Option<String>,
    /// The limits asked for; a worker lowers each to its own.
    pub limits: Limits,
    /// The tools the submitter allows; a worker allows no more than its own flags.
    pub policy: Policy,
    /// The session whose state it shares.
    pub session: String,
    /// Input files, each at its path under `/input` (`data.csv`, `dataset/a/b.json`).
    pub inputs: Vec<FileRef>,
    /// Whether progress is sent back as it happens.
    pub progress: bool,
    /// What the journal keeps for replay.
    pub record: RecordMode,
}

/// A journal record as a worker publishes it on the journal stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The worker that ran the attempt.
    pub worker: String,
    /// The queued run's id.
    pub run: String,
    /// Which attempt at it (1 first; more after a worker died).
    pub attempt: u32,
    /// The record, as the worker's own journal has it.
    pub record: ExecutionRecord,
}

/// A file by path and content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    /// Its path (`/`-separated, relative).
    pub path: String,
    /// sha256 of its bytes.
    pub sha256: String,
    /// Its size.
    pub size: u64,
}

/// What a worker sends to a request's reply subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A worker took the run and is starting it.
    Taken {
        /// The worker.
        worker: String,
        /// The limits asked for that it lowered to its own, each as `--FLAG VALUE` with the
        /// value it runs with.
        #[serde(default)]
        lowered: Vec<String>,
    },
    /// The script reported progress.
    Progress {
        /// What is happening.
        message: String,
        /// Units done.
        completed: Option<f64>,
        /// Units in all.
        total: Option<f64>,
    },
    /// The run ended, or did not happen (a bad request, a cancellation, or an earlier attempt
    /// that may have had effects): its outcome as the run's record keeps it, so that a report
    /// too big for one message comes through the object store.
    Ended {
        /// How it ended.
        outcome: StoredOutcome,
        /// The worker that ran or refused it.
        worker: String,
    },
}

/// The record of a submitted run in the `forge_runs` bucket: who owns it, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Attempts so far (1 for the first delivery).
    pub attempt: u32,
    /// The worker running (or that ran) the latest attempt.
    pub worker: String,
    /// When the latest attempt started.
    pub started_at: String,
    /// Whether the latest attempt reached its first effect: it may have changed something
    /// outside itself, so it is never run again.
    pub effects: bool,
    /// How it ended, once it has.
    pub outcome: Option<StoredOutcome>,
}

/// How a submitted run ended, kept so that a redelivered request is answered again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoredOutcome {
    /// Its report: inline when small ([`MAX_INLINE_BYTES`]), otherwise in the object store.
    Report {
        /// The report itself, when small.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inline: Option<Box<RunReport>>,
        /// sha256 of the report's JSON, when it is in the object store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
        /// The files it published, in the object store.
        #[serde(default)]
        files: Vec<FileRef>,
    },
    /// It was refused.
    Refused {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
    },
}

impl StoredOutcome {
    /// The outcome of a run that did not happen, or whose report was lost.
    pub fn refused(error: &Error) -> Self {
        Self::Refused {
            code: error.code,
            message: error.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_unknown_fields_are_refused() {
        let message = RunMessage {
            id: "s1".into(),
            script: FileRef {
                path: "a.js".into(),
                sha256: "ab".repeat(32),
                size: 8,
            },
            script_text: Some("return 1".into()),
            engine: None,
            limits: Limits::default(),
            policy: Policy::default(),
            session: "s".into(),
            inputs: Vec::new(),
            progress: true,
            record: RecordMode::Full,
        };
        let text = serde_json::to_string(&message).expect("encode");
        assert_eq!(
            serde_json::from_str::<RunMessage>(&text).expect("decode"),
            message
        );
        let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
        value["extra"] = serde_json::json!(1);
        assert!(serde_json::from_value::<RunMessage>(value).is_err());
    }
}
