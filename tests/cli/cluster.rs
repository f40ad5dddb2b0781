//! forge-host past one machine (issue 16): workers pulling from a real NATS JetStream queue,
//! state on a real etcd, submissions through `forge-host submit`, and workers killed with
//! `kill -9` mid-run.

use std::io::{BufRead, BufReader};
use std::process::Child;

use serde_json::Value;

use crate::peers::{EtcdServer, NatsServer};
use crate::util::Sandbox;
use crate::workers::{Finish, Worker, merged_journal, report, submit};

/// Polls the merged journal until an attempt of `worker` is `running` (published as the run
/// starts, not only when it ends), within a minute; returns its record.
fn running_in_journal(sandbox: &Sandbox, nats: &NatsServer, worker: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let journal = merged_journal(sandbox, nats);
        if let Some(record) = journal
            .iter()
            .find(|r| r["worker"] == worker && r["status"] == "running")
        {
            return record.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no running record of {worker}: {journal:#?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The latest record of attempt `attempt` at run `run` in the merged journal.
fn attempt_record(journal: &[Value], run: &Value, attempt: u64) -> Value {
    journal
        .iter()
        .find(|r| r["run"] == *run && r["attempt"] == attempt)
        .cloned()
        .unwrap_or_else(|| panic!("no attempt {attempt} at {run}: {journal:#?}"))
}

/// Waits until `child`'s stderr has a line holding `text`, then keeps draining it.
pub(crate) fn wait_for_line(child: &mut Child, text: &str) {
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    skip_to(&mut lines, text);
    std::thread::spawn(move || for _ in lines {});
}

/// Reads `lines` up to the first one holding `text`.
fn skip_to(lines: &mut impl Iterator<Item = std::io::Result<String>>, text: &str) {
    let seen = lines.any(|line| line.is_ok_and(|l| l.contains(text)));
    assert!(seen, "no line with `{text}`");
}

#[test]
fn three_workers_share_thirty_submitted_runs_and_the_journal_merges_them() {
    let nats = NatsServer::start();
    let workers: Vec<Worker> = (1..=3)
        .map(|i| Worker::start(&nats, &format!("w{i}"), &["--max-runs", "2"]))
        .collect();
    let sandbox = Sandbox::new();
    let runs: Vec<Child> = (0..30)
        .map(|i| {
            submit(
                &sandbox,
                &nats,
                &format!("await tools.sleep({{ms: 150}}); return {i};"),
                &[],
            )
        })
        .collect();
    for (i, run) in runs.into_iter().enumerate() {
        let output = run.finish();
        let report = report(&output);
        assert_eq!(output.status.code(), Some(0), "{report:#}");
        assert_eq!(report["value"], i, "{report:#}");
    }
    let journal = merged_journal(&sandbox, &nats);
    assert_eq!(journal.len(), 30, "{journal:#?}");
    for worker in &workers {
        let ran = journal
            .iter()
            .filter(|r| r["worker"] == worker.name.as_str())
            .count();
        assert!(ran > 0, "worker {} ran nothing: {journal:#?}", worker.name);
    }
    assert!(journal.iter().all(|r| r["status"] == "succeeded"));
}

#[test]
fn two_runs_on_one_key_through_different_workers_give_exactly_one_conflict() {
    let nats = NatsServer::start();
    let etcd = EtcdServer::start();
    let state = etcd.url("cluster");
    let _workers: Vec<Worker> = (1..=2)
        .map(|i| {
            Worker::start(
                &nats,
                &format!("w{i}"),
                &["--max-runs", "1", "--state", &state],
            )
        })
        .collect();
    let sandbox = Sandbox::new();
    let bump = "const seen = state.get('counter') ?? 0;\n\
                await tools.sleep({ms: 1500});\n\
                state.set('counter', seen + 1);\n\
                return seen + 1;";
    let runs: Vec<Child> = (0..2)
        .map(|_| submit(&sandbox, &nats, bump, &["--session", "shared"]))
        .collect();
    let reports: Vec<Value> = runs.into_iter().map(|run| report(&run.finish())).collect();
    let won = reports
        .iter()
        .filter(|r| r["status"] == "succeeded")
        .count();
    let conflicts = reports
        .iter()
        .filter(|r| r["error"]["code"] == "STATE_CONFLICT")
        .count();
    assert_eq!((won, conflicts), (1, 1), "{reports:#?}");
    let value = sandbox.forge(&[
        "state",
        "get",
        "counter",
        "--session",
        "shared",
        "--state",
        &state,
    ]);
    assert_eq!(value.stdout().trim(), "1", "{}", value.stderr());
}

#[test]
fn a_pure_run_whose_worker_is_killed_is_delivered_again_and_succeeds_elsewhere() {
    let nats = NatsServer::start();
    let mut first = Worker::start(&nats, "first", &["--ack-wait", "2s"]);
    let sandbox = Sandbox::new();
    let mut run = submit(
        &sandbox,
        &nats,
        "progress('running'); await tools.sleep({ms: 2000}); return 'done';",
        &[],
    );
    wait_for_line(&mut run, "running");
    let running = running_in_journal(&sandbox, &nats, "first");
    first.kill();
    let _second = Worker::start(&nats, "second", &[]);
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], "done");
    let journal = merged_journal(&sandbox, &nats);
    let dead = attempt_record(&journal, &running["run"], 1);
    assert_eq!(
        (&dead["worker"], &dead["status"], &dead["reason"]),
        (
            &Value::from("first"),
            &Value::from("failed"),
            &Value::from("interrupted")
        ),
        "the dead attempt is closed in the merged journal: {dead:#}"
    );
    let again = attempt_record(&journal, &running["run"], 2);
    assert_eq!(
        (&again["worker"], &again["status"]),
        (&Value::from("second"), &Value::from("succeeded"))
    );
    assert_eq!(again["id"], report["id"]);
}

#[test]
fn a_run_whose_worker_is_killed_after_a_write_is_interrupted_and_never_run_twice() {
    let nats = NatsServer::start();
    let ws = tempfile::tempdir().expect("workspace");
    let workspace = ws.path().display().to_string();
    let flags = [
        "--ack-wait",
        "2s",
        "--workspace",
        &workspace,
        "--allow-write",
    ];
    let mut first = Worker::start(&nats, "first", &flags);
    let sandbox = Sandbox::new();
    let mut run = submit(
        &sandbox,
        &nats,
        "await tools.workspace.write({path: 'written-' + Math.random() + '.txt', content: 'x'});\n\
         progress('written'); await tools.sleep({ms: 2000}); return 'done';",
        &["--allow-write"],
    );
    wait_for_line(&mut run, "written");
    let running = running_in_journal(&sandbox, &nats, "first");
    first.kill();
    let _second = Worker::start(&nats, "second", &flags);
    let output = run.finish();
    let report = report(&output);
    assert_eq!(output.status.code(), Some(1), "{report:#}");
    assert_eq!(report["error"]["code"], "ISOLATE_FAILURE");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("interrupted") && message.contains("first"),
        "{message}"
    );
    let written = std::fs::read_dir(ws.path()).expect("workspace").count();
    assert_eq!(written, 1, "the write ran once, and was not run again");
    let journal = merged_journal(&sandbox, &nats);
    let dead = attempt_record(&journal, &running["run"], 1);
    assert_eq!(dead["reason"], "interrupted", "{dead:#}");
    assert_eq!(dead["error_code"], "ISOLATE_FAILURE", "{dead:#}");
    assert!(
        journal
            .iter()
            .all(|r| r["run"] != running["run"] || r["attempt"] == 1),
        "no second attempt: {journal:#?}"
    );
}

