//! The journal and the state store seen from outside: every run recorded once, `kill -9` at any
//! moment, concurrent processes on one data directory, reruns and logs.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::util::{NO_ARGS, Sandbox, args, repo};

fn journal_list(sandbox: &Sandbox) -> Vec<Value> {
    let run = sandbox.forge(&["journal", "list", "--json", "--limit", "100000"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    serde_json::from_str::<Vec<Value>>(&run.stdout()).expect("a JSON array")
}

#[test]
fn journal_show_has_each_call_with_its_effect_and_input_hash() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "await tools.call('echo', {a: 1}); try { await tools.call('fail', {}); } catch (e) {} return 1;",
        NO_ARGS,
    );
    let id = run.report()["id"].as_str().expect("id").to_string();
    let shown = sandbox.forge(&["journal", "show", &id, "--json"]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    let execution = &shown;
    assert_eq!(execution["status"], "succeeded");
    assert_eq!(execution["engine"], "javascript-quickjs");
    assert_eq!(execution["script_sha256"], run.report()["script_sha256"]);
    assert_eq!(execution["metrics"]["tool_calls"], 2);
    let calls = shown["calls"].as_array().expect("calls");
    let echo_input_sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(br#"{"a":1}"#))
    };
    assert_eq!(calls[0]["tool"], "echo");
    assert_eq!(calls[0]["execution_id"], id.as_str());
    assert_eq!(calls[0]["position"], 1);
    assert!(execution["owner_pid"].is_u64());
    assert_eq!(calls[0]["effect"], "internal");
    assert_eq!(calls[0]["input_sha256"], echo_input_sha.as_str());
    assert_eq!(calls[1]["status"], "failed");
    assert_eq!(calls[1]["error_code"], "TOOL_FAILED");
    let human = sandbox.forge(&["journal", "show", &id]).stdout();
    assert!(
        human.contains("call   1 echo [internal] input sha256") && human.contains(&echo_input_sha),
        "{human}"
    );
    assert!(
        !shown.to_string().contains("\"a\":1"),
        "inputs are never stored, only hashes"
    );
}

#[test]
fn eight_concurrent_runs_on_one_data_directory_are_all_recorded() {
    let sandbox = Sandbox::new();
    let script = sandbox.script(
        "c.js",
        "await tools.call('sleep', {ms: 100}); state.set(`k${Math.random()}`, 1); return 'ok';",
    );
    let children: Vec<_> = (0..8)
        .map(|i| {
            sandbox
                .command(&args![
                    "run",
                    &script,
                    "--json",
                    "--session",
                    &format!("s{i}")
                ])
                .spawn()
                .expect("spawn")
        })
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).expect("report");
        ids.push(report["id"].as_str().expect("id").to_string());
    }
    let records = journal_list(&sandbox);
    assert_eq!(records.len(), 8);
    for id in &ids {
        let record = records
            .iter()
            .find(|r| r["id"] == id.as_str())
            .expect("recorded");
        assert_eq!(record["status"], "succeeded");
    }
}

/// A tiny deterministic generator for the kill points.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn kill_9_at_random_points_loses_no_committed_record() {
    let sandbox = Sandbox::new();
    let script = sandbox.script(
        "work.js",
        "for (let i = 0; i < 5; i++) { await tools.call('sleep', {ms: 20}); state.set('i' + i, i); }\n\
         let s = 0; for (let i = 0; i < 200000; i++) s += i; return s;",
    );
    let mut random = Lcg(0x5eed);
    let mut finished: BTreeMap<String, String> = BTreeMap::new();
    let mut killed_after_start = Vec::new();
    // At least 50 runs, and more (up to 150) until some kills have landed in journaled runs:
    // on a loaded machine more of them land before the run starts.
    for attempt in 0..150 {
        if attempt >= 50 && killed_after_start.len() >= 3 {
            break;
        }
        let mut child = sandbox
            .command(&args!["run", &script, "--json", "--session", "crash"])
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_millis(random.below(250)));
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let mut stdout = String::new();
        let mut stderr = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut stdout)
            .expect("read");
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("read");
        let started = stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["started"]["id"].as_str().map(str::to_string));
        if status.code().is_some() {
            let report: Value =
                serde_json::from_str(&stdout).expect("a finished run printed its report");
            finished.insert(
                report["id"].as_str().expect("id").into(),
                report["status"].as_str().expect("status").into(),
            );
        } else if let Some(id) = started {
            killed_after_start.push(id);
        }
    }
    // Opening the journal reconciles every execution whose process is gone.
    let records = journal_list(&sandbox);
    let by_id: BTreeMap<String, &Value> = records
        .iter()
        .map(|r| (r["id"].as_str().expect("id").to_string(), r))
        .collect();
    assert_eq!(by_id.len(), records.len(), "each execution recorded once");
    for (id, status) in &finished {
        let record = by_id
            .get(id)
            .unwrap_or_else(|| panic!("finished run {id} is in the journal"));
        assert_eq!(record["status"], status.as_str(), "{id}");
    }
    for id in &killed_after_start {
        let record = by_id
            .get(id)
            .unwrap_or_else(|| panic!("journaled run {id} was lost"));
        let status = record["status"].as_str().unwrap_or_default();
        assert!(
            ["succeeded", "failed", "timed_out", "cancelled"].contains(&status),
            "{record}"
        );
    }
    for record in &records {
        assert!(
            record["ended_at"].is_string(),
            "nothing is left open: {record}"
        );
        if record["reason"] == "interrupted" {
            assert_eq!(record["status"], "failed");
            assert_eq!(record["error_code"], "ISOLATE_FAILURE");
        }
    }
    eprintln!(
        "kill -9: {} runs finished, {} killed after they were journaled, {} records",
        finished.len(),
        killed_after_start.len(),
        records.len()
    );
    assert!(
        !killed_after_start.is_empty(),
        "some kills landed while a journaled run ran"
    );
    assert!(
        finished.len() + killed_after_start.len() > 10,
        "the kills landed across the run"
    );
    assert!(
        records.iter().any(|r| r["reason"] == "interrupted"),
        "some kills interrupted a run"
    );
    // The database still works for new runs.
    assert_eq!(
        sandbox
            .run_js("return 'after';", &["--session", "crash"])
            .report()["value"],
        "after"
    );
}

