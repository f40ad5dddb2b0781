//! The CPython engine: a Python venv with the pinned componentize-py, and the component build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::components::publish;
use crate::setup::apt_install;
use crate::{Result, run, workspace_root};

/// The requirements file that pins the build tool by version and wheel sha256: the one place the
/// pin is written (the app's `describe` and the science build read it too).
const REQUIREMENTS: &str = include_str!("../../components/python/requirements.txt");

/// The Python profiles beyond the standard library and the packages each adds: the one list (the
/// engine's import hints and the science profile's `forge_profile` read it too).
const PROFILES: &str = include_str!("../../components/python/forge/profiles.json");

/// The componentize-py version `requirements.txt` pins (`componentize-py==VERSION`).
fn componentize_py_version() -> Result<&'static str> {
    REQUIREMENTS
        .lines()
        .find_map(|line| line.trim().strip_prefix("componentize-py=="))
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or_else(|| "components/python/requirements.txt pins no componentize-py".to_string())
}

/// The venv xtask installs componentize-py (and pip) into.
pub fn venv_dir() -> PathBuf {
    crate::paths::target().join("python-venv")
}

fn componentize_py() -> PathBuf {
    venv_dir().join("bin/componentize-py")
}

fn installed_version() -> Option<String> {
    let out = Command::new(componentize_py())
        .arg("--version")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A venv holding the pinned componentize-py, created when missing.
pub fn venv() -> Result {
    let version = componentize_py_version()?;
    if installed_version().is_some_and(|v| v.ends_with(version)) {
        return Ok(());
    }
    let dir = venv_dir();
    eprintln!(
        "xtask: creating a Python venv with componentize-py {version} in {}",
        dir.display()
    );
    install_venv(
        &dir,
        &workspace_root().join("components/python/requirements.txt"),
    )
}

/// A fresh venv in `dir` holding `requirements`, every file checked against its hash.
pub fn install_venv(dir: &Path, requirements: &Path) -> Result {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let create = |dir: &Path| {
        run(Command::new(&python)
            .args(["-m", "venv", "--clear"])
            .arg(dir))
    };
    if create(dir).is_err() {
        // Debian ships ensurepip separately.
        apt_install(&["python3-venv"])?;
        create(dir)?;
    }
    run(Command::new(dir.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--require-hashes",
            "-r",
        ])
        .arg(requirements))
}

fn newest_mtime(path: &Path) -> SystemTime {
    let Ok(meta) = std::fs::metadata(path) else {
        return SystemTime::UNIX_EPOCH;
    };
    let mut newest = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name == "__pycache__" {
                continue;
            }
            newest = newest.max(newest_mtime(&entry.path()));
        }
    }
    newest
}

/// The Debian packages of the science build's clang route (`toolchain.json`: the QuickJS route's
/// clang and llvm, and more). Both profiles need them: the stdlib one links in the `_bz2` and
/// `_lzma` modules that build.py compiles.
fn science_toolchain() -> Result {
    let toolchain = crate::toolchain::Toolchain::get()?;
    apt_install(&toolchain.quickjs_debs)?;
    apt_install(&toolchain.science_debs)
}

/// `python3 components/python-science/build.py` with the work and venv folders of
/// [`crate::build_cache::dirs`] (pinned, hash-checked, incremental steps).
fn science_build_py() -> Command {
    let root = workspace_root();
    let dirs = crate::build_cache::dirs();
    let mut command = Command::new("python3");
    command
        .current_dir(&root)
        .arg("components/python-science/build.py")
        .arg("--work")
        .arg(&dirs.work)
        .arg("--venv")
        .arg(&dirs.venv)
        .arg("--sdist-via-index");
    command
}

