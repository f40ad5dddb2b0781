//! The journal's tables, their version, and every record type they persist.
//!
//! These types are the on-disk format: the kernel and the tools build them, but they are defined
//! here, so that changing a kernel struct can never silently change what is written.
//!
//! Versioning: the `meta` table holds `schema_version`. A database without it is new and gets
//! the current version. Records are JSON: a later version may add fields (read back with their
//! defaults by this one, ignored when unknown), and bumps `schema_version` only for a change an
//! older reader cannot ignore, together with a migration in [`migrate`]. An older forge-host
//! refuses a newer schema instead of misreading it. `tests/fixtures/journal-v1.redb`, written by
//! version 1, must keep opening in every later one.

use redb::TableDefinition;
use serde::{Deserialize, Serialize};

use super::owner::Owner;
use crate::error::ErrorCode;
use crate::limits::Limits;
use crate::permissions::{Effect, Policy};

/// The schema this build writes.
pub const SCHEMA_VERSION: u64 = 1;

/// `schema_version` and other counters.
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// Execution id -> JSON [`ExecutionRecord`]. Ids start with the start time, so key order is
/// start order.
pub(super) const EXECUTIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("executions");
/// (execution id, position) -> JSON [`CallRecord`].
pub(super) const CALLS: TableDefinition<(&str, u32), &[u8]> = TableDefinition::new("calls");
/// Execution id -> JSON owner of every execution not yet terminal: what reconciliation scans.
pub(super) const OPEN: TableDefinition<&str, &[u8]> = TableDefinition::new("open_executions");
/// Execution id -> JSON [`Tape`](super::Tape): the replay record, written with the close.
pub(super) const TAPES: TableDefinition<&str, &[u8]> = TableDefinition::new("tapes");
/// Execution id -> [`StateCommitMark`], written in the same transaction as the state commit, so
/// that a run killed between its state commit and its journal close is closed saying so.
pub(super) const STATE_COMMITS: TableDefinition<&str, &[u8]> =
    TableDefinition::new("state_commits");

/// The state commit of an execution still open in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateCommitMark {
    /// The session whose state it changed.
    pub session: String,
    /// The revision its commit made.
    pub revision: u64,
}

pub(super) const SCHEMA_KEY: &str = "schema_version";

/// Why a database of another schema cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Written by a newer forge-host.
    #[error(
        "the journal has schema {found}, written by a newer forge-host; this one reads up to {SCHEMA_VERSION}"
    )]
    Newer {
        /// The version found.
        found: u64,
    },
    /// An older schema nothing migrates from.
    #[error("no migration from journal schema {found}")]
    NoMigration {
        /// The version found.
        found: u64,
    },
}

/// Brings a database of schema `from` to [`SCHEMA_VERSION`] inside `txn`. Version 1 is the
/// first: there is nothing to migrate yet.
pub(super) fn migrate(from: u64, _txn: &redb::WriteTransaction) -> Result<(), SchemaError> {
    match from {
        SCHEMA_VERSION => Ok(()),
        newer if newer > SCHEMA_VERSION => Err(SchemaError::Newer { found: newer }),
        older => Err(SchemaError::NoMigration { found: older }),
    }
}

/// One state of an execution: `validating -> preparing -> running -> collecting ->
/// committing -> {succeeded | failed | cancelled | timed_out | paused}`, where a terminal state is
/// reached exactly once. A failure may end the execution from any non-terminal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionState {
    /// Checking the request and its limits.
    Validating,
    /// Loading the engine, the state snapshot and the inputs.
    Preparing,
    /// The guest runs.
    Running,
    /// Classifying how it ended and collecting outputs.
    Collecting,
    /// Committing state and publishing outputs.
    Committing,
    /// Ended well.
    Succeeded,
    /// Ended with an error code.
    Failed,
    /// Stopped by the caller.
    Cancelled,
    /// Stopped by its deadline.
    TimedOut,
    /// Stopped at a tool call that needs a person's approval (`APPROVAL_REQUIRED`); `resume`
    /// continues it in a new execution.
    Paused,
}

impl ExecutionState {
    /// Every state, in lifecycle order.
    pub const ALL: [ExecutionState; 10] = [
        ExecutionState::Validating,
        ExecutionState::Preparing,
        ExecutionState::Running,
        ExecutionState::Collecting,
        ExecutionState::Committing,
        ExecutionState::Succeeded,
        ExecutionState::Failed,
        ExecutionState::Cancelled,
        ExecutionState::TimedOut,
        ExecutionState::Paused,
    ];

    /// Whether this state ends the execution.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            ExecutionState::Succeeded
                | ExecutionState::Failed
                | ExecutionState::Cancelled
                | ExecutionState::TimedOut
                | ExecutionState::Paused
        )
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExecutionState::Validating => "validating",
            ExecutionState::Preparing => "preparing",
            ExecutionState::Running => "running",
            ExecutionState::Collecting => "collecting",
            ExecutionState::Committing => "committing",
            ExecutionState::Succeeded => "succeeded",
            ExecutionState::Failed => "failed",
            ExecutionState::Cancelled => "cancelled",
            ExecutionState::TimedOut => "timed_out",
            ExecutionState::Paused => "paused",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        ExecutionState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the diagram allows `self -> to`.
    pub fn can_become(self, to: ExecutionState) -> bool {
        use ExecutionState::*;
        match (self, to) {
            (from, _) if from.is_terminal() => false,
            (Validating, Preparing)
            | (Preparing, Running)
            | (Running, Collecting)
            | (Collecting, Committing) => true,
            // The host's own stops and failures end an execution from wherever it is.
            (_, Failed) | (_, Cancelled) | (_, TimedOut) => true,
            // A call that needs approval stops the guest where it runs.
            (Running | Collecting, Paused) => true,
            (Committing, Succeeded) => true,
            _ => false,
        }
    }
}

