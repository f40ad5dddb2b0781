//! Workspace tools and the permission gate, from outside (issue 10 §2): a script in each
//! language lists, reads, searches and writes a real folder; writes are denied unless allowed,
//! by effect flag or by name; every decision is journaled with its reason; no path escapes.

use serde_json::{Value, json};

use crate::util::{Sandbox, args};

/// A sandbox with a workspace folder holding `notes/todo.txt`, and a file beside it.
fn with_workspace() -> Sandbox {
    let sandbox = Sandbox::new();
    let ws = sandbox.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("notes")).expect("mkdir");
    std::fs::write(ws.join("notes/todo.txt"), "buy milk\nfix the gate\n").expect("write");
    std::fs::write(sandbox.dir.path().join("private.txt"), "not yours").expect("write");
    std::os::unix::fs::symlink("../private.txt", ws.join("link")).expect("symlink");
    sandbox
}

fn calls(sandbox: &Sandbox, id: &str) -> Vec<Value> {
    let shown = sandbox.forge(&["journal", "show", id, "--json"]);
    let shown: Value = serde_json::from_str(&shown.stdout()).expect("json");
    shown["calls"].as_array().expect("calls").clone()
}

const JS: &str = r#"
const listed = await tools.call("workspace.list", {path: "notes"});
const read = await tools.call("workspace.read", {path: "notes/todo.txt"});
const found = await tools.call("workspace.search", {pattern: "gate"});
let write;
try {
  write = await tools.call("workspace.write", {path: "notes/done.txt", content: "milk"});
} catch (e) {
  write = {code: e.code, message: e.message};
}
return {listed, read, found, write};
"#;

const PY: &str = r#"
import forge
listed = forge.call("workspace.list", {"path": "notes"})
read = forge.call("workspace.read", {"path": "notes/todo.txt"})
found = forge.call("workspace.search", {"pattern": "gate"})
try:
    write = forge.call("workspace.write", {"path": "notes/done.txt", "content": "milk"})
except forge.ToolError as e:
    write = {"code": e.code, "message": str(e)}
forge.result({"listed": listed, "read": read, "found": found, "write": write})
"#;

#[test]
fn scripts_read_the_workspace_and_write_only_when_allowed() {
    for (name, source) in [("js", JS), ("py", PY)] {
        let sandbox = with_workspace();
        let ws = sandbox.dir.path().join("ws");
        let script = sandbox.script(&format!("ws.{name}"), source);
        let denied = sandbox.forge(&args!["run", &script, "--json", "--workspace", &ws]);
        let report = denied.assert_succeeded();
        let value = &report["value"];
        assert_eq!(
            value["listed"],
            json!({"entries": [{"name": "todo.txt", "kind": "file", "size": 22}]}),
            "{name}"
        );
        assert_eq!(
            value["read"]["content"], "buy milk\nfix the gate\n",
            "{name}"
        );
        assert_eq!(
            value["found"]["matches"],
            json!([{"path": "notes/todo.txt", "line": 2, "text": "fix the gate"}]),
            "{name}"
        );
        assert_eq!(value["write"]["code"], "TOOL_DENIED", "{name}: {value:#}");
        assert!(
            !ws.join("notes/done.txt").exists(),
            "{name}: a denied write changes nothing"
        );
        let journaled = calls(&sandbox, report["id"].as_str().expect("id"));
        let write = &journaled[3];
        assert_eq!(write["status"], "denied", "{name}");
        assert!(
            write["decision"]
                .as_str()
                .unwrap_or_default()
                .contains("--allow-write"),
            "{name}: {write}"
        );
        assert!(
            journaled[0]["decision"]
                .as_str()
                .unwrap_or_default()
                .contains("`read` effect"),
            "{name}: {}",
            journaled[0]
        );

        let allowed = sandbox.forge(&args![
            "run",
            &script,
            "--json",
            "--workspace",
            &ws,
            "--allow-write"
        ]);
        let report = allowed.assert_succeeded();
        assert_eq!(
            report["value"]["write"],
            json!({"path": "notes/done.txt", "bytes": 4}),
            "{name}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("notes/done.txt")).expect("read"),
            "milk"
        );
        let journaled = calls(&sandbox, report["id"].as_str().expect("id"));
        assert_eq!(journaled[3]["status"], "succeeded", "{name}");
        assert_eq!(journaled[3]["paths"], json!(["notes/done.txt"]), "{name}");
    }
}

