//! The data directory (SPEC §9): one redb database file holding the journal and the state, plus
//! content-addressed script sources.
//!
//! Several `forge-host` processes use one data directory at once. The database is opened in
//! redb's `MultiWriter` concurrency mode (redb 4.5+): every process keeps its own handle open,
//! byte-range locks let one write transaction run at a time across processes, and readers never
//! wait. A process therefore opens the file once and pays only its transactions.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redb::{ConcurrencyMode, Database, DatabaseError};

use crate::error::{Error, ErrorCode, Result};

/// How long a step waits for other processes to release the database before giving up.
const OPEN_PATIENCE: Duration = Duration::from_secs(60);

/// A data directory. Clones share one open database handle.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
    database: Arc<Mutex<Option<Arc<Database>>>>,
}

impl PartialEq for DataDir {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl DataDir {
    /// The data directory at `root` (created on first use).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDir {
            root: root.into(),
            database: Arc::default(),
        }
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

    /// The live task log of execution `id`.
    pub fn log_path(&self, id: &str) -> PathBuf {
        self.root.join("logs").join(format!("{id}.log"))
    }

    /// The job folder of execution `id`.
    pub fn job_path(&self, id: &str) -> PathBuf {
        self.root.join("jobs").join(id)
    }

    fn script_path(&self, sha256: &str) -> PathBuf {
        self.root.join("scripts").join(sha256)
    }

    /// Keeps a script's source, content-addressed by its sha256 (what `rerun` runs again).
    pub fn store_script(&self, sha256: &str, source: &str) -> Result<()> {
        let path = self.script_path(sha256);
        if path.exists() {
            return Ok(());
        }
        let failed = |e: std::io::Error| {
            Error::new(
                ErrorCode::IsolateFailure,
                format!("cannot store the script in {}: {e}", path.display()),
            )
        };
        let dir = self.root.join("scripts");
        std::fs::create_dir_all(&dir).map_err(failed)?;
        let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(failed)?;
        std::io::Write::write_all(&mut file, source.as_bytes()).map_err(failed)?;
        file.persist(&path).map_err(|e| failed(e.error))?;
        Ok(())
    }

    /// The source of the script with `sha256`, checked against its hash.
    pub fn script(&self, sha256: &str) -> Result<String> {
        let path = self.script_path(sha256);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::invalid_input(format!(
                "the script {sha256} is not in the data directory: {e}"
            ))
        })?;
        let actual = crate::engines::sha256_hex(text.as_bytes());
        if actual != sha256 {
            return Err(Error::invalid_input(format!(
                "the stored script {sha256} was changed (sha256 {actual})"
            )));
        }
        Ok(text)
    }

    fn ensure(&self) -> Result<()> {
        std::fs::create_dir_all(&self.root).map_err(|e| {
            Error::invalid_input(format!(
                "cannot create data directory {}: {e}",
                self.root.display()
            ))
        })
    }

    /// The database, opened on first use and shared by every clone of this `DataDir`.
    pub fn database(&self) -> Result<Arc<Database>> {
        let mut slot = self.database.lock().map_err(|_| {
            Error::new(ErrorCode::IsolateFailure, "the database handle is poisoned")
        })?;
        if let Some(db) = slot.as_ref() {
            return Ok(db.clone());
        }
        let db = Arc::new(self.open_database()?);
        *slot = Some(db.clone());
        Ok(db)
    }

    /// Opens the database in `MultiWriter` mode, waiting (with backoff) while another process
    /// holds it exclusively (a repair after a crash, or an older redb).
    fn open_database(&self) -> Result<Database> {
        self.ensure()?;
        let path = self.database_path();
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        let mut builder = Database::builder();
        builder.set_concurrency_mode(ConcurrencyMode::MultiWriter);
        loop {
            match builder.create(&path) {
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
