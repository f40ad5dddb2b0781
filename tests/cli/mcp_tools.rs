//! MCP servers as tool sources (issue 10 §1): the real npm servers `server-filesystem` and
//! `server-everything`, started by `forge-host run --mcp`, called from JavaScript and Python.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::util::{Sandbox, args, repo};

/// An executable the test set-up installs in tests/peers (`cargo xtask test`).
pub fn peer(name: &str) -> PathBuf {
    let path = repo().join("tests/peers/node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is one of the test peers `cargo xtask test` installs in tests/peers",
        path.display()
    );
    path
}

/// `--mcp fs=...` over a folder `data` of the sandbox holding `notes.txt`.
fn filesystem(sandbox: &Sandbox) -> (String, PathBuf) {
    let data = sandbox.dir.path().join("data-files");
    std::fs::create_dir_all(&data).expect("mkdir");
    std::fs::write(data.join("notes.txt"), "first line\nsecond line\n").expect("write");
    let flag = format!(
        "fs={} '{}'",
        peer("mcp-server-filesystem").display(),
        data.display()
    );
    (flag, data)
}

fn everything() -> String {
    format!("ev={}", peer("mcp-server-everything").display())
}

#[test]
fn javascript_lists_reads_and_writes_through_server_filesystem_only_when_allowed() {
    let sandbox = Sandbox::new();
    let (fs, data) = filesystem(&sandbox);
    let notes = data.join("notes.txt");
    let target = data.join("out.txt");
    let script = format!(
        r#"
        const names = (await tools.list()).map(t => t.name).filter(n => n.startsWith("fs."));
        const read = await tools.fs.read_text_file({{path: {notes}}});
        let write;
        try {{
            write = await tools.fs.write_file({{path: {target}, content: "written by a script"}});
        }} catch (e) {{
            write = {{code: e.code, message: e.message}};
        }}
        return {{names, read, write}};
        "#,
        notes = json!(notes),
        target = json!(target),
    );
    let denied = sandbox.run_js(&script, &args!["--mcp", &fs]);
    let report = denied.assert_succeeded();
    let names = report["value"]["names"].as_array().expect("names");
    for name in ["fs.read_text_file", "fs.write_file", "fs.list_directory"] {
        assert!(names.contains(&json!(name)), "{name} in {names:?}");
    }
    let read = report["value"]["read"].to_string();
    assert!(read.contains("second line"), "{read}");
    assert_eq!(
        report["value"]["write"]["code"], "TOOL_DENIED",
        "{report:#}"
    );
    assert!(!target.exists(), "a denied write leaves the file untouched");

    let allowed = sandbox.run_js(&script, &args!["--mcp", &fs, "--allow-write"]);
    let report = allowed.assert_succeeded();
    assert!(report["value"]["write"]["code"].is_null(), "{report:#}");
    assert_eq!(
        std::fs::read_to_string(&target).expect("written"),
        "written by a script"
    );
    // The write is journaled with the path it touched; a rerun gets its tools from the same flags.
    let id = report["id"].as_str().expect("id");
    let shown = sandbox.forge(&["journal", "show", id, "--json"]);
    let calls = shown.report()["calls"].clone();
    let write = calls
        .as_array()
        .expect("calls")
        .iter()
        .find(|c| c["tool"] == "fs.write_file")
        .cloned()
        .expect("the write is journaled");
    assert_eq!(write["effect"], "write");
    assert_eq!(write["paths"], json!([target]));
    let rerun = sandbox.forge(&args!["rerun", id, "--json", "--mcp", &fs]);
    assert_eq!(
        rerun.assert_succeeded()["value"]["read"],
        report["value"]["read"]
    );
}

