//! Memory pressure at the HTTP door (issue 42 §3): a crowd of calls whose scripts each fill
//! their memory cap, against a server whose `--max-memory` admits fewer of them than
//! `--max-runs` would. The runs that fit run at once and end `MEMORY_LIMIT` at their caps, the
//! next wait in the queue and then run, the rest are refused `BUDGET_EXCEEDED`; the server's
//! peak RSS stays within `--max-memory` of what it held idle, and it serves on.

use serde_json::Value;

use crate::mcp_server::{HttpServer, drive};
use crate::util::{Sandbox, status_kib};

const MIB: u64 = 1 << 20;

/// Each run's cap, and what the server gives all runs at once: room for two runs at their
/// limits (about 190 MiB each with this cap), not the four `--max-runs` allows.
const MEMORY: &str = "128MiB";
const MAX_MEMORY_MIB: u64 = 400;

/// Holds 96 MiB it has written to (resident, not merely reserved) while the other runs fill
/// theirs, then writes on until its cap stops it.
const FILL_TO_THE_CAP: &str = "const held = []; \
for (let i = 0; i < 12; i++) held.push(new Uint8Array(8 << 20).fill(1)); \
await tools.sleep({ms: 1500}); \
for (;;) held.push(new Uint8Array(1 << 20).fill(1));";

fn error_code(call: &Value) -> &str {
    call["result"]["structured"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn runs_at_their_memory_caps_keep_the_server_within_max_memory_and_the_rest_wait_or_are_refused() {
    let sandbox = Sandbox::new();
    let max_memory = format!("{MAX_MEMORY_MIB}MiB");
    let server = HttpServer::start(
        &sandbox,
        &[
            "--max-runs",
            "4",
            "--max-queued",
            "2",
            "--memory",
            MEMORY,
            "--max-memory",
            &max_memory,
        ],
    );
    let transport = server.transport();
    // One run first, so that the engine's code is loaded and counted as idle.
    let warm = drive(
        &sandbox,
        "pressure",
        &transport,
        &["-n", "1", "--code", "return 1"],
    );
    assert_eq!(warm["calls"][0]["result"]["is_error"], false, "{warm:#}");
    let idle_kib = status_kib(server.pid(), "VmRSS:");

    let crowd = drive(
        &sandbox,
        "pressure",
        &transport,
        &["-n", "8", "--code", FILL_TO_THE_CAP],
    );
    let calls = crowd["calls"].as_array().expect("calls");
    let codes: Vec<&str> = calls.iter().map(error_code).collect();
    let at_cap = codes.iter().filter(|c| **c == "MEMORY_LIMIT").count();
    let refused = codes.iter().filter(|c| **c == "BUDGET_EXCEEDED").count();
    // Two run, two wait and then run; four find the queue full.
    assert_eq!((at_cap, refused), (4, 4), "{codes:?}\n{crowd:#}");
    for call in calls.iter().filter(|c| error_code(c) == "BUDGET_EXCEEDED") {
        let message = call["result"]["structured"]["error"]["message"].to_string();
        assert!(message.contains("--max-memory"), "{message}");
    }
    // Every run that ran reached its cap: the pressure was real.
    for call in calls.iter().filter(|c| error_code(c) == "MEMORY_LIMIT") {
        let peak = call["result"]["structured"]["metrics"]["memory_peak_bytes"].as_u64();
        assert!(peak > Some(120 * MIB), "{call:#}");
    }
    let peak_kib = status_kib(server.pid(), "VmHWM:");
    let above_idle_mib = peak_kib.saturating_sub(idle_kib) / 1024;
    println!(
        "doors: 8 calls filling {MEMORY} each, --max-runs 4, --max-memory {max_memory}: \
{at_cap} ran at their caps, {refused} refused; the server's RSS idle {} MiB, peak {} MiB \
({above_idle_mib} MiB above idle)",
        idle_kib / 1024,
        peak_kib / 1024
    );
    assert!(
        above_idle_mib <= MAX_MEMORY_MIB,
        "peak {peak_kib} KiB, idle {idle_kib} KiB"
    );
    // Two at once, filled: more than one run's cap above idle.
    assert!(
        above_idle_mib > 200,
        "peak {peak_kib} KiB, idle {idle_kib} KiB"
    );

    // It serves on.
    let after = drive(
        &sandbox,
        "pressure",
        &transport,
        &["-n", "1", "--code", "return 2"],
    );
    assert_eq!(after["calls"][0]["result"]["is_error"], false, "{after:#}");
}

#[test]
fn a_worker_takes_only_as_many_runs_at_once_as_fit_and_neither_starts_when_one_cannot() {
    let sandbox = Sandbox::new();
    // Said before it connects (to nothing, here).
    let worker = sandbox.forge(&[
        "worker",
        "--nats",
        "nats://127.0.0.1:1",
        "--max-runs",
        "8",
        "--memory",
        "1GiB",
        "--max-memory",
        "3GiB",
    ]);
    assert!(
        worker
            .stderr()
            .contains("2 runs at once, not 8 (--max-runs)"),
        "{}",
        worker.stderr()
    );

    for door in [
        ["mcp", "--http", "127.0.0.1:0"],
        ["worker", "--nats", "nats://127.0.0.1:1"],
    ] {
        let mut args = door.to_vec();
        args.extend(["--memory", "256MiB", "--max-memory", "200MiB"]);
        let refused = sandbox.forge(&args);
        assert_eq!(refused.code(), 2, "{door:?}: {}", refused.stderr());
        let said = refused.stderr();
        assert!(
            said.contains("INVALID_INPUT")
                && said.contains("--max-memory 200 MiB is less than one run"),
            "{door:?}: {said}"
        );
    }
}