/// Measurements of one execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// How one nested call ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Begun, not finished when the execution ended.
    Started,
    /// Returned a response.
    Succeeded,
    /// Failed (the error code says why).
    Failed,
    /// Refused by the permission gate; it never ran.
    Denied,
}

impl CallStatus {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallStatus::Started => "started",
            CallStatus::Succeeded => "succeeded",
            CallStatus::Failed => "failed",
            CallStatus::Denied => "denied",
        }
    }
}

/// What the journal keeps of one nested call: never its input or response, only a hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    /// 1-based position within the execution.
    pub position: u32,
    /// Tool name.
    pub tool: String,
    /// Tool effect.
    pub effect: Effect,
    /// sha256 of the input JSON text as the guest sent it.
    pub input_sha256: String,
    /// How it ended.
    pub status: CallStatus,
    /// Error code, when it failed or was denied.
    pub error_code: Option<ErrorCode>,
    /// Time from begin to finish.
    pub duration_ms: Option<u64>,
    /// For a `write` tool, the paths it said it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Why the permission gate let it run or denied it (the effect, the flag or the rule, or a
    /// person's answer under `--ask`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}

/// One published file (in the journal, the run report and `provenance.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedFile {
    /// Path below the destination, `/`-separated.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// sha256 of its bytes.
    pub sha256: String,
    /// Title from `outputs.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its media type, from its name (`image/png`); absent in records made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

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

/// A locked Python package a run mounted (issue 13): what `rerun` mounts again, refusing when
/// the lock now resolves to something else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalPackage {
    /// The project's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// sha256 of the wheel mounted.
    pub sha256: String,
}

/// One step of the lifecycle, with when it was reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The state reached.
    pub state: ExecutionState,
    /// When, RFC 3339 UTC.
    pub at: String,
}

/// Why the host ended an execution on its own, as [`ExecutionRecord::reason`] keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Its process died (or its worker did) before it ended: a restarted forge-host, or the
    /// worker that takes the run next, closed it.
    Interrupted,
}

impl EndReason {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// Locked Python packages mounted, in mount order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<JournalPackage>,
    /// The package lock given with `--lock`, when not the data directory's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_lock: Option<String>,
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
    /// Why the host ended it on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<EndReason>,
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
    /// For a replay: the execution it replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// For a paused run: the call waiting for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingApproval>,
    /// For a resumed run: the paused execution it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumes: Option<String>,
    /// For a paused run: the execution that resumed it (set once; a resume killed mid-way is
    /// reconciled and clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_by: Option<String>,
    /// Where its tools came from, as the caller described them (the command line's
    /// `--workspace`, `--mcp`, ...), so that `resume` can connect the same ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_sources: Option<serde_json::Value>,
    /// Where its session state is kept, when not in this data directory (`etcd://...`), so
    /// that `resume` and `rerun` commit where it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_store: Option<String>,
}

/// A tool call that waits for a person's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The tool.
    pub tool: String,
    /// Its effect.
    pub effect: Effect,
    /// The input the script gave it, shown to the approver.
    pub input: serde_json::Value,
    /// sha256 of the input text as the guest sent it.
    pub input_sha256: String,
    /// Why it needs approval.
    pub reason: String,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_round_trips_and_terminal_states_go_nowhere() {
        for state in ExecutionState::ALL {
            assert_eq!(ExecutionState::parse(state.as_str()), Some(state));
            let json = serde_json::to_string(&state).expect("serialise");
            assert_eq!(json, format!("\"{}\"", state.as_str()));
            if state.is_terminal() {
                assert!(ExecutionState::ALL.iter().all(|to| !state.can_become(*to)));
            }
        }
        assert!(ExecutionState::Running.can_become(ExecutionState::Collecting));
        assert!(!ExecutionState::Running.can_become(ExecutionState::Succeeded));
    }

    #[test]
    fn limits_of_a_later_version_are_read_without_the_unknown_ones() {
        let mut limits = serde_json::to_value(Limits::default()).expect("limits");
        limits["memory_bytes"] = serde_json::json!(64 << 20);
        limits["limit_from_the_future"] = serde_json::json!(1);
        let record = ExecutionRecord {
            id: "x".into(),
            session: "s".into(),
            engine: "e".into(),
            engine_sha256: String::new(),
            script: "a.js".into(),
            script_sha256: String::new(),
            inputs: Vec::new(),
            packages: Vec::new(),
            package_lock: None,
            limits,
            policy: Policy::default(),
            status: ExecutionState::Running,
            steps: Vec::new(),
            error_code: None,
            error_message: None,
            reason: None,
            started_at: String::new(),
            ended_at: None,
            metrics: None,
            out_dir: None,
            outputs: Vec::new(),
            owner: Owner::current(),
            replay_of: None,
            pending: None,
            resumes: None,
            resumed_by: None,
            tool_sources: None,
            state_store: None,
        };
        assert_eq!(record.limits().memory_bytes, 64 << 20);
    }
}
