//! Approval (issue 15): a call that needs a person's approval, with nobody to ask, pauses the
//! run; `resume ID --approve|--deny` continues it in a new execution that replays the recorded
//! prefix (nothing before the pause runs twice, the same random numbers) and then goes on live.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{Sandbox, args};

/// Draws a random number, calls a tool before the pause, writes through a `write` tool (which
/// pauses), and returns the number.
const DRAW_THEN_WRITE: &str = "const n = Math.random();\n\
    const seen = await tools.call('echo', {n});\n\
    await tools.workspace.write({path: 'out.txt', content: 'n=' + n});\n\
    state.set('n', n);\n\
    return {n, seen: seen.n};";

fn pause(sandbox: &Sandbox, ws: &PathBuf, source: &str, ask: &str) -> Value {
    let run = sandbox.run_js(source, &args!["--workspace", ws, ask, "--session", "s"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    let report = run.report();
    assert_eq!(report["status"], "paused", "{report:#}");
    assert_eq!(report["error"]["code"], "APPROVAL_REQUIRED");
    assert!(report["id"].is_string());
    report
}

fn resume(sandbox: &Sandbox, id: &str, answer: &str) -> (i32, Value) {
    let run = sandbox.forge(&["resume", id, answer, "--json"]);
    let report = serde_json::from_str(&run.stdout())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout(), run.stderr()));
    (run.code(), report)
}

#[test]
fn a_paused_run_resumed_with_approval_writes_once_with_the_same_random_number() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let paused = pause(&sandbox, &ws, DRAW_THEN_WRITE, "--ask");
    let pending = &paused["pending"];
    assert_eq!(pending["tool"], "workspace.write");
    assert_eq!(pending["effect"], "write");
    let content = pending["input"]["content"]
        .as_str()
        .expect("the input is shown");
    assert!(
        !ws.join("out.txt").exists(),
        "nothing written before approval"
    );
    let state = sandbox.forge(&["state", "get", "n", "--session", "s"]);
    assert_ne!(state.code(), 0, "nothing committed by the paused run");

    let (code, resumed) = resume(&sandbox, paused["id"].as_str().expect("id"), "--approve");
    assert_eq!(code, 0, "{resumed:#}");
    let n = resumed["value"]["n"].as_f64().expect("n");
    assert_eq!(
        content,
        format!("n={n}"),
        "the same random number as the paused run drew"
    );
    assert_eq!(resumed["value"]["seen"], resumed["value"]["n"]);
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).expect("written"),
        format!("n={n}")
    );
    let state = sandbox.forge(&["state", "get", "n", "--session", "s"]);
    assert_eq!(state.stdout().trim(), n.to_string());
    // The echo before the pause was served from the recording, not run again.
    let shown = sandbox.forge(&[
        "journal",
        "show",
        resumed["id"].as_str().expect("id"),
        "--json",
    ]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    assert_eq!(shown["resumes"], paused["id"]);
    assert_eq!(shown["calls"][0]["decision"], "replayed from the recording");
    assert_eq!(shown["calls"].as_array().map(Vec::len), Some(2));

    let (again, _) = resume(&sandbox, paused["id"].as_str().expect("id"), "--approve");
    assert_eq!(again, 2, "a run is resumed once");
    let twice = sandbox.forge(&["resume", paused["id"].as_str().expect("id"), "--approve"]);
    assert!(
        twice.stderr().contains("already resumed"),
        "{}",
        twice.stderr()
    );
    let not_paused = sandbox.forge(&["resume", resumed["id"].as_str().expect("id"), "--deny"]);
    assert_eq!(not_paused.code(), 2);
    assert!(
        not_paused.stderr().contains("not paused"),
        "{}",
        not_paused.stderr()
    );
}

#[test]
fn a_denied_call_fails_with_tool_denied_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let paused = pause(&sandbox, &ws, DRAW_THEN_WRITE, "--ask=pause");
    let (code, resumed) = resume(&sandbox, paused["id"].as_str().expect("id"), "--deny");
    assert_eq!(code, 1, "{resumed:#}");
    assert_eq!(resumed["error"]["code"], "TOOL_DENIED");
    assert!(!ws.join("out.txt").exists());
}

#[test]
fn a_run_can_pause_and_resume_several_times() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let script = "for (const name of ['a.txt', 'b.txt']) await tools.workspace.write({path: name, content: name});\n\
        return 'both';";
    let first = pause(&sandbox, &ws, script, "--ask");
    let (_, second) = resume(&sandbox, first["id"].as_str().expect("id"), "--approve");
    assert_eq!(second["status"], "paused", "{second:#}");
    assert_eq!(second["pending"]["input"]["path"], "b.txt");
    let (code, done) = resume(&sandbox, second["id"].as_str().expect("id"), "--approve");
    assert_eq!(code, 0, "{done:#}");
    assert_eq!(done["value"], "both");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).expect("a"),
        "a.txt"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("b.txt")).expect("b"),
        "b.txt"
    );
}