/// Builds `python-cpython.wasm` (when its sources changed) and publishes it. Its `_bz2`,
/// `_lzma` and `_sqlite3` modules and the `tzdata` package (the pinned time zone database) come
/// from build.py's steps up to `sqlite` (up to date in well under a second once built), whose
/// output folders are three more `-p` paths.
pub fn build_python() -> Result {
    let root = workspace_root();
    science_toolchain()?;
    run_locked(science_build_py().args(["--upto", "sqlite"]))?;
    let work = crate::build_cache::dirs().work;
    let compression = work.join("site-compression");
    let sqlite = work.join("site-sqlite");
    let tzdata = work.join("site-tzdata");
    let output = crate::paths::target().join("wasm-python/python-cpython.wasm");
    let sources = [
        root.join("wit"),
        root.join("components/python"),
        compression.clone(),
        sqlite.clone(),
        tzdata.clone(),
    ];
    let fresh = std::fs::metadata(&output)
        .and_then(|m| m.modified())
        .is_ok_and(|built| sources.iter().all(|s| newest_mtime(s) <= built));
    if !fresh {
        venv()?;
        if let Some(parent) = output.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let partial = output.with_extension("wasm.partial");
        run(Command::new(componentize_py())
            .current_dir(&root)
            .args([
                "-q",
                "-d",
                "wit",
                "-w",
                "script-engine",
                "componentize",
                "app",
                "-p",
                "components/python",
                "-p",
            ])
            .arg(&tzdata)
            .arg("-p")
            .arg(&compression)
            .arg("-p")
            .arg(&sqlite)
            .arg("-o")
            .arg(&partial))?;
        std::fs::rename(&partial, &output).map_err(|e| format!("{}: {e}", output.display()))?;
    }
    let packages = profile_packages("python-cpython")?;
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    publish(&output, "python-cpython", &[".py"], &packages)
}

/// The packages `profile` adds to the standard library (what picks it for a script).
pub fn profile_packages(profile: &str) -> Result<Vec<String>> {
    let what = "components/python/forge/profiles.json";
    let profiles: serde_json::Value =
        serde_json::from_str(PROFILES).map_err(|e| format!("{what}: {e}"))?;
    profiles[profile]["packages"]
        .as_array()
        .and_then(|list| {
            list.iter()
                .map(|p| p.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("{what}: `{profile}.packages` is not a list of names"))
}

/// Builds `python-science.wasm` with `components/python-science/build.py` (pinned, hash-checked,
/// incremental) and publishes it. Its work and venv folders are in the build cache
/// ([`crate::build_cache`]); `SCIENCE_WORK` and `SCIENCE_VENV` point elsewhere.
pub fn build_science() -> Result {
    let packages = profile_packages("python-science")?;
    science_toolchain()?;
    let output = crate::paths::target().join("wasm-python/python-science.wasm");
    run_locked(science_build_py().arg("--out").arg(&output))?;
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    publish(&output, "python-science", &[".py"], &packages)
}

/// The standard library zip build.py's `stdlib` step writes (run by both profiles' builds).
pub fn stdlib_source() -> PathBuf {
    crate::build_cache::dirs().work.join("stdlib-src.zip")
}

/// Runs `command` (build.py or testkit.py) while holding the science folders' lock.
fn run_locked(command: &mut Command) -> Result {
    let _lock = crate::build_cache::lock(&crate::build_cache::dirs())?;
    run(command)
}

/// Assembles `target/science-testkit`: pytest (pinned) and numpy's and pandas' own test files,
/// which `tests/cli/upstream.rs` runs inside the python-science engine.
pub fn build_science_testkit() -> Result {
    let root = workspace_root();
    let dirs = crate::build_cache::dirs();
    run_locked(
        Command::new("python3")
            .current_dir(&root)
            .arg("components/python-science/testkit.py")
            .arg("--work")
            .arg(&dirs.work)
            .arg("--venv")
            .arg(&dirs.venv)
            .arg("--out")
            .arg(crate::paths::target().join("science-testkit")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_and_the_science_packages_are_read_from_their_one_file() {
        let version = componentize_py_version().expect("the pin");
        assert!(
            version.split('.').all(|part| part.parse::<u32>().is_ok()),
            "{version}"
        );
        let packages = profile_packages("python-science").expect("the science packages");
        assert!(packages.iter().any(|p| p == "numpy"), "{packages:?}");
        // The time zone database is in every profile (the stdlib one publishes it too).
        let stdlib = profile_packages("python-cpython").expect("the stdlib packages");
        assert!(stdlib.iter().any(|p| p == "tzdata"), "{stdlib:?}");
        assert!(packages.iter().any(|p| p == "tzdata"), "{packages:?}");
        assert!(profile_packages("no-such-profile").is_err());
    }
}
