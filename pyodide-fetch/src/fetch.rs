//! `add`, `remove` and `import-lock`: pip fetches into a scratch folder, every file is inspected
//! and hashed there, and only then, under the lock file's folder lock, the files go into the
//! store (staged, then renamed) and the lock is rewritten (a temporary file, then renamed). A
//! failure at any point leaves the store and the lock as they were, apart from whole files in
//! the store that nothing names yet.

use std::path::{Path, PathBuf};

use crate::FetchError;
use crate::lock::{LockedPackage, PyodideLock, normalize};
use crate::pip::{DownloadFailure, Pip, files_in, requirement_name};
use crate::store::{Store, sha256_file};
use crate::wheel::{self, WheelInfo, WheelName};

/// A package an engine already has built in, and what to tell someone who asks for it.
#[derive(Debug, Clone)]
pub struct Builtin {
    /// Its project or import name.
    pub name: String,
    /// The end of "package `numpy` is ...": `built into python-science; run ...`.
    pub hint: String,
}

/// Fetches packages into a store and records them in locks.
#[derive(Debug, Clone)]
pub struct Fetcher {
    /// Where files go.
    pub store: Store,
    /// What fetches them.
    pub pip: Pip,
    /// Packages to refuse with a hint instead of fetching.
    pub builtin: Vec<Builtin>,
}

/// What `add` did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every package it fetched (the ones asked for and their dependencies).
    pub packages: Vec<LockedPackage>,
    /// Which of them were new to the lock.
    pub new: Vec<String>,
}

/// What `import-lock` did.
#[derive(Debug, Default)]
pub struct Imported {
    /// What was fetched and locked.
    pub outcome: Outcome,
    /// (name, why) of the entries not brought in.
    pub skipped: Vec<(String, String)>,
    /// Lines worth telling: a file that differs from Pyodide's, a dependency left out.
    pub notes: Vec<String>,
}

/// A downloaded wheel, inspected and hashed.
struct Fetched {
    path: PathBuf,
    file_name: String,
    sha256: String,
    info: WheelInfo,
}

/// Holds an exclusive lock on the lock file's folder while the lock is read, changed and
/// written, so that two `add`s at once both land.
struct FolderLock(std::fs::File);

impl FolderLock {
    fn take(lock_path: &Path) -> Result<Self, FetchError> {
        let dir = match lock_path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| FetchError::io("create", &dir, e))?;
        let file = std::fs::File::open(&dir).map_err(|e| FetchError::io("open", &dir, e))?;
        file.lock().map_err(|e| FetchError::io("lock", &dir, e))?;
        Ok(FolderLock(file))
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Pins `bytecode` to the package `name` of the lock at `lock_path`, under the lock's folder
/// lock (so that an `add` at the same time loses nothing), if the lock still holds that
/// package with the wheel `wheel_sha256`: `Ok(false)` when it no longer does.
pub fn pin_bytecode(
    lock_path: &Path,
    name: &str,
    wheel_sha256: &str,
    bytecode: crate::lock::Bytecode,
) -> Result<bool, FetchError> {
    let _held = FolderLock::take(lock_path)?;
    let mut lock = PyodideLock::read(lock_path)?;
    let Some(package) = lock.packages.get_mut(&normalize(name)) else {
        return Ok(false);
    };
    if package.sha256 != wheel_sha256 {
        return Ok(false);
    }
    package.bytecode = Some(bytecode);
    lock.write(lock_path)?;
    Ok(true)
}

fn check_spec(spec: &str) -> Result<(), FetchError> {
    let name = requirement_name(spec);
    if name.is_empty() || spec.trim_start().starts_with('-') {
        return Err(FetchError::BadSpec(spec.to_string()));
    }
    Ok(())
}

impl Fetcher {
    fn builtin(&self, name: &str) -> Option<&Builtin> {
        self.builtin
            .iter()
            .find(|b| normalize(&b.name) == normalize(name))
    }

