//! On-disk caches keyed by content: the precompiled form of each component (by its sha256 and
//! the wasmtime configuration), its `describe()` answer, and a memo of file hashes keyed by file
//! identity (size, mtime, inode) so that a 40 MB component is not re-hashed on every run.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::files::FileError;
use crate::primitives::{sha256_hex, write_atomic};

/// The cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

#[derive(Serialize, Deserialize, PartialEq)]
struct Fingerprint {
    len: u64,
    mtime_ns: i128,
    ino: u64,
    dev: u64,
    sha256: String,
}

fn fingerprint(meta: &fs::Metadata, sha256: String) -> Fingerprint {
    Fingerprint {
        len: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ino: meta.ino(),
        dev: meta.dev(),
        sha256,
    }
}

impl Cache {
    /// `$FORGE_HOST_CACHE_DIR`, else `$XDG_CACHE_HOME/forge-host`, else `~/.cache/forge-host`,
    /// else a folder in the system temporary directory.
    pub fn default_location() -> Self {
        let root = std::env::var_os("FORGE_HOST_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .filter(|d| !d.is_empty())
                    .map(|d| PathBuf::from(d).join("forge-host"))
            })
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|d| !d.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache/forge-host"))
            })
            .unwrap_or_else(|| std::env::temp_dir().join("forge-host-cache"));
        Cache { root }
    }

    /// A cache at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Cache { root: root.into() }
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The sha256 of the file at `path`, from the memo when the file is unchanged.
    pub fn file_sha256(&self, path: &Path) -> Result<String> {
        let unreadable = |e: std::io::Error| {
            Error::engine_unavailable(format!("cannot read {}: {e}", path.display()))
        };
        let meta = fs::metadata(path).map_err(unreadable)?;
        let canonical = fs::canonicalize(path).map_err(unreadable)?;
        let memo = self
            .root
            .join("hashes")
            .join(sha256_hex(canonical.as_os_str().as_encoded_bytes()));
        if let Ok(text) = fs::read(&memo)
            && let Ok(known) = serde_json::from_slice::<Fingerprint>(&text)
            && known == fingerprint(&meta, known.sha256.clone())
        {
            return Ok(known.sha256);
        }
        let bytes = fs::read(path).map_err(unreadable)?;
        let sha256 = sha256_hex(&bytes);
        // Record the identity read before hashing: a file changed meanwhile is re-hashed next time.
        let record = fingerprint(&meta, sha256.clone());
        if let Ok(text) = serde_json::to_vec(&record) {
            let _ = write_atomic(&memo, &text);
        }
        Ok(sha256)
    }

    /// Where the precompiled form of component `sha256` for configuration `config` lives.
    pub fn compiled_path(&self, sha256: &str, config: &str) -> PathBuf {
        self.root
            .join("compiled")
            .join(format!("{sha256}-{config}.cwasm"))
    }

    /// Where the `describe()` answer of component `sha256` lives.
    pub fn info_path(&self, sha256: &str) -> PathBuf {
        self.root
            .join("compiled")
            .join(format!("{sha256}.info.json"))
    }

    /// Writes a cache entry whole, or not at all.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        write_atomic(path, bytes).map_err(|source| {
            Error::from_source(
                ErrorCode::EngineUnavailable,
                FileError::new("cannot write", path, source),
            )
        })
    }
}
