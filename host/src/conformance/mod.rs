//! The conformance kit: language-neutral cases (`tests/cases/`, compiled into the binary) that
//! show whether an engine behaves as the host's verdict rules expect — limits classified, calls
//! concurrent, state committed only on success, no ambient powers. `forge-host engines check`
//! runs it; `engines add` runs it before registering a component. docs/engines.md explains the
//! case format and what each behaviour must be.

mod case;
mod kit_tools;
mod runner;

use std::path::Path;

pub use case::{Baseline, Case, Kit, KitCase};
pub use runner::{CaseResult, EngineReport, check_bytes, check_component, check_engines};

use crate::datadir::DataDir;
use crate::engines::{ConformanceRecord, EngineRegistry, Installed};
use crate::error::{Error, Result};

/// What `engines add` did.
#[derive(Debug)]
pub struct Added {
    /// The component's result on the kit.
    pub report: EngineReport,
    /// Where it was registered; `None` when it failed the kit without `force`.
    pub installed: Option<Installed>,
}

/// Checks the component at `file` against the world and the kit, and registers it in
/// `data_dir` when it passes, or when `force` is given (the lock then records what it failed).
pub async fn add_engine(
    registry: &EngineRegistry,
    file: &Path,
    data_dir: &DataDir,
    kit: &Kit,
    force: bool,
) -> Result<Added> {
    let candidate = registry.candidate(file).await?;
    let report = check_bytes(kit, &candidate.bytes, &file.display().to_string()).await?;
    if !report.ok() && !force {
        return Ok(Added {
            report,
            installed: None,
        });
    }
    if let Some(error) = &report.error {
        return Err(Error::engine_unavailable(format!(
            "{}: {error}; --force registers an engine that fails cases, not one that cannot run",
            file.display()
        )));
    }
    let record = ConformanceRecord {
        passed: report.passed,
        failed: report.failed_cases(),
        forced: !report.ok(),
    };
    let installed = registry.install(candidate, data_dir, Some(record))?;
    Ok(Added {
        report,
        installed: Some(installed),
    })
}