#[test]
fn python_lists_reads_and_writes_through_server_filesystem_only_when_allowed() {
    let sandbox = Sandbox::new();
    let (fs, data) = filesystem(&sandbox);
    let notes = data.join("notes.txt");
    let target = data.join("from-python.txt");
    let script = format!(
        r#"
import forge
names = [t["name"] for t in forge.tools() if t["name"].startswith("fs.")]
read = forge.tools.fs.read_text_file(path={notes})
try:
    write = forge.tools.fs.write_file(path={target}, content="written by python")
except forge.ToolError as e:
    write = {{"code": e.code}}
forge.result({{"names": names, "read": read, "write": write}})
"#,
        notes = json!(notes),
        target = json!(target),
    );
    let denied = sandbox.run_py(&script, &args!["--mcp", &fs]);
    let report = denied.assert_succeeded();
    assert!(
        report["value"]["names"]
            .as_array()
            .expect("names")
            .contains(&json!("fs.read_text_file"))
    );
    assert!(report["value"]["read"].to_string().contains("first line"));
    assert_eq!(report["value"]["write"]["code"], "TOOL_DENIED");
    assert!(!target.exists());

    let allowed = sandbox.run_py(&script, &args!["--mcp", &fs, "--allow-write"]);
    allowed.assert_succeeded();
    assert_eq!(
        std::fs::read_to_string(&target).expect("written"),
        "written by python"
    );
}

#[test]
fn results_come_as_structured_content_or_content_and_calls_are_journaled() {
    let sandbox = Sandbox::new();
    let script = r#"
        const echo = await tools.ev.echo({message: "hi"});
        const structured = await tools.ev.get_structured_content({location: "New York"});
        let failure;
        try { await tools.ev.get_sum({a: "not a number", b: 1}); }
        catch (e) { failure = e.code; }
        return {echo, structured, failure};
    "#;
    let run = sandbox.run_js(script, &args!["--mcp", &everything()]);
    let report = run.assert_succeeded();
    assert_eq!(
        report["value"]["echo"],
        json!({"content": [{"type": "text", "text": "Echo: hi"}]})
    );
    assert!(
        report["value"]["structured"].get("content").is_none(),
        "structuredContent is given as it is: {report:#}"
    );
    assert!(report["value"]["structured"]["temperature"].is_number());
    assert_eq!(report["value"]["failure"], "TOOL_FAILED");
    let id = report["id"].as_str().expect("id");
    let shown = sandbox.forge(&["journal", "show", id, "--json"]);
    let calls = shown.report()["calls"].clone();
    let tools: Vec<&str> = calls
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert_eq!(
        tools,
        ["ev.echo", "ev.get-structured-content", "ev.get-sum"]
    );
    assert_eq!(calls[0]["effect"], "read");
}

#[test]
fn a_server_killed_mid_run_fails_pending_and_later_calls_naming_it() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.workspace();
    // The server runs under a shell that kills it once the script writes `kill-now`.
    let trigger = workspace.join("kill-now");
    let wrapper = format!(
        "ev=sh -c 'exec 3<&0; {} <&3 & server=$!; while [ ! -e {} ]; do sleep 0.02; done; kill -9 $server'",
        peer("mcp-server-everything").display(),
        trigger.display()
    );
    let script = r#"
        await tools.ev.echo({message: "alive"});
        const pending = tools.ev.trigger_long_running_operation({duration: 60, steps: 2});
        await tools.workspace.write({path: "kill-now", content: ""});
        const failed = [];
        try { await pending; } catch (e) { failed.push([e.code, e.message]); }
        try { await tools.ev.echo({message: "again"}); } catch (e) { failed.push([e.code, e.message]); }
        return failed;
    "#;
    let run = sandbox.run_js(
        script,
        &args![
            "--mcp",
            &wrapper,
            "--workspace",
            &workspace,
            "--allow-write",
            "--timeout",
            "30s"
        ],
    );
    let report = run.assert_succeeded();
    let failed = report["value"].as_array().expect("two failures");
    assert_eq!(failed.len(), 2, "{report:#}");
    for failure in failed {
        assert_eq!(failure[0], "TOOL_FAILED", "{report:#}");
        assert!(
            failure[1].as_str().unwrap_or_default().contains("`ev`"),
            "names the server: {failure}"
        );
    }
}

