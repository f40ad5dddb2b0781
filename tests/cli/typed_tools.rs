//! Tools as functions ("code mode", issue 10 §3): every tool is also a function in both
//! languages, named by the host's one mapping, and `forge-host tools` prints the same catalog as
//! TypeScript declarations, Python stubs or JSON.

use serde_json::{Value, json};

use crate::util::{Sandbox, args};

/// A workspace holding `hello.txt`.
fn workspace(sandbox: &Sandbox) -> std::path::PathBuf {
    let ws = sandbox.workspace();
    std::fs::write(ws.join("hello.txt"), "hi").expect("write");
    ws
}

#[test]
fn tools_are_functions_in_javascript() {
    let sandbox = Sandbox::new();
    let ws = workspace(&sandbox);
    let run = sandbox.run_js(
        r#"
const echoed = await tools.echo({a: 1});
const read = await tools.workspace.read({path: "hello.txt"});
let denied;
try { await tools.workspace.write({path: "x.txt", content: "x"}); } catch (e) { denied = e.code; }
const listed = (await tools.list()).find((t) => t.name === "workspace.read").functionPath;
return {echoed, content: read.content, denied, listed, missing: typeof tools.nope,
        has: "workspace" in tools, call: typeof tools.call};
"#,
        &args!["--workspace", &ws],
    );
    assert_eq!(
        run.assert_succeeded()["value"],
        json!({"echoed": {"a": 1}, "content": "hi", "denied": "TOOL_DENIED",
               "listed": ["workspace", "read"], "missing": "undefined", "has": true, "call": "function"})
    );
}

#[test]
fn tools_are_functions_in_python() {
    let sandbox = Sandbox::new();
    let ws = workspace(&sandbox);
    let run = sandbox.run_py(
        r#"
import forge
echoed = forge.tools.echo(a=1)
read = forge.tools.workspace.read(path="hello.txt")
also = forge.tools.workspace.read({"path": "hello.txt"})
try:
    forge.tools.workspace.write(path="x.txt", content="x")
    denied = None
except forge.ToolError as e:
    denied = e.code
names = [t["name"] for t in forge.tools()]
forge.result({"echoed": echoed, "content": read["content"], "same": also == read, "denied": denied,
              "listed": "workspace.read" in names, "missing": hasattr(forge.tools, "nope")})
"#,
        &args!["--workspace", &ws],
    );
    assert_eq!(
        run.assert_succeeded()["value"],
        json!({"echoed": {"a": 1}, "content": "hi", "same": true, "denied": "TOOL_DENIED",
               "listed": true, "missing": false})
    );
}

#[test]
fn the_catalog_prints_as_typescript_python_and_json() {
    let sandbox = Sandbox::new();
    let ws = workspace(&sandbox);
    let ts = sandbox.forge(&args!["tools", "--format", "ts", "--workspace", &ws]);
    assert_eq!(ts.code(), 0, "{}", ts.stderr());
    let ts = ts.stdout();
    assert!(ts.contains("declare const tools: {"), "{ts}");
    assert!(ts.contains("  workspace: {"), "{ts}");
    assert!(
        ts.contains("    read(input: { /** A path relative to the workspace */ path: string }): Promise<unknown>;"),
        "{ts}"
    );
    assert!(!ts.contains(": any"), "no implicit any: {ts}");
    let py = sandbox
        .forge(&args!["tools", "--format", "py", "--workspace", &ws])
        .stdout();
    assert!(
        py.contains("    class workspace:") && py.contains("def read(*, path: str) -> Any:"),
        "{py}"
    );
    let json = sandbox.forge(&["tools", "--format", "json"]);
    let json: Value = serde_json::from_str(&json.stdout()).expect("json");
    let names: Vec<&str> = json["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "fail", "sleep"]);
}

#[test]
fn the_typescript_declarations_type_check_strictly() {
    let tsc = crate::util::repo().join("tests/peers/node_modules/.bin/tsc");
    assert!(
        tsc.exists(),
        "TypeScript is one of the test peers `cargo xtask test` installs in tests/peers"
    );
    let sandbox = Sandbox::new();
    let ws = workspace(&sandbox);
    let declared = sandbox.forge(&args!["tools", "--format", "ts", "--workspace", &ws]);
    let dts = sandbox.script("tools.d.ts", &declared.stdout());
    let good = sandbox.script(
        "good.ts",
        "export async function main(): Promise<unknown[]> {\n\
         return [await tools.workspace.read({ path: \"a.txt\" }), await tools.echo({ a: 1 }),\n\
         await tools.sleep({ ms: 1 }), await tools.workspace.list(), await tools.call(\"echo\", 1)];\n}\n",
    );
    let bad = sandbox.script(
        "bad.ts",
        "export async function main(): Promise<unknown[]> {\n\
         return [await tools.workspace.read({}), await tools.sleep({ ms: \"soon\" })];\n}\n",
    );
    let check = |file: &std::path::Path| {
        std::process::Command::new(&tsc)
            .args(["--noEmit", "--strict", "--lib", "es2022", "--types", ""])
            .arg(&dts)
            .arg(file)
            .current_dir(sandbox.dir.path())
            .output()
            .expect("run tsc")
    };
    let passed = check(&good);
    assert!(
        passed.status.success(),
        "{}{}",
        String::from_utf8_lossy(&passed.stdout),
        String::from_utf8_lossy(&passed.stderr)
    );
    let failed = check(&bad);
    let said = String::from_utf8_lossy(&failed.stdout);
    assert!(
        !failed.status.success(),
        "the declarations catch wrong inputs: {said}"
    );
    assert_eq!(said.matches("error TS").count(), 2, "{said}");
}
