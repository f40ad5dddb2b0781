//! Publication of `/output`: every name, type, count and size is validated first; the
//! files then go to a staging folder beside the destination, which is renamed into place, so a
//! publication either happens whole or leaves nothing behind. What a killed process left there is
//! mended by the next publication to the same place (the staging module).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::FileError;
use super::copy::{CopyError, copy_hashed};
use super::staging::{StagingNames, parent_and_base, sweep_leftovers};
use crate::error::{Error, ErrorCode};
use crate::journal::PublishedFile;
use crate::limits::Limits;

/// The manifest a script may write to `/output` to choose what is published, with titles.
pub const MANIFEST: &str = "outputs.json";
/// Written by the host beside the published files.
pub const PROVENANCE: &str = "provenance.json";

/// Longest file name (one path component) Linux file systems hold.
const MAX_NAME_BYTES: usize = 255;

/// Publication limits, as [`Limits`] sets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Files published at most.
    pub max_files: u32,
    /// Bytes of all published files together.
    pub max_total_bytes: u64,
    /// Bytes of one published file.
    pub max_file_bytes: u64,
}

impl From<&Limits> for OutputLimits {
    fn from(limits: &Limits) -> Self {
        OutputLimits {
            max_files: limits.max_publish_files,
            max_total_bytes: limits.max_publish_bytes,
            max_file_bytes: limits.max_publish_file_bytes,
        }
    }
}

/// Why a publication failed; nothing was published.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// An output failed validation (`PUBLICATION_REJECTED`).
    #[error("`{path}`: {reason}")]
    Rejected {
        /// The offending file, relative to `/output`.
        path: String,
        /// Why.
        reason: String,
    },
    /// Writing the publication failed.
    #[error(transparent)]
    Io(#[from] FileError),
    /// The destination holds files forge-host did not publish.
    #[error("{} already holds files that forge-host did not publish", .0.display())]
    Foreign(PathBuf),
    /// The provenance record does not serialise.
    #[error("cannot write the provenance")]
    Provenance(#[source] serde_json::Error),
}

impl PublishError {
    /// The execution's error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            PublishError::Rejected { .. } => ErrorCode::PublicationRejected,
            PublishError::Io(_) | PublishError::Foreign(_) | PublishError::Provenance(_) => {
                ErrorCode::IsolateFailure
            }
        }
    }
}

fn rejected(path: &str, reason: impl Into<String>) -> PublishError {
    PublishError::Rejected {
        path: path.to_string(),
        reason: reason.into(),
    }
}

fn io(what: &'static str, path: &Path, error: std::io::Error) -> PublishError {
    PublishError::Io(FileError::new(what, path, error))
}

/// Refuses, before anything runs, a destination that exists, is not empty and is not an
/// earlier publication (which holds a `provenance.json`): its files would be replaced.
pub fn check_destination(out: &Path) -> Result<(), Error> {
    sweep_leftovers(out);
    match fs::read_dir(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(Error::invalid_input(
            format!("--out {} is a file, not a folder", out.display()),
        )),
        Err(e) => Err(Error::invalid_input(format!(
            "--out {}: {e}",
            out.display()
        ))),
        Ok(mut entries) => {
            if entries.next().is_none() || out.join(PROVENANCE).is_file() {
                Ok(())
            } else {
                Err(Error::invalid_input(format!(
                    "--out {} already holds files that forge-host did not publish; choose an empty or new folder",
                    out.display()
                )))
            }
        }
    }
}

/// Judges a path under `/output` (`/`-separated, relative) as publication does: every component
/// a valid name. Any text is accepted or rejected, never a panic (the fuzz target
/// `output_names`).
pub fn check_output_path(path: &str) -> Result<(), PublishError> {
    path.split('/')
        .try_for_each(|component| check_name(path, component))
}

fn check_name(path: &str, component: &str) -> Result<(), PublishError> {
    if component.is_empty() || component == "." || component == ".." {
        return Err(rejected(path, "a path component is empty, `.` or `..`"));
    }
    if component.len() > MAX_NAME_BYTES {
        return Err(rejected(
            path,
            format!("a name is longer than {MAX_NAME_BYTES} bytes"),
        ));
    }
    if component.chars().any(|c| c.is_control()) {
        return Err(rejected(path, "a name contains control characters"));
    }
    if component.contains('\\') {
        return Err(rejected(path, "a name contains a backslash"));
    }
    Ok(())
}

