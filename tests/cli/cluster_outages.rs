//! The cluster through NATS outages (issue 42 §2): the NATS server killed while a run is
//! running and started again on the same port and store. The worker keeps its run, stores the
//! outcome and acks once NATS is back; the submitter, whose reply may have been lost while NATS
//! was away, finds the outcome in the run's record; the run ran once. Past `--nats-patience`,
//! `submit` gives up with `CLUSTER_UNREACHABLE` naming NATS, and the run is not lost for it. A
//! worker started while NATS is down waits for it. A run handed to `mcp --nats` while NATS is
//! down is queued once NATS is back, once. A worker killed after it stored a run's outcome but
//! before it acked the request: the request comes again, and is answered from the record, not
//! run again.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::wait_for_line;
use crate::peers::NatsServer;
use crate::util::Sandbox;
use crate::workers::{Finish, Worker, merged_journal, report, submit};

/// Sleeps in the worker long enough for NATS to be stopped mid-run.
const RUNS_A_WHILE: &str = "progress('running'); await tools.sleep({ms: 1500}); return 'done';";

/// Waits (within a minute) until the worker says it tries again to mark the run before its
/// first effect (its publication at the end): the script has ended while NATS is away.
fn waiting_to_mark(worker: &Worker) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !worker.stderr().contains("before its first effect") {
        assert!(Instant::now() < deadline, "{}", worker.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        worker.stderr().contains("trying again for up to"),
        "{}",
        worker.stderr()
    );
}

/// The runs in the worker's own journal.
fn worker_journal(worker: &Worker) -> Vec<Value> {
    let listed = worker.sandbox.forge(&["journal", "list", "--json"]);
    serde_json::from_str::<Value>(&listed.stdout())
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// Every attempt at the run whose attempt ran as execution `id`, in the merged journal.
fn attempts(journal: &[Value], id: &Value) -> Vec<Value> {
    let Some(run) = journal.iter().find(|r| r["id"] == *id).map(|r| &r["run"]) else {
        return Vec::new();
    };
    journal
        .iter()
        .filter(|r| r["run"] == *run)
        .cloned()
        .collect()
}

#[test]
fn a_run_goes_on_through_a_nats_restart_and_its_submitter_gets_the_report() {
    let mut nats = NatsServer::start();
    let worker = Worker::start(&nats, "steady", &[]);
    let sandbox = Sandbox::new();
    let mut run = submit(&sandbox, &nats, RUNS_A_WHILE, &[]);
    wait_for_line(&mut run, "running");
    nats.stop();
    // The script ends while NATS is away; the worker holds its publication until the mark lands.
    waiting_to_mark(&worker);
    nats.restart();
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], "done");
    let local = worker_journal(&worker);
    assert_eq!(local.len(), 1, "{local:#?}");
    assert_eq!(local[0]["id"], report["id"]);
    let journal = merged_journal(&sandbox, &nats);
    let ran = attempts(&journal, &report["id"]);
    assert_eq!(ran.len(), 1, "one attempt: {ran:#?}\n{}", worker.stderr());
    assert_eq!(ran[0]["status"], "succeeded");
}

#[test]
fn past_its_patience_submit_says_nats_is_unreachable_and_the_run_is_kept() {
    let mut nats = NatsServer::start();
    let worker = Worker::start(&nats, "patient", &[]);
    let sandbox = Sandbox::new();
    let mut run = submit(&sandbox, &nats, RUNS_A_WHILE, &["--nats-patience", "2s"]);
    wait_for_line(&mut run, "running");
    nats.stop();
    let output = run.finish();
    let said = String::from_utf8_lossy(&output.stderr).to_string()
        + &String::from_utf8_lossy(&output.stdout);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("CLUSTER_UNREACHABLE")
            && said.contains(&format!("NATS at {} has not answered for 2s", nats.url)),
        "{said}"
    );
    // The worker, more patient (its default), goes on once NATS is back.
    waiting_to_mark(&worker);
    nats.restart();
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        let local = worker_journal(&worker);
        if let Some(ended) = local.iter().find(|r| r["status"] != "running") {
            break ended.clone();
        }
        assert!(Instant::now() < deadline, "{local:#?}\n{}", worker.stderr());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ended["status"], "succeeded", "{ended:#}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let journal = merged_journal(&sandbox, &nats);
        let ran = attempts(&journal, &ended["id"]);
        if ran.iter().any(|r| r["status"] == "succeeded") {
            assert_eq!(ran.len(), 1, "{ran:#?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{journal:#?}\n{}",
            worker.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_worker_started_while_nats_is_down_waits_for_it_and_then_serves() {
    let mut nats = NatsServer::start();
    nats.stop();
    let url = nats.url.clone();
    let args = ["--nats", &url, "--name", "early"].map(std::ffi::OsStr::new);
    let mut restarted = false;
    let worker = Worker::watching(&args, &mut |line| {
        if line.contains("trying again for up to 1m (--nats-patience)") && !restarted {
            assert!(
                line.contains(&format!("cannot connect to NATS at {url}")),
                "{line}"
            );
            nats.restart();
            restarted = true;
        }
    });
    assert!(restarted, "{}", worker.stderr());
    let sandbox = Sandbox::new();
    let output = submit(&sandbox, &nats, "return 'served';", &[]).finish();
    let report = report(&output);
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], "served");
}

