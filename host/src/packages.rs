//! Locked pure-Python packages (issue 13): which ones a Python run mounts, checked against their
//! sha256 before it starts, and where the guest finds them.
//!
//! The lock and the store are `pyodide-fetch`'s. A run mounts exactly the locked packages that
//! provide the script's imports, with everything they depend on: each one read-only at
//! `/packages/<name>/` (its store folder, holding one wheel), and at `/packages` a list of the
//! wheels, which the Python engine appends to `sys.path` (after its own packages, so a locked
//! copy never shadows what a profile builds in). CPython imports a pure-Python wheel as a zip.
//!
//! A package whose lock entry pins its bytecode (compiled once, when it was added, by
//! `Kernel::compile_bytecode`) mounts that zip instead: the wheel's files with each module's
//! `.pyc` beside it, which `zipimport` loads without compiling. It is verified like the wheel,
//! and a missing or changed one stops the run.

use std::path::{Path, PathBuf};

use pyodide_fetch::{Bytecode, FetchError, LockedPackage, PyodideLock, Store, normalize};

use crate::datadir::DataDir;
use crate::error::{Error, ErrorCode, Result};
use crate::journal::JournalPackage;
use crate::primitives::{sha256_hex, write_atomic};

/// Where the guest finds its packages.
pub const MOUNT_POINT: &str = "/packages";
/// The file at [`MOUNT_POINT`] that lists the wheels to add to `sys.path`, one per line.
pub const SYS_PATH_FILE: &str = "sys-path.txt";
/// The store's folder of mount lists, each named by the sha256 of its text.
const MOUNT_LISTS: &str = ".mounts";

/// One package folder a run mounts.
#[derive(Debug, Clone)]
pub struct Mount {
    /// The store folder holding the wheel.
    pub host_dir: PathBuf,
    /// Where the guest sees it.
    pub guest_dir: String,
    /// What the journal and `provenance.json` record.
    pub record: JournalPackage,
}

/// Everything a run mounts for its packages.
#[derive(Debug, Clone)]
pub struct Mounts {
    /// The folder mounted at [`MOUNT_POINT`], holding [`SYS_PATH_FILE`].
    pub index_dir: PathBuf,
    /// The packages, dependencies first.
    pub packages: Vec<Mount>,
}

/// A `pyodide-fetch` failure as the host's error: `INVALID_INPUT` for a bad request or lock,
/// `PACKAGE_UNAVAILABLE` for everything else.
pub fn error(error: FetchError) -> Error {
    let code = if error.is_invalid_input() {
        ErrorCode::InvalidInput
    } else {
        ErrorCode::PackageUnavailable
    };
    Error::from_source(code, error)
}

/// The lock a command uses: `explicit`, else the data directory's.
pub fn lock_path(data: &DataDir, explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| data.package_lock())
}

/// The package store of `data`.
pub fn store(data: &DataDir) -> Store {
    Store::new(data.package_store())
}

/// The packages a Python script with these top-level `imports` mounts, each verified; `None`
/// when it needs none. A package whose file is gone or changed stops the run before it starts.
pub fn resolve(
    data: &DataDir,
    explicit_lock: Option<&Path>,
    imports: &[String],
) -> Result<Option<Mounts>> {
    let path = lock_path(data, explicit_lock);
    if !path.exists() {
        return match explicit_lock {
            None => Ok(None),
            Some(_) => Err(Error::invalid_input(format!(
                "no package lock at {}",
                path.display()
            ))),
        };
    }
    let lock = PyodideLock::read(&path).map_err(error)?;
    let mut wanted: Vec<String> = Vec::new();
    for import in imports {
        if let Some(package) = lock.provider_of(import) {
            let key = normalize(&package.name);
            if !wanted.contains(&key) {
                wanted.push(key);
            }
        }
    }
    if wanted.is_empty() {
        return Ok(None);
    }
    let store = store(data);
    let mut packages = Vec::new();
    let mut sys_path = String::new();
    for package in lock.closure(&wanted).map_err(error)? {
        // The wheel is checked even when its bytecode is what is mounted: it is what the
        // journal names.
        store
            .verify(&package.sha256, &package.file_name)
            .map_err(|e| unmountable(package, "its file", &e))?;
        let (sha256, file_name) = match &package.bytecode {
            Some(bytecode) => {
                store
                    .verify(&bytecode.sha256, &bytecode.file_name)
                    .map_err(|e| unmountable(package, "its bytecode", &e))?;
                (&bytecode.sha256, &bytecode.file_name)
            }
            None => (&package.sha256, &package.file_name),
        };
        let guest_dir = format!("{MOUNT_POINT}/{}", normalize(&package.name));
        sys_path.push_str(&format!("{guest_dir}/{file_name}\n"));
        packages.push(Mount {
            host_dir: store.dir_of(sha256),
            guest_dir,
            record: JournalPackage {
                name: package.name.clone(),
                version: package.version.clone(),
                sha256: package.sha256.clone(),
            },
        });
    }
    let index_dir = store
        .root()
        .join(MOUNT_LISTS)
        .join(sha256_hex(sys_path.as_bytes()));
    let index = index_dir.join(SYS_PATH_FILE);
    if !index.exists() {
        write_atomic(&index, sys_path.as_bytes()).map_err(|e| {
            Error::new(
                ErrorCode::IsolateFailure,
                format!("cannot write {}: {e}", index.display()),
            )
        })?;
    }
    Ok(Some(Mounts {
        index_dir,
        packages,
    }))
}

