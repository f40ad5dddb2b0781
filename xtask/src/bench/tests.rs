//! The page is a function of its numbers: BENCHMARKS.md, as committed, is what `render` makes of
//! the `results.json` it names, and fixed numbers give the rows, goals and words they should.

use super::measure::json_numbers;
use super::render::{Page, markdown};
use super::{Numbers, results_json};

/// The (what, version) rows of a page's versions table.
fn versions_of(page: &str) -> Vec<(String, String)> {
    let table = page.split("## Versions\n").nth(1).unwrap_or_default();
    table
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| what |"))
        .filter_map(|line| {
            let cells = line.strip_prefix("| ")?.strip_suffix(" |")?;
            let (what, version) = cells.split_once(" | ")?;
            Some((what.to_string(), version.to_string()))
        })
        .collect()
}

#[test]
fn benchmarks_md_is_the_rendering_of_the_run_it_names() {
    let root = crate::workspace_root();
    let committed = std::fs::read_to_string(root.join("BENCHMARKS.md")).expect("BENCHMARKS.md");
    let run = committed
        .split("Raw numbers: `bench/runs/")
        .nth(1)
        .and_then(|rest| rest.split("/results.json`").next())
        .expect("BENCHMARKS.md names its run");
    let (date, machine) = (&run[..10], &run[11..]);
    let results = std::fs::read_to_string(root.join("bench/runs").join(run).join("results.json"))
        .expect("the run's results.json");
    let numbers = json_numbers(&results);
    let versions = versions_of(&committed);
    assert!(versions.len() > 5, "{versions:?}");
    let rendered = markdown(&Page {
        numbers: &numbers,
        machine,
        date,
        versions: &versions,
    })
    .expect("render");
    if rendered != committed {
        let (line, (ours, theirs)) = rendered
            .lines()
            .zip(committed.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .unwrap_or((0, ("(lengths differ)", "")));
        panic!(
            "BENCHMARKS.md is not what xtask/src/bench renders from bench/runs/{run}/results.json \
             (regenerate it, or edit BENCHMARKS.md.in, rows.rs and goals.rs to match); line {}:\n\
             rendered:  {ours}\ncommitted: {theirs}",
            line + 1
        );
    }
}

#[test]
fn fixed_numbers_give_their_rows_goals_and_words() {
    let numbers: Numbers = [
        ("library_return_1_p50_ms", 1.0),
        ("node_fresh_module_return_1_p50_ms", 4.0),
        ("throughput_return_1_8_concurrent_runs_per_s", 2500.0),
        ("sandbox_alone_return_1_p50_ms", 0.25),
        ("cli_return_1_p50_ms", 3.0),
        ("python3_process_print_1_p50_ms", 12.0),
        ("cpu_sum_1e7_fuel_on_ms", 150.0),
        ("cpu_sum_1e7_ms", 100.0),
        ("python_cpu_nbody_ms", 20.0),
        ("native314_cpu_nbody_ms", 10.0),
        ("soak_runs", 10000.0),
        ("soak_rss_growth_percent", 1.26),
        ("quickjs_component_bytes", 1391198.0),
        ("mcp_server_rss_after_10_calls_mib", 42.34),
        ("pyodide_rss_mib", 169.4),
        ("doors_calm_p99_ms", 40.0),
        ("doors_flooded_p99_ms", 100.0),
        ("doors_flooded_errors", 0.0),
        ("doors_server_peak_rss_mib", 181.3),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect();
    let versions = [("rustc".to_string(), "rustc 1.95.0".to_string())];
    let page = markdown(&Page {
        numbers: &numbers,
        machine: "box",
        date: "2027-01-02",
        versions: &versions,
    })
    .expect("render");
    for expected in [
        "# Benchmarks\n\nMeasured by `cargo xtask bench` in one run on box, 2027-01-02. Raw \
         numbers: `bench/runs/2027-01-02-box/results.json`.",
        "## Goals (per-run cost, issue 12; the HTTP door under load, issue 42)\n\n| measure | measured | goal | met |\n|---|---|---|---|\n",
        "| sandbox alone, JS `return 1` (fresh instance, run, teardown) | 0.250 ms | at most 0.1 ms | no |\n",
        "| journaled JS runs at 8 concurrent (runs/s) | 2500/s | at least 2000/s | yes |\n",
        "| `forge-host run` process, JS, over a `python3 -I -c 'print(1)'` process | 0.25x (3.000 / 12.000) | at most 0.5x | yes |\n",
        "| fuel metering on over off: JS sum 1..1e7 | 1.50x (150.000 / 100.000) | reported |  |\n",
        "| journaled library run, Python `forge.result(1)` | n/a | | |\n",
        "| warm `return 1`, library API | 1.000 ms | QuickJS-wasm in Node, fresh module per run | 4.000 ms | 0.25x |\n",
        "| warm `return 1`, library API | 1.000 ms | native QuickJS, no sandbox | n/a | n/a |\n",
        "| nbody, 2,000 steps | 20.000 ms | 10.000 ms | 2.00x |\n",
        "| `forge-host mcp` resident memory after 10 calls | 42.3 MiB | | | |\n",
        "| soak: journaled runs in one process | 10000 |\n",
        "| 64 MCP clients over HTTP, `run_javascript` p99 under a 20,000-socket slowloris flood, over the same alone | 2.50x (100.000 / 40.000) | at most 2x | no |\n",
        "| the same under the flood: calls that failed | 0 | at most 0 | yes |\n",
        "| under 20,000 half-open sockets: errors | 0 |\n",
        "| alone: runs per second | n/a |\n",
        "| the server's peak resident memory over both | 181.3 MiB |\n",
        "| soak: RSS growth after the warm-up | 1.3 % |\n",
        "| soak: RSS after every run | n/a |\n",
        "| QuickJS component size | 1391198 bytes |\n",
        "| CPython component size | n/a |\n",
        "| Pyodide: process RSS after loading | 169 MiB |\n",
        "\n\nAll on one 2-core machine: the workers, the NATS server and the submitter share the cores",
        "\n\nNotes: the Node.js shared-module peer and the warm Pyodide interpreter",
        "Timings are medians (p50).\n\nWhy each missed goal is missed, with the profile that \
         shows its floor: `bench/FLOORS.md`.\n\n## Versions\n\n| what | version |\n|---|---|\n\
         | rustc | rustc 1.95.0 |\n\n",
    ] {
        assert!(page.contains(expected), "missing {expected:?} in:\n{page}");
    }
    assert!(page.ends_with("| rustc | rustc 1.95.0 |\n\n"));
    for absent in [
        "{{",
        "<!--",
        "resident memory after 1,000 calls",
        "memory peak of the 1M-row",
    ] {
        assert!(!page.contains(absent), "{absent:?} in:\n{page}");
    }
    let headings: Vec<&str> = page.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.len(), 12, "{headings:#?}");
}

#[test]
fn results_json_reads_back_as_the_same_numbers() {
    let numbers: Numbers = [("a_ms", 0.125), ("b_per_s", 4210.0), ("c_bytes", 1391198.0)]
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect();
    let text = results_json(&numbers);
    assert_eq!(
        text,
        "{\n  \"a_ms\": 0.125,\n  \"b_per_s\": 4210,\n  \"c_bytes\": 1391198\n}\n"
    );
    assert_eq!(json_numbers(&text), numbers);
}