#[test]
fn a_worker_started_while_nats_stays_down_gives_up_past_its_patience() {
    let mut nats = NatsServer::start();
    nats.stop();
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&["worker", "--nats", &nats.url, "--nats-patience", "1s"])
        .output()
        .expect("worker");
    let said = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("CLUSTER_UNREACHABLE")
            && said.contains(&format!(
                "cannot connect to NATS at {}: it has not answered for 1s (--nats-patience)",
                nats.url
            )),
        "{said}"
    );
}

/// `forge-host mcp --nats URL` over stdio, spoken to a JSON-RPC line at a time.
struct StdioMcp {
    child: std::process::Child,
    stdin: ChildStdin,
    answers: Receiver<Value>,
    said: Receiver<String>,
}

impl StdioMcp {
    fn start(sandbox: &Sandbox, nats: &NatsServer) -> Self {
        let mut child = sandbox
            .command(&["mcp", "--nats", &nats.url])
            .stdin(Stdio::piped())
            .spawn()
            .expect("start forge-host mcp --nats");
        let stdin = child.stdin.take().expect("stdin");
        let (answer, answers) = channel();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = answer.send(serde_json::from_str(&line).unwrap_or(Value::Null));
            }
        });
        let (say, said) = channel();
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = say.send(line);
            }
        });
        StdioMcp {
            child,
            stdin,
            answers,
            said,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// The answer to request `id`, within `limit`.
    fn answer(&self, id: u64, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let answer = self.answers.recv_timeout(left).expect("an answer in time");
            if answer["id"] == id {
                return answer;
            }
        }
    }

    /// Waits, within a minute, for a line on stderr holding `text`.
    fn wait_to_say(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.said.recv_timeout(left).expect("the line in time");
            if line.contains(text) {
                return line;
            }
        }
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_run_handed_to_mcp_while_nats_is_down_is_queued_once_it_is_back_and_runs_once() {
    let mut nats = NatsServer::start();
    let worker = Worker::start(&nats, "after", &[]);
    let sandbox = Sandbox::new();
    let mut server = StdioMcp::start(&sandbox, &nats);
    server.send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "cluster_outages", "version": "1"}}}),
    );
    server.answer(1, Duration::from_secs(30));
    server.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    nats.stop();
    server.send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_javascript", "arguments": {"code": "return 40 + 2"}}}),
    );
    let said = server.wait_to_say("did not take run");
    assert!(
        said.contains(&format!("NATS at {}", nats.url))
            && said.contains("trying again for up to 1m (--nats-patience)"),
        "{said}"
    );
    nats.restart();
    let answer = server.answer(2, Duration::from_secs(120));
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer:#}");
    assert!(result.to_string().contains("42"), "{answer:#}");
    // Queued once: one run in the worker's journal, and one attempt at it in the merged one.
    let local = worker_journal(&worker);
    assert_eq!(local.len(), 1, "{local:#?}\n{}", worker.stderr());
    let journal = merged_journal(&sandbox, &nats);
    let ran = attempts(&journal, &local[0]["id"]);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(ran[0]["status"], "succeeded", "{ran:#?}");
}

#[test]
fn a_worker_killed_after_storing_the_outcome_is_answered_from_the_record_not_run_again() {
    let nats = NatsServer::start();
    let ws = tempfile::tempdir().expect("workspace");
    let workspace = ws.path().display().to_string();
    let flags = |name: &'static str| {
        [
            "--nats",
            &nats.url,
            "--name",
            name,
            "--ack-wait",
            "2s",
            "--workspace",
            &workspace,
            "--allow-write",
        ]
        .map(OsStr::new)
    };
    let mut first = Worker::with_env(
        &flags("first"),
        &[("FORGE_HOST_FAULT", "after-storing-the-outcome")],
    );
    let sandbox = Sandbox::new();
    let run = submit(
        &sandbox,
        &nats,
        "await tools.workspace.write({path: 'written-' + Math.random() + '.txt', content: 'x'});\n\
         return 'done';",
        &["--allow-write"],
    );
    // It dies with the outcome in the run's record, before its reply and its ack.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !first.has_ended() {
        assert!(Instant::now() < deadline, "{}", first.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = Worker::with_env(&flags("second"), &[]);
    // The submitter, with no reply, finds the outcome in the record.
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], "done");
    // The request, never acked, comes again to the second worker, which answers it from the
    // record and acks it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !second.stderr().contains("has its outcome already") {
        assert!(Instant::now() < deadline, "{}", second.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    let written = std::fs::read_dir(ws.path()).expect("workspace").count();
    assert_eq!(written, 1, "the write ran once, and was not run again");
    assert!(worker_journal(&second).is_empty(), "{}", second.stderr());
    let journal = merged_journal(&sandbox, &nats);
    let ran = attempts(&journal, &report["id"]);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(
        (&ran[0]["worker"], &ran[0]["status"]),
        (&Value::from("first"), &Value::from("succeeded"))
    );
}