#[test]
fn rules_by_name_allow_and_deny_on_top_of_the_effect_flags() {
    let sandbox = with_workspace();
    let ws = sandbox.dir.path().join("ws");
    let source = r#"
const out = {};
for (const [name, input] of [["workspace.read", {path: "notes/todo.txt"}], ["workspace.write", {path: "w.txt", content: "x"}], ["workspace.delete", {path: "notes/todo.txt"}]]) {
  try { await tools.call(name, input); out[name] = "ran"; } catch (e) { out[name] = e.code; }
}
return out;"#;
    let run = sandbox.run_js(
        source,
        &args![
            "--workspace",
            &ws,
            "--allow",
            "workspace.w*",
            "--deny",
            "workspace.read",
            "--allow-write",
            "--deny",
            "*.delete"
        ],
    );
    let report = run.assert_succeeded();
    assert_eq!(
        report["value"],
        json!({"workspace.read": "TOOL_DENIED", "workspace.write": "ran", "workspace.delete": "TOOL_DENIED"})
    );
    assert!(
        ws.join("notes/todo.txt").exists(),
        "the denied delete never ran"
    );
    let journaled = calls(&sandbox, report["id"].as_str().expect("id"));
    assert_eq!(
        journaled[0]["decision"],
        "the rule --deny 'workspace.read' matches `workspace.read`"
    );
    assert_eq!(
        journaled[1]["decision"],
        "the rule --allow 'workspace.w*' matches `workspace.write`"
    );

    let by_name_only = sandbox.run_js(
        "return await tools.call('workspace.write', {path: 'n.txt', content: 'y'})",
        &args!["--workspace", &ws, "--allow", "workspace.write"],
    );
    assert_eq!(
        by_name_only.assert_succeeded()["value"]["bytes"],
        1,
        "an allow rule needs no effect flag"
    );
}

#[test]
fn ask_without_a_terminal_pauses_the_run_instead_of_denying() {
    // Issue 15: with nobody to ask, the call waits for `resume`; the script cannot catch it.
    let sandbox = with_workspace();
    let ws = sandbox.dir.path().join("ws");
    let run = sandbox.run_js(
        "try { await tools.call('workspace.write', {path: 'a.txt', content: 'x'}); return 'ran'; } catch (e) { return e.message; }",
        &args!["--workspace", &ws, "--ask"],
    );
    assert_eq!(run.status(), "paused", "{}", run.stdout());
    assert_eq!(run.error_code(), "APPROVAL_REQUIRED");
    assert_eq!(run.report()["pending"]["tool"], "workspace.write");
    assert!(!ws.join("a.txt").exists());
}

#[test]
fn no_path_a_script_gives_leads_out_of_the_workspace() {
    let sandbox = with_workspace();
    let ws = sandbox.dir.path().join("ws");
    let source = r#"
const out = [];
for (const [name, input] of [
  ["workspace.read", {path: "../private.txt"}],
  ["workspace.read", {path: "link"}],
  ["workspace.read", {path: "/etc/hostname"}],
  ["workspace.list", {path: ".."}],
  ["workspace.write", {path: "../private.txt", content: "mine"}],
  ["workspace.delete", {path: "../private.txt"}],
]) {
  try { await tools.call(name, input); out.push("escaped"); } catch (e) { out.push(e.code); }
}
return out;"#;
    let run = sandbox.run_js(source, &args!["--workspace", &ws, "--allow-write"]);
    let value = run.assert_succeeded()["value"].clone();
    for outcome in value.as_array().expect("array") {
        assert_ne!(outcome, "escaped", "{value}");
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.dir.path().join("private.txt")).expect("read"),
        "not yours"
    );
}

#[test]
fn a_missing_workspace_is_bad_input() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js("return 1", &["--workspace", "/no/such/folder"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("--workspace"), "{}", run.stderr());
}

#[test]
fn ask_on_a_terminal_puts_the_call_to_the_person() {
    for (answer, runs) in [("y", true), ("n", false)] {
        let sandbox = with_workspace();
        let ws = sandbox.dir.path().join("ws");
        let script = sandbox.script(
            "ask.js",
            "return await tools.call('workspace.write', {path: 'asked.txt', content: 'ok'})",
        );
        // The answer is typed on the terminal forge-host asks on.
        let mut child = sandbox
            .on_terminal(&args!["run", &script, "--workspace", &ws, "--ask"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run `script` (util-linux)");
        std::io::Write::write_all(
            &mut child.stdin.take().expect("stdin"),
            format!("{answer}\n").as_bytes(),
        )
        .expect("type the answer");
        let output = child.wait_with_output().expect("wait");
        let screen = String::from_utf8_lossy(&output.stdout);
        assert!(screen.contains("allow it? [y/N]"), "{screen}");
        assert_eq!(ws.join("asked.txt").exists(), runs, "{answer}: {screen}");
        let listed = sandbox.forge(&["journal", "list", "--json"]);
        let id = serde_json::from_str::<Vec<Value>>(&listed.stdout()).expect("json")[0]["id"]
            .as_str()
            .expect("id")
            .to_string();
        let call = &calls(&sandbox, &id)[0];
        let expected = if runs {
            "asked: a person said yes"
        } else {
            "asked: a person said no"
        };
        assert_eq!(call["decision"], expected, "{call}");
        assert_eq!(call["status"], if runs { "succeeded" } else { "denied" });
    }
}
