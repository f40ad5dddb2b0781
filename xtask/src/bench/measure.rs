//! Everything `cargo xtask bench` runs to get its numbers, in the order of one run: the library
//! drivers (`bench/drivers/`), native QuickJS, `forge-host run` as a process, the Python sets
//! (`measure_python.rs`), the Node.js peers, MCP, the HTTP door under load, the floods and the soak, and the worker pool.
//! Every measure returns flat numbers by key; none of it knows how BENCHMARKS.md shows them.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::Numbers;
use crate::{Result, run};

/// The numbers of one flat JSON object, which is what the benchmark programs print.
pub fn json_numbers(text: &str) -> Numbers {
    let mut numbers = Numbers::new();
    let body = text.trim().trim_start_matches('{').trim_end_matches('}');
    for pair in body.split(',') {
        let mut parts = pair.splitn(2, ':');
        let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
            continue;
        };
        if let Ok(value) = value.trim().parse::<f64>() {
            numbers.insert(key.trim().trim_matches('"').to_string(), value);
        }
    }
    numbers
}

/// The standard output of `command`, echoed first; its stderr in the error if it fails.
pub fn capture(command: &mut Command) -> Result<String> {
    eprintln!("xtask: $ {}", crate::describe(command));
    let out = command.output().map_err(|e| format!("cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            crate::describe(command),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The median of `samples`.
pub fn p50(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[(samples.len() - 1) / 2]
}

/// Every measure, in one run, with `scratch` for their data; the drivers and the host are
/// built.
pub fn all(root: &Path, scratch: &Path) -> Result<Numbers> {
    let mut numbers = Numbers::new();
    let engines = crate::paths::engines();
    numbers.extend(json_numbers(&capture(
        Command::new(crate::paths::release_example("bench"))
            .arg(&engines)
            .arg(scratch.join("lib-data"))
            .arg(scratch.join("lib-cold-cache")),
    )?));
    numbers.extend(json_numbers(&capture(&mut Command::new(
        crate::paths::release_binary("quickjs-native"),
    ))?));
    numbers.extend(json_numbers(&capture(
        Command::new(crate::paths::release_example("epoch_cost")).arg(&engines),
    )?));
    numbers.extend(cli_numbers(scratch)?);
    numbers.extend(super::measure_python::groupby_numbers(scratch)?);
    numbers.extend(super::measure_python::cpu_numbers(root, scratch)?);
    numbers.extend(super::measure_python::plotly_numbers(scratch)?);
    numbers.extend(super::measure_packages::packages_numbers(root, scratch)?);
    numbers.extend(node_numbers(root)?);
    numbers.extend(mcp_numbers(root, scratch)?);
    numbers.extend(super::measure_doors::doors_numbers(root, scratch)?);
    numbers.extend(flood_and_soak_numbers(root, scratch)?);
    crate::setup::apt_install(&["nats-server"])?;
    numbers.extend(json_numbers(&capture(
        Command::new(crate::paths::release_example("cluster_bench"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("cluster")),
    )?));
    Ok(numbers)
}

/// `forge-host run` as a whole process, warm cache.
fn cli_numbers(scratch: &Path) -> Result<Numbers> {
    let script = scratch.join("return1.js");
    std::fs::write(&script, "return 1").map_err(|e| e.to_string())?;
    let py_script = scratch.join("result1.py");
    std::fs::write(&py_script, "import forge\nforge.result(1)\n").map_err(|e| e.to_string())?;
    let binary = crate::paths::host_binary();
    let data = scratch.join("cli-data");
    let once_with = |script: &Path, cache: &Path| -> Result<f64> {
        let started = Instant::now();
        let status = Command::new(&binary)
            .args(["run"])
            .arg(script)
            .arg("--data-dir")
            .arg(&data)
            .env("FORGE_HOST_CACHE_DIR", cache)
            .output()
            .map_err(|e| e.to_string())?;
        if !status.status.success() {
            return Err(format!(
                "forge-host run failed: {}",
                String::from_utf8_lossy(&status.stderr)
            ));
        }
        Ok(started.elapsed().as_secs_f64() * 1000.0)
    };
    let cache = scratch.join("cli-cache");
    let science_script = scratch.join("science1.py");
    std::fs::write(&science_script, "import forge, pandas\nforge.result(1)\n")
        .map_err(|e| e.to_string())?;
    let mut numbers = Numbers::new();
    // The first run of each engine compiles it into the empty cache; then warm runs.
    for (prefix, script, warm_runs, warm_key) in [
        ("", &script, 40, "cli_return_1_p50_ms"),
        ("python_", &py_script, 40, "python_cli_result_1_p50_ms"),
        (
            "science_",
            &science_script,
            20,
            "science_cli_result_1_p50_ms",
        ),
    ] {
        numbers.insert(
            format!("{prefix}cli_first_run_cold_cache_ms"),
            once_with(script, &cache)?,
        );
        let warm = (0..warm_runs)
            .map(|_| once_with(script, &cache))
            .collect::<Result<Vec<f64>>>()?;
        numbers.insert(warm_key.into(), p50(warm));
    }
    // Native CPython, same loop, timed inside the process.
    let native = capture(Command::new("/usr/bin/python3").args([
        "-I",
        "-c",
        "import time\nbest = []\nfor _ in range(5):\n    t = time.perf_counter(); sum(range(10**6)); best.append(time.perf_counter() - t)\nprint(sorted(best)[2] * 1000)",
    ]));
    if let Some(ms) = native.ok().and_then(|text| text.trim().parse::<f64>().ok()) {
        numbers.insert("native_python_sum_range_1e6_ms".into(), ms);
    }
    let mut python = Vec::new();
    for _ in 0..40 {
        let started = Instant::now();
        let ok = Command::new("/usr/bin/python3")
            .args(["-I", "-c", "print(1)"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            python.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    if !python.is_empty() {
        numbers.insert("python3_process_print_1_p50_ms".into(), p50(python));
    }
    Ok(numbers)
}

/// The Node.js peers (`bench/node`): QuickJS-wasm and Pyodide; none when Node is missing.
fn node_numbers(root: &Path) -> Result<Numbers> {
    let dir = root.join("bench/node");
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("xtask: node is not installed; skipping the Node.js peers");
        return Ok(Numbers::new());
    }
    if !dir.join("node_modules/quickjs-emscripten").exists()
        || !dir.join("node_modules/pyodide").exists()
    {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir))?;
    }
    let mut numbers = json_numbers(&capture(
        Command::new("node").arg("bench.mjs").current_dir(&dir),
    )?);
    numbers.extend(json_numbers(&capture(
        Command::new("node").arg("pyodide.mjs").current_dir(&dir),
    )?));
    Ok(numbers)
}

/// MCP (issue 10 §6): `forge-host mcp` driven by the official Python MCP SDK
/// (`bench/mcp/bench_mcp.py`), against the same client calling npm server-everything directly,
/// in the same run; the test peers are installed when missing.
fn mcp_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    crate::setup::test_peers()?;
    let python = crate::setup::test_peers_venv().join("bin/python");
    let everything = root.join("tests/peers/node_modules/.bin/mcp-server-everything");
    Ok(json_numbers(&capture(
        Command::new(python)
            .arg(root.join("bench/mcp/bench_mcp.py"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("mcp-data"))
            .arg(everything),
    )?))
}

/// Floods and soak (issue 11): 1 GiB through each output channel and through tool responses,
/// each in one `forge-host run` with its peak resident memory (`bench/floods/floods.py`); and
/// 10,000 journaled runs in one process through the library, with resident memory and open
/// descriptors after a warm-up and at the end (`bench/drivers/soak.rs`).
fn flood_and_soak_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    let mut numbers = json_numbers(&capture(
        Command::new("python3")
            .arg(root.join("bench/floods/floods.py"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("flood-data")),
    )?);
    numbers.extend(json_numbers(&capture(
        Command::new(crate::paths::release_example("soak"))
            .arg(crate::paths::engines())
            .arg(scratch.join("soak-data"))
            .arg("10000"),
    )?));
    Ok(numbers)
}
