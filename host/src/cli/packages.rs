//! `forge-host packages add | list | remove | verify | import-lock | compile`: pure-Python
//! packages for the Python engines, fetched once through pip, pinned by sha256 in a
//! Pyodide-format lock, kept in the data directory's content-addressed store for offline runs,
//! and compiled to bytecode once, when added.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use super::DataDirArgs;
use forge_host::error::{Error, ErrorCode};
use forge_host::packages;
use pyodide_fetch::{Builtin, Fetcher, LockedPackage, PyodideLock, pip::Pip};

/// What `packages` does.
#[derive(Debug, Subcommand)]
#[command(
    after_help = "Packages are pure Python only: a package with native code (numpy, \
pandas, lxml, ...) cannot run in the sandbox unless an engine profile builds it in. pip fetches \
them with your own pip configuration (index, proxy, certificates; FORGE_HOST_PIP names another \
pip command). After `add`, runs need no network: a script's imports mount exactly the locked \
packages they need, read-only, each checked against its sha256 first.\n\nExamples:\n  \
forge-host packages add tabulate==0.9.0 openpyxl\n  forge-host run report.py --input data.xlsx\n  \
forge-host packages add jinja2 --lock ./pyodide-lock.json\n  forge-host packages list\n  \
forge-host packages verify\n  forge-host packages compile"
)]
pub enum PackagesCommand {
    /// Fetch packages and their dependencies as pure-Python wheels for CPython 3.14, pin each
    /// by sha256 in the lock, store them for offline runs, and compile their modules to
    /// bytecode in the Python engine (pinned too), so that runs import them without compiling
    Add {
        /// Requirements: `tabulate`, `tabulate==0.9.0`, `openpyxl>=3.1`
        #[arg(required = true, value_name = "SPEC")]
        specs: Vec<String>,
        #[command(flatten)]
        lock: LockArg,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// The locked packages: name, version, sha256, what they provide to `import`
    List {
        #[command(flatten)]
        lock: LockArg,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Take a package out of the lock (its file stays in the store, which other locks may share)
    Remove {
        /// The package's name
        name: String,
        #[command(flatten)]
        lock: LockArg,
    },
    /// Re-hash every file in the store; move any that does not match its sha256 to
    /// quarantine, and say so (exit 1)
    Verify {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Compile to bytecode every locked package that has none (a lock written before bytecode
    /// was kept, or a package added with no Python engine at hand)
    Compile {
        #[command(flatten)]
        lock: LockArg,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Bring in the pure-Python entries of a Pyodide distribution's pyodide-lock.json, fetched
    /// by name and version
    ImportLock {
        /// The Pyodide lock to read
        file: PathBuf,
        #[command(flatten)]
        lock: LockArg,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

/// `--lock FILE`.
#[derive(Debug, clap::Args)]
pub struct LockArg {
    /// The lock to read and write, a project's pyodide-lock.json [default: the data
    /// directory's]
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
}

/// The engine profiles' built-in packages (`components/python/forge/profiles.json`, the table
/// the Python engine reads too), each with how to get its profile.
fn builtin() -> Vec<Builtin> {
    let profiles: serde_json::Value = serde_json::from_str(include_str!(
        "../../../components/python/forge/profiles.json"
    ))
    .unwrap_or_default();
    let mut out = Vec::new();
    for (profile, spec) in profiles.as_object().into_iter().flatten() {
        let build = spec["build"].as_str().unwrap_or_default();
        for name in spec["packages"].as_array().into_iter().flatten() {
            out.push(Builtin {
                name: name.as_str().unwrap_or_default().to_string(),
                hint: format!("built into {profile}; run `{build}`"),
            });
        }
    }
    out
}

fn package_json(package: &LockedPackage) -> serde_json::Value {
    json!({
        "name": package.name,
        "version": package.version,
        "file_name": package.file_name,
        "sha256": package.sha256,
        "depends": package.depends,
        "imports": package.imports,
        "pyodide_sha256": package.pyodide_sha256,
        "bytecode": package.bytecode.as_ref().map(|b| json!({
            "file_name": b.file_name,
            "sha256": b.sha256,
            "cache_tag": b.cache_tag,
        })),
    })
}

/// Compiles the bytecode of `names` (all the lock's packages without it, when `None`) and says
/// how it went, on stderr: a package left without bytecode still works, compiling its modules
/// at each import.
async fn compile(
    data: &forge_host::DataDir,
    lock_path: &std::path::Path,
    names: Option<&[String]>,
) -> anyhow::Result<Vec<super::bytecode::Compiled>> {
    let compiled = super::bytecode::compile_missing(data, lock_path, names).await?;
    for each in &compiled {
        match &each.outcome {
            Ok((bytecode, modules)) => eprintln!(
                "compiled {} ({modules} modules, bytecode sha256 {})",
                each.name, bytecode.sha256
            ),
            Err(why) => eprintln!(
                "warning: {} has no bytecode ({why}); runs compile its modules as they import \
them (`forge-host packages compile` tries again)",
                each.name
            ),
        }
    }
    Ok(compiled)
}

/// The packages of `outcome`, as the lock at `path` now has them (with their bytecode).
fn as_locked(path: &std::path::Path, names: &[LockedPackage]) -> Vec<LockedPackage> {
    let lock = PyodideLock::read(path).ok();
    names
        .iter()
        .map(|p| {
            lock.as_ref()
                .and_then(|l| l.packages.get(&pyodide_fetch::normalize(&p.name)).cloned())
                .unwrap_or_else(|| p.clone())
        })
        .collect()
}

/// Runs `forge-host packages ...`.
pub async fn run(data: &DataDirArgs, command: PackagesCommand) -> anyhow::Result<ExitCode> {
    let data = data.resolve()?;
    let fetcher = Fetcher {
        store: packages::store(&data),
        pip: Pip::from_env(),
        builtin: builtin(),
    };
    let lock_path = |arg: &LockArg| packages::lock_path(&data, arg.lock.as_deref());
    let mut out = std::io::stdout().lock();
    match command {
        PackagesCommand::Add { specs, lock, json } => {
            let path = lock_path(&lock);
            let outcome = fetcher.add(&specs, &path).map_err(packages::error)?;
            let names: Vec<String> = outcome
                .packages
                .iter()
                .map(|p| pyodide_fetch::normalize(&p.name))
                .collect();
            compile(&data, &path, Some(&names)).await?;
            let locked = as_locked(&path, &outcome.packages);
            if json {
                let list: Vec<_> = locked.iter().map(package_json).collect();
                writeln!(
                    out,
                    "{}",
                    json!({"lock": path, "packages": list, "new": outcome.new})
                )?;
            } else {
                for package in &locked {
                    let what = if outcome.new.contains(&package.name) {
                        "added"
                    } else {
                        "unchanged"
                    };
                    writeln!(
                        out,
                        "{what} {} {} ({}, sha256 {})",
                        package.name, package.version, package.file_name, package.sha256
                    )?;
                }
                writeln!(out, "lock: {}", path.display())?;
            }
        }
        PackagesCommand::List { lock, json } => {
            let path = lock_path(&lock);
            let lock = PyodideLock::read_or_new(&path).map_err(packages::error)?;
            if json {
                let list: Vec<_> = lock.packages.values().map(package_json).collect();
                writeln!(out, "{}", json!({"lock": path, "packages": list}))?;
            } else if lock.packages.is_empty() {
                writeln!(
                    out,
                    "no packages in {} (add one: forge-host packages add NAME)",
                    path.display()
                )?;
            } else {
                writeln!(
                    out,
                    "{:<24} {:<12} {:<16} imports",
                    "name", "version", "sha256"
                )?;
                for package in lock.packages.values() {
                    writeln!(
                        out,
                        "{:<24} {:<12} {:<16} {}",
                        package.name,
                        package.version,
                        &package.sha256[..package.sha256.len().min(16)],
                        package.imports.join(", ")
                    )?;
                }
            }
        }
        PackagesCommand::Remove { name, lock } => {
            let path = lock_path(&lock);
            let removed = fetcher.remove(&name, &path).map_err(packages::error)?;
            writeln!(
                out,
                "removed {} {} from {} (its file stays in the store)",
                removed.name,
                removed.version,
                path.display()
            )?;
        }
        PackagesCommand::Verify { json } => {
            let report = fetcher.store.verify_all().map_err(packages::error)?;
            if json {
                let bad: Vec<_> = report
                    .mismatches
                    .iter()
                    .map(|m| json!({"file": m.file, "expected": m.expected, "actual": m.actual, "quarantined": m.quarantined}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    json!({"good": report.good.len(), "mismatches": bad})
                )?;
            } else {
                for bad in &report.mismatches {
                    writeln!(
                        out,
                        "MISMATCH {}: expected sha256 {}, actual {}; moved to {}",
                        bad.file.display(),
                        bad.expected,
                        bad.actual,
                        bad.quarantined
                            .as_ref()
                            .map(|q| q.display().to_string())
                            .unwrap_or_default()
                    )?;
                }
                writeln!(
                    out,
                    "{} file(s) match their sha256, {} do not",
                    report.good.len(),
                    report.mismatches.len()
                )?;
            }
            if !report.mismatches.is_empty() {
                return Err(Error::new(
                    ErrorCode::PackageUnavailable,
                    format!(
                        "{} file(s) in the package store did not match their sha256 and were \
                         quarantined; add their packages again",
                        report.mismatches.len()
                    ),
                )
                .into());
            }
        }
        PackagesCommand::Compile { lock, json } => {
            let path = lock_path(&lock);
            let compiled = compile(&data, &path, None).await?;
            let failed = compiled.iter().filter(|c| c.outcome.is_err()).count();
            if json {
                let list: Vec<_> = compiled
                    .iter()
                    .map(|c| match &c.outcome {
                        Ok((bytecode, modules)) => {
                            json!({"name": c.name, "sha256": bytecode.sha256, "modules": modules})
                        }
                        Err(why) => json!({"name": c.name, "error": why}),
                    })
                    .collect();
                writeln!(out, "{}", json!({"lock": path, "compiled": list}))?;
            } else if compiled.is_empty() {
                writeln!(out, "every package of {} has its bytecode", path.display())?;
            }
            if failed > 0 {
                return Err(Error::new(
                    ErrorCode::PackageUnavailable,
                    format!("{failed} package(s) could not be compiled; they run from source"),
                )
                .into());
            }
        }
        PackagesCommand::ImportLock { file, lock, json } => {
            let path = lock_path(&lock);
            let imported = fetcher.import_lock(&file, &path).map_err(packages::error)?;
            let names: Vec<String> = imported
                .outcome
                .packages
                .iter()
                .map(|p| pyodide_fetch::normalize(&p.name))
                .collect();
            compile(&data, &path, Some(&names)).await?;
            if json {
                let list: Vec<_> = imported.outcome.packages.iter().map(package_json).collect();
                let skipped: Vec<_> = imported
                    .skipped
                    .iter()
                    .map(|(name, why)| json!({"name": name, "why": why}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    json!({"lock": path, "packages": list, "skipped": skipped, "notes": imported.notes})
                )?;
            } else {
                for package in &imported.outcome.packages {
                    let check = match &package.pyodide_sha256 {
                        None => "same file as Pyodide's".to_string(),
                        Some(theirs) => format!("Pyodide rebuilt it: its sha256 {theirs}"),
                    };
                    writeln!(
                        out,
                        "imported {} {} (sha256 {}; {check})",
                        package.name, package.version, package.sha256
                    )?;
                }
                for (name, why) in &imported.skipped {
                    writeln!(out, "skipped {name}: {why}")?;
                }
                for note in &imported.notes {
                    writeln!(out, "note: {note}")?;
                }
                writeln!(out, "lock: {}", path.display())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
