//! The package set of `cargo xtask bench`: `import networkx` in a `forge-host run` process (its
//! bytecode compiled when it was added) against a native CPython 3.14 process importing the same
//! wheel's files with their `.pyc` present (and its standard library's), and what `import
//! tabulate` adds to a `forge-host run`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::Numbers;
use super::measure::{capture, p50};
use crate::{Result, run};

/// The packages measured, pinned.
const NETWORKX: &str = "networkx==3.7";
const TABULATE: &str = "tabulate==0.10.0";
/// Process runs timed per measure.
const RUNS: usize = 15;

/// The time of one run of `command` to its end, which must succeed.
pub(super) fn timed(command: &mut Command) -> Result<f64> {
    let started = Instant::now();
    let output = command.output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// The p50 of [`RUNS`] runs of `make()`, after one that warms caches.
pub(super) fn p50_of(mut make: impl FnMut() -> Command) -> Result<f64> {
    timed(&mut make())?;
    let times = (0..RUNS)
        .map(|_| timed(&mut make()))
        .collect::<Result<Vec<f64>>>()?;
    Ok(p50(times))
}

/// `forge-host` over its own data directory and cache, fetching with the venv's pip.
struct Forge {
    data: std::path::PathBuf,
    cache: std::path::PathBuf,
    pip: String,
}

impl Forge {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(crate::paths::host_binary());
        command
            .args(args)
            .arg("--data-dir")
            .arg(&self.data)
            .env("FORGE_HOST_CACHE_DIR", &self.cache)
            .env("FORGE_HOST_PIP", &self.pip);
        command
    }
}

/// `native_import_networkx_process_p50_ms`, `cli_import_networkx_p50_ms`,
/// `cli_import_tabulate_p50_ms`, `cli_packages_baseline_p50_ms` and `tabulate_import_added_ms`.
pub fn packages_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    let pip = format!(
        "{} -m pip",
        crate::python::venv_dir().join("bin/python").display()
    );
    // Native CPython 3.14 (Debian sid's), its standard library compiled as an installed one is.
    let native = capture(
        Command::new("python3")
            .arg(root.join("bench/cpu/native_cpython.py"))
            .arg(crate::paths::target().join("bench-cpython")),
    )?;
    let native = native.trim().to_string();
    let stdlib = capture(Command::new(&native).args([
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
    ]))?;
    run(Command::new(&native).args(["-m", "compileall", "-q", stdlib.trim()]))?;
    // The same wheels, unpacked and compiled by it.
    let site = scratch.join("native-site");
    let wheels = scratch.join("wheels");
    let mut download = Command::new(crate::python::venv_dir().join("bin/python"));
    download.args([
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary",
        ":all:",
    ]);
    download
        .args(["--python-version", "3.14", "--dest"])
        .arg(&wheels);
    run(download.args([NETWORKX, TABULATE]))?;
    for wheel in std::fs::read_dir(&wheels)
        .map_err(|e| e.to_string())?
        .flatten()
    {
        run(Command::new(&native)
            .args(["-m", "zipfile", "-e"])
            .arg(wheel.path())
            .arg(&site))?;
    }
    run(Command::new(&native)
        .args(["-m", "compileall", "-q"])
        .arg(&site))?;
    let mut numbers = Numbers::new();
    let import = format!(
        "import sys; sys.path.insert(0, {:?}); import networkx",
        site.display().to_string()
    );
    numbers.insert(
        "native_import_networkx_process_p50_ms".into(),
        p50_of(|| {
            let mut command = Command::new(&native);
            command.args(["-c", &import]);
            command
        })?,
    );
    let forge = Forge {
        data: scratch.join("packages-data"),
        cache: scratch.join("packages-cache"),
        pip,
    };
    run(&mut forge.command(&["packages", "add", NETWORKX, TABULATE]))?;
    for (key, source) in [
        (
            "cli_packages_baseline_p50_ms",
            "import forge\nforge.result(1)\n",
        ),
        (
            "cli_import_tabulate_p50_ms",
            "import forge, tabulate\nforge.result(1)\n",
        ),
        (
            "cli_import_networkx_p50_ms",
            "import forge, networkx\nforge.result(1)\n",
        ),
    ] {
        let script = scratch.join(format!("{key}.py"));
        std::fs::write(&script, source).map_err(|e| e.to_string())?;
        let script = script.display().to_string();
        numbers.insert(key.into(), p50_of(|| forge.command(&["run", &script]))?);
    }
    numbers.insert(
        "tabulate_import_added_ms".into(),
        numbers["cli_import_tabulate_p50_ms"] - numbers["cli_packages_baseline_p50_ms"],
    );
    Ok(numbers)
}
