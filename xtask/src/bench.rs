//! `cargo xtask bench`: measures forge-host and the alternatives a user would pick, in one run,
//! writes the raw numbers to `bench/runs/<date>-<machine>/results.json` and the ratios to
//! `BENCHMARKS.md`.
//!
//! Peers: native QuickJS (the same rquickjs/QuickJS-ng, no sandbox), and QuickJS-in-WASM inside
//! Node.js (quickjs-emscripten: a shared module, a fresh module per run, a Worker per run).

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

fn capture(command: &mut Command) -> Result<String> {
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
fn cli_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    let script = scratch.join("return1.js");
    std::fs::write(&script, "return 1").map_err(|e| e.to_string())?;
    let binary = root.join("target/release/forge-host");
    let data = scratch.join("cli-data");
    let once = |cache: &Path| -> Result<f64> {
        let started = Instant::now();
        let status = Command::new(&binary)
            .args(["run"])
            .arg(&script)
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
    let cold = once(&cache)?;
    let mut warm = Vec::new();
    for _ in 0..40 {
        warm.push(once(&cache)?);
    }
    let mut numbers = Numbers::new();
    numbers.insert("cli_first_run_cold_cache_ms".into(), cold);
    numbers.insert("cli_return_1_p50_ms".into(), p50(warm));
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

fn node_numbers(root: &Path) -> Result<Numbers> {
    let dir = root.join("bench/node");
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("xtask: node is not installed; skipping the Node.js peers");
        return Ok(Numbers::new());
    }
    if !dir.join("node_modules/quickjs-emscripten").exists() {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir))?;
    }
    Ok(json_numbers(&capture(
        Command::new("node").arg("bench.mjs").current_dir(&dir),
    )?))
}

fn ratio(numbers: &Numbers, a: &str, b: &str) -> String {
    match (numbers.get(a), numbers.get(b)) {
        (Some(a), Some(b)) if *b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

fn ms(numbers: &Numbers, key: &str) -> String {
    numbers
        .get(key)
        .map_or("n/a".into(), |v| format!("{v:.3} ms"))
}

fn markdown(numbers: &Numbers, machine: &str, date: &str, component_bytes: u64) -> String {
    let row = |what: &str, ours: &str, peer_name: &str, peer: &str| {
        format!(
            "| {what} | {} | {peer_name} | {} | {} |\n",
            ms(numbers, ours),
            ms(numbers, peer),
            ratio(numbers, ours, peer)
        )
    };
    let mut text = String::new();
    text.push_str("# Benchmarks\n\n");
    text.push_str(&format!(
        "Measured by `cargo xtask bench` in one run on {machine}, {date}. Raw numbers: \
         `bench/runs/{date}-{machine}/results.json`. Ratio = forge-host / peer (below 1 is faster).\n\n"
    ));
    text.push_str("## JavaScript (QuickJS)\n\n");
    text.push_str("| measure | forge-host | peer | peer time | ratio |\n|---|---|---|---|---|\n");
    text.push_str(&row(
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, fresh module per run",
        "node_fresh_module_return_1_p50_ms",
    ));
    text.push_str(&row(
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, Worker per run",
        "node_worker_per_run_p50_ms",
    ));
    text.push_str(&row(
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "QuickJS-wasm in Node, shared module (no memory isolation)",
        "node_shared_module_return_1_p50_ms",
    ));
    text.push_str(&row(
        "warm `return 1`, library API",
        "library_return_1_p50_ms",
        "native QuickJS, no sandbox",
        "native_return_1_p50_ms",
    ));
    text.push_str(&row(
        "`forge-host run` process, `return 1`",
        "cli_return_1_p50_ms",
        "`python3 -I -c 'print(1)'` process",
        "python3_process_print_1_p50_ms",
    ));
    text.push_str(&row(
        "sum 1..1e7 (CPU-bound)",
        "cpu_sum_1e7_ms",
        "native QuickJS",
        "native_cpu_sum_1e7_ms",
    ));
    text.push_str(&row(
        "sum 1..1e7 (CPU-bound)",
        "cpu_sum_1e7_ms",
        "QuickJS-wasm in Node",
        "node_cpu_sum_1e7_ms",
    ));
    text.push_str("\n## Engine loading\n\n| measure | value |\n|---|---|\n");
    text.push_str(&format!(
        "| QuickJS component size | {component_bytes} bytes |\n"
    ));
    for (label, key) in [
        (
            "cold compile + describe (once per component and wasmtime config)",
            "component_cold_compile_ms",
        ),
        (
            "load of the cached precompiled component",
            "component_cached_load_ms",
        ),
        (
            "first `forge-host run` with an empty cache (process)",
            "cli_first_run_cold_cache_ms",
        ),
        (
            "1000 sequential `echo` tool calls in one script",
            "echo_calls_1000_ms",
        ),
    ] {
        text.push_str(&format!("| {label} | {} |\n", ms(numbers, key)));
    }
    text.push_str(
        "\nNotes: the Node.js shared-module peer runs every script in one WASM instance whose \
         memory limit does not cap bytes (FACTS), so it is not an isolation peer; the fresh-module \
         and Worker peers are. Timings are medians (p50).\n",
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
    ]))?;
    run(cargo().args(["build", "--release", "--package", "quickjs-native"]))?;
    let scratch = root.join("target/bench-scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;

    let mut numbers = Numbers::new();
    let engines = root.join("target/engines");
    numbers.extend(json_numbers(&capture(
        Command::new(root.join("target/release/examples/bench"))
            .arg(&engines)
            .arg(scratch.join("lib-data"))
            .arg(scratch.join("lib-cold-cache")),
    )?));
    numbers.extend(json_numbers(&capture(&mut Command::new(
        root.join("target/release/quickjs-native"),
    ))?));
    numbers.extend(cli_numbers(&root, &scratch)?);
    numbers.extend(node_numbers(&root)?);

    let machine = capture(&mut Command::new("hostname"))
        .unwrap_or_else(|_| "machine".into())
        .trim()
        .to_string();
    let date = capture(Command::new("date").arg("+%Y-%m-%d"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let component_bytes = std::fs::metadata(engines.join("javascript-quickjs.wasm"))
        .map(|m| m.len())
        .unwrap_or(0);
    let run_dir = root.join("bench/runs").join(format!("{date}-{machine}"));
    std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
    let mut json = String::from("{\n");
    let body: Vec<String> = numbers
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {v}"))
        .collect();
    json.push_str(&body.join(",\n"));
    json.push_str(&format!(
        ",\n  \"quickjs_component_bytes\": {component_bytes}\n}}\n"
    ));
    std::fs::write(run_dir.join("results.json"), &json).map_err(|e| e.to_string())?;
    std::fs::write(
        root.join("BENCHMARKS.md"),
        markdown(&numbers, &machine, &date, component_bytes),
    )
    .map_err(|e| e.to_string())?;
    eprintln!("xtask: wrote BENCHMARKS.md and {}", run_dir.display());
    print!("{json}");
    Ok(())
}
