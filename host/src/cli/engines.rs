//! `forge-host engines list|check|add` and `forge-host status`: which engines there are, whether
//! they pass the conformance kit, and registering a new one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::DataDirArgs;
use forge_host::conformance::{self, EngineReport, Kit};
use forge_host::engines::EngineRegistry;
use forge_host::error::Error;
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
    /// Runs the conformance kit against every registered engine, one (by id), or a component
    /// file that need not be registered; exits 0 only when every case passes
    #[command(
        after_help = "Each case of the kit (a folder with a case.json and a script.<ext> per \
language) runs when it has a script in the engine's language. Memory and fuel limits of a case \
are relative to what the engine needs to run an empty script. docs/engines.md explains them.\n\n\
Examples:\n  forge-host engines check\n  forge-host engines check lua --json\n  \
forge-host engines check my-engine.wasm --cases tests/cases"
    )]
    Check {
        /// An engine id, or a component file (`.wasm`) [default: every registered engine]
        target: Option<String>,
        /// Run the cases in this folder instead of the kit built into forge-host
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Checks a component against the forge:engine world and the conformance kit, and registers
    /// it in the data directory
    Add {
        /// The component (.wasm)
        file: PathBuf,
        /// Register it even though it fails cases of the kit (the lock records which)
        #[arg(long)]
        force: bool,
        /// Run the cases in this folder instead of the kit built into forge-host
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
    },
}

fn kit(cases: Option<&Path>) -> anyhow::Result<Kit> {
    Ok(match cases {
        Some(dir) => Kit::from_dir(dir)?,
        None => Kit::embedded()?,
    })
}

/// Prints one engine's table: a line per case, the reasons under each failure, and a summary.
fn print_report(report: &EngineReport) -> std::io::Result<()> {
    if let Some(error) = &report.error {
        out!("{:<22} FAILED: {error}", report.id)?;
        return Ok(());
    }
    if let Some(baseline) = &report.baseline {
        out!(
            "{}  (an empty script needs {:.1} MiB of memory and {} fuel)",
            report.id,
            baseline.memory_bytes as f64 / f64::from(1 << 20),
            baseline.fuel
        )?;
    }
    for case in &report.cases {
        let mark = if case.passed { "pass" } else { "FAIL" };
        out!("  {mark}  {:<44} {:>6} ms", case.case, case.wall_ms)?;
        for failure in &case.failures {
            out!("          {failure}")?;
        }
    }
    out!(
        "{}: {} passed, {} failed, {} not for this engine",
        report.id,
        report.passed,
        report.failed,
        report.not_applicable
    )?;
    Ok(())
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
                    .map(|e| json!({"id": e.description.id, "sha256": e.sha256, "path": e.path, "packages": e.packages, "description": e.description, "conformance": e.conformance}))
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
                    let forced = match &entry.conformance {
                        Some(record) if record.forced => {
                            format!("  (added with --force: fails {})", record.failed.join(", "))
                        }
                        _ => String::new(),
                    };
                    out!(
                        "{:<22} {:<12} {}  {}  {}{packages}{forced}",
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
        EnginesCommand::Check {
            target,
            cases,
            json,
        } => {
            let kit = kit(cases.as_deref())?;
            let component = target
                .as_deref()
                .map(Path::new)
                .filter(|t| t.extension().is_some_and(|e| e == "wasm") || t.is_file());
            let (reports, problems) = match component {
                Some(file) => (
                    vec![conformance::check_component(&kit, file).await?],
                    Vec::new(),
                ),
                None => {
                    let dirs = EngineRegistry::default_dirs(Some(&dir));
                    conformance::check_engines(&kit, &dirs, target.as_deref()).await?
                }
            };
            let ok = reports.iter().all(EngineReport::ok) && problems.is_empty();
            if json {
                out!(
                    "{}",
                    json!({"ok": ok, "engines": reports, "problems": problems})
                )?;
            } else {
                for report in &reports {
                    print_report(report)?;
                }
                for problem in &problems {
                    out!("problem: {problem}")?;
                }
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        EnginesCommand::Add { file, force, cases } => {
            let kit = kit(cases.as_deref())?;
            let added = conformance::add_engine(&registry, &file, &dir, &kit, force).await?;
            let Some(installed) = added.installed else {
                print_report(&added.report)?;
                return Err(Error::engine_unavailable(format!(
                    "{} fails {} case(s) of the conformance kit ({}); fix them, or register it anyway with --force",
                    file.display(),
                    added.report.failed,
                    added.report.failed_cases().join(", ")
                ))
                .into());
            };
            let description = &installed.description;
            out!(
                "added {} ({}) for {} with sha256 {}",
                description.id,
                description.language,
                description.extensions.join(" "),
                installed.sha256
            )?;
            let report = &added.report;
            if report.ok() {
                out!("conformance kit: all {} cases passed", report.passed)?;
            } else {
                out!(
                    "conformance kit: {} passed, {} FAILED ({}); registered because of --force, which {} records",
                    report.passed,
                    report.failed,
                    report.failed_cases().join(", "),
                    forge_host::engines::LOCK_FILE
                )?;
            }
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
