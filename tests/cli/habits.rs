//! Command-line habits users bring from `node` and `python` (issue 9): a script from stdin or
//! `-e`, a progress bar that never shares a line with the result, a quiet exit on a closed
//! pipe, and exit 1 (not 2) for a failure inside forge-host.

use std::io::Write;
use std::process::Stdio;

use crate::util::{NO_ARGS, Sandbox, args};

#[test]
fn a_script_from_stdin_runs_in_the_language_named() {
    let sandbox = Sandbox::new();
    let mut child = sandbox
        .command(&["run", "-", "--lang", "js", "--json"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"return 6 * 7;")
        .expect("write the script");
    let output = child.wait_with_output().expect("wait");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one report");
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], 42);
    assert_eq!(report["engine"], "javascript-quickjs");

    let rerun = sandbox.forge(&["rerun", report["id"].as_str().expect("id"), "--json"]);
    assert_eq!(rerun.report()["value"], 42, "{}", rerun.stderr());
}

#[test]
fn inline_code_runs_like_node_e_and_python_c() {
    let sandbox = Sandbox::new();
    let js = sandbox.forge(&[
        "run",
        "-e",
        "return [1, 2].map(x => x * 10)",
        "--lang",
        "js",
        "--json",
    ]);
    assert_eq!(
        js.report()["value"],
        serde_json::json!([10, 20]),
        "{}",
        js.stderr()
    );
    let py = sandbox.forge(&[
        "run",
        "-e",
        "import forge\nforge.result(2 ** 10)",
        "--lang",
        "python",
        "--json",
    ]);
    assert_eq!(py.report()["value"], 1024, "{}", py.stderr());
    assert_eq!(py.report()["engine"], "python-cpython");
    let lua = sandbox.forge(&["run", "-e", "return 2 ^ 10", "--lang", "lua", "--json"]);
    assert_eq!(lua.report()["value"], 1024.0, "{}", lua.stderr());
    assert_eq!(lua.report()["engine"], "lua");
    let by_engine = sandbox.forge(&["run", "-e", "return 'hi'", "--engine", "javascript-quickjs"]);
    assert_eq!(by_engine.code(), 0, "{}", by_engine.stderr());
    assert_eq!(by_engine.stdout().trim(), "\"hi\"");
}

#[test]
fn a_script_without_a_name_needs_a_language() {
    let sandbox = Sandbox::new();
    for args in [vec!["run", "-e", "return 1"], vec!["run", "-"]] {
        let run = sandbox.forge(&args);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.stderr());
        assert!(
            run.stderr().contains("error INVALID_INPUT") && run.stderr().contains("--lang"),
            "{args:?}: {}",
            run.stderr()
        );
    }
    let both = sandbox.forge(&["run", "x.js", "-e", "return 1", "--lang", "js"]);
    assert_eq!(both.code(), 2, "a file and -e together are bad usage");
    let script = sandbox.script("real.js", "return 1");
    let mismatch = sandbox.forge(&["run", script.to_string_lossy().as_ref(), "--lang", "py"]);
    assert_eq!(mismatch.code(), 2, "{}", mismatch.stderr());
}

#[test]
fn a_closed_pipe_ends_a_listing_quietly() {
    let sandbox = Sandbox::new();
    for _ in 0..3 {
        sandbox.run_js("return 1", NO_ARGS).assert_succeeded();
    }
    // The reading end is closed before forge-host writes anything: every write fails with
    // EPIPE, as when `head -1` has gone.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let output = sandbox
        .command(&["journal", "list"])
        .stdout(writer)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "no panic, no message: {stderr}");
}

#[test]
fn a_failure_inside_forge_host_exits_1_and_bad_input_exits_2() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js("text('hello'); return 1", NO_ARGS);
    let id = run.assert_succeeded()["id"]
        .as_str()
        .expect("id")
        .to_string();
    // The log of the run becomes something that cannot be read as a file.
    let log = sandbox.data_dir().join("logs").join(format!("{id}.log"));
    std::fs::remove_file(&log).expect("the run wrote a log");
    std::fs::create_dir(&log).expect("mkdir");
    let broken = sandbox.forge(&["logs", &id]);
    assert_eq!(broken.code(), 1, "{}", broken.stderr());
    assert!(broken.stderr().starts_with("error"), "{}", broken.stderr());
    let unknown = sandbox.forge(&["logs", "no-such-run"]);
    assert_eq!(unknown.code(), 2, "{}", unknown.stderr());
}

#[test]
fn the_progress_bar_is_cleared_before_the_result_is_printed() {
    let sandbox = Sandbox::new();
    let script = sandbox.script(
        "steps.js",
        "for (let i = 1; i <= 5; i++) progress('step', i, 5); return 'done';",
    );
    let output = sandbox
        .on_terminal(&args!["run", &script])
        .output()
        .expect("run `script` (util-linux)");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{screen}");
    assert!(screen.contains("] 5/5 step"), "a bar was drawn: {screen:?}");
    let result_line = screen
        .split(['\n', '\r'])
        .map(|l| l.trim_matches(|c: char| c.is_whitespace()))
        .find(|l| l.contains("\"done\""))
        .unwrap_or_else(|| panic!("no result in {screen:?}"));
    assert!(
        !result_line.contains('#') && !result_line.contains("step"),
        "the result shares its line with the bar: {result_line:?} in {screen:?}"
    );
}
