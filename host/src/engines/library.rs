//! An engine's library (`engines.lock`'s `library`): a pinned zip of files the engine reads at
//! run time, such as a Python engine's whole standard library with its bytecode. It is unpacked
//! once into the cache, by its sha256, whole or not at all, and every run of the engine mounts
//! that tree read-only.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::cache::Cache;
use crate::error::{Error, ErrorCode, Result};
use crate::files::FileError;

/// A verified library of an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineLibrary {
    /// The zip.
    pub zip: PathBuf,
    /// Its sha256 (verified against the lock).
    pub sha256: String,
    /// The absolute guest path its tree is mounted at.
    pub mount: String,
}

/// Whether a library may not take the guest path `mount`: it is the run's root or one of its
/// own folders.
fn reserved(mount: &str) -> bool {
    mount == "/"
        || mount == crate::packages::MOUNT_POINT
        || crate::files::JOB_MOUNTS.contains(&mount)
}

/// Checks a lock's `library` against the files of `dir`.
pub fn verify(
    cache: &Cache,
    dir: &Path,
    pinned: &engine_lock::LockedLibrary,
) -> Result<EngineLibrary> {
    let bad = |what: String| Error::engine_unavailable(format!("{}: {what}", dir.display()));
    if pinned.file.contains('/') || pinned.file.starts_with('.') {
        return Err(bad(format!("bad library file name `{}`", pinned.file)));
    }
    let mount = Path::new(&pinned.mount);
    let plain = mount.is_absolute()
        && mount.components().count() == 2
        && mount
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !plain || reserved(&pinned.mount) {
        return Err(bad(format!(
            "library mount `{}` must be one folder under `/`, not the run's own ({} {})",
            pinned.mount,
            crate::files::JOB_MOUNTS.join(" "),
            crate::packages::MOUNT_POINT
        )));
    }
    let zip = dir.join(&pinned.file);
    let sha256 = cache.file_sha256(&zip)?;
    if sha256 != pinned.sha256 {
        return Err(bad(format!(
            "{} has sha256 {sha256}, but the lock pins {}",
            pinned.file, pinned.sha256
        )));
    }
    Ok(EngineLibrary {
        zip,
        sha256,
        mount: pinned.mount.clone(),
    })
}

impl Cache {
    /// The unpacked tree of `library`, unpacked now if it is not yet.
    pub fn library_tree(&self, library: &EngineLibrary) -> Result<PathBuf> {
        let tree = self.root().join("libraries").join(&library.sha256);
        let io = |what: &'static str, path: &Path, source: std::io::Error| {
            Error::from_source(
                ErrorCode::EngineUnavailable,
                FileError::new(what, path, source),
            )
        };
        crate::primitives::make_dir_whole(&tree, |staging| unpack(&library.zip, staging), io)?;
        Ok(tree)
    }
}

/// Unpacks `zip` into the empty folder `into`, each file read-only.
fn unpack(zip: &Path, into: &Path) -> Result<()> {
    let broken = |why: String| {
        Error::engine_unavailable(format!(
            "library {} cannot be unpacked: {why}",
            zip.display()
        ))
    };
    let file = fs::File::open(zip).map_err(|e| broken(e.to_string()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| broken(e.to_string()))?;
    let mut buffer = Vec::new();
    for index in 0..archive.len() {
        let mut item = archive.by_index(index).map_err(|e| broken(e.to_string()))?;
        let Some(relative) = item.enclosed_name() else {
            return Err(broken(format!("entry {index} leaves the folder")));
        };
        let path = into.join(relative);
        if item.is_dir() {
            fs::create_dir_all(&path).map_err(|e| broken(e.to_string()))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| broken(e.to_string()))?;
        }
        buffer.clear();
        item.read_to_end(&mut buffer)
            .map_err(|e| broken(e.to_string()))?;
        fs::write(&path, &buffer).map_err(|e| broken(e.to_string()))?;
        let mut permissions = fs::metadata(&path)
            .map_err(|e| broken(e.to_string()))?
            .permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&path, permissions).map_err(|e| broken(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in files {
            out.start_file(*name, zip::write::SimpleFileOptions::default())
                .expect("start");
            out.write_all(bytes).expect("write");
        }
        out.finish().expect("finish").into_inner()
    }

    fn pinned(file: &str, sha256: String, mount: &str) -> engine_lock::LockedLibrary {
        engine_lock::LockedLibrary {
            file: file.into(),
            sha256,
            mount: mount.into(),
        }
    }

    #[test]
    fn a_library_unpacks_once_whole_and_read_only() {
        let dir = tempfile::tempdir().expect("dir");
        let bytes = zip_of(&[("json/__init__.py", b"x = 1\n"), ("os.py", b"")]);
        fs::write(dir.path().join("lib.zip"), &bytes).expect("zip");
        let cache = Cache::new(dir.path().join("cache"));
        let sha = crate::primitives::sha256_hex(&bytes);
        let library = verify(&cache, dir.path(), &pinned("lib.zip", sha, "/python")).expect("ok");
        let tree = cache.library_tree(&library).expect("unpacked");
        assert_eq!(
            fs::read(tree.join("json/__init__.py")).expect("file"),
            b"x = 1\n"
        );
        assert!(
            fs::metadata(tree.join("os.py"))
                .expect("meta")
                .permissions()
                .readonly()
        );
        assert_eq!(cache.library_tree(&library).expect("again"), tree);
        let left: Vec<_> = fs::read_dir(tree.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left.len(), 1, "no staging folder is left behind: {left:?}");
    }

    #[test]
    fn a_wrong_hash_a_reserved_mount_and_an_escaping_entry_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let bytes = zip_of(&[("../escape.py", b"")]);
        fs::write(dir.path().join("lib.zip"), &bytes).expect("zip");
        let cache = Cache::new(dir.path().join("cache"));
        let sha = crate::primitives::sha256_hex(&bytes);
        assert!(
            verify(
                &cache,
                dir.path(),
                &pinned("lib.zip", "00".repeat(32), "/python")
            )
            .is_err()
        );
        for mount in ["/work", "/", "python", "/a/b", "/.."] {
            assert!(
                verify(&cache, dir.path(), &pinned("lib.zip", sha.clone(), mount)).is_err(),
                "{mount}"
            );
        }
        assert!(
            verify(
                &cache,
                dir.path(),
                &pinned("../lib.zip", sha.clone(), "/python")
            )
            .is_err()
        );
        let library = verify(&cache, dir.path(), &pinned("lib.zip", sha, "/python")).expect("ok");
        assert!(cache.library_tree(&library).is_err());
        assert!(!dir.path().join("escape.py").exists());
        assert!(
            !cache
                .root()
                .join("libraries")
                .join(&library.sha256)
                .exists()
        );
    }
}
