//! Session state on both stores (issues 5 and 16): the same test bodies run with the data
//! directory's journal and with etcd (`--state etcd://...`, a real etcd on loopback), and the
//! etcd store passes the same `StateStore` contract as redb.

use std::ffi::OsString;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::peers::EtcdServer;
use crate::util::Sandbox;
use forge_host::state::{EtcdLocation, EtcdStateStore, StateStore, contract};

/// Where a test keeps state: the arguments every command of it gets.
struct Backend {
    args: Vec<String>,
    /// Kept alive for the test; killed when dropped.
    _etcd: Option<EtcdServer>,
}

impl Backend {
    fn redb() -> Self {
        Backend {
            args: Vec::new(),
            _etcd: None,
        }
    }

    fn etcd() -> Self {
        let server = EtcdServer::start();
        Backend {
            args: vec!["--state".into(), server.url("tests")],
            _etcd: Some(server),
        }
    }

    /// `extra` followed by the backend's arguments.
    fn with(&self, extra: &[&str]) -> Vec<OsString> {
        extra
            .iter()
            .map(OsString::from)
            .chain(self.args.iter().map(OsString::from))
            .collect()
    }
}

/// One `#[test]` per body and store.
macro_rules! on_both_stores {
    ($($body:ident),* $(,)?) => {
        mod redb {
            $(#[test] fn $body() { super::$body(&super::Backend::redb()); })*
        }
        mod etcd {
            $(#[test] fn $body() { super::$body(&super::Backend::etcd()); })*
        }
    };
}

on_both_stores!(
    state_is_committed_on_success_only_and_seen_by_the_same_session_only,
    state_budgets_are_enforced,
    two_concurrent_runs_changing_one_key_one_commits_the_other_conflicts,
    state_commands_read_and_delete_a_sessions_values,
    state_is_shared_between_javascript_and_python_in_one_session,
    a_run_whose_reads_changed_meanwhile_conflicts_though_it_wrote_other_keys,
);

fn state_is_committed_on_success_only_and_seen_by_the_same_session_only(backend: &Backend) {
    let sandbox = Sandbox::new();
    let bump = "const n = (state.get('count') ?? 0) + 1; state.set('count', n); return n;";
    let fail_after_set =
        "state.set('count', 100); state.set('other', true); throw new Error('no');";
    let session = |name: &str| backend.with(&["--session", name]);
    assert_eq!(sandbox.run_js(bump, &session("a")).report()["value"], 1);
    assert_eq!(sandbox.run_js(bump, &session("a")).report()["value"], 2);
    assert_eq!(
        sandbox.run_js(fail_after_set, &session("a")).status(),
        "failed"
    );
    assert_eq!(
        sandbox.run_js(bump, &session("a")).report()["value"],
        3,
        "the failed run committed nothing"
    );
    assert_eq!(
        sandbox.run_js(bump, &session("b")).report()["value"],
        1,
        "sessions are separate"
    );
    let keys = sandbox.run_js("return state.keys();", &session("a"));
    assert_eq!(keys.report()["value"], json!(["count"]));
    let deleted = sandbox.run_js(
        "state.delete('count'); return state.get('count') ?? 'gone';",
        &session("a"),
    );
    assert_eq!(deleted.report()["value"], "gone");
    assert_eq!(
        sandbox.run_js(bump, &session("a")).report()["value"],
        1,
        "the delete was committed"
    );
}

fn state_budgets_are_enforced(backend: &Backend) {
    let sandbox = Sandbox::new();
    let big = "try { state.set('k', 'x'.repeat(300 * 1024)); return 'set'; } catch (e) { return e.code; }";
    assert_eq!(
        sandbox.run_js(big, &backend.with(&[])).report()["value"],
        "BUDGET_EXCEEDED"
    );
    let total =
        "for (let i = 0; i < 8; i++) state.set('k' + i, 'x'.repeat(200 * 1024)); return 'set';";
    let run = sandbox.run_js(total, &backend.with(&[]));
    assert_eq!(run.status(), "failed");
    assert_eq!(run.error_code(), "BUDGET_EXCEEDED");
    // Runs of 200 KiB each fit one after another until the session's total (1 MiB) is spent:
    // the store counts what earlier runs committed.
    let fifth = "state.set('part-' + Math.random(), 'y'.repeat(200 * 1024)); return 1;";
    let outcomes: Vec<String> = (0..6)
        .map(|_| {
            let run = sandbox.run_js(fifth, &backend.with(&["--session", "parts"]));
            if run.status() == "succeeded" {
                "ok".to_string()
            } else {
                run.error_code()
            }
        })
        .collect();
    assert_eq!(outcomes, ["ok", "ok", "ok", "ok", "ok", "BUDGET_EXCEEDED"]);
}

fn two_concurrent_runs_changing_one_key_one_commits_the_other_conflicts(backend: &Backend) {
    let sandbox = Sandbox::new();
    // Each reads, waits long enough for the other to start, then writes two keys.
    let script = sandbox.script(
        "bump.js",
        "const seen = state.get('counter') ?? 0;\n\
         await tools.call('sleep', {ms: 1500});\n\
         const me = Math.random().toString();\n\
         state.set('counter', seen + 1); state.set('writer-' + me, true);\n\
         return me;",
    );
    let script = script.to_string_lossy().into_owned();
    let children: Vec<_> = (0..2)
        .map(|_| {
            sandbox
                .command(&backend.with(&["run", &script, "--json", "--session", "shared"]))
                .spawn()
                .expect("spawn")
        })
        .collect();
    let reports: Vec<Value> = children
        .into_iter()
        .map(|c| {
            serde_json::from_slice(&c.wait_with_output().expect("wait").stdout).expect("report")
        })
        .collect();
    let winners: Vec<&Value> = reports
        .iter()
        .filter(|r| r["status"] == "succeeded")
        .collect();
    let losers: Vec<&Value> = reports
        .iter()
        .filter(|r| r["error"]["code"] == "STATE_CONFLICT")
        .collect();
    assert_eq!((winners.len(), losers.len()), (1, 1), "{reports:#?}");
    let state = sandbox.forge(&backend.with(&["state", "list", "--json", "--session", "shared"]));
    let state: Value = serde_json::from_str(&state.stdout()).expect("json");
    let winner = winners[0]["value"].as_str().expect("value");
    assert_eq!(
        state,
        json!({"counter": 1, format!("writer-{winner}"): true}),
        "nothing of the loser was written"
    );
}

fn state_commands_read_and_delete_a_sessions_values(backend: &Backend) {
    let sandbox = Sandbox::new();
    sandbox.run_js(
        "state.set('a', {x: 1}); state.set('b', 2); return 1;",
        &backend.with(&["--session", "cli"]),
    );
    let got = sandbox.forge(&backend.with(&["state", "get", "a", "--session", "cli"]));
    assert_eq!(got.stdout().trim(), r#"{"x":1}"#, "{}", got.stderr());
    assert_eq!(
        sandbox
            .forge(&backend.with(&["state", "delete", "a", "--session", "cli"]))
            .code(),
        0
    );
    let listed = sandbox.forge(&backend.with(&["state", "list", "--json", "--session", "cli"]));
    assert_eq!(
        serde_json::from_str::<Value>(&listed.stdout()).expect("json"),
        json!({"b": 2})
    );
    assert_eq!(
        sandbox
            .forge(&backend.with(&["state", "get", "a", "--session", "cli"]))
            .code(),
        2
    );
}

/// A run pauses for approval after reading, while another run changes the session; resumed, its
/// commit compares what it read as well as what it wrote (issue 16: "each read or written key").
fn a_run_whose_reads_changed_meanwhile_conflicts_though_it_wrote_other_keys(backend: &Backend) {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let ws = ws.to_string_lossy().into_owned();
    let session = backend.with(&["--session", "reads"]);
    let paused_after = |read: &str| {
        let script = format!(
            "const seen = {read};\n\
             await tools.workspace.write({{path: 'w.txt', content: 'w'}});\n\
             state.set('derived', seen);\nreturn seen;"
        );
        let run = sandbox.run_js(
            &script,
            &backend.with(&["--session", "reads", "--workspace", &ws, "--ask"]),
        );
        let report = run.report();
        assert_eq!(report["status"], "paused", "{report:#}");
        report["id"].as_str().expect("id").to_string()
    };
    let change = |code: &str| sandbox.run_js(code, &session).assert_succeeded();
    let resume = |id: &str| {
        let run = sandbox.forge(&["resume", id, "--approve", "--json"]);
        serde_json::from_str::<Value>(&run.stdout())
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout(), run.stderr()))
    };
    let derived = || {
        let got = sandbox.forge(&backend.with(&["state", "get", "derived", "--session", "reads"]));
        (got.code() == 0).then(|| got.stdout().trim().to_string())
    };
    change("state.set('a', 1); state.set('z', 1); return 1;");

    // It read `a`; `a` changed: a conflict on `a`, and `derived` is not written.
    let id = paused_after("state.get('a')");
    change("state.set('a', 2); return 1;");
    let resumed = resume(&id);
    assert_eq!(resumed["error"]["code"], "STATE_CONFLICT", "{resumed:#}");
    assert!(
        resumed["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`a`"),
        "{resumed:#}"
    );
    assert_eq!(derived(), None, "nothing of the loser is written");

    // It read an absent key, which appeared meanwhile.
    let id = paused_after("state.get('b') ?? 0");
    change("state.set('b', 7); return 1;");
    assert_eq!(resume(&id)["error"]["code"], "STATE_CONFLICT");

    // It read `a`; only `z` changed: it commits.
    let id = paused_after("state.get('a')");
    change("state.set('z', 2); return 1;");
    let resumed = resume(&id);
    assert_eq!(resumed["status"], "succeeded", "{resumed:#}");
    assert_eq!(derived().as_deref(), Some("2"));

    // It listed the keys: a new key anywhere in the session conflicts.
    let id = paused_after("state.keys().length");
    change("state.set('newcomer', 1); return 1;");
    assert_eq!(resume(&id)["error"]["code"], "STATE_CONFLICT");
}

fn state_is_shared_between_javascript_and_python_in_one_session(backend: &Backend) {
    let sandbox = Sandbox::new();
    let session = backend.with(&["--session", "mixed"]);
    let js = sandbox.run_js(
        "state.set('greeting', {from: 'js', n: 1}); return 'set';",
        &session,
    );
    js.assert_succeeded();
    let py = sandbox.run_py(
        "import forge\ng = forge.state.get('greeting')\nforge.state.set('reply', {'from': 'python', 'saw': g})\nforge.result(g)\n",
        &session,
    );
    assert_eq!(py.report()["value"], json!({"from": "js", "n": 1}));
    let back = sandbox.run_js("return state.get('reply');", &session);
    assert_eq!(
        back.report()["value"],
        json!({"from": "python", "saw": {"from": "js", "n": 1}})
    );
}

#[test]
fn the_etcd_store_keeps_the_state_store_contract() {
    let server = EtcdServer::start();
    let location = EtcdLocation::parse(&server.url("contract")).expect("location");
    let store: Arc<dyn StateStore> = Arc::new(EtcdStateStore::new(location).expect("store"));
    if let Err(failure) = contract::check(store, "etcd") {
        panic!("{failure}");
    }
}

#[test]
fn two_hosts_with_their_own_data_directories_share_state_through_etcd() {
    let server = EtcdServer::start();
    let state = ["--state".to_string(), server.url("shared")];
    let (here, there) = (Sandbox::new(), Sandbox::new());
    let with = |extra: &[&str]| -> Vec<String> {
        extra
            .iter()
            .map(|s| s.to_string())
            .chain(state.iter().cloned())
            .collect()
    };
    here.run_js(
        "state.set('from', 'here'); return 1;",
        &with(&["--session", "s"]),
    )
    .assert_succeeded();
    let seen = there.run_js("return state.get('from');", &with(&["--session", "s"]));
    assert_eq!(seen.assert_succeeded()["value"], "here");
    // Without --state, the other host sees its own (empty) data directory.
    let local = there.run_js("return state.get('from') ?? 'none';", &["--session", "s"]);
    assert_eq!(local.assert_succeeded()["value"], "none");
    // The journal says where each run kept its state.
    let id = seen.report()["id"].as_str().expect("id").to_string();
    let shown = there.forge(&["journal", "show", &id, "--json"]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    assert_eq!(
        shown["state_store"],
        format!("{}/shared", server.url("").trim_end_matches('/'))
    );
}
