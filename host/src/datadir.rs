//! The data directory (SPEC §9): one redb database file holding the journal and the state, plus
//! content-addressed script sources. redb lets one process hold the file at a time, so every
//! user opens it for one short step and closes it again, retrying while another process holds it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redb::{Database, DatabaseError};

use crate::error::{Error, ErrorCode, Result};

/// How long a step waits for other processes to release the database before giving up.
const OPEN_PATIENCE: Duration = Duration::from_secs(60);

/// A data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// The data directory at `root` (created on first use).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDir { root: root.into() }
    }

    /// `$FORGE_HOST_DATA_DIR`, else `$XDG_DATA_HOME/forge-host`, else
    /// `~/.local/share/forge-host`.
    pub fn default_location() -> Result<Self> {
        if let Some(dir) = std::env::var_os("FORGE_HOST_DATA_DIR").filter(|d| !d.is_empty()) {
            return Ok(DataDir::new(dir));
        }
        if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
            return Ok(DataDir::new(PathBuf::from(dir).join("forge-host")));
        }
        match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            Some(home) => Ok(DataDir::new(
                PathBuf::from(home).join(".local/share/forge-host"),
            )),
            None => Err(Error::invalid_input(
                "no data directory: set --data-dir, FORGE_HOST_DATA_DIR or HOME",
            )),
        }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The redb database file.
    pub fn database_path(&self) -> PathBuf {
        self.root.join("forge.redb")
    }

    fn ensure(&self) -> Result<()> {
        std::fs::create_dir_all(&self.root).map_err(|e| {
            Error::invalid_input(format!(
                "cannot create data directory {}: {e}",
                self.root.display()
            ))
        })
    }

    /// Opens the database for one step, waiting (with backoff) while another process holds it.
    pub fn open_database(&self) -> Result<Database> {
        self.ensure()?;
        let path = self.database_path();
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match Database::create(&path) {
                Ok(db) => return Ok(db),
                Err(DatabaseError::DatabaseAlreadyOpen) if started.elapsed() < OPEN_PATIENCE => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Err(error) => {
                    return Err(Error::new(
                        ErrorCode::IsolateFailure,
                        format!("cannot open {}: {error}", path.display()),
                    ));
                }
            }
        }
    }
}