/// Why `package`'s file `what` (its wheel, or its bytecode) cannot be mounted, and what to do.
fn unmountable(package: &LockedPackage, what: &str, e: &FetchError) -> Error {
    let again = format!(
        "fetch it again with `forge-host packages add {}=={}`",
        package.name, package.version
    );
    let why = match e {
        FetchError::NotStored { file } => {
            format!("{what} is gone from the package store ({file}); {again}")
        }
        _ => format!("{what}: {}; {again}", crate::error::chain_text(e)),
    };
    Error::new(
        ErrorCode::PackageUnavailable,
        format!(
            "package `{}` {} cannot be mounted: {why}",
            package.name, package.version
        ),
    )
}

/// Where a run finds `package`'s bytecode zip: what its tracebacks name.
pub fn bytecode_mount(package: &LockedPackage) -> String {
    format!(
        "{MOUNT_POINT}/{}/{}",
        normalize(&package.name),
        pyodide_fetch::bytecode_file_name(&package.file_name)
    )
}

/// Pins `bytecode` to the package `name` of the lock at `lock_path`, if the lock still holds
/// that package with the wheel `wheel_sha256` (another `add` may have changed it meanwhile).
pub fn pin_bytecode(
    lock_path: &Path,
    name: &str,
    wheel_sha256: &str,
    bytecode: Bytecode,
) -> Result<bool> {
    pyodide_fetch::pin_bytecode(lock_path, name, wheel_sha256, bytecode).map_err(error)
}

/// Why a rerun cannot mount what the first run did, if it cannot: each package of `then` must
/// be mounted again with the same sha256, and nothing else.
pub fn changed_since(then: &[JournalPackage], now: &[JournalPackage]) -> Option<String> {
    for before in then {
        match now
            .iter()
            .find(|p| normalize(&p.name) == normalize(&before.name))
        {
            None => {
                return Some(format!(
                    "package `{}` {} of the first run is no longer in the lock",
                    before.name, before.version
                ));
            }
            Some(after) if after.sha256 != before.sha256 => {
                return Some(format!(
                    "package `{}` changed since the first run: {} (sha256 {}) then, {} (sha256 \
                     {}) now",
                    before.name, before.version, before.sha256, after.version, after.sha256
                ));
            }
            Some(_) => {}
        }
    }
    now.iter()
        .find(|p| {
            !then
                .iter()
                .any(|b| normalize(&b.name) == normalize(&p.name))
        })
        .map(|extra| {
            format!(
                "package `{}` {} would be mounted, and the first run had no such package",
                extra.name, extra.version
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(name: &str, sha: &str) -> JournalPackage {
        JournalPackage {
            name: name.into(),
            version: "1.0".into(),
            sha256: sha.repeat(64),
        }
    }

    #[test]
    fn a_rerun_sees_every_package_change() {
        let then = [package("tabulate", "a"), package("et-xmlfile", "b")];
        assert_eq!(changed_since(&then, &then), None);
        let changed = changed_since(
            &then,
            &[package("tabulate", "c"), package("et_xmlfile", "b")],
        );
        assert!(changed.expect("changed").contains("tabulate"));
        let gone = changed_since(&then, &[package("tabulate", "a")]);
        assert!(gone.expect("gone").contains("no longer"));
        let extra = changed_since(&then[..1], &then);
        assert!(extra.expect("extra").contains("et-xmlfile"));
    }

    #[test]
    fn no_lock_means_no_packages() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = DataDir::new(dir.path());
        let mounts = resolve(&data, None, &["tabulate".into()]).expect("resolves");
        assert!(mounts.is_none());
        let missing =
            resolve(&data, Some(&dir.path().join("nope.json")), &[]).expect_err("no lock");
        assert_eq!(missing.code, ErrorCode::InvalidInput);
    }
}
