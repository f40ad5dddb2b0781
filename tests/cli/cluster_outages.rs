//! The cluster through NATS outages (issue 42 §2): the NATS server killed while a run is
//! running and started again on the same port and store. The worker keeps its run, stores the
//! outcome and acks once NATS is back; the submitter, whose reply may have been lost while NATS
//! was away, finds the outcome in the run's record; the run ran once. Past `--nats-patience`,
//! `submit` gives up with `CLUSTER_UNREACHABLE` naming NATS, and the run is not lost for it. A
//! worker started while NATS is down waits for it.

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