#[test]
fn a_full_queue_refuses_new_submissions_clearly() {
    let nats = NatsServer::start();
    // The queue is created with room for one request, by a worker that then goes away.
    let mut creator = Worker::start(&nats, "creator", &["--max-queued", "1"]);
    creator.kill();
    let sandbox = Sandbox::new();
    let mut waiting = submit(&sandbox, &nats, "return 1", &[]);
    wait_for_line(&mut waiting, "submitted");
    let refused = sandbox.forge(&[
        "submit", "-e", "return 2", "--lang", "js", "--json", "--nats", &nats.url,
    ]);
    assert_eq!(refused.code(), 1, "{}", refused.stdout());
    assert_eq!(refused.error_code(), "BUDGET_EXCEEDED");
    assert!(refused.stdout().contains("is full"), "{}", refused.stdout());
    // A worker takes the waiting request, and it is answered.
    let _worker = Worker::start(&nats, "late", &[]);
    let output = waiting.finish();
    assert_eq!(report(&output)["value"], 1);
}

#[test]
fn inputs_go_to_the_worker_and_published_outputs_come_back() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "w", &[]);
    let sandbox = Sandbox::new();
    let data = sandbox.dir.path().join("dataset");
    std::fs::create_dir_all(data.join("nested")).expect("mkdir");
    std::fs::write(data.join("a.txt"), "alpha").expect("write");
    std::fs::write(data.join("nested/b.txt"), "beta").expect("write");
    let script = sandbox.script(
        "copy.py",
        "import forge\n\
         a = open('/input/dataset/a.txt').read()\n\
         b = open('/input/dataset/nested/b.txt').read()\n\
         open('/output/joined.txt', 'w').write(a + '+' + b)\n\
         forge.result([i['name'] for i in forge.inputs()])\n",
    );
    let out = sandbox.dir.path().join("out");
    let run = sandbox.forge(&[
        "submit".as_ref(),
        script.as_os_str(),
        "--input".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
        "--nats".as_ref(),
        nats.url.as_ref(),
    ]);
    let report = run.assert_succeeded();
    assert_eq!(
        report["value"],
        serde_json::json!(["dataset/a.txt", "dataset/nested/b.txt"])
    );
    assert_eq!(
        std::fs::read_to_string(out.join("joined.txt")).expect("published here"),
        "alpha+beta"
    );
    assert!(out.join("provenance.json").is_file());
    assert_eq!(report["out_dir"], out.display().to_string());
    let staging: Vec<String> = std::fs::read_dir(sandbox.dir.path())
        .expect("list")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".out."))
        .collect();
    assert!(staging.is_empty(), "no staging folder is left: {staging:?}");
    // A folder of someone else's is refused before anything is queued, as `run` refuses it.
    let foreign = sandbox.dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).expect("mkdir");
    std::fs::write(foreign.join("mine.txt"), "keep").expect("write");
    let refused = sandbox.forge(&[
        "submit".as_ref(),
        script.as_os_str(),
        "--input".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        foreign.as_os_str(),
        "--json".as_ref(),
        "--nats".as_ref(),
        nats.url.as_ref(),
    ]);
    assert_eq!(
        refused.error_code(),
        "INVALID_INPUT",
        "{}",
        refused.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("mine.txt")).expect("kept"),
        "keep"
    );
    assert_eq!(
        merged_journal(&sandbox, &nats).len(),
        1,
        "the refused one never ran"
    );
}

