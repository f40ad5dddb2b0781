//! The job folder of one execution: `input/` (read-only copies of the inputs, hashed while they
//! are copied), `output/` and `work/`, under the data directory. Removed when dropped unless kept.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::FileError;
use super::copy::{CopyError, copy_hashed};
use super::inputs::{OpenedInput, unreadable, walk_within};
use crate::error::{Error, Result};

/// One input file as copied into `/input`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct InputRecord {
    /// Path below `/input`, `/`-separated (a folder input keeps its tree).
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// sha256 of the copied bytes.
    pub sha256: String,
    /// Where the caller's file was.
    #[serde(skip)]
    pub source: PathBuf,
}

/// The folders of one execution.
#[derive(Debug)]
pub struct JobDir {
    root: PathBuf,
    keep: bool,
}

fn io_error(what: &'static str, path: &Path, error: std::io::Error) -> Error {
    FileError::new(what, path, error).into()
}

impl JobDir {
    /// Creates `root` with empty `input/`, `output/` and `work/`.
    pub fn create(root: PathBuf, keep: bool) -> Result<Self> {
        for sub in ["input", "output", "work"] {
            let dir = root.join(sub);
            fs::create_dir_all(&dir).map_err(|e| io_error("cannot create", &dir, e))?;
        }
        Ok(JobDir { root, keep })
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The host folder behind `/input`.
    pub fn input(&self) -> PathBuf {
        self.root.join("input")
    }

    /// The host folder behind `/output`.
    pub fn output(&self) -> PathBuf {
        self.root.join("output")
    }

    /// The host folder behind `/work`.
    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// Whether the folder stays after the run (`--keep`).
    pub fn kept(&self) -> bool {
        self.keep
    }

    /// Takes over an idle, empty job folder (from an earlier run of this process) as `root`:
    /// a rename instead of creating four folders.
    pub fn adopt(idle: &Path, root: PathBuf, keep: bool) -> Result<Self> {
        fs::rename(idle, &root).map_err(|e| io_error("cannot reuse", idle, e))?;
        Ok(JobDir { root, keep })
    }

    /// Works in an idle, empty job folder (from an earlier run of this process) where it is.
    pub fn reuse(idle: PathBuf) -> Self {
        JobDir {
            root: idle,
            keep: false,
        }
    }

    /// Moves this folder to `idle` for the next run when it is empty and not kept; otherwise
    /// it is removed as usual. Returns whether it was kept for reuse.
    pub fn recycle(mut self, idle: &Path) -> bool {
        let empty = |dir: PathBuf| fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
        if self.keep || !empty(self.input()) || !empty(self.output()) || !empty(self.work()) {
            return false;
        }
        if self.root == idle || fs::rename(&self.root, idle).is_ok() {
            self.keep = true;
            return true;
        }
        false
    }

    /// Copies the caller's inputs, opened (`files::open_inputs`), into `input/`, hashing every
    /// byte as it is copied. A folder keeps its tree; only regular files and folders are
    /// accepted. Inputs that hold more than `max_bytes` together are refused before anything
    /// is copied.
    pub fn copy_inputs(&self, inputs: &[OpenedInput], max_bytes: u64) -> Result<Vec<InputRecord>> {
        let mut names = std::collections::BTreeSet::new();
        for input in inputs {
            if !names.insert(input.name()) {
                return Err(Error::invalid_input(format!(
                    "two inputs are called `{}`: rename one (inputs keep their file names in /input)",
                    input.name()
                )));
            }
            if let OpenedInput::Folder { source, .. } = input
                && let (Ok(folder), Ok(job)) =
                    (fs::canonicalize(source), fs::canonicalize(&self.root))
                && job.starts_with(&folder)
            {
                return Err(Error::invalid_input(format!(
                    "input {} holds forge-host's own data directory; pass a folder that does not",
                    source.display()
                )));
            }
        }
        let walked = walk_within(inputs, max_bytes)?;
        let mut records = Vec::new();
        for (input, entries) in &walked {
            for entry in entries {
                let target = self.input().join(&entry.name);
                if entry.folder {
                    fs::create_dir_all(&target)
                        .map_err(|e| io_error("cannot create", &target, e))?;
                } else {
                    let mut from = input.open_file(entry)?;
                    let below = entry.name.split_once('/').map_or("", |(_, rest)| rest);
                    let source = if below.is_empty() {
                        input.source().to_path_buf()
                    } else {
                        input.source().join(below)
                    };
                    records.push(copy_file(&mut from, &source, &target, entry.name.clone())?);
                }
            }
        }
        records.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(records)
    }
}

fn copy_file(
    from: &mut fs::File,
    source: &Path,
    target: &Path,
    name: String,
) -> Result<InputRecord> {
    let mut to = fs::File::create(target).map_err(|e| io_error("cannot create", target, e))?;
    let (size, sha256) = copy_hashed(from, &mut to).map_err(|error| match error {
        CopyError::Read(e) => unreadable(source, e),
        CopyError::Write(e) => io_error("cannot write", target, e),
    })?;
    // Read-only for the guest already through the preopen; read-only on disk too.
    let mut perms = fs::metadata(target)
        .map_err(|e| io_error("cannot stat", target, e))?
        .permissions();
    perms.set_readonly(true);
    let _ = fs::set_permissions(target, perms);
    Ok(InputRecord {
        name,
        size,
        sha256,
        source: source.to_path_buf(),
    })
}

impl Drop for JobDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        // Copies are read-only on disk: make them writable again so they can be removed.
        make_writable(&self.root);
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn make_writable(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if let Ok(meta) = fs::symlink_metadata(&path) {
            if meta.is_dir() {
                make_writable(&path);
            } else if meta.is_file() && meta.permissions().readonly() {
                let mut perms = meta.permissions();
                #[expect(
                    clippy::permissions_set_readonly_false,
                    reason = "the file is ours and about to be deleted"
                )]
                perms.set_readonly(false);
                let _ = fs::set_permissions(&path, perms);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn opened(paths: &[PathBuf]) -> Vec<OpenedInput> {
        super::super::open_inputs(paths, None, "inputs").expect("opened")
    }

    #[test]
    fn inputs_are_copied_hashed_and_keep_their_tree() {
        let source = tempfile::tempdir().expect("tempdir");
        std::fs::write(source.path().join("a.csv"), "x,y\n1,2\n").expect("write");
        std::fs::create_dir_all(source.path().join("set/sub")).expect("mkdir");
        std::fs::write(source.path().join("set/sub/b.txt"), "hello").expect("write");
        let jobs = tempfile::tempdir().expect("tempdir");
        let job = JobDir::create(jobs.path().join("job"), false).expect("job");
        let records = job
            .copy_inputs(
                &opened(&[source.path().join("a.csv"), source.path().join("set")]),
                u64::MAX,
            )
            .expect("copied");
        let names: Vec<_> = records.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a.csv", "set/sub/b.txt"]);
        assert_eq!(
            records[1].sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(
            std::fs::read_to_string(job.input().join("set/sub/b.txt")).expect("read"),
            "hello"
        );
        let root = job.root().to_path_buf();
        drop(job);
        assert!(!root.exists(), "the job folder is removed");
    }

    #[test]
    fn duplicate_names_and_symlinks_are_refused() {
        let source = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(source.path().join("one")).expect("mkdir");
        std::fs::create_dir_all(source.path().join("two")).expect("mkdir");
        std::fs::write(source.path().join("one/x"), "1").expect("write");
        std::fs::write(source.path().join("two/x"), "2").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", source.path().join("one/link")).expect("symlink");
        let jobs = tempfile::tempdir().expect("tempdir");
        let job = JobDir::create(jobs.path().join("job"), false).expect("job");
        let twice = job.copy_inputs(
            &opened(&[source.path().join("two/x"), source.path().join("one/x")]),
            u64::MAX,
        );
        assert_eq!(twice.expect_err("duplicate").code, ErrorCode::InvalidInput);
        let link = job.copy_inputs(&opened(&[source.path().join("one")]), u64::MAX);
        assert_eq!(link.expect_err("symlink").code, ErrorCode::InvalidInput);
    }
}
