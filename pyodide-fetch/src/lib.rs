//! Offline, hash-pinned pure-Python packages for forge-host's WASI CPython engines.
//!
//! - [`lock`]: the Pyodide lock format (`pyodide-lock.json`), which is also ours.
//! - [`pip`]: pip, through the user's own configuration, fetches pure-Python wheels for
//!   the engines' CPython (and builds one from a pure-Python source distribution).
//! - [`wheel`]: what a wheel is: pure or not, what it needs, what it provides to `import`.
//! - [`store`]: the content-addressed store, `<root>/<sha256>/<file_name>`, verified before use.
//! - [`fetch`]: `add`, `remove` and `import-lock`, which tie them together and write the lock
//!   whole or not at all.
//!
//! A run then mounts, read-only, exactly the locked packages its imports need
//! ([`PyodideLock::closure`]), after [`Store::verify`].

#![deny(missing_docs)]

pub mod fetch;
pub mod lock;
pub mod pip;
pub mod store;
pub mod wheel;

use std::path::{Path, PathBuf};

pub use fetch::{Builtin, Fetcher, Imported, Outcome, pin_bytecode};
pub use lock::{Bytecode, LockedPackage, PyodideLock, bytecode_file_name, normalize};
pub use store::{Mismatch, Store, VerifyReport};

/// Everything that can go wrong. Each says what to do about it where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A file could not be read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// To which file.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A lock file is not valid JSON of the lock format.
    #[error("{} is not a valid pyodide-lock.json: {source}", path.display())]
    BadLock {
        /// The lock.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A file is not a wheel the engines can use.
    #[error("`{file}` is not a usable wheel: {reason}")]
    BadWheel {
        /// Its file name.
        file: String,
        /// Why not.
        reason: String,
    },
    /// A package has native code, or no file for CPython 3.14.
    #[error(
        "package `{name}`{} cannot run in the sandbox: {reason}",
        needed(needed_by)
    )]
    NotPurePython {
        /// The package.
        name: String,
        /// The package that needs it, when it was a dependency.
        needed_by: Option<String>,
        /// Why it cannot run.
        reason: String,
    },
    /// A package an engine profile builds in.
    #[error("package `{name}`{} is {hint}", needed(needed_by))]
    Builtin {
        /// The package.
        name: String,
        /// The package that needs it, when it was a dependency.
        needed_by: Option<String>,
        /// Which profile has it and how to build it.
        hint: String,
    },
    /// A file does not have the sha256 it is pinned to.
    #[error("sha256 mismatch for {file}: expected {expected}, got {actual}")]
    HashMismatch {
        /// The file.
        file: String,
        /// The sha256 it is pinned to.
        expected: String,
        /// The sha256 it has.
        actual: String,
    },
    /// A locked file is missing from the store.
    #[error(
        "{file} is not in the package store; add its package again with `forge-host packages add`"
    )]
    NotStored {
        /// Where it should be.
        file: String,
    },
    /// A package is not in the lock.
    #[error(
        "package `{name}`{} is not in the lock; add it with `forge-host packages add {name}`",
        needed(needed_by)
    )]
    NotLocked {
        /// The package.
        name: String,
        /// The locked package that depends on it, if any.
        needed_by: Option<String>,
    },
    /// Other locked packages depend on the one being removed.
    #[error("package `{name}` is needed by {}: remove them first", dependents.join(", "))]
    StillNeeded {
        /// The package.
        name: String,
        /// Who needs it.
        dependents: Vec<String>,
    },
    /// pip cannot be started.
    #[error("cannot run pip (`{command}`; set FORGE_HOST_PIP to the pip command to use): {source}")]
    PipMissing {
        /// The command tried.
        command: String,
        /// Why it did not start.
        #[source]
        source: std::io::Error,
    },
    /// pip ran and failed.
    #[error("pip could not fetch {what}:\n{output}")]
    Pip {
        /// The requirements it was fetching.
        what: String,
        /// The end of its output.
        output: String,
    },
    /// A requirement is not one.
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
