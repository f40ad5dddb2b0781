//! The Python sets of `cargo xtask bench` that need a native CPython next to the component: the
//! same pandas group-by in python-science and on native CPython with the same pandas and numpy,
//! and the CPU-bound set of issue 12, `bench/cpu/suite.py` (a loop, `json` dumps/loads, `re`,
//! nbody), timed inside the interpreter, on native CPython 3.14 (Debian sid's build,
//! `bench/cpu/native_cpython.py`) and in the CPython component through `forge-host run`; and a
//! plotly chart written with `write_html`, by python-science and by the same plotly natively.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::Numbers;
use super::measure::{capture, json_numbers};
use super::measure_packages::p50_of;
use super::rows::KERNELS;
use crate::{Result, run};

/// The same pandas code, timed inside the script, on a 1M-row CSV: in python-science through
/// the CLI, and on native CPython with the same pandas and numpy versions from PyPI wheels.
pub fn groupby_numbers(scratch: &Path) -> Result<Numbers> {
    let csv = scratch.join("rows.csv");
    let mut text = String::from("key,group,value,count\n");
    let mut x: u64 = 42;
    for i in 0..1_000_000u64 {
        // A fixed LCG: the same file on every machine.
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = (x >> 33) % 1000;
        text.push_str(&format!(
            "k{key},g{},{}.{:02},{}\n",
            key % 7,
            (x >> 20) % 10_000,
            (x >> 12) % 100,
            i % 13
        ));
    }
    std::fs::write(&csv, text).map_err(|e| e.to_string())?;
    let script = |path: &str| {
        format!(
            "import json, time\nimport pandas as pd\nt0 = time.perf_counter()\n\
             frame = pd.read_csv({path:?})\nt1 = time.perf_counter()\n\
             out = frame.groupby(['group', 'key']).agg(total=('value', 'sum'), \
             mean=('value', 'mean'), n=('count', 'size'))\nt2 = time.perf_counter()\n\
             RESULT = {{'read_ms': (t1 - t0) * 1000, 'groupby_ms': (t2 - t1) * 1000, \
             'total_ms': (t2 - t0) * 1000, 'groups': len(out)}}\n"
        )
    };
    let mut numbers = Numbers::new();
    let venv = native_venv()?;
    let native = scratch.join("groupby_native.py");
    std::fs::write(
        &native,
        script(&csv.display().to_string())
            + "print(json.dumps({f'native_pandas_{k}': v for k, v in RESULT.items()}))\n",
    )
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    numbers.extend(json_numbers(&capture(
        Command::new(venv.join("bin/python")).arg(&native),
    )?));
    numbers.insert(
        "native_pandas_groupby_process_ms".into(),
        started.elapsed().as_secs_f64() * 1000.0,
    );
    let sandboxed = scratch.join("groupby_science.py");
    std::fs::write(
        &sandboxed,
        String::from("import forge\n") + &script("/input/rows.csv") + "forge.result(RESULT)\n",
    )
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let report = capture(
        Command::new(crate::paths::host_binary())
            .arg("run")
            .arg(&sandboxed)
            .args(["--json", "--memory", "2GiB", "--timeout", "10m", "--input"])
            .arg(&csv)
            .arg("--data-dir")
            .arg(scratch.join("cli-data"))
            .env("FORGE_HOST_CACHE_DIR", scratch.join("cli-cache")),
    )?;
    numbers.insert(
        "science_groupby_process_ms".into(),
        started.elapsed().as_secs_f64() * 1000.0,
    );
    let report: serde_json::Value =
        serde_json::from_str(&report).map_err(|e| format!("the groupby report: {e}"))?;
    let value = report["value"]
        .as_object()
        .ok_or_else(|| format!("the groupby run did not return its timings: {report}"))?;
    for (key, number) in value {
        if let Some(number) = number.as_f64() {
            numbers.insert(format!("science_pandas_{key}"), number);
        }
    }
    if let Some(peak) = report["metrics"]["memory_peak_bytes"].as_f64() {
        numbers.insert("science_groupby_memory_peak_mib".into(), peak / 1048576.0);
    }
    Ok(numbers)
}

/// A venv of the machine's python3 with the same pandas and numpy as python-science (wheels
/// from PyPI), and the plotly wheels python-science pins.
fn native_venv() -> Result<std::path::PathBuf> {
    let venv = crate::paths::target().join("bench-pandas-venv");
    if !venv.join("bin/python").exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run(Command::new(venv.join("bin/pip")).args([
            "install",
            "--quiet",
            "--only-binary",
            ":all:",
            "pandas==3.1.1",
            "numpy==2.4.6",
        ]))?;
    }
    let library = library_pins()?;
    let mut install = Command::new(venv.join("bin/pip"));
    install.args(["install", "--quiet", "--only-binary", ":all:", "--no-deps"]);
    run(install.args(&library))?;
    Ok(venv)
}