    /// Fetches `specs` (`tabulate==0.9.0`, `openpyxl`) and their dependencies as pure-Python
    /// wheels, stores them, and records them in the lock at `lock_path`.
    pub fn add(&self, specs: &[String], lock_path: &Path) -> Result<Outcome, FetchError> {
        for spec in specs {
            check_spec(spec)?;
            if let Some(builtin) = self.builtin(&requirement_name(spec)) {
                return Err(FetchError::Builtin {
                    name: requirement_name(spec),
                    needed_by: None,
                    hint: builtin.hint.clone(),
                });
            }
        }
        let scratch =
            tempfile::tempdir().map_err(|e| FetchError::io("create", Path::new("/tmp"), e))?;
        let downloads = scratch.path().join("downloads");
        self.download(specs, scratch.path(), &downloads, false)?;
        let fetched = inspect_all(&downloads)?;
        let _folder = FolderLock::take(lock_path)?;
        let mut lock = PyodideLock::read_or_new(lock_path)?;
        let present: Vec<String> = fetched.iter().map(|f| normalize(&f.info.name)).collect();
        let outcome = self.record(&lock, &fetched, |info| {
            info.requires
                .iter()
                .filter(|r| present.contains(r) || lock.packages.contains_key(*r))
                .cloned()
                .collect()
        })?;
        self.store_and_write(&fetched, &mut lock, &outcome, lock_path)?;
        Ok(outcome)
    }

    /// Checks the fetched files against the lock (same version, same file) and says what
    /// would change, without changing anything.
    fn record(
        &self,
        lock: &PyodideLock,
        fetched: &[Fetched],
        depends: impl Fn(&WheelInfo) -> Vec<String>,
    ) -> Result<Outcome, FetchError> {
        let mut outcome = Outcome::default();
        for file in fetched {
            let key = normalize(&file.info.name);
            if let Some(existing) = lock.packages.get(&key)
                && existing.version == file.info.version
                && existing.sha256 != file.sha256
                && existing.pyodide_sha256.as_deref() != Some(file.sha256.as_str())
            {
                return Err(FetchError::HashMismatch {
                    file: format!(
                        "{} (the lock pins {} {} to sha256 {}; the index now serves another file)",
                        file.file_name, existing.name, existing.version, existing.sha256
                    ),
                    expected: existing.sha256.clone(),
                    actual: file.sha256.clone(),
                });
            }
            let same = lock.packages.get(&key).filter(|e| e.sha256 == file.sha256);
            if same.is_none() {
                outcome.new.push(file.info.name.clone());
            }
            // The same wheel keeps the bytecode compiled from it.
            let bytecode = same.and_then(|e| e.bytecode.clone());
            outcome.packages.push(LockedPackage {
                name: file.info.name.clone(),
                version: file.info.version.clone(),
                file_name: file.file_name.clone(),
                sha256: file.sha256.clone(),
                depends: depends(&file.info),
                imports: file.info.imports.clone(),
                package_type: "package".into(),
                install_dir: "site".into(),
                pyodide_sha256: None,
                bytecode,
                extra: Default::default(),
            });
        }
        Ok(outcome)
    }

    /// Stores the files, then writes the lock with the outcome's packages.
    fn store_and_write(
        &self,
        fetched: &[Fetched],
        lock: &mut PyodideLock,
        outcome: &Outcome,
        lock_path: &Path,
    ) -> Result<(), FetchError> {
        for file in fetched {
            self.store
                .add(&file.path, &file.file_name, Some(&file.sha256))?;
        }
        for package in &outcome.packages {
            lock.packages
                .insert(normalize(&package.name), package.clone());
        }
        lock.write(lock_path)
    }

    /// Downloads into `downloads`, building pure wheels from source distributions where a
    /// project has no pure wheel. First each spec alone (its newest pure wheel), then all of
    /// them pinned to those versions with their dependencies: pinned, pip does not backtrack
    /// through every version of a project whose dependency has no usable file.
    fn download(
        &self,
        specs: &[String],
        scratch: &Path,
        downloads: &Path,
        no_deps: bool,
    ) -> Result<(), FetchError> {
        let built = scratch.join("built");
        if no_deps {
            return self.download_building(specs, scratch, downloads, &built, true);
        }
        let top = scratch.join("top");
        self.download_building(specs, scratch, &top, &built, true)?;
        let pinned: Vec<String> = inspect_all(&top)?
            .iter()
            .map(|f| format!("{}=={}", f.info.name, f.info.version))
            .collect();
        self.download_building(&pinned, scratch, downloads, &built, false)
    }

