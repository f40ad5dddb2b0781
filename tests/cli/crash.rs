//! Crash safety (issue 11): a process killed (`FORGE_HOST_FAULT` aborts it, as `kill -9` would)
//! right after committing a run's state, or in the middle of publishing its outputs, leaves
//! nothing half-written, and the next process closes the run saying what happened.

use serde_json::Value;

use crate::util::{Sandbox, args};

fn crashed_at(sandbox: &Sandbox, point: &str, script: &std::path::Path, extra: &[&str]) {
    let mut all = args!["run", script, "--json", "--session", "s"].to_vec();
    all.extend(extra.iter().map(std::ffi::OsStr::new));
    let output = sandbox
        .command(&all)
        .env("FORGE_HOST_FAULT", point)
        .output()
        .expect("run forge-host");
    assert!(
        !output.status.success() && output.status.code().is_none(),
        "the process was meant to die at {point}: {output:?}"
    );
}

fn only_run(sandbox: &Sandbox) -> Value {
    let listed = sandbox.forge(&["journal", "list", "--json"]);
    let runs: Value = serde_json::from_str(&listed.stdout()).expect("json");
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs:#}");
    runs[0].clone()
}

#[test]
fn a_run_killed_after_its_state_commit_is_closed_saying_the_state_stands() {
    let sandbox = Sandbox::new();
    let script = sandbox.script("set.js", "state.set('answer', 42); return 'set';");
    crashed_at(&sandbox, "after-state-commit", &script, &[]);
    // The next process reconciles: the run is closed, and says its state change stands.
    let run = only_run(&sandbox);
    assert_eq!(run["status"], "failed");
    assert_eq!(run["error_code"], "ISOLATE_FAILURE");
    let message = run["error_message"].as_str().unwrap_or_default();
    assert!(message.contains("state was committed"), "{message}");
    let state = sandbox.forge(&["state", "get", "answer", "--session", "s"]);
    assert_eq!(state.stdout().trim(), "42", "{}", state.stderr());
}

#[test]
fn a_run_killed_while_publishing_publishes_nothing() {
    let sandbox = Sandbox::new();
    let script = sandbox.script(
        "out.py",
        "import forge\nfor i in range(3):\n    open(f'/output/part-{i}.txt', 'w').write('x' * 1000)\nforge.result(1)\n",
    );
    let out = sandbox.dir.path().join("published");
    crashed_at(
        &sandbox,
        "during-publication",
        &script,
        &["--out", out.to_str().expect("a UTF-8 temp path")],
    );
    assert!(!out.exists(), "nothing appears at the destination");
    let run = only_run(&sandbox);
    assert_eq!(run["status"], "failed");
    assert_eq!(run["error_code"], "ISOLATE_FAILURE");
    assert_eq!(leftovers(sandbox.dir.path()).len(), 1, "the staging folder");
    // A second run to the same place publishes whole, and sweeps the dead run's staging folder.
    let again = sandbox.forge(&args!["run", &script, "--json", "--out", &out]);
    again.assert_succeeded();
    assert!(out.join("part-2.txt").is_file() && out.join("provenance.json").is_file());
    assert_eq!(leftovers(sandbox.dir.path()), Vec::<String>::new());
}

/// The hidden folders a publication passes through, left in `dir`.
fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read the sandbox")
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.starts_with(".published.forge-"))
        .collect()
}

#[test]
fn a_run_killed_while_replacing_a_publication_loses_neither() {
    let sandbox = Sandbox::new();
    let write = |name: &str, text: &str| {
        sandbox.script(
            name,
            &format!(
                "import forge\nopen('/output/report.txt', 'w').write('{text}')\nforge.result(1)\n"
            ),
        )
    };
    let first = write("first.py", "first");
    let second = write("second.py", "second");
    let third = write("third.py", "third");
    let out = sandbox.dir.path().join("published");
    let report = out.join("report.txt");
    sandbox
        .forge(&args!["run", &first, "--json", "--out", &out])
        .assert_succeeded();
    crashed_at(
        &sandbox,
        "while-replacing-publication",
        &second,
        &["--out", out.to_str().expect("a UTF-8 temp path")],
    );
    assert!(
        !out.exists(),
        "the earlier publication was swapped out when the process died"
    );
    // Before anything runs, the next run to the same place puts the earlier publication back...
    let failing = sandbox.script("fails.py", "raise ValueError('no')\n");
    let failed = sandbox.forge(&args!["run", &failing, "--out", &out]);
    assert_ne!(failed.code(), 0, "{}", failed.stderr());
    assert_eq!(std::fs::read_to_string(&report).expect("restored"), "first");
    assert_eq!(leftovers(sandbox.dir.path()), Vec::<String>::new());
    // ...and a run that publishes replaces it whole.
    sandbox
        .forge(&args!["run", &third, "--json", "--out", &out])
        .assert_succeeded();
    assert_eq!(
        std::fs::read_to_string(&report).expect("published"),
        "third"
    );
    assert_eq!(leftovers(sandbox.dir.path()), Vec::<String>::new());
}
