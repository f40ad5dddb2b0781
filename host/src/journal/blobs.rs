//! The tool responses replay records refer to, content-addressed (`blobs/<sha256>`) and readable
//! by the owner only: they may hold whatever a tool answered. A blob is written before the tape
//! that names it is committed, and without an fsync of its own: a process killed mid-run leaves
//! at worst a blob no tape names (`journal prune` removes those), and a machine that loses power
//! may lose the blobs of its last runs, which a replay then reports as missing.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::primitives::sha256_hex;

/// Why a blob could not be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// Reading or writing failed.
    #[error("blob store {path}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A blob's bytes no longer hash to its name.
    #[error("blob {sha256} was altered (its bytes hash to {actual})")]
    Altered {
        /// Its name.
        sha256: String,
        /// What its bytes hash to.
        actual: String,
    },
}

/// The blob store of a data directory.
#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    /// The store in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Blobs { dir: dir.into() }
    }

    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BlobError + '_ {
        move |source| BlobError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Keeps `bytes` and returns their sha256; bytes already kept are not written again.
    pub fn put(&self, bytes: &[u8]) -> Result<String, BlobError> {
        let sha256 = sha256_hex(bytes);
        let path = self.dir.join(&sha256);
        if path.exists() {
            return Ok(sha256);
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(Self::io(&self.dir))?;
        // A named temporary file is created owner-only (0600) and renamed into place whole.
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(Self::io(&self.dir))?;
        file.write_all(bytes).map_err(Self::io(&path))?;
        file.persist(&path).map_err(|e| BlobError::Io {
            path: path.clone(),
            source: e.error,
        })?;
        Ok(sha256)
    }

    /// The bytes of blob `sha256`, checked against their hash.
    pub fn get(&self, sha256: &str) -> Result<Vec<u8>, BlobError> {
        let path = self.dir.join(sha256);
        let bytes = std::fs::read(&path).map_err(Self::io(&path))?;
        let actual = sha256_hex(&bytes);
        if actual != sha256 {
            return Err(BlobError::Altered {
                sha256: sha256.to_string(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// Removes every blob not in `keep`; returns how many went.
    pub fn remove_all_but(&self, keep: &HashSet<String>) -> Result<usize, BlobError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(error) => return Err(Self::io(&self.dir)(error)),
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry.map_err(Self::io(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if keep.contains(&name) {
                continue;
            }
            let path = entry.path();
            std::fs::remove_file(&path).map_err(Self::io(&path))?;
            removed += 1;
        }
        Ok(removed)
    }

    /// Whether the store's folder and files are the owner's alone (for `status` and tests).
    pub fn owner_only(&self) -> bool {
        let mode = |path: &Path| {
            std::fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o077)
                .unwrap_or(0)
        };
        mode(&self.dir) == 0
            && std::fs::read_dir(&self.dir)
                .into_iter()
                .flatten()
                .flatten()
                .all(|entry| mode(&entry.path()) == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_content_addressed_owner_only_and_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blobs = Blobs::new(dir.path().join("blobs"));
        let sha = blobs.put(b"{\"a\":1}").expect("put");
        assert_eq!(blobs.put(b"{\"a\":1}").expect("again"), sha);
        assert_eq!(blobs.get(&sha).expect("get"), b"{\"a\":1}");
        assert!(blobs.owner_only());
        std::fs::write(dir.path().join("blobs").join(&sha), b"{\"a\":2}").expect("alter");
        assert!(matches!(blobs.get(&sha), Err(BlobError::Altered { .. })));
        let other = blobs.put(b"[]").expect("put");
        let removed = blobs
            .remove_all_but(&HashSet::from([other.clone()]))
            .expect("prune");
        assert_eq!(removed, 1);
        assert!(blobs.get(&other).is_ok());
    }
}