#[test]
fn state_changed_while_paused_is_a_conflict_not_an_overwrite() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let script = "const c = state.get('c') ?? 0;\n\
        await tools.workspace.write({path: 'c.txt', content: String(c)});\n\
        state.set('c', c + 1);\nreturn c + 1;";
    let paused = pause(&sandbox, &ws, script, "--ask");
    sandbox
        .run_js("state.set('c', 100); return 1;", &["--session", "s"])
        .assert_succeeded();
    let (code, resumed) = resume(&sandbox, paused["id"].as_str().expect("id"), "--approve");
    assert_eq!(code, 1, "{resumed:#}");
    assert_eq!(resumed["error"]["code"], "STATE_CONFLICT");
    let state = sandbox.forge(&["state", "get", "c", "--session", "s"]);
    assert_eq!(state.stdout().trim(), "100");
}

#[test]
fn a_resume_killed_mid_way_leaves_the_paused_run_resumable() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let script = sandbox.script(
        "publish.py",
        "import forge\n\
         forge.call('workspace.write', {'path': 'w.txt', 'content': 'w'})\n\
         with open('/output/result.txt', 'w') as f:\n    f.write('done')\n\
         forge.result('done')\n",
    );
    let paused = sandbox.forge(&args![
        "run",
        &script,
        "--json",
        "--workspace",
        &ws,
        "--ask"
    ]);
    let paused = paused.report();
    assert_eq!(paused["status"], "paused", "{paused:#}");
    let id = paused["id"].as_str().expect("id");
    let out = sandbox.data_dir().with_file_name("out");
    // The resume dies while it publishes, as under `kill -9`.
    let killed = sandbox
        .command(&args!["resume", id, "--approve", "--json", "--out", &out])
        .env("FORGE_HOST_FAULT", "during-publication")
        .output()
        .expect("resume");
    assert!(
        killed.status.code().is_none(),
        "it was meant to die: {killed:?}"
    );
    let (code, resumed) = {
        let run = sandbox.forge(&args!["resume", id, "--approve", "--json", "--out", &out]);
        (run.code(), run.report())
    };
    assert_eq!(code, 0, "{resumed:#}");
    assert_eq!(resumed["value"], "done");
    assert_eq!(
        std::fs::read_to_string(out.join("result.txt")).expect("published"),
        "done"
    );
    // The killed resume was reconciled as any interrupted run.
    let listed = sandbox.forge(&["journal", "list", "--json"]);
    let runs: Value = serde_json::from_str(&listed.stdout()).expect("json");
    let interrupted = runs
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["reason"] == "interrupted")
        .count();
    assert_eq!(interrupted, 1, "{runs:#}");
}

#[test]
fn a_paused_run_replays_identically_to_its_pause_and_its_replay_is_not_resumable() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    // A call is still in flight when the run pauses: the pause waits for it and records its
    // answer, which the replay and the resume are both handed.
    let script = "const n = Math.random();\n\
        const slow = tools.sleep({ms: 30});\n\
        await tools.workspace.write({path: 'out.txt', content: 'n=' + n});\n\
        await slow;\n\
        return n;";
    let paused = pause(&sandbox, &ws, script, "--ask");
    let id = paused["id"].as_str().expect("id");
    let replay = sandbox.forge(&["replay", id, "--json", "--trace"]);
    assert_eq!(replay.code(), 0, "{}\n{}", replay.stdout(), replay.stderr());
    let replayed: Value = serde_json::from_str(&replay.stdout()).expect("json");
    assert_eq!(replayed["identical"], true, "{replayed:#}");
    assert_eq!(replayed["replayed_status"], "paused");
    let trace = replayed["trace"].to_string();
    assert!(trace.contains("paused for approval"), "{trace}");

    let replay_id = replayed["replay_id"].as_str().expect("replay id");
    let refused = sandbox.forge(&["resume", replay_id, "--approve"]);
    assert_eq!(refused.code(), 2);
    assert!(
        refused.stderr().contains("is a replay of"),
        "{}",
        refused.stderr()
    );

    let (code, resumed) = resume(&sandbox, id, "--approve");
    assert_eq!(code, 0, "{resumed:#}");
    let content = paused["pending"]["input"]["content"]
        .as_str()
        .expect("content");
    assert_eq!(content, format!("n={}", resumed["value"]));
    let shown = sandbox.forge(&[
        "journal",
        "show",
        resumed["id"].as_str().expect("id"),
        "--json",
    ]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    assert_eq!(
        shown["calls"][0]["decision"], "replayed from the recording",
        "the sleep in flight at the pause did not run again: {shown:#}"
    );
}

#[test]
fn journal_list_filters_by_every_status_paused_included() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let paused = pause(&sandbox, &ws, DRAW_THEN_WRITE, "--ask");
    let listed = |status: &str| {
        let run = sandbox.forge(&["journal", "list", "--status", status, "--json"]);
        assert_eq!(run.code(), 0, "{}", run.stderr());
        let records: Value = serde_json::from_str(&run.stdout()).expect("json");
        records.as_array().cloned().unwrap_or_default()
    };
    let found = listed("paused");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["id"], paused["id"]);
    assert!(listed("succeeded").is_empty());
    let refused = sandbox.forge(&["journal", "list", "--status", "asleep"]);
    assert_eq!(refused.code(), 2);
    for state in ["validating", "running", "timed_out", "paused"] {
        assert!(refused.stderr().contains(state), "{}", refused.stderr());
    }
    let help = sandbox.forge(&["journal", "list", "--help"]);
    assert!(help.stdout().contains("paused"), "{}", help.stdout());
}
