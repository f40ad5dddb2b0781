//! Exact replay (issue 15): a run's clocks, random bytes and tool answers are recorded, and
//! `forge-host replay ID` feeds them back to the same component, which must then do exactly the
//! same; a changed recording or component is found.

use forge_host::primitives::sha256_hex;
use serde_json::Value;

use crate::util::{Lang, NO_ARGS, Sandbox, args};

fn replay(sandbox: &Sandbox, id: &str) -> (i32, Value) {
    let run = sandbox.forge(&["replay", id, "--json"]);
    let report = serde_json::from_str(&run.stdout())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout(), run.stderr()));
    (run.code(), report)
}

fn id(report: &Value) -> String {
    report["id"].as_str().expect("id").to_string()
}

fn assert_identical(sandbox: &Sandbox, report: &Value) {
    let (code, replayed) = replay(sandbox, &id(report));
    assert_eq!(replayed["identical"], true, "{replayed:#}");
    assert_eq!(code, 0);
    assert_ne!(replayed["replay_id"], report["id"]);
}

const JS_NONDETERMINISM: &str = r#"
const r = Math.random();
const t = Date.now();
const p = performance.now();
// Calls finishing out of the order they began in.
const slept = await Promise.all([40, 1, 20].map((ms) => tools.call("sleep", { ms })));
const order = [];
await Promise.all([30, 5].map((ms) => tools.call("sleep", { ms }).then((s) => order.push(s.slept))));
console.log("drew", r);
text({ t });
return { r, t, p, slept, order };
"#;

#[test]
fn a_javascript_run_with_clocks_randomness_and_concurrent_calls_replays_identically() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(JS_NONDETERMINISM, NO_ARGS);
    let report = run.assert_succeeded();
    assert_eq!(report["value"]["order"], serde_json::json!([5, 30]));
    assert_identical(&sandbox, &report);
    // The trace is the timeline of what the recording served.
    let traced = sandbox.forge(&["replay", &id(&report), "--trace"]);
    assert_eq!(traced.code(), 0, "{}", traced.stderr());
    let out = traced.stdout();
    assert!(
        out.contains("begin `sleep`") && out.contains("wall clock ->"),
        "{out}"
    );
    assert!(out.contains("identical:"), "{out}");
}

const PY_NONDETERMINISM: &str = r#"
import os, random, time
import forge
r = random.random()
t = time.time()
m = time.monotonic()
u = os.urandom(16).hex()
slept = forge.gather([("sleep", {"ms": 40}), ("sleep", {"ms": 1}), ("sleep", {"ms": 20})])
print("drew", r, u)
forge.result({"r": r, "t": t, "m": m, "u": u, "slept": slept})
"#;

#[test]
fn a_python_run_with_clocks_randomness_and_concurrent_calls_replays_identically() {
    let sandbox = Sandbox::new();
    let report = sandbox
        .run_py(PY_NONDETERMINISM, NO_ARGS)
        .assert_succeeded();
    assert_identical(&sandbox, &report);
}

#[test]
fn a_pandas_group_by_replays_identically() {
    let sandbox = Sandbox::new();
    let script = "import pandas as pd\nimport forge\n\
        df = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.5, 2.0, 3.25]})\n\
        forge.result(df.groupby('k')['v'].sum().to_dict())";
    let report = sandbox.run_py(script, NO_ARGS).assert_succeeded();
    assert_eq!(report["engine"], "python-science");
    assert_identical(&sandbox, &report);
}

#[test]
fn an_altered_response_is_found_and_named() {
    let sandbox = Sandbox::new();
    let report = sandbox
        .run_js(
            "const a = await tools.call('echo', {n: 1}); return a.n;",
            NO_ARGS,
        )
        .assert_succeeded();
    let blobs = sandbox.data_dir().join("blobs");
    let blob = std::fs::read_dir(&blobs)
        .expect("blobs")
        .next()
        .expect("one blob")
        .expect("entry")
        .path();
    std::fs::write(&blob, r#"{"n":2}"#).expect("alter the recorded response");
    let (code, replayed) = replay(&sandbox, &id(&report));
    assert_eq!(code, 1, "{replayed:#}");
    assert_eq!(replayed["identical"], false);
    let why = replayed["divergence"].as_str().unwrap_or_default();
    assert!(
        why.contains("call 1") && why.contains("was altered"),
        "{why}"
    );
}

#[test]
fn a_changed_engine_component_is_a_divergence() {
    let sandbox = Sandbox::new();
    // The engine, in a directory of its own that is searched first.
    let engines = sandbox.data_dir().with_file_name("engines");
    std::fs::create_dir_all(&engines).expect("mkdir");
    let original = std::fs::read(crate::util::engine_path("javascript-quickjs")).expect("engine");
    let pin = |bytes: &[u8]| {
        std::fs::write(engines.join("javascript-quickjs.wasm"), bytes).expect("write");
        let lock = serde_json::json!({"engines": [{
            "file": "javascript-quickjs.wasm",
            "sha256": sha256_hex(bytes),
            "id": "javascript-quickjs",
            "extensions": [".js"],
        }]});
        std::fs::write(engines.join("engines.lock"), lock.to_string()).expect("lock");
    };
    pin(&original);
    let script = sandbox.script("one.js", "return Math.random();");
    let run = sandbox
        .command(&args!["run", &script, "--json"])
        .env("FORGE_HOST_ENGINES_DIR", &engines)
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&run.stdout).expect("report");
    assert_eq!(report["status"], "succeeded", "{report:#}");
    // The same component with one more custom section: valid, and not the same bytes.
    let mut changed = original.clone();
    changed.extend_from_slice(&[0, 5, 4, b'n', b'o', b't', b'e']);
    pin(&changed);
    let replayed = sandbox
        .command(&["replay", report["id"].as_str().expect("id"), "--json"])
        .env("FORGE_HOST_ENGINES_DIR", &engines)
        .output()
        .expect("replay");
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "a divergence: {replayed:?}"
    );
    let replayed: Value = serde_json::from_slice(&replayed.stdout).expect("report");
    assert_eq!(replayed["identical"], false);
    let why = replayed["divergence"].as_str().unwrap_or_default();
    assert!(why.contains("engine component changed"), "{why}");
}

