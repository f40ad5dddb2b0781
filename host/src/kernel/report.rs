//! What an execution reports to its caller: the `--json` object of the CLI contract.

use serde::Serialize;
use serde_json::Value;

use super::lifecycle::ExecutionState;
use crate::error::ErrorCode;
use crate::files::{InputRecord, PublishedFile};
use crate::tools::CallRecord;

/// The error of a failed execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorReport {
    /// Stable code (SPEC §4).
    pub code: ErrorCode,
    /// Why.
    pub message: String,
    /// The guest's stack trace or traceback, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

/// Measurements of one execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Metrics {
    /// Wall clock from validation to the terminal state.
    pub wall_ms: u64,
    /// Fuel the guest used, when fuel metering was on and the guest was not stopped abruptly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_consumed: Option<u64>,
    /// The most linear memory and table bytes the instance held at once.
    pub memory_peak_bytes: u64,
    /// Nested tool calls begun.
    pub tool_calls: u32,
    /// Bytes written to stdout, retained or not.
    pub stdout_bytes: u64,
    /// Bytes written to stderr, retained or not.
    pub stderr_bytes: u64,
}

/// The report of one execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
