//! `cargo xtask bench`: measures forge-host and the alternatives a user would pick, in one run,
//! writes the raw numbers to `bench/runs/<date>-<machine>/results.json` and the ratios to
//! `BENCHMARKS.md`.
//!
//! Measuring and showing are apart, so that the page can be checked against its numbers
//! without a run: `measure*.rs` run things and return numbers by key; `render.rs` turns numbers
//! into Markdown, with the words of `BENCHMARKS.md.in` and the rows of `rows.rs` and
//! `goals.rs`.
//!
//! Peers: native QuickJS (the same rquickjs/QuickJS-ng, no sandbox), QuickJS-in-WASM inside
//! Node.js (quickjs-emscripten: a shared module, a fresh module per run, a Worker per run), a
//! fresh `python3 -I` process, Pyodide in Node.js, (python-science) the same pandas and numpy on
//! native CPython, native CPython 3.14 for the CPU-bound Python set, and a venv's `python3`
//! importing networkx from its `.pyc` files.

mod goals;
mod measure;
mod measure_doors;
mod measure_packages;
mod measure_python;
mod measure_versions;
mod render;
mod rows;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::process::Command;

use crate::{Result, cargo, run, workspace_root};

/// One run's numbers by key: milliseconds unless the key names its unit.
pub type Numbers = BTreeMap<String, f64>;

/// The drivers that measure through the library (`bench/drivers/`, built as the host's
/// examples).
const DRIVERS: [&str; 4] = ["bench", "soak", "epoch_cost", "cluster_bench"];

/// The size keys of `results.json` and the engine files they measure in `target/engines/`.
const COMPONENTS: [(&str, &str); 3] = [
    ("quickjs_component_bytes", "javascript-quickjs.wasm"),
    ("python_component_bytes", "python-cpython.wasm"),
    ("science_component_bytes", "python-science.wasm"),
];

/// Runs every benchmark and writes the results.
pub fn bench() -> Result {
    let root = workspace_root();
    let mut drivers = cargo();
    drivers.args(["build", "--release", "--package", "forge-host"]);
    for driver in DRIVERS {
        drivers.args(["--example", driver]);
    }
    run(&mut drivers)?;
    run(cargo().args(["build", "--release", "--package", "quickjs-native"]))?;
    let scratch = crate::paths::target().join("bench-scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;

    let mut numbers = measure::all(&root, &scratch)?;

    let machine = measure::capture(&mut Command::new("hostname"))
        .unwrap_or_else(|_| "machine".into())
        .trim()
        .to_string();
    let date = measure::capture(Command::new("date").arg("+%Y-%m-%d"))
        .unwrap_or_default()
        .trim()
        .to_string();
    for (key, file) in COMPONENTS {
        let bytes = std::fs::metadata(crate::paths::engines().join(file)).map_or(0, |m| m.len());
        numbers.insert(key.into(), bytes as f64);
    }
    let run_dir = root.join("bench/runs").join(format!("{date}-{machine}"));
    std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
    let json = results_json(&numbers);
    std::fs::write(run_dir.join("results.json"), &json).map_err(|e| e.to_string())?;
    let versions = measure_versions::versions(&root);
    let page = render::markdown(&render::Page {
        numbers: &numbers,
        machine: &machine,
        date: &date,
        versions: &versions,
    })?;
    std::fs::write(root.join("BENCHMARKS.md"), page).map_err(|e| e.to_string())?;
    eprintln!("xtask: wrote BENCHMARKS.md and {}", run_dir.display());
    print!("{json}");
    Ok(())
}

/// `results.json`: one flat JSON object, a key per line, sorted.
fn results_json(numbers: &Numbers) -> String {
    let body: Vec<String> = numbers
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {v}"))
        .collect();
    format!("{{\n{}\n}}\n", body.join(",\n"))
}