/// Walks `dir`, accepting only regular files and folders with valid names.
fn collect(
    dir: &Path,
    files: &mut BTreeMap<String, u64>,
    prefix: &str,
) -> Result<(), PublishError> {
    let entries = fs::read_dir(dir).map_err(|e| io("cannot read", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io("cannot read", dir, e))?;
        let raw = entry.file_name();
        let Some(name) = raw.to_str() else {
            let shown = raw.to_string_lossy();
            return Err(rejected(
                &format!("{prefix}{shown}"),
                "the name is not UTF-8",
            ));
        };
        let path = format!("{prefix}{name}");
        check_name(&path, name)?;
        let meta =
            fs::symlink_metadata(entry.path()).map_err(|e| io("cannot stat", &entry.path(), e))?;
        if meta.is_dir() {
            collect(&entry.path(), files, &format!("{path}/"))?;
        } else if meta.is_file() {
            files.insert(path, meta.len());
        } else {
            let kind = if meta.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file or folder"
            };
            return Err(rejected(
                &path,
                format!("it is {kind}; only regular files and folders are published"),
            ));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Declared {
    path: String,
    #[serde(default)]
    title: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Manifest {
    Files { files: Vec<Declared> },
    List(Vec<Declared>),
}

/// What to publish: every file, or those `outputs.json` declares (with titles).
fn select(
    output: &Path,
    files: &BTreeMap<String, u64>,
) -> Result<Vec<(String, u64, Option<String>)>, PublishError> {
    if !files.contains_key(MANIFEST) {
        return Ok(files.iter().map(|(p, s)| (p.clone(), *s, None)).collect());
    }
    let text = fs::read(output.join(MANIFEST))
        .map_err(|e| io("cannot read", &output.join(MANIFEST), e))?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| {
        rejected(
            MANIFEST,
            format!("not a list of {{\"path\", \"title\"}} (or {{\"files\": [...]}}): {e}"),
        )
    })?;
    let declared = match manifest {
        Manifest::Files { files } | Manifest::List(files) => files,
    };
    let mut chosen = Vec::new();
    for item in declared {
        let path = item.path.trim_start_matches("./").to_string();
        if path.starts_with('/') || path.split('/').any(|c| c == "..") {
            return Err(rejected(
                MANIFEST,
                format!("declares `{}`, which is outside /output", item.path),
            ));
        }
        match files.get(&path) {
            Some(size) if path != MANIFEST => {
                if !chosen
                    .iter()
                    .any(|(p, _, _): &(String, u64, Option<String>)| *p == path)
                {
                    chosen.push((path, *size, item.title));
                }
            }
            _ => {
                return Err(rejected(
                    MANIFEST,
                    format!("declares `{}`, which is not a file in /output", item.path),
                ));
            }
        }
    }
    Ok(chosen)
}

/// Copies one output into the staging folder, synced, and returns its sha256.
fn stage_file(from: &Path, to: &Path) -> Result<String, PublishError> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
    }
    let mut source = fs::File::open(from).map_err(|e| io("cannot open", from, e))?;
    let mut target = fs::File::create(to).map_err(|e| io("cannot create", to, e))?;
    let (_, sha256) = copy_hashed(&mut source, &mut target).map_err(|error| match error {
        CopyError::Read(e) => io("cannot read", from, e),
        CopyError::Write(e) => io("cannot write", to, e),
    })?;
    target.sync_all().map_err(|e| io("cannot sync", to, e))?;
    Ok(sha256)
}

/// Validates `output` and publishes it to `out` with a `provenance.json` built by `provenance`
/// from the published files. On any failure nothing is left at `out` or beside it.
pub fn publish(
    output: &Path,
    out: &Path,
    limits: &OutputLimits,
    id: &str,
    provenance: impl FnOnce(&[PublishedFile]) -> serde_json::Value,
) -> Result<Vec<PublishedFile>, PublishError> {
    stage(output, out, limits, id, provenance)?.commit()
}

/// A validated publication, copied to a staging folder beside its destination. Dropping it
/// without [`Staged::commit`] removes the staging folder.
#[derive(Debug)]
pub struct Staged {
    staging: PathBuf,
    out: PathBuf,
    old: PathBuf,
    files: Vec<PublishedFile>,
    committed: bool,
}

