//! Installing an engine component into a data directory (`forge-host engines add`): it is
//! checked in a scratch directory first (it must compile, fit the world and describe itself; the
//! conformance kit runs on top, from the library's `conformance` module), then copied beside the
//! data directory's `engines.lock` and pinned there. Both files are
//! written atomically, so a crash leaves the old lock or the new one, never half of either.

use std::path::{Path, PathBuf};

use super::registry::{
    ConformanceRecord, EngineDescription, EngineLock, EngineRegistry, LOCK_FILE, LockedEngine,
};
use crate::datadir::DataDir;
use crate::error::{Error, ErrorCode, Result};
use crate::files::FileError;
use crate::primitives::{sha256_hex, write_atomic};

/// An engine that `install` registered.
#[derive(Debug, Clone)]
pub struct Installed {
    /// What it says it is.
    pub description: EngineDescription,
    /// sha256 of the component, as pinned.
    pub sha256: String,
    /// Where it was copied.
    pub path: PathBuf,
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes).map_err(|source| {
        Error::from_source(
            ErrorCode::IsolateFailure,
            FileError::new("cannot write", path, source),
        )
    })
}

/// The data directory's lock; a lock that does not parse is an error, never replaced.
fn read_lock(path: &Path) -> Result<EngineLock> {
    EngineLock::read(path)
        .map(Option::unwrap_or_default)
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))
}

/// A component checked against the world, not yet registered.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its bytes, as read once: what is checked is what gets installed.
    pub bytes: Vec<u8>,
    /// sha256 of the bytes.
    pub sha256: String,
    /// What it says it is.
    pub description: EngineDescription,
}

impl EngineRegistry {
    /// Reads and checks the component at `file`: it must be a `forge:engine` component, and no
    /// other component may already have its id.
    pub async fn candidate(&self, file: &Path) -> Result<Candidate> {
        let bytes = std::fs::read(file)
            .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", file.display())))?;
        let scratch =
            tempfile::tempdir().map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
        let sha256 = stage_candidate(&bytes, scratch.path())?;
        let candidate =
            EngineRegistry::discover(&[scratch.path().to_path_buf()], self.cache.clone()).await;
        let description = match candidate.entries().first() {
            Some(entry) => entry.description.clone(),
            None => {
                return Err(Error::engine_unavailable(format!(
                    "{} is not a forge:engine component: {}",
                    file.display(),
                    candidate.problems().join("; ")
                )));
            }
        };
        if let Some(other) = self
            .entries()
            .iter()
            .find(|e| e.description.id == description.id && e.sha256 != sha256)
        {
            return Err(Error::invalid_input(format!(
                "an engine `{}` is already installed at {}; an engine id names one engine",
                description.id,
                other.path.display()
            )));
        }
        Ok(Candidate {
            bytes,
            sha256,
            description,
        })
    }

    /// Registers `candidate` in `data_dir`'s engines, with how it did on the conformance kit.
    pub fn install(
        &self,
        candidate: Candidate,
        data_dir: &DataDir,
        conformance: Option<ConformanceRecord>,
    ) -> Result<Installed> {
        let Candidate {
            bytes,
            sha256,
            description,
        } = candidate;
        let dir = data_dir.root().join("engines");
        let name = format!("{}.wasm", description.id);
        let path = dir.join(&name);
        // Read before anything is written: a broken lock stops the install with nothing changed.
        let lock_path = dir.join(LOCK_FILE);
        let mut lock = read_lock(&lock_path)?;
        write(&path, &bytes)?;
        lock.upsert(LockedEngine {
            file: name,
            sha256: sha256.clone(),
            id: Some(description.id.clone()),
            extensions: Some(description.extensions.clone()),
            packages: None,
            conformance,
            library: None,
        });
        write(&lock_path, lock.to_text().as_bytes())?;
        Ok(Installed {
            description,
            sha256,
            path,
        })
    }
}

/// Writes `bytes` into the scratch engine directory `dir` as its only, pinned component, so that
/// [`EngineRegistry::discover`] over `dir` loads and describes it. Returns its sha256.
pub fn stage_candidate(bytes: &[u8], dir: &Path) -> Result<String> {
    let sha256 = sha256_hex(bytes);
    let lock = EngineLock {
        engines: vec![LockedEngine {
            file: "candidate.wasm".into(),
            sha256: sha256.clone(),
            id: None,
            extensions: None,
            packages: None,
            conformance: None,
            library: None,
        }],
    };
    // A scratch folder needs no atomic, synced writes.
    let scratch_write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| {
            Error::from_source(
                ErrorCode::IsolateFailure,
                FileError::new("cannot write", path, source),
            )
        })
    };
    scratch_write("candidate.wasm", bytes)?;
    scratch_write(LOCK_FILE, lock.to_text().as_bytes())?;
    Ok(sha256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_that_does_not_parse_stops_an_install_instead_of_being_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(LOCK_FILE);
        assert!(read_lock(&path).expect("no lock yet").engines.is_empty());
        std::fs::write(&path, "{\"engines\": [ half").expect("write");
        let error = read_lock(&path).expect_err("a broken lock");
        assert!(error.message.contains("is not an engines.lock"), "{error}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"engines\": [ half",
            "left as it was"
        );
    }
}