#[test]
fn a_call_past_tool_timeout_is_cancelled_and_the_server_goes_on() {
    let sandbox = Sandbox::new();
    let script = r#"
        let cut;
        try { await tools.ev.trigger_long_running_operation({duration: 60, steps: 2}); }
        catch (e) { cut = [e.code, e.message]; }
        return {cut, after: await tools.ev.echo({message: "still here"})};
    "#;
    let run = sandbox.run_js(
        script,
        &args!["--mcp", &everything(), "--tool-timeout", "300ms"],
    );
    let report = run.assert_succeeded();
    assert_eq!(report["value"]["cut"][0], "TOOL_FAILED");
    assert!(
        report["value"]["cut"][1]
            .as_str()
            .unwrap_or_default()
            .contains("--tool-timeout"),
        "{report:#}"
    );
    assert_eq!(
        report["value"]["after"]["content"][0]["text"],
        "Echo: still here"
    );
    let bad = sandbox.run_js("return 1", &args!["--tool-timeout", "soon"]);
    assert_eq!(bad.code(), 2, "{}", bad.stderr());
}

#[test]
fn a_server_that_cannot_start_stops_the_run_before_it_starts_with_exit_2() {
    let sandbox = Sandbox::new();
    let script = sandbox.script("s.js", "return 1");
    let crashed = sandbox.forge(&args![
        "run",
        &script,
        "--mcp",
        "broken=sh -c 'echo cannot open the database >&2; exit 3'"
    ]);
    assert_eq!(crashed.code(), 2, "{}", crashed.stderr());
    let said = crashed.stderr();
    assert!(
        said.contains("`broken`") && said.contains("cannot open the database"),
        "{said}"
    );
    let missing = sandbox.forge(&args![
        "run",
        &script,
        "--mcp",
        "gone=/nonexistent/mcp-server"
    ]);
    assert_eq!(missing.code(), 2);
    assert!(missing.stderr().contains("`gone`"), "{}", missing.stderr());
    for bad in [
        "nameless",
        "a.b=cmd",
        "x=https://example.com/mcp",
        "echo=cmd",
        "fs=unclosed 'quote",
    ] {
        let refused = sandbox.forge(&args!["run", &script, "--mcp", bad]);
        assert_eq!(refused.code(), 2, "--mcp {bad}: {}", refused.stderr());
    }
    let journal = sandbox.forge(&["journal", "list", "--json"]);
    assert_eq!(journal.stdout().trim(), "[]", "nothing ran");
}

#[test]
fn a_server_that_never_answers_is_given_up_on_after_10_seconds() {
    let sandbox = Sandbox::new();
    let script = sandbox.script("s.js", "return 1");
    let silent = sandbox.forge(&args![
        "run",
        &script,
        "--mcp",
        "mute=sh -c 'echo starting >&2; exec sleep 600'"
    ]);
    assert_eq!(silent.code(), 2);
    let said = silent.stderr();
    assert!(
        said.contains("`mute`") && said.contains("10s") && said.contains("starting"),
        "{said}"
    );
}

#[test]
fn config_files_trust_and_the_catalog_of_a_server() {
    let sandbox = Sandbox::new();
    let config = sandbox.script(
        "mcp.json",
        &json!({"mcpServers": {
            "ev": {"command": peer("mcp-server-everything"), "args": []},
            "off": {"command": "/nonexistent", "disabled": true}
        }})
        .to_string(),
    );
    let listed = sandbox.forge(&args!["tools", "--format", "json", "--mcp-config", &config]);
    assert_eq!(listed.code(), 0, "{}", listed.stderr());
    let catalog: Value = serde_json::from_str(&listed.stdout()).expect("json");
    let find = |catalog: &Value, name: &str| -> Value {
        catalog["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {catalog:#}"))
    };
    let structured = find(&catalog, "ev.get-structured-content");
    assert_eq!(structured["effect"], "read");
    assert!(structured["output_schema"].is_object());
    assert_eq!(
        structured["function_path"],
        json!(["ev", "get_structured_content"])
    );
    assert_eq!(
        find(&catalog, "ev.toggle-simulated-logging")["effect"],
        "write"
    );
    assert_eq!(
        find(&catalog, "ev.gzip-file-as-resource")["effect"],
        "external"
    );
    let trusted = sandbox.forge(&args![
        "tools",
        "--format",
        "json",
        "--mcp-config",
        &config,
        "--trust",
        "ev=read"
    ]);
    let catalog: Value = serde_json::from_str(&trusted.stdout()).expect("json");
    assert_eq!(find(&catalog, "ev.gzip-file-as-resource")["effect"], "read");
    let unknown = sandbox.forge(&args![
        "tools",
        "--mcp-config",
        &config,
        "--trust",
        "nope=read"
    ]);
    assert_eq!(unknown.code(), 2);
}

