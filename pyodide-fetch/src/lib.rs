//! Offline, hash-pinned pure-Python packages for forge-host's WASI CPython engines.
//!
//! - [`lock`]: the Pyodide lock format (`pyodide-lock.json`), which is also ours.
//! - [`pip`]: pip, through the user's own configuration, fetches pure-Python wheels for
//!   CPython 3.14 (and builds one from a pure-Python source distribution).
//! - [`wheel`]: what a wheel is: pure or not, what it needs, what it provides to `import`.
//! - [`store`]: the content-addressed store, `<root>/<sha256>/<file_name>`, verified before use.
//! - [`fetch`]: `add`, `remove` and `import-lock`, which tie them together and write the lock
//!   whole or not at all.
//!
//! A run then mounts, read-only, exactly the locked packages its imports need
//! ([`PyodideLock::closure`]), after [`Store::verify`].

pub mod fetch;
pub mod lock;
pub mod pip;
pub mod store;
pub mod wheel;

use std::path::{Path, PathBuf};

pub use fetch::{Builtin, Fetcher, Imported, Outcome};
pub use lock::{LockedPackage, PyodideLock, normalize};
pub use store::{Mismatch, Store, VerifyReport};

/// Everything that can go wrong. Each says what to do about it where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a valid pyodide-lock.json: {source}", path.display())]
    BadLock {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("`{file}` is not a usable wheel: {reason}")]
    BadWheel { file: String, reason: String },
    #[error(
        "package `{name}`{} cannot run in the sandbox: {reason}",
        needed(needed_by)
    )]
    NotPurePython {
        name: String,
        needed_by: Option<String>,
        reason: String,
    },
    #[error("package `{name}`{} is {hint}", needed(needed_by))]
    Builtin {
        name: String,
        needed_by: Option<String>,
        hint: String,
    },
    #[error("sha256 mismatch for {file}: expected {expected}, got {actual}")]
    HashMismatch {
        file: String,
        expected: String,
        actual: String,
    },
    #[error(
        "{file} is not in the package store; add its package again with `forge-host packages add`"
    )]
    NotStored { file: String },
    #[error(
        "package `{name}`{} is not in the lock; add it with `forge-host packages add {name}`",
        needed(needed_by)
    )]
    NotLocked {
        name: String,
        needed_by: Option<String>,
    },
    #[error("package `{name}` is needed by {}: remove them first", dependents.join(", "))]
    StillNeeded {
        name: String,
        dependents: Vec<String>,
    },
    #[error("cannot run pip (`{command}`; set FORGE_HOST_PIP to the pip command to use): {source}")]
    PipMissing {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("pip could not fetch {what}:\n{output}")]
    Pip { what: String, output: String },
    #[error(
        "invalid requirement `{0}`: expected a project name, optionally with a version (`tabulate==0.9.0`)"
    )]
    BadSpec(String),
}

/// " (needed by `jinja2`)", or nothing.
fn needed(by: &Option<String>) -> String {
    by.as_ref()
        .map(|n| format!(" (needed by `{n}`)"))
        .unwrap_or_default()
}

impl FetchError {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        FetchError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the user asked for something invalid (rather than a package being unavailable).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            FetchError::BadLock { .. } | FetchError::BadSpec(_) | FetchError::StillNeeded { .. }
        )
    }
}
