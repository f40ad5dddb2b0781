//! The files runs publish for callers that cannot be handed a folder (an MCP client): each run's
//! under `DATA_DIR/published/<run-id>/`, read back only by a run id and a path the run's
//! journal record lists among its outputs, through a handle on that run's folder (no `..`,
//! absolute path or symlink leads out), and removed by `journal prune` with the run's tape.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::datadir::DataDir;
use crate::error::{Error, ErrorCode};
use crate::journal::{Journal, PublishedFile};
use crate::primitives::utc_timestamp;

/// Why a published file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// The run is not in this journal, or published nothing here.
    #[error("run `{0}` published no files here")]
    NoSuchRun(String),
    /// The run published no file of that name.
    #[error("run `{id}` published no file `{path}`")]
    NoSuchFile {
        /// The run.
        id: String,
        /// The name asked for.
        path: String,
    },
    /// The file is there in the journal but could not be read.
    #[error("cannot read `{path}` of run `{id}`")]
    Unreadable {
        /// The run.
        id: String,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The journal could not be read.
    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),
}

impl PublishedError {
    /// The stable code: asking for what is not there is the caller's error.
    pub fn code(&self) -> ErrorCode {
        match self {
            PublishedError::NoSuchRun(_) | PublishedError::NoSuchFile { .. } => {
                ErrorCode::InvalidInput
            }
            PublishedError::Unreadable { .. } => ErrorCode::IsolateFailure,
            PublishedError::Journal(error) => error.code(),
        }
    }
}

impl From<PublishedError> for Error {
    fn from(error: PublishedError) -> Self {
        Error::from_source(error.code(), error)
    }
}

/// The folder of every run's published files.
pub fn root(data: &DataDir) -> PathBuf {
    data.root().join("published")
}

/// Where run `id` publishes.
pub fn run_folder(data: &DataDir, id: &str) -> PathBuf {
    root(data).join(id)
}

/// Whether `id` can name a run's folder: what execution ids are made of.
fn plausible_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The file `path` that run `id` published here, with its bytes. Refused unless the run's
/// journal record says it published `path` into its folder under this data directory.
pub fn read(
    data: &DataDir,
    journal: &Journal,
    id: &str,
    path: &str,
) -> Result<(PublishedFile, Vec<u8>), PublishedError> {
    if !plausible_id(id) {
        return Err(PublishedError::NoSuchRun(id.to_string()));
    }
    let record = match journal.get(id) {
        Ok(record) => record,
        Err(crate::journal::JournalError::NotFound(_)) => {
            return Err(PublishedError::NoSuchRun(id.to_string()));
        }
        Err(error) => return Err(error.into()),
    };
    let folder = run_folder(data, id);
    if record.out_dir.as_deref().map(Path::new) != Some(folder.as_path()) {
        return Err(PublishedError::NoSuchRun(id.to_string()));
    }
    let Some(file) = record.outputs.iter().find(|f| f.path == path).cloned() else {
        return Err(PublishedError::NoSuchFile {
            id: id.to_string(),
            path: path.to_string(),
        });
    };
    let unreadable = |source| PublishedError::Unreadable {
        id: id.to_string(),
        path: path.to_string(),
        source,
    };
    let dir = Dir::open_ambient_dir(&folder, ambient_authority()).map_err(unreadable)?;
    let mut bytes = Vec::new();
    dir.open(path)
        .and_then(|f| f.take(file.size.saturating_add(1)).read_to_end(&mut bytes))
        .map_err(unreadable)?;
    if bytes.len() as u64 != file.size {
        return Err(unreadable(std::io::Error::other(format!(
            "it is {} bytes, not the {} bytes published",
            bytes.len(),
            file.size
        ))));
    }
    Ok((file, bytes))
}

/// Removes the published folders of runs that started more than `older_than` ago (a folder
/// whose run the journal no longer has goes when it was last changed that long ago); the count
/// removed.
pub fn prune(data: &DataDir, journal: &Journal, older_than: Duration) -> Result<usize, Error> {
    let cutoff_time = SystemTime::now()
        .checked_sub(older_than)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let cutoff = utc_timestamp(cutoff_time);
    let root = root(data);
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(super::FileError::new("cannot list", &root, error).into()),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let old = match journal.get(&name) {
            Ok(record) => record.started_at < cutoff,
            Err(_) => entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified < cutoff_time),
        };
        if old {
            let path = entry.path();
            std::fs::remove_dir_all(&path)
                .map_err(|error| super::FileError::new("cannot remove", &path, error))?;
            removed += 1;
        }
    }
    Ok(removed)
}
