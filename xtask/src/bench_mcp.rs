//! The MCP part of `cargo xtask bench` (issue 10 §6): `forge-host mcp` driven by the official
//! Python MCP SDK (`bench/mcp/bench_mcp.py`), against the same client calling npm
//! server-everything directly, in the same run.

use std::path::Path;
use std::process::Command;

use crate::Result;

/// (measure, our key, peer, peer key) for the MCP table.
pub const MCP_ROWS: [(&str, &str, &str, &str); 5] = [
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

/// Runs `bench/mcp/bench_mcp.py` with the test peers (installed when missing).
pub fn mcp_output(root: &Path, scratch: &Path) -> Result<String> {
    crate::setup::test_peers()?;
    let python = crate::setup::test_peers_venv().join("bin/python");
    let everything = root.join("tests/peers/node_modules/.bin/mcp-server-everything");
    crate::bench::capture(
        Command::new(python)
            .arg(root.join("bench/mcp/bench_mcp.py"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("mcp-data"))
            .arg(everything),
    )
}
