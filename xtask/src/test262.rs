//! test262 for the test command (`tests/test262/README.md`): the pinned copy in
//! `../shared/upstream/`, checked against its sha256 and extracted once into `target/`, and the
//! native baseline's binary. The test finds the suite through `FORGE_TEST262_DIR`; a machine
//! without the copy runs the test, which says it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::{Result, cargo, run, workspace_root};

/// The variable the test reads: a folder holding test262's `harness/` and `test/`.
pub const SUITE_ENV: &str = "FORGE_TEST262_DIR";

/// The pinned archive in `../shared/upstream/` (its README says what it holds) and its sha256.
const ARCHIVE: &str = "test262-be13516fb6.tar.gz";
const SHA256: &str = "d8def96ce7229158fd906896fe6f2de786fb7c174313a14bc954179094d379a9";

fn archive() -> PathBuf {
    workspace_root().join("../shared/upstream").join(ARCHIVE)
}

/// The folder the archive is extracted into, with a marker that names its sha256 once done.
fn extracted() -> PathBuf {
    crate::paths::target().join("test262-be13516fb6")
}

fn extract(archive: &Path, into: &Path) -> Result {
    let marker = into.join(".sha256");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text.trim() == SHA256) {
        return Ok(());
    }
    let bytes = std::fs::read(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let actual = hex::encode(Sha256::digest(&bytes));
    if actual != SHA256 {
        return Err(format!(
            "{} has sha256 {actual}, not the pinned {SHA256}",
            archive.display()
        ));
    }
    let partial = into.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    let _ = std::fs::remove_dir_all(into);
    std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    run(Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(&partial))?;
    std::fs::write(partial.join(".sha256"), SHA256)
        .and_then(|()| std::fs::rename(&partial, into))
        .map_err(|e| format!("{}: {e}", into.display()))
}

/// The suite the test runs, if any, with the native baseline built: `FORGE_TEST262_DIR` when
/// it is set, otherwise the shared copy extracted into `target/`. `None` (said on stderr) when
/// there is neither.
pub fn prepare() -> Result<Option<PathBuf>> {
    let suite = match std::env::var_os(SUITE_ENV).filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None if archive().is_file() => {
            extract(&archive(), &extracted())?;
            extracted()
        }
        None => {
            eprintln!(
                "xtask: no {} and no {SUITE_ENV}: the test262 test will say it skipped",
                archive().display()
            );
            return Ok(None);
        }
    };
    eprintln!("xtask: test262 from {}", suite.display());
    // Its own invocation: built with the host, rquickjs would unify hashbrown's features and
    // compile wasmtime a second time.
    run(cargo().args([
        "build",
        "--release",
        "--package",
        "quickjs-native",
        "--bin",
        "test262-native",
    ]))?;
    Ok(Some(suite))
}