#[test]
fn a_servers_stderr_goes_to_the_task_log() {
    let sandbox = Sandbox::new();
    let (fs, _) = filesystem(&sandbox);
    let run = sandbox.run_js("return 1", &args!["--mcp", &fs]);
    let report = run.assert_succeeded();
    let id = report["id"].as_str().expect("id");
    let log = sandbox.forge(&["logs", id]);
    assert!(log.stdout().contains("[mcp fs] "), "{}", log.stdout());
}

#[test]
fn generated_declarations_of_real_servers_type_check_strictly() {
    let sandbox = Sandbox::new();
    let (fs, _) = filesystem(&sandbox);
    let declared = sandbox.forge(&args![
        "tools",
        "--format",
        "ts",
        "--mcp",
        &fs,
        "--mcp",
        &everything()
    ]);
    assert_eq!(declared.code(), 0, "{}", declared.stderr());
    let dts = declared.stdout();
    assert!(dts.contains("read_text_file(") && dts.contains("get_structured_content("));
    assert!(!dts.contains(": any"), "no implicit any");
    let dts = sandbox.script("tools.d.ts", &dts);
    let use_them = sandbox.script(
        "use.ts",
        "export async function main(): Promise<unknown[]> {\n\
         const read = await tools.fs.read_text_file({ path: \"/x\" });\n\
         const weather = await tools.ev.get_structured_content({ location: \"Chicago\" });\n\
         return [read, weather.temperature, await tools.ev.echo({ message: \"m\" })];\n}\n",
    );
    let tsc = peer("tsc");
    let checked = std::process::Command::new(&tsc)
        .args(["--noEmit", "--strict", "--lib", "es2022", "--types", ""])
        .arg(&dts)
        .arg(&use_them)
        .current_dir(sandbox.dir.path())
        .output()
        .expect("run tsc");
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    let py = sandbox.forge(&args!["tools", "--format", "py", "--mcp", &everything()]);
    assert!(
        py.stdout().contains("def get_structured_content("),
        "{}",
        py.stdout()
    );
}

/// Whether process `pid` is gone (or a zombie waiting to be reaped).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn a_servers_whole_process_tree_ends_with_the_run() {
    let sandbox = Sandbox::new();
    let pids = sandbox.dir.path().join("pids");
    // A server that starts a process of its own, as `npx` does.
    let server = format!(
        "tree=sh -c 'sleep 600 & echo $! > {pids}; exec {everything}'",
        pids = pids.display(),
        everything = peer("mcp-server-everything").display()
    );
    let run = sandbox.run_js(
        "return (await tools.tree.echo({message: 'x'})).content[0].text",
        &args!["--mcp", &server],
    );
    assert_eq!(run.assert_succeeded()["value"], "Echo: x");
    let grandchild = std::fs::read_to_string(&pids).expect("the server wrote its child's pid");
    assert!(
        gone(grandchild.trim()),
        "the server's own child ends with forge-host"
    );
}

#[test]
fn responses_over_the_budget_fail_while_read_and_the_server_goes_on() {
    let sandbox = Sandbox::new();
    let script = r#"
        const outcome = async (n) => {
            try { await tools.ev.echo({message: "x".repeat(n)}); return "ok"; }
            catch (e) { return e.code + ": " + e.message; }
        };
        return [await outcome(1000), await outcome(100000), await outcome(900000), await outcome(10)];
    "#;
    let run = sandbox.run_js(
        script,
        &args!["--mcp", &everything(), "--max-call-response", "64KiB"],
    );
    let report = run.assert_succeeded();
    let outcomes = report["value"].as_array().expect("outcomes");
    assert_eq!(outcomes[0], "ok");
    for refused in &outcomes[1..3] {
        assert!(
            refused
                .as_str()
                .unwrap_or_default()
                .starts_with("BUDGET_EXCEEDED"),
            "{report:#}"
        );
    }
    assert!(
        outcomes[2]
            .as_str()
            .unwrap_or_default()
            .contains("forge-host reads of one message"),
        "the 900 kB response was refused while it was read: {report:#}"
    );
    assert_eq!(
        outcomes[3], "ok",
        "the connection survives a refused response"
    );
}
