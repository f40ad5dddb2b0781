//! CPython's own test suite for the test command (`tests/cpython/README.md`): Debian sid's
//! `libpython3.14-testsuite` (the suite's modules) and `libpython3.14-stdlib` (the `test`
//! package's `__init__.py` and `test.support`, which Debian ships there), both 3.14.10-1,
//! checked against their pinned sha256 and extracted once into `target/`, and the native sid
//! interpreter of the same version as the baseline. The packages come through the private apt
//! directory of `bench/cpu/native_cpython.py` (`cpython_native.py` beside this file adds them).
//! The test finds the two through `FORGE_CPYTHON_TESTS_DIR` and `FORGE_CPYTHON_NATIVE`; when
//! they cannot be had (no Debian mirror, or sid has moved past the pinned version) it says it
//! skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::{Result, workspace_root};

/// The folder holding the suite's `test/` package.
pub const SUITE_ENV: &str = "FORGE_CPYTHON_TESTS_DIR";
/// The native interpreter: sid's `python3.14`, run through sid's dynamic loader.
pub const NATIVE_ENV: &str = "FORGE_CPYTHON_NATIVE";

/// The version of the suite and of the native baseline. The engine's CPython is 3.14.0, whose
/// suite Debian no longer serves: tests that need a fix made after 3.14.0 are known failures.
const VERSION: &str = "3.14.10";

/// The pinned packages: the suite, and the stdlib package that holds `test.support`.
const PACKAGES: [(&str, &str); 2] = [
    (
        "libpython3.14-testsuite_3.14.10-1_all.deb",
        "137b55a9b0794801a0226a8220c7c224e9e5e3a9d1261bd62573a87a6ad8bf31",
    ),
    (
        "libpython3.14-stdlib_3.14.10-1_amd64.deb",
        "0af595928d7a49c12fe33d5667da95dc2fa9868e1a9a00625428074d3b3d458a",
    ),
];

/// Where the native interpreter and the downloaded packages live.
fn native_dir() -> PathBuf {
    crate::paths::target().join("cpython-native")
}

/// The folder the suite is extracted into (its `test/`), with a marker naming the packages'
/// sha256 once done.
fn extracted() -> PathBuf {
    crate::paths::target().join(format!("cpython-tests-{VERSION}"))
}

fn sha256_of(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// Checks the packages in `debs` and extracts their `test/` folders into `into`.
fn extract(debs: &Path, into: &Path) -> Result {
    let marker = into.join(".sha256");
    let pins: Vec<&str> = PACKAGES.iter().map(|(_, sha)| *sha).collect();
    let pins = pins.join(" ");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text.trim() == pins) {
        return Ok(());
    }
    let partial = into.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    let _ = std::fs::remove_dir_all(into);
    let unpacked = partial.join("unpacked");
    std::fs::create_dir_all(&unpacked).map_err(|e| format!("{}: {e}", unpacked.display()))?;
    for (file, pinned) in PACKAGES {
        let deb = debs.join(file);
        let actual = sha256_of(&deb)?;
        if actual != pinned {
            return Err(format!(
                "{} has sha256 {actual}, not the pinned {pinned}",
                deb.display()
            ));
        }
        crate::run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked))?;
    }
    let from = unpacked.join("usr/lib/python3.14/test");
    std::fs::rename(&from, partial.join("test"))
        .and_then(|()| std::fs::remove_dir_all(&unpacked))
        .and_then(|()| std::fs::write(partial.join(".sha256"), &pins))
        .and_then(|()| std::fs::rename(&partial, into))
        .map_err(|e| format!("{}: {e}", into.display()))
}

/// The native interpreter (fetched when missing), or why there is none.
fn native() -> std::result::Result<PathBuf, String> {
    let helper = workspace_root().join("xtask/src/cpython_native.py");
    let mut command = Command::new("python3");
    command.arg(&helper).arg(native_dir());
    eprintln!("xtask: $ {}", crate::describe(&command));
    let out = command
        .output()
        .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            helper.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The version `python` reports (`3.14.10`).
fn version_of(python: &Path) -> Result<String> {
    let out = Command::new(python)
        .args(["-c", "import platform; print(platform.python_version())"])
        .output()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The suite's folder and the native interpreter, if there are both: the variables when both
/// are set, otherwise the pinned packages fetched, checked and extracted into `target/`.
/// `None` (said on stderr) when they cannot be had; a package that differs from its pin is an
/// error.
pub fn prepare() -> Result<Option<(PathBuf, PathBuf)>> {
    let given = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let (Some(suite), Some(native)) = (given(SUITE_ENV), given(NATIVE_ENV)) {
        return Ok(Some((PathBuf::from(suite), PathBuf::from(native))));
    }
    let python = match native() {
        Ok(python) => python,
        Err(why) => {
            eprintln!(
                "xtask: no native CPython {VERSION} ({why}): the cpython test will say it skipped"
            );
            return Ok(None);
        }
    };
    let debs = native_dir().join("debs");
    if let Some((missing, _)) = PACKAGES.iter().find(|(file, _)| !debs.join(file).is_file()) {
        eprintln!(
            "xtask: {} holds no {missing} (sid has moved past {VERSION}; pin the new version \
             in xtask/src/cpython.rs): the cpython test will say it skipped",
            debs.display()
        );
        return Ok(None);
    }
    let version = version_of(&python)?;
    if version != VERSION {
        return Err(format!(
            "{} is CPython {version}, not the suite's {VERSION}",
            python.display()
        ));
    }
    extract(&debs, &extracted())?;
    eprintln!(
        "xtask: CPython's test suite {VERSION} from {}, natively on {}",
        extracted().display(),
        python.display()
    );
    Ok(Some((extracted(), python)))
}
