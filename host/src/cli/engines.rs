//! `forge-host engines list|check|add` and `forge-host status`: which engines there are, whether
//! they load and run, and registering a new one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use super::DataDirArgs;
use crate::datadir::DataDir;
use crate::engines::{
    Cache, EngineEntry, EngineLock, EngineRegistry, LOCK_FILE, LockedEngine, sha256_hex,
};
use crate::error::Error;
use crate::kernel::{ExecutionRequest, Kernel};

/// `forge-host engines`.
#[derive(Debug, clap::Subcommand)]
pub enum EnginesCommand {
    /// The verified engines, and problems found while looking for them
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

/// Runs an empty script in `id` in a throwaway data directory (so the probe is not journaled
/// with real runs) and returns its wall time in milliseconds.
async fn probe(entry: &EngineEntry) -> anyhow::Result<f64> {
    let extension = entry
        .description
        .extensions
        .first()
        .cloned()
        .unwrap_or_default();
    let scratch = tempfile::tempdir()?;
    let kernel = Kernel::builder(DataDir::new(scratch.path()))
        .build()
        .await?;
    let started = Instant::now();
    let mut request = ExecutionRequest::new("", format!("probe{extension}"));
    request.engine = Some(entry.description.id.clone());
    let report = kernel.run(request).await?;
    if let Some(error) = report.error {
        return Err(Error::new(error.code, error.message).into());
    }
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

async fn registry(data: &DataDirArgs) -> anyhow::Result<EngineRegistry> {
    let dir = data.resolve()?;
    Ok(EngineRegistry::discover(
        &EngineRegistry::default_dirs(Some(&dir)),
        Cache::default_location(),
    )
    .await)
}

/// Runs `forge-host engines ...`.
pub async fn run(data: &DataDirArgs, command: EnginesCommand) -> anyhow::Result<ExitCode> {
    match command {
        EnginesCommand::List { json } => {
            let registry = registry(data).await?;
            if json {
                let engines: Vec<_> = registry
                    .entries()
                    .iter()
                    .map(|e| json!({"id": e.description.id, "sha256": e.sha256, "path": e.path, "description": e.description}))
                    .collect();
                println!(
                    "{}",
                    json!({"engines": engines, "problems": registry.problems()})
                );
            } else {
                for entry in registry.entries() {
                    println!(
                        "{:<22} {:<12} {}  {}  {}",
                        entry.description.id,
                        entry.description.extensions.join(","),
                        entry.sha256,
                        entry.path.display(),
                        entry.description.version
                    );
                }
                for problem in registry.problems() {
                    eprintln!("problem: {problem}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        EnginesCommand::Check { id, json } => {
            let registry = registry(data).await?;
            let mut results = Vec::new();
            let mut ok = true;
            for entry in registry
                .entries()
                .iter()
                .filter(|e| id.as_ref().is_none_or(|id| *id == e.description.id))
            {
                let outcome = probe(entry).await;
                ok &= outcome.is_ok();
                results.push(match outcome {
                    Ok(ms) => json!({"id": entry.description.id, "ok": true, "probe_ms": ms}),
                    Err(e) => {
                        json!({"id": entry.description.id, "ok": false, "error": format!("{e:#}")})
                    }
                });
            }
            if let Some(id) = &id
                && results.is_empty()
            {
                return Err(Error::engine_unavailable(format!("no engine `{id}`")).into());
            }
            if json {
                println!(
                    "{}",
                    json!({"engines": results, "problems": registry.problems()})
                );
            } else {
                for r in &results {
                    match r["ok"].as_bool() {
                        Some(true) => println!(
                            "{:<22} ok, probe run {:.1} ms",
                            r["id"].as_str().unwrap_or_default(),
                            r["probe_ms"].as_f64().unwrap_or_default()
                        ),
                        _ => println!(
                            "{:<22} FAILED: {}",
                            r["id"].as_str().unwrap_or_default(),
                            r["error"].as_str().unwrap_or_default()
                        ),
                    }
                }
                for problem in registry.problems() {
                    println!("problem: {problem}");
                }
            }
            Ok(if ok && registry.problems().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        EnginesCommand::Add { file } => add(data, &file).await,
    }
}

/// Verifies `file` (it must compile, fit the world and describe itself) and registers it.
async fn add(data: &DataDirArgs, file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", file.display())))?;
    let sha256 = sha256_hex(&bytes);
    // Check it in a scratch engine directory first: nothing is registered unless it works.
    let scratch = tempfile::tempdir()?;
    std::fs::write(scratch.path().join("candidate.wasm"), &bytes)?;
    let lock = EngineLock {
        engines: vec![LockedEngine {
            file: "candidate.wasm".into(),
            sha256: sha256.clone(),
            id: None,
            extensions: None,
            packages: None,
        }],
    };
    std::fs::write(scratch.path().join(LOCK_FILE), serde_json::to_vec(&lock)?)?;
    let candidate =
        EngineRegistry::discover(&[scratch.path().to_path_buf()], Cache::default_location()).await;
    let Some(entry) = candidate.entries().first() else {
        let why = candidate.problems().join("; ");
        return Err(Error::engine_unavailable(format!(
            "{} is not a forge:engine component: {why}",
            file.display()
        ))
        .into());
    };
    let description = entry.description.clone();
    let existing = registry(data).await?;
    if let Some(other) = existing
        .entries()
        .iter()
        .find(|e| e.description.id == description.id && e.sha256 != sha256)
    {
        return Err(Error::invalid_input(format!(
            "an engine `{}` is already installed at {}; an engine id names one engine",
            description.id,
            other.path.display()
        ))
        .into());
    }
    let dir = data.resolve()?.root().join("engines");
    std::fs::create_dir_all(&dir)?;
    let name = format!("{}.wasm", description.id);
    std::fs::write(dir.join(&name), &bytes)?;
    let lock_path = dir.join(LOCK_FILE);
    let mut lock: EngineLock = std::fs::read(&lock_path)
        .ok()
        .and_then(|text| serde_json::from_slice(&text).ok())
        .unwrap_or_default();
    lock.engines.retain(|e| e.file != name);
    lock.engines.push(LockedEngine {
        file: name,
        sha256: sha256.clone(),
        id: Some(description.id.clone()),
        extensions: Some(description.extensions.clone()),
        packages: None,
    });
    std::fs::write(&lock_path, serde_json::to_vec_pretty(&lock)?)?;
    println!(
        "added {} ({}) for {} with sha256 {sha256}",
        description.id,
        description.language,
        description.extensions.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

/// `forge-host status`: the engines with their hashes, a real probe run of each and its time,
/// and the data and cache directories.
pub async fn status(data: &DataDirArgs, json: bool) -> anyhow::Result<ExitCode> {
    let dir = data.resolve()?;
    let registry = registry(data).await?;
    let mut engines = Vec::new();
    for entry in registry.entries() {
        let probe = probe(entry).await;
        engines.push(json!({
            "id": entry.description.id,
            "version": entry.description.version,
            "extensions": entry.description.extensions,
            "sha256": entry.sha256,
            "path": entry.path,
            "probe": match probe {
                Ok(ms) => json!({"ok": true, "boot_ms": ms}),
                Err(e) => json!({"ok": false, "error": format!("{e:#}")}),
            },
        }));
    }
    let report = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "data_dir": dir.root(),
        "cache_dir": Cache::default_location().root(),
        "engines": engines,
        "problems": registry.problems(),
    });
    if json {
        println!("{report}");
    } else {
        println!("forge-host {}", env!("CARGO_PKG_VERSION"));
        println!("data directory  {}", dir.root().display());
        println!(
            "cache directory {}",
            Cache::default_location().root().display()
        );
        for engine in &engines {
            let probe = &engine["probe"];
            let outcome = if probe["ok"] == true {
                format!(
                    "probe run {:.1} ms",
                    probe["boot_ms"].as_f64().unwrap_or_default()
                )
            } else {
                format!(
                    "probe FAILED: {}",
                    probe["error"].as_str().unwrap_or_default()
                )
            };
            println!(
                "engine {:<22} sha256 {}  {}",
                engine["id"].as_str().unwrap_or_default(),
                engine["sha256"].as_str().unwrap_or_default(),
                outcome
            );
        }
        for problem in registry.problems() {
            println!("problem: {problem}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