/// First phase of a publication: validation, then a complete copy with its provenance in a
/// staging folder. Nothing is visible at `out` yet.
pub fn stage(
    output: &Path,
    out: &Path,
    limits: &OutputLimits,
    id: &str,
    provenance: impl FnOnce(&[PublishedFile]) -> serde_json::Value,
) -> Result<Staged, PublishError> {
    let mut files = BTreeMap::new();
    collect(output, &mut files, "")?;
    let chosen = select(output, &files)?;
    if chosen.iter().any(|(p, _, _)| p == PROVENANCE) {
        return Err(rejected(
            PROVENANCE,
            "the name is reserved for the provenance forge-host writes",
        ));
    }
    if chosen.len() > limits.max_files as usize {
        return Err(rejected(
            "/output",
            format!(
                "{} files, over the limit of {}",
                chosen.len(),
                limits.max_files
            ),
        ));
    }
    let mut total = 0u64;
    for (path, size, _) in &chosen {
        if *size > limits.max_file_bytes {
            return Err(rejected(
                path,
                format!(
                    "{size} bytes, over the per-file limit of {}",
                    limits.max_file_bytes
                ),
            ));
        }
        total += size;
    }
    if total > limits.max_total_bytes {
        return Err(rejected(
            "/output",
            format!(
                "{total} bytes in all, over the limit of {}",
                limits.max_total_bytes
            ),
        ));
    }

    let mut staged = stage_empty(out, id)?;
    for (path, size, title) in chosen {
        let sha256 = stage_file(&output.join(&path), &staged.staging.join(&path))?;
        let mime_type = Some(super::mime::mime_type(&path).to_string());
        staged.files.push(PublishedFile {
            path,
            size,
            sha256,
            title,
            mime_type,
        });
    }
    let record = provenance(&staged.files);
    let text = serde_json::to_vec_pretty(&record).map_err(PublishError::Provenance)?;
    let provenance_path = staged.staging.join(PROVENANCE);
    fs::write(&provenance_path, text).map_err(|e| io("cannot write", &provenance_path, e))?;
    Ok(staged)
}

/// An empty staging folder beside `out`, for a publication whose files come from elsewhere (a
/// worker's, through the object store): the caller writes them under [`Staged::folder`], then
/// commits. Dropped uncommitted, it leaves nothing behind.
pub fn stage_empty(out: &Path, id: &str) -> Result<Staged, PublishError> {
    let (parent, _) = parent_and_base(out);
    fs::create_dir_all(&parent).map_err(|e| io("cannot create", &parent, e))?;
    sweep_leftovers(out);
    let StagingNames { staging, old } = StagingNames::new(out, id);
    let staged = Staged {
        staging,
        out: out.to_path_buf(),
        old,
        files: Vec::new(),
        committed: false,
    };
    fs::create_dir_all(&staged.staging).map_err(|e| io("cannot create", &staged.staging, e))?;
    Ok(staged)
}

impl Staged {
    /// The staging folder, which becomes the destination on [`Staged::commit`].
    pub fn folder(&self) -> &Path {
        &self.staging
    }

    /// Second phase: renames the staging folder into place (an earlier publication there is
    /// swapped out first, and restored if the rename fails).
    pub fn commit(mut self) -> Result<Vec<PublishedFile>, PublishError> {
        let out = self.out.clone();
        let mut replaced = false;
        if out.exists() {
            if fs::read_dir(&out)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false)
            {
                fs::remove_dir(&out).map_err(|e| io("cannot replace", &out, e))?;
            } else if out.join(PROVENANCE).is_file() {
                fs::rename(&out, &self.old).map_err(|e| io("cannot replace", &out, e))?;
                replaced = true;
                crate::primitives::fault_point("while-replacing-publication");
            } else {
                return Err(PublishError::Foreign(out));
            }
        }
        if let Err(error) = fs::rename(&self.staging, &out) {
            if replaced {
                let _ = fs::rename(&self.old, &out);
            }
            return Err(io("cannot publish to", &out, error));
        }
        if replaced {
            let _ = fs::remove_dir_all(&self.old);
        }
        self.committed = true;
        Ok(std::mem::take(&mut self.files))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

#[cfg(test)]
#[path = "publish_test.rs"]
mod tests;
