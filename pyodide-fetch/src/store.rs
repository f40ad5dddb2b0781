//! The content-addressed store: `<root>/<sha256>/<file_name>`, written by staging and renaming
//! (so a reader never sees half a file), and verified before use.
//!
//! Verifying re-hashes a file unless its stat fingerprint (size, modification and change times,
//! inode) is the one recorded beside it when it last hashed right. Any write to the file changes
//! its change time, which no user can set, so a changed file is always re-hashed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::FetchError;

/// The file beside each stored file that records its last verified fingerprint.
const FINGERPRINT: &str = ".verified";
/// Where files are written before they are renamed into place.
const STAGING: &str = ".staging";
/// Where `verify_all` moves files that no longer match their name.
const QUARANTINE: &str = ".quarantine";

/// A content-addressed store of package files.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// One file that did not match its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The file.
    pub file: PathBuf,
    /// The sha256 its folder names.
    pub expected: String,
    /// The sha256 it has.
    pub actual: String,
    /// Where it was moved.
    pub quarantined: Option<PathBuf>,
}

/// The result of [`Store::verify_all`].
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Files that hashed to their name.
    pub good: Vec<PathBuf>,
    /// Files that did not, now in quarantine.
    pub mismatches: Vec<Mismatch>,
}

/// sha256 of a file's bytes, hex.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    hash_copy(path, None)
}

/// Reads the file at `source` once, hashing it, and writes its bytes to `copy` when given: the
/// sha256, hex.
fn hash_copy(source: &Path, copy: Option<&Path>) -> Result<String, FetchError> {
    let mut input = std::fs::File::open(source).map_err(|e| FetchError::io("read", source, e))?;
    let mut output = match copy {
        Some(target) => {
            Some(std::fs::File::create(target).map_err(|e| FetchError::io("write", target, e))?)
        }
        None => None,
    };
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buffer)
            .map_err(|e| FetchError::io("read", source, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        if let (Some(output), Some(target)) = (output.as_mut(), copy) {
            output
                .write_all(&buffer[..n])
                .map_err(|e| FetchError::io("write", target, e))?;
        }
    }
    if let (Some(output), Some(target)) = (output, copy) {
        output
            .sync_all()
            .map_err(|e| FetchError::io("write", target, e))?;
    }
    Ok(hex::encode(hasher.finalize()))
}

