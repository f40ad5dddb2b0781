//! Finding, verifying and loading engine components.
//!
//! An engine directory holds components and an `engines.lock` naming each one with its sha256.
//! A component is used only when its bytes hash to the pinned value; it is compiled once per
//! wasmtime configuration and its precompiled form cached on disk (see [`Cache`]), so a normal
//! run only maps the cached file.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use wasmtime::component::Component;

use super::bindings::ScriptEnginePre;
use super::cache::Cache;
use super::instance::ExecState;
use super::library::EngineLibrary;
use super::preinit;
use super::runtime::Runtime;
use crate::datadir::DataDir;
use crate::error::{Error, ErrorCode, Result};
use crate::primitives::sha256_hex;

// The lock's types are shared with xtask, which writes `target/engines/engines.lock`.
pub use engine_lock::{ConformanceRecord, EngineLock, LOCK_FILE, LockedEngine};

/// What an engine says about itself (its `describe()` answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineDescription {
    /// `javascript-quickjs`, `python-cpython`, ...
    pub id: String,
    /// The language it runs.
    pub language: String,
    /// Engine version.
    pub version: String,
    /// File extensions it runs, with the dot.
    pub extensions: Vec<String>,
    /// Capability names.
    pub capabilities: Vec<String>,
}

/// A verified engine component.
#[derive(Debug, Clone)]
pub struct EngineEntry {
    /// Where the component is.
    pub path: PathBuf,
    /// Its sha256 (verified against its directory's lock).
    pub sha256: String,
    /// Packages it provides beyond the standard library (from its lock).
    pub packages: Vec<String>,
    /// Its result on the conformance kit when `engines add` registered it (from its lock).
    pub conformance: Option<ConformanceRecord>,
    /// The files it reads at run time, mounted read-only in every run (from its lock).
    pub library: Option<EngineLibrary>,
    /// Its description: its own `describe()` answer once it has been loaded, until then what
    /// its lock says.
    pub description: EngineDescription,
}

/// Among engines for one extension, the one with the fewest packages that provides every
/// package the script imports (of those any of them provides); else the smallest.
fn smallest_covering<'a>(
    mut candidates: Vec<&'a EngineEntry>,
    source: &str,
) -> Option<&'a EngineEntry> {
    candidates.sort_by_key(|e| e.packages.len());
    if candidates.len() > 1 {
        let known: Vec<&String> = candidates.iter().flat_map(|e| &e.packages).collect();
        let wanted: Vec<String> = super::python_imports::python_imports(source)
            .into_iter()
            .filter(|import| known.contains(&import))
            .collect();
        if let Some(covering) = candidates
            .iter()
            .find(|e| wanted.iter().all(|w| e.packages.contains(w)))
        {
            return Some(covering);
        }
    }
    candidates.first().copied()
}

/// How long loading took, for `status` and benchmarks.
#[derive(Debug, Clone, Copy)]
pub struct LoadTiming {
    /// Whether the component had to be compiled (no usable cache entry).
    pub compiled: bool,
    /// Time to compile or to map the cached form.
    pub elapsed: Duration,
}

/// The engines available to this process.
pub struct EngineRegistry {
    entries: Vec<EngineEntry>,
    problems: Vec<String>,
    pub(super) cache: Cache,
    loaded: Mutex<HashMap<(String, bool), ScriptEnginePre<ExecState>>>,
}

