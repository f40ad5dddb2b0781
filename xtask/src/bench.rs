//! `cargo xtask bench`: measures forge-host and the alternatives a user would pick, in one run,
//! writes the raw numbers to `bench/runs/<date>-<machine>/results.json` and the ratios to
//! `BENCHMARKS.md`.
//!
//! Peers: native QuickJS (the same rquickjs/QuickJS-ng, no sandbox), QuickJS-in-WASM inside
//! Node.js (quickjs-emscripten: a shared module, a fresh module per run, a Worker per run), a
//! fresh `python3 -I` process, Pyodide in Node.js, (python-science) the same pandas and numpy on
//! native CPython, and native CPython 3.14 for the CPU-bound Python set.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::{Result, cargo, run, workspace_root};

type Numbers = BTreeMap<String, f64>;

fn json_numbers(text: &str) -> Numbers {
    // The benchmark programs print one flat JSON object of numbers.
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
pub(crate) fn capture(command: &mut Command) -> Result<String> {
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

fn p50(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[(samples.len() - 1) / 2]
}

/// `forge-host run` as a whole process, warm cache.
fn cli_numbers(_root: &Path, scratch: &Path) -> Result<Numbers> {
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

/// The same pandas code, timed inside the script, on a 1M-row CSV: in python-science through
/// the CLI, and on native CPython with the same pandas and numpy versions from PyPI wheels.
fn groupby_numbers(_root: &Path, scratch: &Path) -> Result<Numbers> {
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
    // Native: a venv with the same pandas and numpy (wheels for the machine's python3).
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

fn ratio(numbers: &Numbers, a: &str, b: &str) -> String {
    match (numbers.get(a), numbers.get(b)) {
        (Some(a), Some(b)) if *b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

/// A number in its unit: runs per second for `..._per_s` keys, milliseconds otherwise.
fn ms(numbers: &Numbers, key: &str) -> String {
    numbers.get(key).map_or("n/a".into(), |v| {
        if key.ends_with("_per_s") {
            format!("{v:.0}/s")
        } else {
            format!("{v:.3} ms")
        }
    })
}

/// One table row: forge-host's number, a peer's, and their ratio.
fn row(numbers: &Numbers, what: &str, ours: &str, peer_name: &str, peer: &str) -> String {
    format!(
        "| {what} | {} | {peer_name} | {} | {} |\n",
        ms(numbers, ours),
        ms(numbers, peer),
        ratio(numbers, ours, peer)
    )
}

const TABLE_HEAD: &str =
    "| measure | forge-host | peer | peer time | ratio |\n|---|---|---|---|---|\n";

/// (measure, our key, peer, peer key) for the JavaScript table.
const JS_ROWS: [(&str, &str, &str, &str); 7] = [
    (
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, fresh module per run",
        "node_fresh_module_return_1_p50_ms",
    ),
    (
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, Worker per run",
        "node_worker_per_run_p50_ms",
    ),
    (
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, shared module (no isolation)",
        "node_shared_module_return_1_p50_ms",
    ),
    (
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "native QuickJS, no sandbox",
        "native_return_1_p50_ms",
    ),
    (
        "`forge-host run` process, `return 1`",
        "cli_return_1_p50_ms",
        "`python3 -I -c 'print(1)'` process",
        "python3_process_print_1_p50_ms",
    ),
    (
        "sum 1..1e7 (CPU-bound)",
        "cpu_sum_1e7_ms",
        "native QuickJS",
        "native_cpu_sum_1e7_ms",
    ),
    (
        "sum 1..1e7 (CPU-bound)",
        "cpu_sum_1e7_ms",
        "QuickJS-wasm in Node",
        "node_cpu_sum_1e7_ms",
    ),
];

/// The Python table.
const PY_ROWS: [(&str, &str, &str, &str); 6] = [
    (
        "warm `forge.result(1)`, library API",
        "python_library_result_1_p50_ms",
        "`python3 -I` process",
        "python3_process_print_1_p50_ms",
    ),
    (
        "warm `forge.result(1)`, library API",
        "python_library_result_1_p50_ms",
        "Pyodide in Node, warm shared interpreter (no isolation)",
        "pyodide_warm_run_1_p50_ms",
    ),
    (
        "`forge-host run` process, `forge.result(1)`",
        "python_cli_result_1_p50_ms",
        "`python3 -I` process",
        "python3_process_print_1_p50_ms",
    ),
    (
        "`forge-host run` process, `forge.result(1)`",
        "python_cli_result_1_p50_ms",
        "Pyodide cold load in Node",
        "pyodide_cold_load_ms",
    ),
    (
        "`sum(range(10**6))`: whole run vs the loop alone",
        "python_sum_range_1e6_run_ms",
        "native CPython, loop alone",
        "native_python_sum_range_1e6_ms",
    ),
    (
        "`sum(range(10**6))`: whole run vs the loop alone",
        "python_sum_range_1e6_run_ms",
        "Pyodide, loop alone",
        "pyodide_sum_range_1e6_ms",
    ),
];

/// The python-science table.
const SCIENCE_ROWS: [(&str, &str, &str, &str); 6] = [
    (
        "1M-row CSV: `read_csv` + group-by, in the script",
        "science_pandas_total_ms",
        "native CPython 3.11, same pandas",
        "native_pandas_total_ms",
    ),
    (
        "1M-row CSV: `read_csv` alone",
        "science_pandas_read_ms",
        "native CPython 3.11, same pandas",
        "native_pandas_read_ms",
    ),
    (
        "1M-row CSV: group-by (sum, mean, size) alone",
        "science_pandas_groupby_ms",
        "native CPython 3.11, same pandas",
        "native_pandas_groupby_ms",
    ),
    (
        "1M-row CSV group-by: whole process (`forge-host run --input`)",
        "science_groupby_process_ms",
        "native `python` process",
        "native_pandas_groupby_process_ms",
    ),
    (
        "`forge-host run` process, `import pandas; forge.result(1)`",
        "science_cli_result_1_p50_ms",
        "`python3 -I` process",
        "python3_process_print_1_p50_ms",
    ),
    (
        "warm `import pandas; forge.result(1)`, library API",
        "science_library_result_1_p50_ms",
        "the stdlib profile, `forge.result(1)`",
        "python_library_result_1_p50_ms",
    ),
];

/// Single values.
const VALUES: [(&str, &str); 11] = [
    (
        "QuickJS: cold compile + describe (once per component and wasmtime config)",
        "component_cold_compile_ms",
    ),
    (
        "QuickJS: load of the cached precompiled component",
        "component_cached_load_ms",
    ),
    (
        "QuickJS: first `forge-host run` with an empty cache (process)",
        "cli_first_run_cold_cache_ms",
    ),
    (
        "CPython: hash + cold compile + describe",
        "python_component_cold_compile_ms",
    ),
    (
        "CPython: load of the cached precompiled component",
        "python_component_cached_load_ms",
    ),
    (
        "JavaScript: 1000 sequential `echo` tool calls in one script",
        "echo_calls_1000_ms",
    ),
    (
        "Python: 1000 sequential `echo` tool calls in one script",
        "python_echo_calls_1000_ms",
    ),
    (
        "python-science: hash + cold compile + describe",
        "science_component_cold_compile_ms",
    ),
    (
        "python-science: load of the cached precompiled component",
        "science_component_cached_load_ms",
    ),
    (
        "python-science: first `forge-host run` with an empty cache (process)",
        "science_cli_first_run_cold_cache_ms",
    ),
    ("Pyodide: cold load in Node", "pyodide_cold_load_ms"),
];

/// (measure, our key, peer, peer key): recording for replay against the same run unrecorded.
const RECORD_ROWS: [(&str, &str, &str, &str); 3] = [
    (
        "warm `return 1`, recorded (`--record full`, the default)",
        "library_return_1_p50_ms",
        "the same, `--record off`",
        "library_return_1_record_off_p50_ms",
    ),
    (
        "1000 sequential `echo` calls, recorded",
        "echo_calls_1000_ms",
        "the same, `--record off`",
        "echo_calls_1000_record_off_ms",
    ),
    (
        "warm Python `forge.result(1)`, recorded",
        "python_library_result_1_p50_ms",
        "the same, `--record off`",
        "python_library_result_1_record_off_p50_ms",
    ),
];

/// (measure, our key, peer, peer key) for the worker pool. Throughput rows are runs per second
/// (higher is better); the machine has 2 cores, which every worker and the NATS server share.
const CLUSTER_ROWS: [(&str, &str, &str, &str); 4] = [
    (
        "`return 1` runs through the queue, 1 worker (2 at once), runs/s",
        "cluster_throughput_1_workers_runs_per_s",
        "one process, 8 concurrent library runs, runs/s",
        "throughput_return_1_8_concurrent_runs_per_s",
    ),
    (
        "the same, 2 workers, runs/s",
        "cluster_throughput_2_workers_runs_per_s",
        "1 worker",
        "cluster_throughput_1_workers_runs_per_s",
    ),
    (
        "the same, 3 workers, runs/s",
        "cluster_throughput_3_workers_runs_per_s",
        "1 worker",
        "cluster_throughput_1_workers_runs_per_s",
    ),
    (
        "one queued `return 1`, submit to report, p50",
        "cluster_return_1_p50_ms",
        "the same run through the library API",
        "library_return_1_p50_ms",
    ),
];

/// What the worker-pool figures measure, and where a queued run's time goes.
const CLUSTER_NOTE: &str = "\nAll on one 2-core machine: the workers, the NATS server and the submitter share the cores, so more workers add little here; on separate machines each worker brings its own. One queued run makes about eight NATS round trips besides the run itself (the request published, the run record read and created, the journal record as the run starts and as it ends, the record updated with the report, the reply and the ack; counted from the code, not profiled). A script and a report up to 64 KiB travel inside the messages, so a small run does not touch the object store.\n";

fn markdown(numbers: &Numbers, machine: &str, date: &str, sizes: &[(&str, u64)]) -> String {
    let mut text = String::from("# Benchmarks\n\n");
    text.push_str(&format!(
        "Measured by `cargo xtask bench` in one run on {machine}, {date}. Raw numbers: \
         `bench/runs/{date}-{machine}/results.json`. Ratio = forge-host / peer (below 1 is faster).\n\n"
    ));
    text.push_str(&crate::bench_goals::markdown(|key| {
        numbers.get(key).copied()
    }));
    for (title, rows) in [
        ("JavaScript (QuickJS)", &JS_ROWS[..]),
        ("Python (CPython)", &PY_ROWS[..]),
        (
            "Python with numpy and pandas (python-science)",
            &SCIENCE_ROWS[..],
        ),
        (
            "Recording for replay (`forge-host replay`)",
            &RECORD_ROWS[..],
        ),
    ] {
        text.push_str(&format!("## {title}\n\n{TABLE_HEAD}"));
        for (what, ours, peer_name, peer) in rows {
            text.push_str(&row(numbers, what, ours, peer_name, peer));
        }
        text.push('\n');
    }
    text.push_str(&crate::bench_cpu::markdown(|key| numbers.get(key).copied()));
    text.push_str(&format!(
        "## MCP (`forge-host mcp`, driven by the official Python MCP SDK)\n\n{TABLE_HEAD}"
    ));
    for (what, ours, peer_name, peer) in crate::bench_mcp::MCP_ROWS {
        text.push_str(&row(numbers, what, ours, peer_name, peer));
    }
    for (label, key) in [
        ("after 10 calls", "mcp_server_rss_after_10_calls_mib"),
        ("after 1,000 calls", "mcp_server_rss_after_1000_calls_mib"),
    ] {
        if let Some(rss) = numbers.get(key) {
            text.push_str(&format!(
                "| `forge-host mcp` resident memory {label} | {rss:.1} MiB | | | |\n"
            ));
        }
    }
    text.push('\n');
    text.push_str(&format!(
        "## More than one machine (`forge-host worker` on NATS JetStream, all on this machine)\n\n{TABLE_HEAD}"
    ));
    for (what, ours, peer_name, peer) in CLUSTER_ROWS {
        text.push_str(&row(numbers, what, ours, peer_name, peer));
    }
    text.push_str(CLUSTER_NOTE);
    text.push('\n');
    text.push_str(&crate::bench_soak::markdown(|key| {
        numbers.get(key).copied()
    }));
    text.push_str("## Engines and tool calls\n\n| measure | value |\n|---|---|\n");
    for (name, bytes) in sizes {
        text.push_str(&format!("| {name} component size | {bytes} bytes |\n"));
    }
    for (label, key) in VALUES {
        text.push_str(&format!("| {label} | {} |\n", ms(numbers, key)));
    }
    if let Some(peak) = numbers.get("science_groupby_memory_peak_mib") {
        text.push_str(&format!(
            "| python-science: memory peak of the 1M-row group-by run | {peak:.0} MiB |\n"
        ));
    }
    if let Some(rss) = numbers.get("pyodide_rss_mib") {
        text.push_str(&format!(
            "| Pyodide: process RSS after loading | {rss:.0} MiB |\n"
        ));
    }
    text.push_str(
        "\nNotes: the Node.js shared-module peer and the warm Pyodide interpreter run every script \
         in one shared WASM instance without a byte cap, so they are not isolation peers; the \
         fresh-module, Worker, process and cold-load peers are. A forge-host library run includes \
         a fresh instance, the job folders, the state snapshot, the journal (durable before the \
         report returns) and the report; \"sandbox alone\" is the instance, the run and the \
         teardown only (`engines::run_alone`). Throughput is journaled runs per second of one \
         process with 8 runs in flight. Memory per sleeping run is the peak RSS of the bench \
         process while 100 runs wait in a `sleep` tool call, over its RSS before, divided by \
         100. Timings are medians (p50).\n\nWhy each missed goal is missed, with the profile \
         that shows its floor: `bench/FLOORS.md`.\n",
    );
    text
}

/// Runs every benchmark and writes the results.
pub fn bench() -> Result {
    let root = workspace_root();
    run(cargo().args([
        "build",
        "--release",
        "--package",
        "forge-host",
        "--example",
        "bench",
        "--example",
        "soak",
        "--example",
        "epoch_cost",
        "--example",
        "cluster_bench",
    ]))?;
    run(cargo().args(["build", "--release", "--package", "quickjs-native"]))?;
    let scratch = crate::paths::target().join("bench-scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;

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
    numbers.extend(cli_numbers(&root, &scratch)?);
    numbers.extend(groupby_numbers(&root, &scratch)?);
    numbers.extend(crate::bench_cpu::numbers(&root, &scratch)?);
    numbers.extend(node_numbers(&root)?);
    numbers.extend(json_numbers(&crate::bench_mcp::mcp_output(
        &root, &scratch,
    )?));
    for text in crate::bench_soak::outputs(&root, &scratch)? {
        numbers.extend(json_numbers(&text));
    }
    crate::setup::apt_install(&["nats-server"])?;
    numbers.extend(json_numbers(&capture(
        Command::new(crate::paths::release_example("cluster_bench"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("cluster")),
    )?));

    let machine = capture(&mut Command::new("hostname"))
        .unwrap_or_else(|_| "machine".into())
        .trim()
        .to_string();
    let date = capture(Command::new("date").arg("+%Y-%m-%d"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let size = |file: &str| {
        std::fs::metadata(engines.join(file))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let sizes = [
        ("QuickJS", size("javascript-quickjs.wasm")),
        ("CPython", size("python-cpython.wasm")),
        ("CPython + numpy + pandas", size("python-science.wasm")),
    ];
    let run_dir = root.join("bench/runs").join(format!("{date}-{machine}"));
    std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
    numbers.insert("quickjs_component_bytes".into(), sizes[0].1 as f64);
    numbers.insert("python_component_bytes".into(), sizes[1].1 as f64);
    numbers.insert("science_component_bytes".into(), sizes[2].1 as f64);
    let body: Vec<String> = numbers
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {v}"))
        .collect();
    let json = format!("{{\n{}\n}}\n", body.join(",\n"));
    std::fs::write(run_dir.join("results.json"), &json).map_err(|e| e.to_string())?;
    let versions = crate::bench_versions::versions(&root);
    std::fs::write(
        root.join("BENCHMARKS.md"),
        markdown(&numbers, &machine, &date, &sizes) + &crate::bench_versions::markdown(&versions),
    )
    .map_err(|e| e.to_string())?;
    eprintln!("xtask: wrote BENCHMARKS.md and {}", run_dir.display());
    print!("{json}");
    Ok(())
}