#[test]
fn mcp_with_nats_hands_its_runs_to_the_workers() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "mcp-pool", &[]);
    let sandbox = Sandbox::new();
    let out = crate::mcp_server::drive(
        &sandbox,
        "basic",
        &crate::mcp_server::Transport::Stdio(vec!["--nats".into(), nats.url.clone()]),
        &[],
    );
    crate::mcp_server::assert_basic(&out);
    // The runs are in the worker's journal, not the server's.
    let journal = merged_journal(&sandbox, &nats);
    let id = out["js"]["structured"]["id"].as_str().expect("id");
    assert!(
        journal
            .iter()
            .any(|r| r["id"] == id && r["worker"] == "mcp-pool"),
        "{journal:#?}"
    );
    let local = sandbox.forge(&["journal", "list", "--json"]);
    assert!(
        !local.stdout().contains(id),
        "the server ran nothing itself"
    );
}

#[test]
fn records_on_nats_expire_after_the_retention_and_new_runs_still_work() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "w", &["--retention", "2s"]);
    let sandbox = Sandbox::new();
    let first = submit(&sandbox, &nats, "return 1;", &[]).finish();
    assert_eq!(report(&first)["value"], 1);
    assert_eq!(merged_journal(&sandbox, &nats).len(), 1);
    // NATS drops expired messages on its own schedule: poll for it, within a minute.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !merged_journal(&sandbox, &nats).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal record never expired"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // The same script again: its blob is written again if it expired.
    let again = submit(&sandbox, &nats, "return 1;", &[]).finish();
    assert_eq!(
        report(&again)["value"],
        1,
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn a_script_and_a_report_over_the_inline_size_go_through_the_object_store() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "w", &[]);
    let sandbox = Sandbox::new();
    // 100 KB of comment makes the script too big to travel inside the request, and a 2 MB
    // result makes the report bigger than a NATS message may be (1 MiB by default).
    let code = format!("// {}\nreturn 'y'.repeat(2000000);", "x".repeat(100_000));
    let output = submit(&sandbox, &nats, &code, &[]).finish();
    let report = report(&output);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_eq!(report["value"].as_str().map(str::len), Some(2_000_000));
    let small = submit(&sandbox, &nats, "return 2;", &[]).finish();
    assert_eq!(self::report(&small)["value"], 2);
}

