//! etcd away (issue 42 §2): state commits wait for it, with a growing pause, up to
//! `--etcd-patience`, then fail `CLUSTER_UNREACHABLE` naming it; a commit whose answer was lost
//! is known by its mark and lands once. A real etcd on loopback, killed and restarted on the
//! same port and data; a proxy in this file loses one answer.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::peers::EtcdServer;
use crate::util::Sandbox;

/// Session `s`'s values on `state`, as `state list --json` shows them.
fn session_s(sandbox: &Sandbox, state: &str) -> Value {
    let listed = sandbox.forge(&[
        "state",
        "list",
        "--json",
        "--session",
        "s",
        "--state",
        state,
    ]);
    serde_json::from_str(&listed.stdout())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", listed.stdout(), listed.stderr()))
}

/// Starts `late.js` (it reports progress once it has its snapshot, calls a tool that sleeps,
/// then sets `a` and `b` and returns 'done') on `state`, with `flags`; returns once it reported
/// progress, with its stderr's further lines.
fn start_late_run(
    sandbox: &Sandbox,
    state: &str,
    flags: &[&str],
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
) {
    let script = sandbox.script(
        "late.js",
        "progress('armed');\n\
         await tools.call('sleep', {ms: 1500});\n\
         state.set('a', 1); state.set('b', 2);\n\
         return 'done';",
    );
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "run".as_ref(),
        script.as_os_str(),
        "--json".as_ref(),
        "--session".as_ref(),
        "s".as_ref(),
        "--state".as_ref(),
        state.as_ref(),
    ];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    let mut child = sandbox.command(&args).spawn().expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    assert!(
        lines.any(|line| line.is_ok_and(|l| l.contains("armed"))),
        "the run never reported progress"
    );
    (child, lines)
}

#[test]
fn etcd_stopped_mid_run_past_the_patience_fails_the_commit_clearly_and_restarted_serves_new_runs() {
    let mut server = EtcdServer::start();
    let sandbox = Sandbox::new();
    let state = server.url("outage");
    let (child, lines) = start_late_run(&sandbox, &state, &["--etcd-patience", "1s"]);
    // The run has its snapshot; then etcd goes away for longer than the run waits.
    server.stop();
    std::thread::spawn(move || for _ in lines {});
    let output = child.wait_with_output().expect("wait");
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["status"], "failed", "{report:#}");
    assert_eq!(report["error"]["code"], "CLUSTER_UNREACHABLE");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "etcd is unreachable at {} (no answer for 1s, --etcd-patience)",
            server.client_url()
        )),
        "{message}"
    );

    server.restart();
    assert_eq!(
        session_s(&sandbox, &state),
        json!({}),
        "nothing of the failed run was written"
    );
    let run = sandbox.run_js(
        "state.set('a', 3); return 'after';",
        &["--session", "s", "--state", &state],
    );
    assert_eq!(run.assert_succeeded()["value"], "after");
}

/// Issue 42 §2: etcd away while a run is about to commit, and back within the patience. The
/// run waits (its stderr says so and for how long), and its commit lands, once.
#[test]
fn etcd_away_and_back_within_the_patience_is_waited_for_and_the_commit_lands_once() {
    let mut server = EtcdServer::start();
    let sandbox = Sandbox::new();
    let state = server.url("outage");
    let (child, mut lines) = start_late_run(&sandbox, &state, &[]);
    server.stop();
    // The commit found etcd away and keeps trying: etcd comes back.
    let waiting = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|line| line.contains("trying again for up to 1m (--etcd-patience)"))
        .expect("the run says it waits for etcd");
    assert!(
        waiting.contains(&format!("etcd is unreachable at {}", server.client_url())),
        "{waiting}"
    );
    server.restart();
    std::thread::spawn(move || for _ in lines {});
    let output = child.wait_with_output().expect("wait");
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], "done");

    assert_eq!(session_s(&sandbox, &state), json!({"a": 1, "b": 2}));
    // The session goes on from there.
    let run = sandbox.run_js(
        "state.set('a', state.get('a') + 1); return state.get('a');",
        &["--session", "s", "--state", &state],
    );
    assert_eq!(run.assert_succeeded()["value"], 2);
}

/// A loopback proxy to `upstream` (HOST:PORT) that passes everything on, but loses the answer
/// to the first transaction: the request reaches etcd, then both connections close. Its address,
/// and whether an answer was lost.
fn losing_proxy(upstream: String) -> (String, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let armed = Arc::new(AtomicBool::new(true));
    let lost = Arc::new(AtomicBool::new(false));
    let was_lost = lost.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let losing = Arc::new(AtomicBool::new(false));
            let (mut from, mut to) = (
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
            );
            let (armed, marked) = (armed.clone(), losing.clone());
            std::thread::spawn(move || {
                let mut buffer = vec![0; 64 * 1024];
                while let Ok(read @ 1..) = from.read(&mut buffer) {
                    let request = &buffer[..read];
                    if request.windows(15).any(|w| w == b"POST /v3/kv/txn")
                        && armed.swap(false, Ordering::SeqCst)
                    {
                        marked.store(true, Ordering::SeqCst);
                    }
                    if to.write_all(request).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
            let lost = lost.clone();
            std::thread::spawn(move || {
                let (mut from, mut to) = (server, client);
                let mut buffer = vec![0; 64 * 1024];
                while let Ok(read @ 1..) = from.read(&mut buffer) {
                    if losing.load(Ordering::SeqCst) {
                        lost.store(true, Ordering::SeqCst);
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                        return;
                    }
                    if to.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
        }
    });
    (address, was_lost)
}

/// Issue 42 §2: etcd took a commit and its answer was lost. The commit is tried again, finds
/// its comparisons failing because the first try landed, and its mark says so: the run
/// succeeds (without the mark it would end STATE_CONFLICT against itself), and its writes are
/// there once.
#[test]
fn a_commit_whose_answer_was_lost_is_known_by_its_mark_and_lands_once() {
    let server = EtcdServer::start();
    let sandbox = Sandbox::new();
    let upstream = server
        .client_url()
        .trim_start_matches("http://")
        .to_string();
    let (proxy, lost) = losing_proxy(upstream);
    let state = format!("etcd://{proxy}/lossy");
    let run = sandbox.run_js(
        "state.set('a', (state.get('a') ?? 0) + 1); return 'once';",
        &["--session", "s", "--state", &state],
    );
    assert_eq!(run.assert_succeeded()["value"], "once");
    assert!(lost.load(Ordering::SeqCst), "the proxy lost no answer");
    assert_eq!(session_s(&sandbox, &server.url("lossy")), json!({"a": 1}));
}
