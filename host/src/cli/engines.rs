//! `forge-host engines list|check|add` and `forge-host status`: which engines there are, whether
//! they load and run, and registering a new one.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::DataDirArgs;
use forge_host::engines::EngineRegistry;
use forge_host::kernel;

/// `forge-host engines`.
#[derive(Debug, clap::Subcommand)]
pub enum EnginesCommand {
    /// The verified engines (with the packages each profile adds), and problems found while
    /// looking for them
    List {
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Loads (compiling once if needed) and runs an empty script in every engine, or one
    Check {
        /// Only this engine id
        id: Option<String>,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Checks a component against the forge:engine world and registers it in the data directory
    Add {
        /// The component (.wasm)
        file: PathBuf,
    },
}

/// Runs `forge-host engines ...`.
pub async fn run(data: &DataDirArgs, command: EnginesCommand) -> anyhow::Result<ExitCode> {
    let dir = data.resolve()?;
    let registry = EngineRegistry::for_data_dir(&dir).await;
    match command {
        EnginesCommand::List { json } => {
            if json {
                let engines: Vec<_> = registry
                    .entries()
                    .iter()
                    .map(|e| json!({"id": e.description.id, "sha256": e.sha256, "path": e.path, "packages": e.packages, "description": e.description}))
                    .collect();
                out!(
                    "{}",
                    json!({"engines": engines, "problems": registry.problems()})
                )?;
            } else {
                for entry in registry.entries() {
                    let packages = if entry.packages.is_empty() {
                        String::new()
                    } else {
                        format!("  + {}", entry.packages.join(", "))
                    };
                    out!(
                        "{:<22} {:<12} {}  {}  {}{packages}",
                        entry.description.id,
                        entry.description.extensions.join(","),
                        entry.sha256,
                        entry.path.display(),
                        entry.description.version
                    )?;
                }
                for problem in registry.problems() {
                    eprintln!("problem: {problem}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        EnginesCommand::Check { id, json } => {
            let checks = kernel::check_engines(&registry, id.as_deref()).await?;
            if json {
                out!(
                    "{}",
                    json!({"engines": checks, "problems": registry.problems()})
                )?;
            } else {
                for check in &checks {
                    match (&check.probe_ms, &check.error) {
                        (Some(ms), _) => out!("{:<22} ok, probe run {ms:.1} ms", check.id)?,
                        (None, error) => out!(
                            "{:<22} FAILED: {}",
                            check.id,
                            error.as_deref().unwrap_or_default()
                        )?,
                    }
                }
                for problem in registry.problems() {
                    out!("problem: {problem}")?;
                }
            }
            let ok = checks.iter().all(|c| c.ok) && registry.problems().is_empty();
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        EnginesCommand::Add { file } => {
            let installed = registry.install(&file, &dir).await?;
            let description = &installed.description;
            out!(
                "added {} ({}) for {} with sha256 {}",
                description.id,
                description.language,
                description.extensions.join(" "),
                installed.sha256
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `forge-host status`: the engines with their hashes, a real probe run of each and its time,
/// and the data and cache directories.
pub async fn status(data: &DataDirArgs, json: bool) -> anyhow::Result<ExitCode> {
    let dir = data.resolve()?;
    let registry = EngineRegistry::for_data_dir(&dir).await;
    let status = kernel::status(&dir, &registry).await;
    if json {
        out!("{}", serde_json::to_string(&status)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    out!("forge-host {}", status.version)?;
    out!("data directory  {}", status.data_dir.display())?;
    out!("cache directory {}", status.cache_dir.display())?;
    for engine in &status.engines {
        let outcome = match (&engine.probe.boot_ms, &engine.probe.error) {
            (Some(ms), _) => format!("probe run {ms:.1} ms"),
            (None, error) => format!("probe FAILED: {}", error.as_deref().unwrap_or_default()),
        };
        out!(
            "engine {:<22} sha256 {}  {}",
            engine.id,
            engine.sha256,
            outcome
        )?;
    }
    for problem in &status.problems {
        out!("problem: {problem}")?;
    }
    Ok(ExitCode::SUCCESS)
}
