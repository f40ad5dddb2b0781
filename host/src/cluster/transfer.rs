//! What travels between a worker's folders and the object store: a request's script and inputs
//! fetched into a run folder of their own, and the files a run published stored for its
//! submitter.

use std::path::{Path, PathBuf};

use super::wire::{FileRef, RunMessage};
use super::{Cluster, ClusterError};
use crate::error::Error;
use crate::kernel::Kernel;

/// The request's script: inline (checked against its sha256) or from the object store.
pub(super) async fn script_source(
    cluster: &Cluster,
    request: &RunMessage,
) -> Result<String, Error> {
    match &request.script_text {
        Some(text) if crate::primitives::sha256_hex(text.as_bytes()) == request.script.sha256 => {
            Ok(text.clone())
        }
        Some(_) => Err(Error::invalid_input(
            "the request's script does not match its sha256",
        )),
        None => String::from_utf8(
            cluster
                .get_blob_sized(&request.script.sha256, Some(request.script.size))
                .await?,
        )
        .map_err(|_| Error::invalid_input("the script is not UTF-8 text")),
    }
}

/// The request's inputs, fetched into a run folder of their own under the data directory's
/// `incoming/`; with the top-level paths a run is given as its inputs.
pub(super) async fn fetch_inputs(
    cluster: &Cluster,
    kernel: &Kernel,
    request: &RunMessage,
) -> Result<(tempfile::TempDir, Vec<PathBuf>), Error> {
    let incoming = kernel.data_dir().root().join("incoming");
    std::fs::create_dir_all(&incoming)
        .map_err(|e| ClusterError::local("cannot make", &incoming, e))?;
    let folder = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(&incoming)
        .map_err(|e| ClusterError::local("cannot make a run folder in", &incoming, e))?;
    let mut tops: Vec<PathBuf> = Vec::new();
    for input in &request.inputs {
        let relative = safe_relative(&input.path)?;
        let bytes = cluster
            .get_blob_sized(&input.sha256, Some(input.size))
            .await?;
        let path = folder.path().join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ClusterError::local("cannot make", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| ClusterError::local("cannot write", &path, e))?;
        if let Some(top) = relative.components().next() {
            let top = folder.path().join(top);
            if !tops.contains(&top) {
                tops.push(top);
            }
        }
    }
    Ok((folder, tops))
}

/// Stores every file a run published under `out` in the object store.
pub(super) async fn upload_published(cluster: &Cluster, out: &Path) -> Result<Vec<FileRef>, Error> {
    let mut files = Vec::new();
    let mut pending = vec![(String::new(), out.to_path_buf())];
    while let Some((prefix, dir)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push((path, entry.path())),
                Ok(kind) if kind.is_file() => {
                    let bytes = std::fs::read(entry.path())
                        .map_err(|e| ClusterError::local("cannot read", &entry.path(), e))?;
                    let sha256 = cluster.put_blob(&bytes).await?;
                    files.push(FileRef {
                        path,
                        sha256,
                        size: bytes.len() as u64,
                    });
                }
                _ => {}
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// A request's input path as a relative path with no way out.
fn safe_relative(path: &str) -> Result<PathBuf, Error> {
    let relative = Path::new(path);
    let plain = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if path.is_empty() || !plain {
        return Err(Error::invalid_input(format!(
            "`{path}` is not a relative input path"
        )));
    }
    Ok(relative.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_paths_cannot_lead_out() {
        assert!(safe_relative("data.csv").is_ok());
        assert!(safe_relative("dataset/a/b.json").is_ok());
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a"] {
            assert!(safe_relative(bad).is_err(), "{bad}");
        }
    }
}
