//! What `provenance.json` records of a run: engine id and component sha256, script
//! sha256, each input's name and sha256, each mounted package's name, version and sha256, the limits, the timings and the verdict.

use serde::Serialize;

use super::InputRecord;
use crate::error::ErrorReport;
use crate::journal::{JournalPackage, PublishedFile};
use crate::limits::Limits;

/// The provenance of one execution.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance<'a> {
    /// Execution id.
    pub execution_id: &'a str,
    /// forge-host version.
    pub forge_host_version: &'static str,
    /// Engine id.
    pub engine: &'a str,
    /// sha256 of the engine component.
    pub engine_sha256: &'a str,
    /// Script file name.
    pub script: &'a str,
    /// sha256 of the script source.
    pub script_sha256: &'a str,
    /// Inputs as copied.
    pub inputs: &'a [InputRecord],
    /// Locked Python packages mounted (name, version, sha256).
    #[serde(skip_serializing_if = "<[JournalPackage]>::is_empty")]
    pub packages: &'a [JournalPackage],
    /// Limits the run had.
    pub limits: &'a Limits,
    /// Start, RFC 3339 UTC.
    pub started_at: &'a str,
    /// Wall clock until the verdict, milliseconds.
    pub wall_ms: u64,
    /// Terminal state.
    pub status: &'a str,
    /// Error, unless it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a ErrorReport>,
    /// Published files.
    pub outputs: &'a [PublishedFile],
}
