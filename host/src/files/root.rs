//! The guest's `/`: a read-only folder holding one empty folder per mount point of the run, so
//! that listing `/` shows what the run can reach (`/input`, `/output`, `/work`, and the engine's
//! and the packages' mounts) instead of failing. Each mount is its own preopen, which the guest's
//! libc prefers over `/` for any path below it; anything else under `/` does not exist and
//! cannot be created.
//!
//! The folders are shared by every run with the same mount points, made once per data directory.

use std::fs;
use std::path::{Path, PathBuf};

use super::FileError;
use crate::error::Result;

/// The folder to mount at `/` for a run whose mounts are `mounts` (absolute guest paths; only
/// their first component counts), made under `parent` if it is not there yet.
pub fn root_folder(parent: &Path, mounts: &[&str]) -> Result<PathBuf> {
    let mut names: Vec<&str> = mounts
        .iter()
        .filter_map(|mount| mount.trim_start_matches('/').split('/').next())
        .filter(|name| !name.is_empty() && !name.starts_with('.'))
        .collect();
    names.sort_unstable();
    names.dedup();
    let folder = parent.join(names.join("+"));
    let io = |what: &'static str, path: &Path, e: std::io::Error| FileError::new(what, path, e);
    let fill = |staging: &Path| {
        names.iter().try_for_each(|name| {
            let dir = staging.join(name);
            fs::create_dir(&dir).map_err(|e| io("cannot create", &dir, e))
        })
    };
    crate::primitives::make_dir_whole(&folder, fill, io)?;
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_holds_one_empty_folder_per_mount_and_is_made_once() {
        let parent = tempfile::tempdir().expect("dir");
        let mounts = ["/work", "/input", "/output", "/python", "/packages/numpy-2"];
        let root = root_folder(parent.path(), &mounts).expect("made");
        let mut names: Vec<String> = fs::read_dir(&root)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["input", "output", "packages", "python", "work"]);
        assert_eq!(root_folder(parent.path(), &mounts).expect("again"), root);
        let other = root_folder(parent.path(), &["/work", "/input", "/output"]).expect("other");
        assert_ne!(other, root);
        assert_eq!(
            fs::read_dir(parent.path()).expect("list").count(),
            2,
            "no staging left"
        );
    }
}
