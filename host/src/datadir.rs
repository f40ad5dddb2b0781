//! The data directory: one redb database file holding the journal and the state, plus
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

use crate::error::{Error, ErrorCode};
use crate::primitives::{sha256_hex, write_atomic};

/// A data directory operation that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataDirError {
    /// Neither a flag, the environment nor a home directory names one.
    #[error("no data directory: set --data-dir, FORGE_HOST_DATA_DIR or HOME")]
    NoLocation,
    /// The folder could not be created.
    #[error("cannot create data directory {}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened.
    #[error("cannot open {}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        #[source]
        source: DatabaseError,
    },
    /// Another thread panicked while opening the database.
    #[error("the database handle is poisoned")]
    Poisoned,
    /// A script source could not be stored.
    #[error("cannot store the script in {}", path.display())]
    StoreScript {
        /// Where it was to go.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A stored script is missing.
    #[error("the script {sha256} is not in the data directory")]
    ScriptMissing {
        /// Its sha256.
        sha256: String,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// A stored script no longer hashes to its name.
    #[error("the stored script {sha256} was changed (sha256 {actual})")]
    ScriptChanged {
        /// Its name.
        sha256: String,
        /// What it hashes to now.
        actual: String,
    },
}

impl DataDirError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            DataDirError::NoLocation
            | DataDirError::Create { .. }
            | DataDirError::ScriptMissing { .. }
            | DataDirError::ScriptChanged { .. } => ErrorCode::InvalidInput,
            _ => ErrorCode::IsolateFailure,
        }
    }
}

impl From<DataDirError> for Error {
    fn from(error: DataDirError) -> Self {
        Error::from_source(error.code(), error)
    }
}

type Result<T, E = DataDirError> = std::result::Result<T, E>;

/// Whether `error` is an I/O failure of the database, after which redb refuses everything of
/// that handle ([`DataDir::recover_from`]).
pub fn io_failed(error: &redb::Error) -> bool {
    matches!(error, redb::Error::Io(_) | redb::Error::PreviousIo)
}

/// The database's page cache, in bytes.
const DATABASE_CACHE_BYTES: usize = 1 << 20;

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
            None => Err(DataDirError::NoLocation),
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

    /// The content-addressed package store, `packages/<sha256>/<file_name>`.
    pub fn package_store(&self) -> PathBuf {
        self.root.join("packages")
    }

    /// Tool responses kept for replay, content-addressed: `blobs/<sha256>`, owner-only.
    pub fn blob_dir(&self) -> PathBuf {
        self.root.join("blobs")
    }

    /// The package lock runs use unless given another (`--lock`).
    pub fn package_lock(&self) -> PathBuf {
        self.root.join("pyodide-lock.json")
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
        write_atomic(&path, source.as_bytes())
            .map_err(|source| DataDirError::StoreScript { path, source })
    }

    /// The source of the script with `sha256`, checked against its hash.
    pub fn script(&self, sha256: &str) -> Result<String> {
        let text = std::fs::read_to_string(self.script_path(sha256)).map_err(|source| {
            DataDirError::ScriptMissing {
                sha256: sha256.to_string(),
                source,
            }
        })?;
        let actual = sha256_hex(text.as_bytes());
        if actual != sha256 {
            return Err(DataDirError::ScriptChanged {
                sha256: sha256.to_string(),
                actual,
            });
        }
        Ok(text)
    }

    /// Creates the data directory when it is missing, readable by its owner only: the journal
    /// holds scripts, state and the keys a replay draws a run's random bytes from.
    fn ensure(&self) -> Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        if self.root.is_dir() {
            return Ok(());
        }
        if let Some(parent) = self.root.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| DataDirError::Create {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&self.root) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(source) => Err(DataDirError::Create {
                path: self.root.clone(),
                source,
            }),
        }
    }

    /// The database, opened on first use and shared by every clone of this `DataDir`.
    pub fn database(&self) -> Result<Arc<Database>> {
        let mut slot = self.database.lock().map_err(|_| DataDirError::Poisoned)?;
        if let Some(db) = slot.as_ref() {
            return Ok(db.clone());
        }
        let db = Arc::new(self.open_database()?);
        *slot = Some(db.clone());
        Ok(db)
    }

    /// Lets go of the handle `used` after `error`, when it was an I/O failure: redb refuses
    /// every later operation of a handle that met one (`PreviousIo`), so a long-lived process
    /// (an MCP server) would stay broken after its disk was full, even once there is room
    /// again. The next [`DataDir::database`] opens a fresh handle; what was committed is whole.
    pub fn recover_from(&self, used: &Arc<Database>, error: &redb::Error) {
        if !io_failed(error) {
            return;
        }
        if let Ok(mut slot) = self.database.lock()
            && slot.as_ref().is_some_and(|db| Arc::ptr_eq(db, used))
        {
            *slot = None;
        }
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
        // redb caches up to 1 GiB by default, so a long-lived process (an MCP server) would grow
        // with its journal; the working set of a run is a few pages.
        builder.set_cache_size(DATABASE_CACHE_BYTES);
        loop {
            match builder.create(&path) {
                Ok(db) => return Ok(db),
                Err(DatabaseError::DatabaseAlreadyOpen) if started.elapsed() < OPEN_PATIENCE => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Err(source) => return Err(DataDirError::Open { path, source }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_data_directory_is_its_owners_only_and_an_existing_one_is_left_as_it_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("a/b/data");
        DataDir::new(&root).database().expect("open");
        let mode =
            |path: &Path| std::fs::metadata(path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&root), 0o700);
        let existing = dir.path().join("shared");
        std::fs::create_dir(&existing).expect("mkdir");
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        DataDir::new(&existing).database().expect("open");
        assert_eq!(mode(&existing), 0o755, "the owner's choice stays");
    }
}