fn is_sha256(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Size, times and inode of a file, as one comparable line.
fn fingerprint(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(format!(
        "{} {}.{} {}.{} {} {}",
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.ino(),
        m.dev()
    ))
}

impl Store {
    /// The store at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Store { root: root.into() }
    }

    /// Its folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of one stored file.
    pub fn dir_of(&self, sha256: &str) -> PathBuf {
        self.root.join(sha256)
    }

    /// Where a stored file is.
    pub fn path_of(&self, sha256: &str, file_name: &str) -> PathBuf {
        self.dir_of(sha256).join(file_name)
    }

    /// Copies `source` in as `file_name` and returns its sha256. When `expected` is given, a
    /// file that hashes otherwise is refused and nothing is stored.
    pub fn add(
        &self,
        source: &Path,
        file_name: &str,
        expected: Option<&str>,
    ) -> Result<String, FetchError> {
        if file_name.contains('/') || file_name.starts_with('.') || file_name.is_empty() {
            return Err(FetchError::BadWheel {
                file: file_name.to_string(),
                reason: "not a plain file name".into(),
            });
        }
        let staging_root = self.root.join(STAGING);
        std::fs::create_dir_all(&staging_root)
            .map_err(|source| FetchError::io("create", &staging_root, source))?;
        let staged = tempfile::Builder::new()
            .prefix("add-")
            .tempdir_in(&staging_root)
            .map_err(|source| FetchError::io("create", &staging_root, source))?;
        let target = staged.path().join(file_name);
        let sha256 = hash_copy(source, Some(&target))?;
        if let Some(expected) = expected
            && !expected.eq_ignore_ascii_case(&sha256)
        {
            return Err(FetchError::HashMismatch {
                file: file_name.to_string(),
                expected: expected.to_lowercase(),
                actual: sha256,
            });
        }
        if let Some(print) = fingerprint(&target) {
            let _ = std::fs::write(staged.path().join(FINGERPRINT), print);
        }
        let final_dir = self.dir_of(&sha256);
        if final_dir.join(file_name).exists() && self.verify(&sha256, file_name).is_ok() {
            return Ok(sha256); // already there (another add was first)
        }
        if final_dir.exists() {
            // Left by a file of the same content under another name, or a bad copy: set aside.
            self.quarantine(&final_dir, &sha256)?;
        }
        let staged_path = staged.keep();
        std::fs::rename(&staged_path, &final_dir).map_err(|source| {
            let _ = std::fs::remove_dir_all(&staged_path);
            FetchError::io("move into the store", &final_dir, source)
        })?;
        Ok(sha256)
    }

    /// Checks a stored file before it is used: its path, or why it cannot be.
    pub fn verify(&self, sha256: &str, file_name: &str) -> Result<PathBuf, FetchError> {
        let path = self.path_of(sha256, file_name);
        let Some(now) = fingerprint(&path) else {
            return Err(FetchError::NotStored {
                file: path.display().to_string(),
            });
        };
        let recorded = self.dir_of(sha256).join(FINGERPRINT);
        if std::fs::read_to_string(&recorded).is_ok_and(|r| r == now) {
            return Ok(path);
        }
        let actual = sha256_file(&path)?;
        if actual != sha256.to_lowercase() {
            return Err(FetchError::HashMismatch {
                file: path.display().to_string(),
                expected: sha256.to_lowercase(),
                actual,
            });
        }
        // Best effort: without it the next check hashes again.
        if let Ok(mut file) = tempfile::NamedTempFile::new_in(self.dir_of(sha256))
            && file.write_all(now.as_bytes()).is_ok()
        {
            let _ = file.persist(&recorded);
        }
        Ok(path)
    }

    /// Re-hashes every stored file, and moves each one that does not match its name to
    /// `.quarantine/`.
    pub fn verify_all(&self) -> Result<VerifyReport, FetchError> {
        let mut report = VerifyReport::default();
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
            Err(source) => return Err(FetchError::io("list", &self.root, source)),
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| is_sha256(&n.to_string_lossy()))
            })
            .collect();
        dirs.sort();
        for dir in dirs {
            let sha256 = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|source| FetchError::io("list", &dir, source))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
                })
                .collect();
            let mut bad = None;
            for file in &files {
                let actual = sha256_file(file)?;
                if actual == sha256 {
                    report.good.push(file.clone());
                } else {
                    bad = Some(Mismatch {
                        file: file.clone(),
                        expected: sha256.clone(),
                        actual,
                        quarantined: None,
                    });
                }
            }
            if let Some(mut mismatch) = bad {
                let _ = std::fs::remove_file(dir.join(FINGERPRINT));
                mismatch.quarantined = Some(self.quarantine(&dir, &sha256)?);
                report.mismatches.push(mismatch);
            }
        }
        Ok(report)
    }

    /// Moves a stored folder aside, to `.quarantine/<sha256>-<n>`.
    fn quarantine(&self, dir: &Path, sha256: &str) -> Result<PathBuf, FetchError> {
        let quarantine = self.root.join(QUARANTINE);
        std::fs::create_dir_all(&quarantine)
            .map_err(|source| FetchError::io("create", &quarantine, source))?;
        for n in 0u32.. {
            let target = quarantine.join(format!("{sha256}-{n}"));
            if target.exists() {
                continue;
            }
            return std::fs::rename(dir, &target)
                .map(|_| target)
                .map_err(|source| FetchError::io("quarantine", dir, source));
        }
        unreachable!("u32 ran out of quarantine names")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join("download.whl");
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn files_are_stored_by_content_and_verified() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(dir.path().join("packages"));
        let source = sample(dir.path(), "wheel bytes");
        let sha = store
            .add(&source, "a-1-py3-none-any.whl", None)
            .expect("adds");
        assert_eq!(sha, sha256_file(&source).expect("hashes"));
        let stored = store
            .verify(&sha, "a-1-py3-none-any.whl")
            .expect("verifies");
        assert_eq!(
            std::fs::read_to_string(&stored).expect("reads"),
            "wheel bytes"
        );
        // Adding it again is a no-op; staging is left empty.
        store
            .add(&source, "a-1-py3-none-any.whl", Some(&sha))
            .expect("again");
        let staging = std::fs::read_dir(store.root().join(STAGING))
            .expect("lists")
            .count();
        assert_eq!(staging, 0);
    }

    #[test]
    fn a_wrong_expected_hash_stores_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(dir.path().join("packages"));
        let source = sample(dir.path(), "wheel bytes");
        let error = store
            .add(&source, "a-1-py3-none-any.whl", Some(&"0".repeat(64)))
            .expect_err("refused");
        assert!(matches!(error, FetchError::HashMismatch { .. }), "{error}");
        let left: Vec<_> = std::fs::read_dir(store.root())
            .expect("lists")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != STAGING)
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_changed_file_is_caught_even_after_a_good_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(dir.path().join("packages"));
        let sha = store
            .add(&sample(dir.path(), "good"), "a-1-py3-none-any.whl", None)
            .expect("adds");
        let path = store.verify(&sha, "a-1-py3-none-any.whl").expect("good");
        std::fs::write(&path, "evil").expect("tamper");
        let error = store
            .verify(&sha, "a-1-py3-none-any.whl")
            .expect_err("caught");
        let text = error.to_string();
        assert!(
            text.contains(&sha) && text.contains(&sha256_file(&path).expect("hash")),
            "{text}"
        );

        let report = store.verify_all().expect("verifies");
        assert_eq!(report.mismatches.len(), 1);
        let moved = report.mismatches[0].quarantined.clone().expect("moved");
        assert!(moved.starts_with(store.root().join(QUARANTINE)));
        assert!(!store.dir_of(&sha).exists());
        assert!(matches!(
            store.verify(&sha, "a-1-py3-none-any.whl"),
            Err(FetchError::NotStored { .. })
        ));
    }
}
