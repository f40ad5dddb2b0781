//! What an execution reports to its caller: the `--json` object of the CLI contract.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorReport;
use crate::files::InputRecord;
use crate::journal::{CallRecord, ExecutionState, Metrics, PendingApproval, PublishedFile};

/// The report of one execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Execution id.
    pub id: String,
    /// Engine id (`javascript-quickjs`, ...).
    pub engine: String,
    /// sha256 of the engine component.
    pub engine_sha256: String,
    /// sha256 of the script source.
    pub script_sha256: String,
    /// Terminal state.
    pub status: ExecutionState,
    /// The session whose state it used.
    pub session: String,
    /// The result, when the script returned one and succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The error, unless it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorReport>,
    /// Retained tail of stdout.
    pub stdout: String,
    /// Retained tail of stderr.
    pub stderr: String,
    /// Values passed to `text()`.
    pub text: Vec<Value>,
    /// Inputs as copied into `/input`.
    pub inputs: Vec<InputRecord>,
    /// Where `/output` was published, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_dir: Option<String>,
    /// Published files.
    pub outputs: Vec<PublishedFile>,
    /// The job folder, when kept (`--keep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_dir: Option<String>,
    /// Measurements.
    pub metrics: Metrics,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// For a paused run: the call waiting for approval (`resume ID --approve|--deny`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingApproval>,
    /// Why the run cannot be replayed, when its recording ran past its budget or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_replayable: Option<String>,
    /// Nested calls, for the journal (not part of the `--json` object).
    #[serde(skip)]
    pub calls: Vec<CallRecord>,
}

impl RunReport {
    /// Whether it succeeded.
    pub fn succeeded(&self) -> bool {
        self.status == ExecutionState::Succeeded
    }
}
