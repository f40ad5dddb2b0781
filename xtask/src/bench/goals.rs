//! The goals of issue 12 (per-run cost) and issue 42 (the HTTP door under load), as data: each measure, by its
//! key, and the goal it is held to. `render.rs` sets each next to the number of the same run.

/// How a goal compares: a time or size at most the goal, a rate at least the goal, or a ratio of
/// two measures at most the goal.
pub enum Goal {
    /// At most this many milliseconds.
    AtMostMs(f64),
    /// At most this many MiB.
    AtMostMib(f64),
    /// At most this many (a count).
    AtMostCount(f64),
    /// At least this many per second.
    AtLeastPerS(f64),
    /// The measure over the peer key, at most this ratio.
    RatioAtMost(&'static str, f64),
    /// No goal: the ratio of the measure over the peer key, reported.
    Ratio(&'static str),
}

/// (measure, key, goal).
pub const GOALS: [(&str, &str, Goal); 25] = [
    (
        "sandbox alone, JS `return 1` (fresh instance, run, teardown)",
        "sandbox_alone_return_1_p50_ms",
        Goal::AtMostMs(0.1),
    ),
    (
        "sandbox alone, Python `forge.result(1)`",
        "python_sandbox_alone_result_1_p50_ms",
        Goal::AtMostMs(1.0),
    ),
    (
        "sandbox alone, python-science `import pandas; forge.result(1)`",
        "science_sandbox_alone_result_1_p50_ms",
        Goal::AtMostMs(2.0),
    ),
    (
        "journaled library run, JS `return 1`",
        "library_return_1_p50_ms",
        Goal::AtMostMs(0.5),
    ),
    (
        "journaled library run, Python `forge.result(1)`",
        "python_library_result_1_p50_ms",
        Goal::AtMostMs(1.5),
    ),
    (
        "journaled JS runs at 8 concurrent (runs/s)",
        "throughput_return_1_8_concurrent_runs_per_s",
        Goal::AtLeastPerS(2000.0),
    ),
    (
        "`forge-host run` process, JS, over a `python3 -I -c 'print(1)'` process",
        "cli_return_1_p50_ms",
        Goal::RatioAtMost("python3_process_print_1_p50_ms", 0.5),
    ),
    (
        "`forge-host run` process, Python, over the same",
        "python_cli_result_1_p50_ms",
        Goal::RatioAtMost("python3_process_print_1_p50_ms", 1.0),
    ),
    (
        "`forge-host run` process, `import pandas`, over the same",
        "science_cli_result_1_p50_ms",
        Goal::RatioAtMost("python3_process_print_1_p50_ms", 1.5),
    ),
    (
        "`forge-host run` process, `import networkx` (locked, bytecode), over native CPython 3.14 importing the same files with their `.pyc`",
        "cli_import_networkx_p50_ms",
        Goal::RatioAtMost("native_import_networkx_process_p50_ms", 2.0),
    ),
    (
        "what `import tabulate` (locked, bytecode) adds to a `forge-host run` process",
        "tabulate_import_added_ms",
        Goal::AtMostMs(20.0),
    ),
    (
        "`forge-host run` process, plotly express line chart + `write_html` (python-science), over native CPython with the same plotly and pandas",
        "science_plotly_write_html_p50_ms",
        Goal::RatioAtMost("native_plotly_write_html_p50_ms", 1.0),
    ),
    (
        "warm `forge-host mcp`, `run_javascript`, over an `echo` to server-everything",
        "mcp_run_javascript_p50_ms",
        Goal::RatioAtMost("mcp_everything_echo_p50_ms", 2.0),
    ),
    (
        "warm `forge-host mcp`, `run_python`, over the same",
        "mcp_run_python_p50_ms",
        Goal::RatioAtMost("mcp_everything_echo_p50_ms", 4.0),
    ),
    (
        "memory added per sleeping JS run, 100 at once",
        "memory_per_sleeping_run_100_mib",
        Goal::AtMostMib(1.0),
    ),
    (
        "memory added per sleeping Python run, 100 at once",
        "python_memory_per_sleeping_run_100_mib",
        Goal::AtMostMib(8.0),
    ),
    (
        "CPU: JS sum 1..1e7, over native QuickJS",
        "cpu_sum_1e7_ms",
        Goal::RatioAtMost("native_cpu_sum_1e7_ms", 2.0),
    ),
    (
        "CPU: Python `sum(range(10**6))` run, over native CPython 3.11's loop",
        "python_sum_range_1e6_run_ms",
        Goal::Ratio("native_python_sum_range_1e6_ms"),
    ),
    (
        "fuel metering on over off: JS sum 1..1e7",
        "cpu_sum_1e7_fuel_on_ms",
        Goal::Ratio("cpu_sum_1e7_ms"),
    ),
    (
        "fuel metering on over off: Python `sum(range(10**6))` run",
        "python_sum_range_1e6_fuel_on_run_ms",
        Goal::Ratio("python_sum_range_1e6_run_ms"),
    ),
    (
        "epoch interruption on (ticked every 5 ms) over off: JS sum 1..1e7, bare engine",
        "epoch_on_speed_cpu_sum_1e7_ms",
        Goal::Ratio("epoch_off_speed_cpu_sum_1e7_ms"),
    ),
    (
        "Cranelift opt level `none` over `speed` (the host's): JS sum 1..1e7, bare engine",
        "epoch_on_opt_none_cpu_sum_1e7_ms",
        Goal::Ratio("epoch_on_speed_cpu_sum_1e7_ms"),
    ),
    (
        "64 MCP clients over HTTP, `run_javascript` p99 under a 20,000-socket slowloris flood, over the same alone",
        "doors_flooded_p99_ms",
        Goal::RatioAtMost("doors_calm_p99_ms", 2.0),
    ),
    (
        "64 MCP clients over HTTP for 10 s alone: calls that failed",
        "doors_calm_errors",
        Goal::AtMostCount(0.0),
    ),
    (
        "the same under the flood: calls that failed",
        "doors_flooded_errors",
        Goal::AtMostCount(0.0),
    ),
];
