//! Files of an execution: the job folders given to every engine as WASI preopens
//! (`/input` read-only copies of the inputs, hashed as copied; `/output`; `/work`), a pool of
//! idle job folders, the publication of `/output` with validation, and the provenance written
//! beside it, and the disk quota of `/work` and `/output`.

mod copy;
mod held;
mod inputs;
mod job;
pub mod mime;
mod pool;
mod provenance;
mod publish;
pub mod published;
mod quota;
mod root;
mod staging;

use std::path::PathBuf;

pub use held::{FileKey, Held, HeldBlocks};
pub use inputs::{InputEntry, InputRoots, OpenedInput, open_inputs, walk_within};
pub use job::{InputRecord, JobDir};
pub use pool::JobPool;
pub use provenance::Provenance;
pub use publish::{
    MANIFEST, OutputLimits, PROVENANCE, PublishError, Staged, check_destination, check_output_path,
    publish, stage, stage_empty,
};
pub use quota::{DiskFull, DiskQuota, TooManyOpen};
pub use root::root_folder;

use crate::error::{Error, ErrorCode};

/// The guest paths of the job folders every run is given, in the order they are mounted.
pub const JOB_MOUNTS: [&str; 3] = ["/input", "/output", "/work"];

/// A file operation of the host that failed (not the caller's input: that is `INVALID_INPUT`).
#[derive(Debug, thiserror::Error)]
#[error("{action} {}", path.display())]
pub struct FileError {
    /// What was being done (`cannot create`, `cannot write`, ...).
    pub action: &'static str,
    /// On what.
    pub path: PathBuf,
    /// Why it failed.
    #[source]
    pub source: std::io::Error,
}

impl FileError {
    /// A failure to do `action` on `path`.
    pub fn new(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        FileError {
            action,
            path: path.into(),
            source,
        }
    }
}

impl From<FileError> for Error {
    fn from(error: FileError) -> Self {
        Error::from_source(ErrorCode::IsolateFailure, error)
    }
}
