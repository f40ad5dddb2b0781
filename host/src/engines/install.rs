//! Installing an engine component into a data directory (`forge-host engines add`): it is
//! checked in a scratch directory first (it must compile, fit the world and describe itself),
//! then copied beside the data directory's `engines.lock` and pinned there. Both files are
//! written atomically, so a crash leaves the old lock or the new one, never half of either.

use std::path::{Path, PathBuf};

use super::registry::{EngineDescription, EngineLock, EngineRegistry, LOCK_FILE, LockedEngine};
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

fn to_json(lock: &EngineLock) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(lock).map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))
}

impl EngineRegistry {
    /// Checks the component at `file` and registers it in `data_dir`'s engines. Refused when it
    /// is not a `forge:engine` component, or when another component already has its id.
    pub async fn install(&self, file: &Path, data_dir: &DataDir) -> Result<Installed> {
        let bytes = std::fs::read(file)
            .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", file.display())))?;
        let sha256 = sha256_hex(&bytes);
        let description = self.check_candidate(file, &bytes, &sha256).await?;
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
        let dir = data_dir.root().join("engines");
        let name = format!("{}.wasm", description.id);
        let path = dir.join(&name);
        write(&path, &bytes)?;
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
        write(&lock_path, &to_json(&lock)?)?;
        Ok(Installed {
            description,
            sha256,
            path,
        })
    }

    /// Loads `bytes` from a scratch engine directory of its own: nothing is registered unless
    /// it works.
    async fn check_candidate(
        &self,
        file: &Path,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<EngineDescription> {
        let scratch =
            tempfile::tempdir().map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
        let lock = EngineLock {
            engines: vec![LockedEngine {
                file: "candidate.wasm".into(),
                sha256: sha256.to_string(),
                id: None,
                extensions: None,
                packages: None,
            }],
        };
        // A scratch folder needs no atomic, synced writes.
        let scratch_write = |name: &str, bytes: &[u8]| {
            let path = scratch.path().join(name);
            std::fs::write(&path, bytes).map_err(|source| {
                Error::from_source(
                    ErrorCode::IsolateFailure,
                    FileError::new("cannot write", path, source),
                )
            })
        };
        scratch_write("candidate.wasm", bytes)?;
        scratch_write(LOCK_FILE, &to_json(&lock)?)?;
        let candidate =
            EngineRegistry::discover(&[scratch.path().to_path_buf()], self.cache.clone()).await;
        match candidate.entries().first() {
            Some(entry) => Ok(entry.description.clone()),
            None => Err(Error::engine_unavailable(format!(
                "{} is not a forge:engine component: {}",
                file.display(),
                candidate.problems().join("; ")
            ))),
        }
    }
}