#[test]
fn a_fuel_stop_replays_at_the_same_point() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "let i = 0; for (;;) { i++; if (i % 100000 === 0) console.log(i); }",
        &["--fuel", "200000000"],
    );
    assert_eq!(run.error_code(), "FUEL_EXHAUSTED");
    assert_identical(&sandbox, &run.report());
}

#[test]
fn a_deadline_stop_is_reported_as_no_replayable_point() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js("for (;;) {}", &["--timeout", "500ms"]);
    assert_eq!(run.error_code(), "TIMEOUT");
    let (_, replayed) = replay(&sandbox, &id(&run.report()));
    let notes = replayed["notes"].to_string();
    assert!(notes.contains("not a replayable point"), "{replayed:#}");
}

#[test]
fn unrecorded_and_over_budget_runs_say_why_they_cannot_be_replayed() {
    let sandbox = Sandbox::new();
    let off = sandbox
        .run_js("return 1", &["--record", "off"])
        .assert_succeeded();
    let refused = sandbox.forge(&["replay", &id(&off)]);
    assert_eq!(refused.code(), 2);
    assert!(
        refused.stderr().contains("was not recorded"),
        "{}",
        refused.stderr()
    );

    let big = sandbox.run_script(
        Lang::Js,
        "return (await tools.call('echo', {s: 'x'.repeat(100)})).s.length;",
        &["--max-record", "64"],
    );
    let report = big.assert_succeeded();
    assert_eq!(report["value"], 100, "the run goes on");
    let why = report["not_replayable"].as_str().unwrap_or_default();
    assert!(why.contains("--max-record 64"), "{report:#}");
    let refused = sandbox.forge(&["replay", &id(&report)]);
    assert_eq!(refused.code(), 2);
    assert!(
        refused.stderr().contains("cannot be replayed"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn a_replay_runs_no_tool_commits_no_state_and_publishes_nothing() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.workspace();
    let script = "const n = (state.get('n') ?? 0) + 1; state.set('n', n);\n\
        await tools.workspace.write({path: 'log.txt', content: 'run ' + n});\nreturn n;";
    let report = sandbox
        .run_js(
            script,
            &args!["--workspace", &workspace, "--allow-write", "--session", "s"],
        )
        .assert_succeeded();
    assert_eq!(report["value"], 1);
    std::fs::remove_file(workspace.join("log.txt")).expect("written once");
    let (code, replayed) = replay(&sandbox, &id(&report));
    assert_eq!(code, 0, "{replayed:#}");
    assert!(
        !workspace.join("log.txt").exists(),
        "the write tool did not run again"
    );
    let state = sandbox.forge(&["state", "get", "n", "--session", "s"]);
    assert_eq!(state.stdout().trim(), "1", "the replay committed nothing");
}

#[test]
fn prune_removes_old_records_and_their_responses() {
    let sandbox = Sandbox::new();
    let report = sandbox
        .run_js("return (await tools.call('echo', {a: 1})).a", NO_ARGS)
        .assert_succeeded();
    let blobs = sandbox.data_dir().join("blobs");
    let mode = |path: &std::path::Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
    };
    assert_eq!(mode(&blobs), 0o700, "the blob store is the owner's only");
    for entry in std::fs::read_dir(&blobs).expect("blobs") {
        assert_eq!(mode(&entry.expect("entry").path()), 0o600);
    }
    let kept = sandbox.forge(&["journal", "prune", "--older-than", "1d", "--json"]);
    assert_eq!(kept.code(), 0, "{}", kept.stderr());
    assert!(kept.stdout().contains("\"kept\":1"), "{}", kept.stdout());
    let pruned = sandbox.forge(&["journal", "prune", "--older-than", "0s", "--json"]);
    assert_eq!(pruned.code(), 0, "{}", pruned.stderr());
    let pruned: Value = serde_json::from_str(&pruned.stdout()).expect("json");
    assert_eq!(pruned["tapes"], 1, "{pruned:#}");
    assert_eq!(pruned["blobs"], 1, "{pruned:#}");
    assert_eq!(std::fs::read_dir(&blobs).expect("blobs").count(), 0);
    let refused = sandbox.forge(&["replay", &id(&report)]);
    assert_eq!(refused.code(), 2);
    let shown = sandbox.forge(&["journal", "show", &id(&report)]);
    assert_eq!(shown.code(), 0, "the execution itself stays in the journal");
}