/// `name==version` of every wheel in `LIBRARY_WHEELS`, where python-science pins them.
fn library_pins() -> Result<Vec<String>> {
    let pins = crate::workspace_root().join("components/python-science/science_build/pins.py");
    let text = std::fs::read_to_string(&pins).map_err(|e| format!("{}: {e}", pins.display()))?;
    let block = text
        .split("LIBRARY_WHEELS = {")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .ok_or_else(|| format!("{} has no LIBRARY_WHEELS", pins.display()))?;
    let found: Vec<String> = block
        .lines()
        .filter_map(|line| {
            let mut quoted = line.split('"').skip(1).step_by(2);
            Some(format!("{}=={}", quoted.next()?, quoted.next()?))
        })
        .collect();
    if found.is_empty() {
        return Err(format!("{}: LIBRARY_WHEELS lists nothing", pins.display()));
    }
    Ok(found)
}

/// `science_plotly_write_html_p50_ms` and `native_plotly_write_html_p50_ms`: a whole process
/// that imports plotly.express, draws a line chart of a small DataFrame and writes it as one
/// self-contained page, in python-science through `forge-host run` and on native CPython.
pub fn plotly_numbers(scratch: &Path) -> Result<Numbers> {
    let venv = native_venv()?;
    let chart = |page: &str| {
        format!(
            "import pandas as pd\nimport plotly.express as px\n\
             frame = pd.DataFrame({{'x': range(200), 'y': [i * i % 97 for i in range(200)], \
             'g': [f'g{{i % 4}}' for i in range(200)]}})\n\
             px.line(frame, x='x', y='y', color='g').write_html({page:?}, include_plotlyjs=True)\n"
        )
    };
    let native = scratch.join("plotly_native.py");
    let page = scratch.join("plotly-native.html");
    std::fs::write(&native, chart(&page.display().to_string())).map_err(|e| e.to_string())?;
    let mut numbers = Numbers::new();
    numbers.insert(
        "native_plotly_write_html_p50_ms".into(),
        p50_of(|| {
            let mut command = Command::new(venv.join("bin/python"));
            command.arg(&native);
            command
        })?,
    );
    let sandboxed = scratch.join("plotly_science.py");
    std::fs::write(&sandboxed, chart("/output/chart.html")).map_err(|e| e.to_string())?;
    numbers.insert(
        "science_plotly_write_html_p50_ms".into(),
        p50_of(|| {
            let mut command = Command::new(crate::paths::host_binary());
            command
                .arg("run")
                .arg(&sandboxed)
                .arg("--out")
                .arg(scratch.join("plotly-out"))
                .arg("--data-dir")
                .arg(scratch.join("cli-data"))
                .env("FORGE_HOST_CACHE_DIR", scratch.join("cli-cache"));
            command
        })?,
    );
    Ok(numbers)
}

/// `native314_cpu_KERNEL_ms` and `python_cpu_KERNEL_ms` for every kernel.
pub fn cpu_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    let suite = root.join("bench/cpu/suite.py");
    let native = capture(
        Command::new("python3")
            .arg(root.join("bench/cpu/native_cpython.py"))
            .arg(crate::paths::target().join("bench-cpython")),
    )?;
    let native = capture(Command::new(native.trim()).arg(&suite))?;
    let ours = capture(
        Command::new(crate::paths::host_binary())
            .arg("run")
            .arg(&suite)
            .args(["--json", "--timeout", "5m", "--data-dir"])
            .arg(scratch.join("cpu-data")),
    )?;
    let native: serde_json::Value = serde_json::from_str(&native).map_err(|e| e.to_string())?;
    let ours: serde_json::Value = serde_json::from_str(&ours).map_err(|e| e.to_string())?;
    let mut numbers = Numbers::new();
    for (kernel, _) in KERNELS {
        for (prefix, times) in [("native314", &native), ("python", &ours["value"])] {
            let ms = times[kernel]
                .as_f64()
                .ok_or_else(|| format!("suite.py gave no time for `{kernel}`: {times}"))?;
            numbers.insert(format!("{prefix}_cpu_{kernel}_ms"), ms);
        }
    }
    Ok(numbers)
}