#[test]
fn rerun_runs_the_same_script_and_refuses_changed_inputs() {
    let sandbox = Sandbox::new();
    let data = sandbox.script("numbers.csv", "n\n1\n2\n3\n");
    let script = sandbox.script(
        "sum.py",
        "import forge\nforge.result(sum(r['n'] for r in forge.read_table('numbers.csv')))\n",
    );
    let first = sandbox.forge(&args!["run", &script, "--input", &data, "--json"]);
    assert_eq!(first.report()["value"], 6);
    let id = first.report()["id"].as_str().expect("id").to_string();
    std::fs::write(
        &script,
        "raise SystemExit('the file on disk changed, the stored script did not')",
    )
    .expect("write");
    let again = sandbox.forge(&["rerun", &id, "--json"]);
    assert_eq!(again.report()["value"], 6, "{}", again.stderr());
    assert_ne!(again.report()["id"], first.report()["id"]);
    assert_eq!(
        again.report()["script_sha256"],
        first.report()["script_sha256"]
    );
    std::fs::write(&data, "n\n100\n").expect("write");
    let refused = sandbox.forge(&["rerun", &id, "--json"]);
    assert_eq!(refused.code(), 2, "{}", refused.stdout());
    assert_eq!(refused.report()["error"]["code"], "INVALID_INPUT");
    assert!(
        refused.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("numbers.csv")
    );
    let unknown = sandbox.forge(&["rerun", "no-such-id"]);
    assert_eq!(unknown.code(), 2);
}

#[test]
fn logs_show_what_a_run_printed_in_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "console.log('line one'); progress('half', 1, 2); text('note'); return 1;",
        NO_ARGS,
    );
    let id = run.report()["id"].as_str().expect("id").to_string();
    let logs = sandbox.forge(&["logs", &id]);
    assert_eq!(logs.code(), 0);
    assert_eq!(
        logs.stdout(),
        "line one\n[progress] half (1/2)\n[text] note\n"
    );
    let follow = sandbox.forge(&["logs", "-f", &id]);
    assert_eq!(
        follow.stdout(),
        logs.stdout(),
        "-f on a finished run prints it and returns"
    );
    let path = sandbox.data_dir().join("logs").join(format!("{id}.log"));
    let mode = std::fs::metadata(path).expect("log").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(sandbox.forge(&["logs", "nope"]).code(), 2);
}

/// A journal written by this version (schema 1) must open in every later one.
#[test]
fn a_journal_written_by_schema_1_still_opens() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.data_dir()).expect("mkdir");
    std::fs::copy(
        repo().join("tests/fixtures/journal-v1/forge.redb"),
        sandbox.data_dir().join("forge.redb"),
    )
    .expect("copy");
    let records = journal_list(&sandbox);
    assert!(records.len() >= 3, "{records:?}");
    let with_calls = records
        .iter()
        .find(|r| r["script"] == "fixture-calls.js")
        .expect("fixture run");
    let shown = sandbox.forge(&[
        "journal",
        "show",
        with_calls["id"].as_str().expect("id"),
        "--json",
    ]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    assert_eq!(shown["calls"].as_array().map(Vec::len), Some(2));
    let state = sandbox.forge(&["state", "get", "fixture", "--session", "fixture"]);
    assert_eq!(state.stdout().trim(), "\"v1\"");
    assert_eq!(
        sandbox
            .run_js("return state.get('fixture');", &["--session", "fixture"])
            .report()["value"],
        "v1"
    );
}

#[test]
fn ctrl_c_cancels_a_run_and_the_journal_says_cancelled() {
    use std::io::{BufRead, BufReader};
    let sandbox = Sandbox::new();
    let script = sandbox.script("spin.js", "while (true) {}");
    let mut child = sandbox
        .command(&args!["run", &script, "--json", "--timeout", "60s"])
        .spawn()
        .expect("spawn");
    // Wait until the run is journaled and its guest starts, then interrupt it as Ctrl-C would.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while stderr.read_line(&mut line).expect("read") > 0 && !line.contains("\"started\"") {
        line.clear();
    }
    assert!(line.contains("\"started\""), "the run announced its start");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["status"], "cancelled");
    assert_eq!(report["error"]["code"], "CANCELLED");
    let records = journal_list(&sandbox);
    assert_eq!(records[0]["status"], "cancelled");
}
