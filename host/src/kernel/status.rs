//! What `forge-host status` reports, as typed values an embedder can use too: the engines with their hashes, and a real probe run of each.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::{ExecutionRequest, Kernel};
use crate::datadir::DataDir;
use crate::engines::{Cache, EngineEntry, EngineRegistry};
use crate::error::{Error, Result};

/// How a probe run went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// Whether the empty script ran.
    pub ok: bool,
    /// Wall time of the run, from a new kernel to its report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_ms: Option<f64>,
    /// Why it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl From<Result<f64>> for Probe {
    fn from(outcome: Result<f64>) -> Self {
        match outcome {
            Ok(ms) => Probe {
                ok: true,
                boot_ms: Some(ms),
                error: None,
            },
            Err(error) => Probe {
                ok: false,
                boot_ms: None,
                error: Some(error.to_string()),
            },
        }
    }
}

/// One engine in `status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineStatus {
    /// Engine id.
    pub id: String,
    /// Engine version.
    pub version: String,
    /// Extensions it runs.
    pub extensions: Vec<String>,
    /// sha256 of the component.
    pub sha256: String,
    /// Where the component is.
    pub path: PathBuf,
    /// Its probe run.
    pub probe: Probe,
}

/// `forge-host status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// forge-host's version.
    pub version: &'static str,
    /// The data directory.
    pub data_dir: PathBuf,
    /// The compile cache.
    pub cache_dir: PathBuf,
    /// Every verified engine.
    pub engines: Vec<EngineStatus>,
    /// What went wrong while looking for engines.
    pub problems: Vec<String>,
}

/// Runs an empty script in `entry` in a throwaway data directory (so the probe is not
/// journaled with real runs) and returns its wall time in milliseconds.
pub async fn probe(entry: &EngineEntry) -> Result<f64> {
    let extension = entry
        .description
        .extensions
        .first()
        .cloned()
        .unwrap_or_default();
    let scratch = tempfile::tempdir()
        .map_err(|e| Error::from_source(crate::error::ErrorCode::IsolateFailure, e))?;
    let kernel = Kernel::builder(DataDir::new(scratch.path()))
        .build()
        .await?;
    let started = Instant::now();
    let request = ExecutionRequest::builder("", format!("probe{extension}"))
        .engine(entry.description.id.clone())
        .build();
    let report = kernel.run(request).await?;
    if let Some(error) = report.error {
        return Err(Error::new(error.code, error.message));
    }
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// The engines of `registry` with a probe run of each, and where data and caches are.
pub async fn status(data_dir: &DataDir, registry: &EngineRegistry) -> Status {
    let mut engines = Vec::new();
    for entry in registry.entries() {
        engines.push(EngineStatus {
            id: entry.description.id.clone(),
            version: entry.description.version.clone(),
            extensions: entry.description.extensions.clone(),
            sha256: entry.sha256.clone(),
            path: entry.path.clone(),
            probe: probe(entry).await.into(),
        });
    }
    Status {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: data_dir.root().to_path_buf(),
        cache_dir: Cache::default_location().root().to_path_buf(),
        engines,
        problems: registry.problems().to_vec(),
    }
}
