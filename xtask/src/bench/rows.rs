//! The rows of BENCHMARKS.md's tables, as data: which measures make a row, by their keys in
//! `results.json`, and their labels. The words around the tables are in `BENCHMARKS.md.in`;
//! how a row is formatted is `render.rs`.

/// A row comparing forge-host with a peer: (measure, our key, peer, peer key).
pub type PeerRow = (&'static str, &'static str, &'static str, &'static str);

/// A row of one value: (label, key, how it is shown).
pub type ValueRow = (&'static str, &'static str, Shown);

/// How a single value is shown.
#[derive(Clone, Copy)]
pub enum Shown {
    /// Milliseconds with three decimals, or runs per second for a `..._per_s` key.
    Time,
    /// A whole number and a unit (none for a count).
    Whole(&'static str),
    /// One decimal and a unit.
    Tenths(&'static str),
}

/// (measure, our key, peer, peer key) for the JavaScript table.
pub const JS_ROWS: [PeerRow; 7] = [
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
pub const PY_ROWS: [PeerRow; 6] = [
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
pub const SCIENCE_ROWS: [PeerRow; 6] = [
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

/// (measure, our key, peer, peer key): recording for replay against the same run unrecorded.
pub const RECORD_ROWS: [PeerRow; 3] = [
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
pub const CLUSTER_ROWS: [PeerRow; 4] = [
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

/// (measure, our key, peer, peer key) for the MCP table.
pub const MCP_ROWS: [PeerRow; 5] = [
    (
        "`run_javascript` `return 1`, warm `forge-host mcp` (stdio), p50 per call",
        "mcp_run_javascript_p50_ms",
        "no-op `echo` call to npm server-everything (stdio), p50",
        "mcp_everything_echo_p50_ms",
    ),
    (
        "`run_javascript` `return 1`, warm `forge-host mcp` (stdio), p50 per call",
        "mcp_run_javascript_p50_ms",
        "the same run through the library API",
        "library_return_1_p50_ms",
    ),
    (
        "`run_python` `forge.result(1)`, warm `forge-host mcp` (stdio), p50 per call",
        "mcp_run_python_p50_ms",
        "no-op `echo` call to npm server-everything (stdio), p50",
        "mcp_everything_echo_p50_ms",
    ),
    (
        "`run_python` `forge.result(1)`, warm `forge-host mcp` (stdio), p50 per call",
        "mcp_run_python_p50_ms",
        "the same run through the library API",
        "python_library_result_1_p50_ms",
    ),
    (
        "100 sequential `echo` calls to server-everything from one script (whole `run_javascript` call)",
        "mcp_script_echo_100_ms",
        "the same 100 calls made directly by the Python MCP client",
        "mcp_direct_echo_100_ms",
    ),
];

/// The kernels of `suite.py`, as (key, what).
pub const KERNELS: [(&str, &str); 4] = [
    ("loop", "a loop over small ints (300k iterations)"),
    ("json", "`json` dumps + loads of 2,000 rows, 5 times"),
    ("regex", "`re` over 3,000 matches"),
    ("nbody", "nbody, 2,000 steps"),
];

/// The floods and the soak.
pub const SOAK_ROWS: [ValueRow; 16] = [
    (
        "1 GiB through stdout: peak RSS of the `forge-host run` process",
        "flood_stdout_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "1 GiB through stdout: wall time",
        "flood_stdout_seconds",
        Shown::Tenths("s"),
    ),
    (
        "1 GiB through stderr: peak RSS",
        "flood_stderr_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "1 GiB through stderr: wall time",
        "flood_stderr_seconds",
        Shown::Tenths("s"),
    ),
    (
        "1 GiB of `text()` values (refused past the budget): peak RSS",
        "flood_text_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "1 GiB of `text()` values: wall time",
        "flood_text_seconds",
        Shown::Tenths("s"),
    ),
    (
        "1 GiB of `progress()` messages: peak RSS",
        "flood_progress_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "1 GiB of `progress()` messages: wall time",
        "flood_progress_seconds",
        Shown::Tenths("s"),
    ),
    (
        "1 GiB of tool responses (1,024 `echo` calls of 1 MiB): peak RSS",
        "flood_tool_responses_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "1 GiB of tool responses: wall time",
        "flood_tool_responses_seconds",
        Shown::Tenths("s"),
    ),
    (
        "soak: journaled runs in one process",
        "soak_runs",
        Shown::Whole(""),
    ),
    (
        "soak: RSS after the warm-up (the first tenth)",
        "soak_rss_after_warmup_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "soak: RSS after every run",
        "soak_rss_after_all_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "soak: RSS growth after the warm-up",
        "soak_rss_growth_percent",
        Shown::Tenths("%"),
    ),
    (
        "soak: open descriptors after the warm-up",
        "soak_fds_after_warmup",
        Shown::Whole(""),
    ),
    (
        "soak: open descriptors after every run",
        "soak_fds_after_all",
        Shown::Whole(""),
    ),
];

/// Single values: the engines' sizes, their compile and load times, tool-call round trips.
pub const ENGINE_ROWS: [ValueRow; 14] = [
    (
        "QuickJS component size",
        "quickjs_component_bytes",
        Shown::Whole("bytes"),
    ),
    (
        "CPython component size",
        "python_component_bytes",
        Shown::Whole("bytes"),
    ),
    (
        "CPython + numpy + pandas component size",
        "science_component_bytes",
        Shown::Whole("bytes"),
    ),
    (
        "QuickJS: cold compile + describe (once per component and wasmtime config)",
        "component_cold_compile_ms",
        Shown::Time,
    ),
    (
        "QuickJS: load of the cached precompiled component",
        "component_cached_load_ms",
        Shown::Time,
    ),
    (
        "QuickJS: first `forge-host run` with an empty cache (process)",
        "cli_first_run_cold_cache_ms",
        Shown::Time,
    ),
    (
        "CPython: hash + cold compile + describe",
        "python_component_cold_compile_ms",
        Shown::Time,
    ),
    (
        "CPython: load of the cached precompiled component",
        "python_component_cached_load_ms",
        Shown::Time,
    ),
    (
        "JavaScript: 1000 sequential `echo` tool calls in one script",
        "echo_calls_1000_ms",
        Shown::Time,
    ),
    (
        "Python: 1000 sequential `echo` tool calls in one script",
        "python_echo_calls_1000_ms",
        Shown::Time,
    ),
    (
        "python-science: hash + cold compile + describe",
        "science_component_cold_compile_ms",
        Shown::Time,
    ),
    (
        "python-science: load of the cached precompiled component",
        "science_component_cached_load_ms",
        Shown::Time,
    ),
    (
        "python-science: first `forge-host run` with an empty cache (process)",
        "science_cli_first_run_cold_cache_ms",
        Shown::Time,
    ),
    (
        "Pyodide: cold load in Node",
        "pyodide_cold_load_ms",
        Shown::Time,
    ),
];

/// Rows of the engines' table shown only when measured.
pub const ENGINE_ROWS_IF_MEASURED: [ValueRow; 2] = [
    (
        "python-science: memory peak of the 1M-row group-by run",
        "science_groupby_memory_peak_mib",
        Shown::Whole("MiB"),
    ),
    (
        "Pyodide: process RSS after loading",
        "pyodide_rss_mib",
        Shown::Whole("MiB"),
    ),
];

/// The MCP server's memory, below the MCP table when measured.
pub const MCP_MEMORY_ROWS: [ValueRow; 2] = [
    (
        "`forge-host mcp` resident memory after 10 calls",
        "mcp_server_rss_after_10_calls_mib",
        Shown::Tenths("MiB"),
    ),
    (
        "`forge-host mcp` resident memory after 1,000 calls",
        "mcp_server_rss_after_1000_calls_mib",
        Shown::Tenths("MiB"),
    ),
];

/// The HTTP door under load (`measure_doors.rs`): 64 SDK clients, alone and under a flood.
pub const DOORS_ROWS: [ValueRow; 9] = [
    (
        "alone: runs per second",
        "doors_calm_runs_per_s",
        Shown::Time,
    ),
    ("alone: p50 per call", "doors_calm_p50_ms", Shown::Time),
    ("alone: p99 per call", "doors_calm_p99_ms", Shown::Time),
    ("alone: errors", "doors_calm_errors", Shown::Whole("")),
    (
        "under 20,000 half-open sockets: runs per second",
        "doors_flooded_runs_per_s",
        Shown::Time,
    ),
    (
        "under 20,000 half-open sockets: p50 per call",
        "doors_flooded_p50_ms",
        Shown::Time,
    ),
    (
        "under 20,000 half-open sockets: p99 per call",
        "doors_flooded_p99_ms",
        Shown::Time,
    ),
    (
        "under 20,000 half-open sockets: errors",
        "doors_flooded_errors",
        Shown::Whole(""),
    ),
    (
        "the server's peak resident memory over both",
        "doors_server_peak_rss_mib",
        Shown::Tenths("MiB"),
    ),
];