impl EngineRegistry {
    /// Where engines are looked for, in order: `$FORGE_HOST_ENGINES_DIR`, `engines/` beside the
    /// executable and one level up (`target/engines` for `target/release/forge-host`), and the
    /// data directory's `engines/` (engines added with `engines add`).
    pub fn default_dirs(data_dir: Option<&DataDir>) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        if let Some(dir) = std::env::var_os("FORGE_HOST_ENGINES_DIR").filter(|d| !d.is_empty()) {
            dirs.extend(std::env::split_paths(&dir));
        }
        if let Some(exe_dir) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
        {
            dirs.push(exe_dir.join("engines"));
            if let Some(up) = exe_dir.parent() {
                dirs.push(up.join("engines"));
            }
        }
        if let Some(data) = data_dir {
            dirs.push(data.root().join("engines"));
        }
        dirs
    }

    /// The engines a command over `data_dir` sees: those of [`EngineRegistry::default_dirs`],
    /// with the default compile cache.
    pub async fn for_data_dir(data_dir: &DataDir) -> Self {
        Self::discover(
            &Self::default_dirs(Some(data_dir)),
            Cache::default_location(),
        )
        .await
    }

    /// Verifies and describes every engine pinned in `dirs`. Problems (a missing file, a hash
    /// mismatch, a component that does not compile) are kept for `status`, not fatal.
    pub async fn discover(dirs: &[PathBuf], cache: Cache) -> Self {
        let mut registry = EngineRegistry {
            entries: Vec::new(),
            problems: Vec::new(),
            cache,
            loaded: Mutex::default(),
        };
        for dir in dirs {
            let lock_path = dir.join(LOCK_FILE);
            let Ok(text) = fs::read(&lock_path) else {
                continue;
            };
            let lock = match EngineLock::parse(&text) {
                Ok(lock) => lock,
                Err(error) => {
                    registry
                        .problems
                        .push(format!("{}: {error}", lock_path.display()));
                    continue;
                }
            };
            for pinned in lock.engines {
                match registry.verify(dir, &pinned).await {
                    Ok(entry) => {
                        let earlier = registry
                            .entries
                            .iter_mut()
                            .find(|e| e.description.id == entry.description.id);
                        match earlier {
                            // The first directory wins, so `FORGE_HOST_ENGINES_DIR` can
                            // override; the same component registered again (`engines add`)
                            // still says how it did on the conformance kit.
                            Some(earlier) => {
                                if earlier.sha256 == entry.sha256 && earlier.conformance.is_none() {
                                    earlier.conformance = entry.conformance;
                                }
                            }
                            None => registry.entries.push(entry),
                        }
                    }
                    Err(error) => registry.problems.push(error.message),
                }
            }
        }
        registry
    }

    async fn verify(&self, dir: &Path, pinned: &LockedEngine) -> Result<EngineEntry> {
        if pinned.file.contains('/') || pinned.file.starts_with('.') {
            return Err(Error::engine_unavailable(format!(
                "{}: bad engine file name `{}`",
                dir.display(),
                pinned.file
            )));
        }
        let path = dir.join(&pinned.file);
        let sha256 = self.cache.file_sha256(&path)?;
        if sha256 != pinned.sha256 {
            return Err(Error::engine_unavailable(format!(
                "{} has sha256 {sha256}, but {} pins {}",
                path.display(),
                LOCK_FILE,
                pinned.sha256
            )));
        }
        let library = pinned
            .library
            .as_ref()
            .map(|library| super::library::verify(&self.cache, dir, library))
            .transpose()?;
        let info_path = self.cache.info_path(&sha256);
        let cached = fs::read(&info_path)
            .ok()
            .and_then(|text| serde_json::from_slice::<EngineDescription>(&text).ok());
        let mut entry = EngineEntry {
            path,
            sha256,
            packages: pinned.packages.clone().unwrap_or_default(),
            conformance: pinned.conformance.clone(),
            library,
            description: match (cached, &pinned.id, &pinned.extensions) {
                (Some(description), Some(id), _) if description.id != *id => {
                    return Err(Error::engine_unavailable(format!(
                        "{} describes itself as `{}`, but {LOCK_FILE} says `{id}`",
                        dir.join(&pinned.file).display(),
                        description.id
                    )));
                }
                (Some(description), _, _) => description,
                // Not described yet: trust the lock for choosing, check at the first load.
                (None, Some(id), Some(extensions)) => EngineDescription {
                    id: id.clone(),
                    language: String::new(),
                    version: String::new(),
                    extensions: extensions.clone(),
                    capabilities: Vec::new(),
                },
                (None, _, _) => EngineDescription {
                    id: String::new(),
                    language: String::new(),
                    version: String::new(),
                    extensions: Vec::new(),
                    capabilities: Vec::new(),
                },
            },
        };
        if entry.description.id.is_empty() {
            self.load(&entry, false).await?;
            entry.description = self.described(&entry)?;
        }
        Ok(entry)
    }

    /// The `describe()` answer cached when `entry` was first loaded.
    fn described(&self, entry: &EngineEntry) -> Result<EngineDescription> {
        let path = self.cache.info_path(&entry.sha256);
        fs::read(&path)
            .ok()
            .and_then(|text| serde_json::from_slice(&text).ok())
            .ok_or_else(|| {
                Error::engine_unavailable(format!("{} was never described", entry.path.display()))
            })
    }

    /// The unpacked tree of an engine's library, which its runs mount.
    pub fn library_tree(&self, library: &EngineLibrary) -> Result<PathBuf> {
        self.cache.library_tree(library)
    }

    /// The verified engines.
    pub fn entries(&self) -> &[EngineEntry] {
        &self.entries
    }

    /// What went wrong while discovering.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The engine with id `id`.
    /// The engine `id`, or for a language name (`python`, `javascript`: the prefix of engine
    /// ids) that language's smallest profile, so `python` is the standard-library engine.
    pub fn by_id(&self, id: &str) -> Result<&EngineEntry> {
        let prefix = format!("{id}-");
        self.entries
            .iter()
            .find(|e| e.description.id == id)
            .or_else(|| {
                self.entries
                    .iter()
                    .filter(|e| e.description.id.starts_with(&prefix))
                    .min_by_key(|e| e.packages.len())
            })
            .ok_or_else(|| {
                let known: Vec<_> = self
                    .entries
                    .iter()
                    .map(|e| e.description.id.as_str())
                    .collect();
                Error::engine_unavailable(format!(
                    "no engine `{id}` (available: {}){}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    },
                    self.problem_hint()
                ))
            })
    }

    /// The engine that runs files like `path`, by extension. When several engines run the
    /// extension (Python profiles), the one with the fewest packages that still provides every
    /// package the script imports is chosen; when none does, the smallest, whose own import check
    /// then names what is missing and how to get it.
    pub fn for_file(&self, path: &Path, source: &str) -> Result<&EngineEntry> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let candidates: Vec<&EngineEntry> = self
            .entries
            .iter()
            .filter(|e| {
                e.description
                    .extensions
                    .iter()
                    .any(|ext| name.ends_with(&ext.to_lowercase()))
            })
            .collect();
        if let Some(chosen) = smallest_covering(candidates, source) {
            return Ok(chosen);
        }
        let known: Vec<String> = self
            .entries
            .iter()
            .flat_map(|e| e.description.extensions.clone())
            .collect();
        Err(Error::engine_unavailable(format!(
            "no engine runs `{}` (extensions with an engine: {}){}",
            path.display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(" ")
            },
            self.problem_hint()
        )))
    }

    fn problem_hint(&self) -> String {
        if self.entries.is_empty() && self.problems.is_empty() {
            "; no engine directory was found: build the engines with `cargo xtask build`".into()
        } else if self.problems.is_empty() {
            String::new()
        } else {
            format!("; problems: {}", self.problems.join("; "))
        }
    }

    /// The instantiable form of `entry` for the fuel setting, compiling it on first use. The
    /// first load of a component also asks it to describe itself, and refuses it when it is not
    /// the engine its lock says.
    pub async fn load(
        &self,
        entry: &EngineEntry,
        fuel: bool,
    ) -> Result<(ScriptEnginePre<ExecState>, LoadTiming)> {
        let key = (entry.sha256.clone(), fuel);
        if let Some(pre) = self.loaded.lock().ok().and_then(|l| l.get(&key).cloned()) {
            return Ok((
                pre,
                LoadTiming {
                    compiled: false,
                    elapsed: Duration::ZERO,
                },
            ));
        }
        let runtime = Runtime::get(fuel)?;
        let started = Instant::now();
        let (component, compiled) = self.component(entry, runtime).await?;
        let instance_pre = runtime.linker().instantiate_pre(&component).map_err(|e| {
            Error::engine_unavailable(format!(
                "{} does not fit the forge:engine world: {e}",
                entry.path.display()
            ))
        })?;
        let pre = ScriptEnginePre::new(instance_pre).map_err(|e| {
            Error::engine_unavailable(format!(
                "{} does not export the engine interface: {e}",
                entry.path.display()
            ))
        })?;
        let timing = LoadTiming {
            compiled,
            elapsed: started.elapsed(),
        };
        let info_path = self.cache.info_path(&entry.sha256);
        if !info_path.exists() {
            let description = super::describe(&pre).await?;
            if !entry.description.id.is_empty() && description.id != entry.description.id {
                return Err(Error::engine_unavailable(format!(
                    "{} describes itself as `{}`, but its lock says `{}`",
                    entry.path.display(),
                    description.id,
                    entry.description.id
                )));
            }
            if let Ok(text) = serde_json::to_vec_pretty(&description) {
                self.cache.write(&info_path, &text)?;
            }
        }
        if let Ok(mut loaded) = self.loaded.lock() {
            loaded.insert(key, pre.clone());
        }
        Ok((pre, timing))
    }

    /// The compiled component: mapped from the cache, or compiled (after pre-initialising it, for
    /// an engine that asks for it) and cached.
    async fn component(&self, entry: &EngineEntry, runtime: &Runtime) -> Result<(Component, bool)> {
        let compiled_path = self
            .cache
            .compiled_path(&entry.sha256, &runtime.cache_key());
        if compiled_path.exists() {
            // SAFETY: the file is one this cache wrote (atomically, by rename) from a component
            // whose sha256 was verified, for this exact wasmtime configuration (the file name
            // carries the configuration's compatibility hash, and wasmtime checks it again).
            match unsafe { Component::deserialize_file(runtime.engine(), &compiled_path) } {
                Ok(component) => return Ok((component, false)),
                // Unusable (truncated, or another wasmtime build): compile again below.
                Err(_) => {
                    let _ = fs::remove_file(&compiled_path);
                }
            }
        }
        let bytes = fs::read(&entry.path).map_err(|e| {
            Error::engine_unavailable(format!("cannot read {}: {e}", entry.path.display()))
        })?;
        let sha256 = sha256_hex(&bytes);
        if sha256 != entry.sha256 {
            return Err(Error::engine_unavailable(format!(
                "{} changed since it was verified (sha256 {sha256}, expected {})",
                entry.path.display(),
                entry.sha256
            )));
        }
        let bytes = if preinit::wants_preinit(&bytes) {
            preinit::snapshot(&entry.path, &bytes)
                .await
                .map_err(|error| Error::from_source(ErrorCode::EngineUnavailable, error))?
        } else {
            bytes
        };
        let component = Component::new(runtime.engine(), &bytes).map_err(|e| {
            // `{:#}`: wasmtime's reason (a proposal that is off, a bad opcode) is in the chain.
            Error::engine_unavailable(format!("{} does not compile: {e:#}", entry.path.display()))
        })?;
        let serialized = component.serialize().map_err(|e| {
            Error::engine_unavailable(format!("cannot serialise {}: {e}", entry.path.display()))
        })?;
        self.cache.write(&compiled_path, &serialized)?;
        Ok((component, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, packages: &[&str]) -> EngineEntry {
        EngineEntry {
            path: PathBuf::from(format!("{id}.wasm")),
            sha256: "0".repeat(64),
            packages: packages.iter().map(|p| p.to_string()).collect(),
            conformance: None,
            library: None,
            description: EngineDescription {
                id: id.into(),
                language: "python".into(),
                version: String::new(),
                extensions: vec![".py".into()],
                capabilities: Vec::new(),
            },
        }
    }

    #[test]
    fn the_smallest_profile_that_covers_the_imports_is_chosen() {
        let stdlib = entry("python-cpython", &[]);
        let science = entry("python-science", &["numpy", "pandas", "dateutil"]);
        let both = || vec![&science, &stdlib];
        let id = |source: &str| smallest_covering(both(), source).map(|e| e.description.id.clone());
        assert_eq!(id("import csv\nimport json"), Some("python-cpython".into()));
        assert_eq!(id("import pandas as pd"), Some("python-science".into()));
        assert_eq!(
            id("from numpy import linalg\nimport requests"),
            Some("python-science".into())
        );
        assert_eq!(
            id("import requests"),
            Some("python-cpython".into()),
            "nobody has it: the smallest"
        );
        let only_stdlib = smallest_covering(vec![&stdlib], "import pandas");
        assert_eq!(
            only_stdlib.map(|e| e.description.id.as_str()),
            Some("python-cpython")
        );
    }
}
