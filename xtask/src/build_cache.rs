//! Where the long native builds keep their work outside the checkout, so that a fresh clone
//! (CI's, a second worktree) on a machine that built the same inputs before reuses it: each
//! folder is named by the sha256 of every file its build reads from the repository, so a build
//! of other inputs never mixes with it.
//!
//! The root is `$FORGE_BUILD_CACHE_DIR`, else `$XDG_CACHE_HOME/forge-host-build`, else
//! `~/.cache/forge-host-build`, else `target/` (no home). In it:
//! - `science-KEY/{work,venv}`: the science build (CPython's modules, numpy and pandas: about 20
//!   minutes on 2 cores). `SCIENCE_WORK` and `SCIENCE_VENV` still name the two folders outright.
//!   build.py's steps are idempotent and resume where a killed build stopped, so a half-done
//!   folder is only unfinished, never wrong; a lock file beside it keeps two builds from working
//!   in it at once.
//! - `fuzz-target-KEY`: cargo's target folder for the fuzz targets (about 10 minutes cold), keyed
//!   by their manifest; cargo checks what is fresh in it, and locks it itself.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{Result, workspace_root};

/// What the science build reads from the repository, relative to its root: its code, patches
/// and wrappers, the toolchain and package pins.
const INPUTS: [&str; 4] = [
    "components/python-science/build.py",
    "components/python-science/science_build",
    "toolchain.json",
    "components/python/requirements.txt",
];

/// What names the fuzz targets' cargo folder: their manifest (its profiles and dependencies).
/// Cargo checks everything else in the folder itself, the sources and the lock file included;
/// the lock file is left out here because cargo rewrites it during a build when it is stale,
/// which would name another folder halfway through one test command.
const FUZZ_INPUTS: [&str; 1] = ["fuzz/Cargo.toml"];

/// Builds of other inputs kept beside the current one (a branch switched back to).
const KEEP_OTHERS: usize = 1;

/// The science build's work and venv folders.
pub struct ScienceDirs {
    pub work: PathBuf,
    pub venv: PathBuf,
}

/// The folders the science build uses (see the module doc).
pub fn dirs() -> ScienceDirs {
    let given = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let folder = cache_root().join(format!("science-{}", key(&INPUTS)));
    ScienceDirs {
        work: given("SCIENCE_WORK").map_or_else(|| folder.join("work"), PathBuf::from),
        venv: given("SCIENCE_VENV").map_or_else(|| folder.join("venv"), PathBuf::from),
    }
}

fn cache_root() -> PathBuf {
    let given = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    given("FORGE_BUILD_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| given("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("forge-host-build")))
        .or_else(|| given("HOME").map(|h| PathBuf::from(h).join(".cache/forge-host-build")))
        .unwrap_or_else(crate::paths::target)
}

/// Cargo's target folder for the fuzz targets (see the module doc); builds of other inputs but
/// the newest are removed.
pub fn fuzz_target() -> PathBuf {
    let folder = cache_root().join(format!("fuzz-target-{}", key(&FUZZ_INPUTS)));
    touch(&folder);
    prune_others(&folder, "fuzz-target-", |_| true);
    folder
}

/// Marks `folder` (made if missing) as used now, for the pruning.
fn touch(folder: &Path) {
    let _ = std::fs::create_dir_all(folder);
    if let Ok(dir) = File::open(folder) {
        let _ = dir.set_modified(std::time::SystemTime::now());
    }
}

/// The first 16 hex digits of the sha256 over `inputs`' relative paths and contents.
fn key(inputs: &[&str]) -> String {
    let root = workspace_root();
    let mut files = Vec::new();
    for input in inputs {
        collect(&root.join(input), &mut files);
    }
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        let relative = file.strip_prefix(&root).unwrap_or(&file);
        hasher.update(relative.to_string_lossy().as_bytes());
        hasher.update([0]);
        // An unreadable input hashes as empty: build.py then fails on it with its own message.
        let bytes = std::fs::read(&file).unwrap_or_default();
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hex::encode(hasher.finalize())[..16].to_string()
}

/// The files under `path`, leaving out Python's bytecode caches (written by running the build).
fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name == "__pycache__" || name.to_string_lossy().ends_with(".pyc") {
                continue;
            }
            collect(&entry.path(), files);
        }
    } else {
        files.push(path.to_path_buf());
    }
}

/// Held while a build works in the folders: one build at a time in each.
pub struct Lock {
    _file: File,
}

/// Locks the work folder, waiting (and saying so) while another build holds it, and removes
/// the cached builds of other inputs but the newest [`KEEP_OTHERS`] that no build holds.
pub fn lock(dirs: &ScienceDirs) -> Result<Lock> {
    let path = dirs.work.with_extension("lock");
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    if file.try_lock().is_err() {
        eprintln!(
            "xtask: waiting for another build working in {}",
            dirs.work.display()
        );
        file.lock()
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    }
    if let Some(folder) = dirs.work.parent()
        && folder.parent() == Some(cache_root().as_path())
    {
        touch(folder);
        prune_others(folder, "science-", |other| {
            // Only while no build holds it.
            File::open(other.join("work.lock")).map_or(true, |file| file.try_lock().is_ok())
        });
    }
    Ok(Lock { _file: file })
}

/// Removes the `PREFIX*` folders beside `current` but the newest [`KEEP_OTHERS`], each only
/// when `free` says it may go.
fn prune_others(current: &Path, prefix: &str, free: impl Fn(&Path) -> bool) {
    let Some(root) = current.parent() else { return };
    let mut others: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && path != current)
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(prefix))
        })
        .map(|path| {
            let used = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            (used, path)
        })
        .collect();
    others.sort();
    others.reverse();
    for (_, path) in others.into_iter().skip(KEEP_OTHERS) {
        if free(&path) {
            eprintln!(
                "xtask: removing a build of other inputs, {}",
                path.display()
            );
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_names_every_input_and_is_stable() {
        let root = workspace_root();
        for input in INPUTS.iter().chain(&FUZZ_INPUTS) {
            assert!(
                root.join(input).exists(),
                "{input} is gone: update the inputs"
            );
        }
        assert_eq!(key(&INPUTS), key(&INPUTS));
        assert_eq!(key(&INPUTS).len(), 16);
        assert_ne!(key(&INPUTS), key(&FUZZ_INPUTS));
    }
}