/// Ctrl-C for a `submit` process.
fn interrupt(child: &Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn ctrl_c_on_submit_cancels_the_run_on_its_worker() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "w", &[]);
    let sandbox = Sandbox::new();
    let mut run = submit(
        &sandbox,
        &nats,
        "progress('started'); await tools.sleep({ms: 120000}); return 'finished';",
        &[],
    );
    wait_for_line(&mut run, "started");
    interrupt(&run);
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(report["error"]["code"], "CANCELLED");
    let journal = merged_journal(&sandbox, &nats);
    assert_eq!(journal.len(), 1, "{journal:#?}");
    assert_eq!(
        journal[0]["status"], "cancelled",
        "the worker's own journal says so"
    );
}

#[test]
fn a_run_cancelled_before_any_worker_took_it_never_runs() {
    let nats = NatsServer::start();
    // The queue exists before the submission, with no worker on it.
    let mut creator = Worker::start(&nats, "creator", &[]);
    creator.kill();
    let sandbox = Sandbox::new();
    let ws = tempfile::tempdir().expect("workspace");
    let workspace = ws.path().display().to_string();
    let mut run = submit(
        &sandbox,
        &nats,
        "await tools.workspace.write({path: 'ran.txt', content: 'x'}); return 1;",
        &["--allow-write"],
    );
    wait_for_line(&mut run, "waiting for a worker");
    interrupt(&run);
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["error"]["code"], "CANCELLED", "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("never ran"),
        "{report:#}"
    );
    // A worker now takes the cancelled request off the queue without running it.
    let _worker = Worker::start(
        &nats,
        "late",
        &[
            "--max-runs",
            "1",
            "--workspace",
            &workspace,
            "--allow-write",
        ],
    );
    let next = submit(&sandbox, &nats, "return 2;", &[]).finish();
    assert_eq!(self::report(&next)["value"], 2);
    let journal = merged_journal(&sandbox, &nats);
    assert_eq!(journal.len(), 1, "only the second run ran: {journal:#?}");
    assert!(
        !ws.path().join("ran.txt").exists(),
        "the cancelled run wrote nothing"
    );
}

#[test]
fn a_worker_lowers_the_limits_a_submission_asks_to_its_own_and_says_so() {
    let nats = NatsServer::start();
    let _worker = Worker::start(&nats, "small", &["--memory", "64MiB"]);
    let sandbox = Sandbox::new();
    // 1 GiB asked for; 50 million numbers need far more than the worker's 64 MiB.
    let output = submit(
        &sandbox,
        &nats,
        "const a = []; for (let i = 0; i < 5e7; i++) a.push(i); return a.length;",
        &["--memory", "1GiB"],
    )
    .finish();
    let report = report(&output);
    assert_eq!(report["error"]["code"], "MEMORY_LIMIT", "{report:#}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("worker `small` runs it with its own lower limits: --memory 64MiB\n"),
        "{stderr}"
    );
    let fits = submit(&sandbox, &nats, "return 1;", &["--memory", "32MiB"]).finish();
    assert_eq!(self::report(&fits)["value"], 1);
    let stderr = String::from_utf8_lossy(&fits.stderr);
    assert!(stderr.contains("worker `small` runs it\n"), "{stderr}");
}

#[test]
fn a_run_cancelled_while_its_dead_worker_held_it_is_not_run_again() {
    let nats = NatsServer::start();
    let mut first = Worker::start(&nats, "first", &["--ack-wait", "2s"]);
    let sandbox = Sandbox::new();
    let mut run = submit(
        &sandbox,
        &nats,
        "progress('running'); await tools.sleep({ms: 2000}); return 'done';",
        &[],
    );
    let mut lines = BufReader::new(run.stderr.take().expect("stderr")).lines();
    skip_to(&mut lines, "running");
    let running = running_in_journal(&sandbox, &nats, "first");
    first.kill();
    // Cancelled while the dead worker's attempt still holds the run's record.
    interrupt(&run);
    skip_to(&mut lines, "asked its worker to cancel it");
    std::thread::spawn(move || for _ in lines {});
    let _second = Worker::start(&nats, "second", &[]);
    let output = run.finish();
    let report = report(&output);
    assert_eq!(report["error"]["code"], "CANCELLED", "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not run again"),
        "{report:#}"
    );
    let journal = merged_journal(&sandbox, &nats);
    assert_eq!(journal.len(), 1, "no second attempt ran: {journal:#?}");
    let dead = attempt_record(&journal, &running["run"], 1);
    assert_eq!(
        (&dead["worker"], &dead["status"]),
        (&Value::from("first"), &Value::from("failed")),
        "the dead attempt is closed: {dead:#}"
    );
}