    /// One pip download, retried after building each requirement it could not satisfy from
    /// source (without a C compiler, so only into a pure wheel).
    fn download_building(
        &self,
        specs: &[String],
        scratch: &Path,
        downloads: &Path,
        built: &Path,
        no_deps: bool,
    ) -> Result<(), FetchError> {
        let mut tried: Vec<String> = Vec::new();
        loop {
            let links = built.exists().then_some(built);
            let failure = match self.pip.download_pure(specs, downloads, links, no_deps)? {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            let (requirement, who, output) = match failure {
                DownloadFailure::NoMatch {
                    requirement,
                    needed_by,
                    output,
                } => (requirement, needed_by, output),
                DownloadFailure::Other { output } => {
                    return Err(FetchError::Pip {
                        what: specs.join(" "),
                        output,
                    });
                }
            };
            let name = requirement_name(&requirement);
            if let Some(builtin) = self.builtin(&name) {
                return Err(FetchError::Builtin {
                    name,
                    needed_by: who,
                    hint: builtin.hint.clone(),
                });
            }
            if tried.contains(&normalize(&name)) {
                return Err(FetchError::Pip {
                    what: requirement,
                    output,
                });
            }
            tried.push(normalize(&name));
            let probe = scratch.join(format!("probe-{}-{}", tried.len(), no_deps));
            let built_wheel = self.pip.build_from_source(&requirement, &probe, built)?;
            let refusal = match &built_wheel {
                Ok(wheel) => {
                    let file_name = wheel
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    WheelName::parse(&file_name)
                        .map(|w| w.pure_python_reason())
                        .unwrap_or_else(|| Some("pip built no wheel file".into()))
                }
                Err(_) => Some(String::new()),
            };
            let Some(refusal) = refusal else {
                continue; // a pure wheel, now in `built`
            };
            if let Ok(wheel) = &built_wheel {
                let _ = std::fs::remove_file(wheel);
            }
            if self
                .pip
                .has_platform_wheel(&requirement, &probe.join("wheels"))?
            {
                return Err(FetchError::NotPurePython {
                    name,
                    needed_by: who,
                    reason: "it publishes only platform-specific wheels (native code), and its \
                             source does not build without a C compiler; the engines run \
                             pure-Python packages only"
                        .into(),
                });
            }
            return match built_wheel {
                Ok(_) => Err(FetchError::NotPurePython {
                    name,
                    needed_by: who,
                    reason: format!(
                        "it has only a source distribution, and that builds native code: {refusal}"
                    ),
                }),
                Err(build_output) => Err(FetchError::Pip {
                    what: requirement,
                    output: format!("{output}\n{build_output}"),
                }),
            };
        }
    }

    /// Takes `name` out of the lock. Its file stays in the store, which other locks may share;
    /// `packages verify` re-hashes what is there.
    pub fn remove(&self, name: &str, lock_path: &Path) -> Result<LockedPackage, FetchError> {
        let _folder = FolderLock::take(lock_path)?;
        let mut lock = PyodideLock::read_or_new(lock_path)?;
        let key = normalize(name);
        if !lock.packages.contains_key(&key) {
            return Err(FetchError::NotLocked {
                name: name.to_string(),
                needed_by: None,
            });
        }
        let dependents: Vec<String> = lock
            .packages
            .iter()
            .filter(|(k, p)| **k != key && p.depends.iter().any(|d| normalize(d) == key))
            .map(|(_, p)| p.name.clone())
            .collect();
        if !dependents.is_empty() {
            return Err(FetchError::StillNeeded {
                name: name.to_string(),
                dependents,
            });
        }
        let removed = lock
            .packages
            .remove(&key)
            .ok_or_else(|| FetchError::NotLocked {
                name: name.to_string(),
                needed_by: None,
            })?;
        lock.write(lock_path)?;
        Ok(removed)
    }

    /// Brings in the pure-Python entries of a Pyodide distribution's lock, fetched by name and
    /// version through pip. Where the fetched file is not Pyodide's (Pyodide rebuilt it), both
    /// hashes are recorded and a note says so.
    pub fn import_lock(
        &self,
        pyodide_lock: &Path,
        lock_path: &Path,
    ) -> Result<Imported, FetchError> {
        let pyodide = PyodideLock::read(pyodide_lock)?;
        let mut imported = Imported::default();
        let mut specs = Vec::new();
        for (key, package) in &pyodide.packages {
            if package.package_type != "package" {
                imported.skipped.push((
                    package.name.clone(),
                    format!("a Pyodide `{}`, not a Python package", package.package_type),
                ));
                continue;
            }
            let reason = WheelName::parse(&package.file_name)
                .map(|w| w.pure_python_reason())
                .unwrap_or_else(|| Some("not a wheel".into()));
            match reason {
                Some(reason) => imported.skipped.push((package.name.clone(), reason)),
                None if self.builtin(key).is_some() => imported
                    .skipped
                    .push((package.name.clone(), "built into an engine profile".into())),
                None => specs.push(format!("{}=={}", package.name, package.version)),
            }
        }
        let scratch =
            tempfile::tempdir().map_err(|e| FetchError::io("create", Path::new("/tmp"), e))?;
        let downloads = scratch.path().join("downloads");
        loop {
            if specs.is_empty() {
                return Ok(imported);
            }
            match self.pip.download_pure(&specs, &downloads, None, true)? {
                Ok(()) => break,
                Err(DownloadFailure::NoMatch { requirement, .. }) => {
                    let name = normalize(&requirement_name(&requirement));
                    let before = specs.len();
                    specs.retain(|s| normalize(&requirement_name(s)) != name);
                    if specs.len() == before {
                        return Err(FetchError::Pip {
                            what: requirement,
                            output: "pip named a requirement that was not asked for".into(),
                        });
                    }
                    imported.skipped.push((
                        name,
                        "the index has no pure-Python wheel of that version".into(),
                    ));
                }
                Err(DownloadFailure::Other { output }) => {
                    return Err(FetchError::Pip {
                        what: specs.join(" "),
                        output,
                    });
                }
            }
        }
        let fetched = inspect_all(&downloads)?;
        let _folder = FolderLock::take(lock_path)?;
        let mut lock = PyodideLock::read_or_new(lock_path)?;
        let present: Vec<String> = fetched.iter().map(|f| normalize(&f.info.name)).collect();
        let mut outcome = self.record(&lock, &fetched, |info| {
            let key = normalize(&info.name);
            let wanted = pyodide
                .packages
                .get(&key)
                .map(|p| p.depends.clone())
                .unwrap_or_default();
            wanted
                .iter()
                .map(|d| normalize(d))
                .filter(|d| present.contains(d) || lock.packages.contains_key(d))
                .collect()
        })?;
        for package in &mut outcome.packages {
            let key = normalize(&package.name);
            let Some(theirs) = pyodide.packages.get(&key) else {
                continue;
            };
            if theirs.sha256 != package.sha256 {
                package.pyodide_sha256 = Some(theirs.sha256.clone());
                imported.notes.push(format!(
                    "{} {}: Pyodide's file ({}, sha256 {}) is its own rebuild; the fetched one \
                     ({}, sha256 {}) is what runs here; both are recorded",
                    package.name,
                    package.version,
                    theirs.file_name,
                    theirs.sha256,
                    package.file_name,
                    package.sha256
                ));
            }
            for dependency in &theirs.depends {
                if !package.depends.contains(&normalize(dependency)) {
                    imported.notes.push(format!(
                        "{}: its Pyodide dependency `{dependency}` was not brought in (see the \
                         skipped entries)",
                        package.name
                    ));
                }
            }
        }
        self.store_and_write(&fetched, &mut lock, &outcome, lock_path)?;
        imported.outcome = outcome;
        Ok(imported)
    }
}

/// Inspects and hashes every wheel pip left in `dir`.
fn inspect_all(dir: &Path) -> Result<Vec<Fetched>, FetchError> {
    let mut fetched = Vec::new();
    for path in files_in(dir)? {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !file_name.ends_with(".whl") {
            return Err(FetchError::BadWheel {
                file: file_name,
                reason: "pip fetched a file that is not a wheel".into(),
            });
        }
        let info = wheel::inspect(&path)?;
        let sha256 = sha256_file(&path)?;
        fetched.push(Fetched {
            path,
            file_name,
            sha256,
            info,
        });
    }
    Ok(fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_that_look_like_options_are_refused() {
        assert!(check_spec("--index-url=http://evil").is_err());
        assert!(check_spec("==1.0").is_err());
        assert!(check_spec("tabulate==0.9.0").is_ok());
    }
}
