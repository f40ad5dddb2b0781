//! `engines.lock`: the engine components of a directory, each pinned by its sha256, with what
//! the host may know of it before compiling it (its id, the extensions it runs, the packages it
//! provides) and how it did on the conformance kit. One set of types, which forge-host reads
//! and `engines add` writes, and which `cargo xtask build` writes for `target/engines/`: a field
//! one of them adds survives the other.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file in an engine directory that pins its components.
pub const LOCK_FILE: &str = "engines.lock";

/// `engines.lock`: the components of a directory and their sha256.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineLock {
    /// One entry per component, by file name.
    pub engines: Vec<LockedEngine>,
}

/// One pinned component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedEngine {
    /// File name within the directory.
    pub file: String,
    /// sha256 of its bytes, hex.
    pub sha256: String,
    /// The engine id its `describe()` returns, when the lock knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The extensions it runs, when the lock knows them: the engine for a file is then chosen
    /// without compiling the others. Checked against `describe()` when the engine is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Packages it provides beyond its language's standard library (a Python profile's numpy,
    /// pandas, ...), which pick the smallest profile that covers a script's imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<Vec<String>>,
    /// How it did on the conformance kit when `engines add` registered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<ConformanceRecord>,
    /// Files it expects mounted read-only in every run, kept outside the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<LockedLibrary>,
}

/// A zip of files an engine reads at run time, such as a Python engine's whole standard library
/// with its bytecode: too big to carry in the component's snapshot, and needed by every run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedLibrary {
    /// The zip's file name within the lock's directory.
    pub file: String,
    /// sha256 of its bytes, hex.
    pub sha256: String,
    /// The absolute guest path its tree is mounted at (`/python`).
    pub mount: String,
}

/// An engine's result on the conformance kit, as its lock keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConformanceRecord {
    /// Cases it passed.
    pub passed: usize,
    /// The cases it failed.
    pub failed: Vec<String>,
    /// Registered with `--force` although it failed some.
    pub forced: bool,
}

/// A lock that cannot be read or does not parse.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Reading it failed.
    #[error("cannot read {path}")]
    Read {
        /// The lock's path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not an `engines.lock`.
    #[error("{path} is not an engines.lock")]
    Parse {
        /// The lock's path.
        path: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

impl EngineLock {
    /// The lock at `path`; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<EngineLock>, LockError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(LockError::Read {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        EngineLock::parse(&bytes)
            .map(Some)
            .map_err(|source| LockError::Parse {
                path: path.display().to_string(),
                source,
            })
    }

    /// A lock from its bytes.
    pub fn parse(bytes: &[u8]) -> Result<EngineLock, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// Its text: one entry per component, sorted by file name, so that a lock's diff shows
    /// what changed.
    pub fn to_text(&self) -> String {
        let mut sorted = self.clone();
        sorted.engines.sort_by(|a, b| a.file.cmp(&b.file));
        let entries: Vec<String> = sorted
            .engines
            .iter()
            .map(|entry| {
                // Plain data with string keys: encoding it cannot fail.
                format!("    {}", serde_json::to_string(entry).unwrap_or_default())
            })
            .collect();
        format!("{{\n  \"engines\": [\n{}\n  ]\n}}\n", entries.join(",\n"))
    }

    /// Adds `entry`, replacing the entry of the same file.
    pub fn upsert(&mut self, entry: LockedEngine) {
        self.engines.retain(|e| e.file != entry.file);
        self.engines.push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: &str) -> LockedEngine {
        LockedEngine {
            file: file.into(),
            sha256: "ab".repeat(32),
            id: Some(file.trim_end_matches(".wasm").into()),
            extensions: Some(vec![".js".into()]),
            packages: None,
            conformance: None,
            library: None,
        }
    }

    #[test]
    fn a_lock_round_trips_through_its_text_and_keeps_every_field() {
        let mut lock = EngineLock::default();
        lock.upsert(entry("b.wasm"));
        let mut with_record = entry("a.wasm");
        with_record.conformance = Some(ConformanceRecord {
            passed: 40,
            failed: vec!["never-settles".into()],
            forced: true,
        });
        with_record.library = Some(LockedLibrary {
            file: "a-lib.zip".into(),
            sha256: "cd".repeat(32),
            mount: "/lib".into(),
        });
        lock.upsert(with_record.clone());
        let text = lock.to_text();
        let back = EngineLock::parse(text.as_bytes()).expect("parses");
        assert_eq!(back.engines[0], with_record, "sorted by file, nothing lost");
        assert_eq!(back.engines.len(), 2);
        lock.upsert(entry("a.wasm"));
        assert_eq!(lock.engines.len(), 2, "an upsert replaces its file's entry");
    }

    #[test]
    fn a_missing_lock_is_none_and_a_broken_one_an_error() {
        let dir = std::env::temp_dir().join(format!("engine-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(LOCK_FILE);
        let _ = std::fs::remove_file(&path);
        assert!(EngineLock::read(&path).expect("no lock").is_none());
        std::fs::write(&path, "{\"engines\": [{\"file\": 1}]}").expect("write");
        assert!(matches!(
            EngineLock::read(&path),
            Err(LockError::Parse { .. })
        ));
        std::fs::write(&path, "{\"engines\": [], \"extra\": true}").expect("write");
        assert!(
            EngineLock::read(&path).is_err(),
            "unknown fields are refused"
        );
        std::fs::remove_dir_all(&dir).expect("clean");
    }
}
