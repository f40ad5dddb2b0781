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

/// `forge-host tools --format ts` in `sandbox`, written to `tools.d.ts`.
fn declarations(sandbox: &Sandbox) -> std::path::PathBuf {
    let ws = workspace(sandbox);
    let declared = sandbox.forge(&args!["tools", "--format", "ts", "--workspace", &ws]);
    assert_eq!(declared.code(), 0, "{}", declared.stderr());
    sandbox.script("tools.d.ts", &declared.stdout())
}

/// `tsc --noEmit --strict --lib es2022 --types ""` on the declarations `dts` and `file`: whether
/// it passed, and what it said.
fn type_check(sandbox: &Sandbox, dts: &std::path::Path, file: &std::path::Path) -> (bool, String) {
    let tsc = crate::util::repo().join("tests/peers/node_modules/.bin/tsc");
    assert!(
        tsc.exists(),
        "TypeScript is one of the test peers `cargo xtask test` installs in tests/peers"
    );
    let output = std::process::Command::new(&tsc)
        .args(["--noEmit", "--strict", "--lib", "es2022", "--types", ""])
        .arg(dts)
        .arg(file)
        .current_dir(sandbox.dir.path())
        .output()
        .expect("run tsc");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

#[test]
fn the_typescript_declarations_type_check_strictly() {
    let sandbox = Sandbox::new();
    let dts = declarations(&sandbox);
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
    let (passed, said) = type_check(&sandbox, &dts, &good);
    assert!(passed, "{said}");
    let (passed, said) = type_check(&sandbox, &dts, &bad);
    assert!(!passed, "the declarations catch wrong inputs: {said}");
    assert_eq!(said.matches("error TS").count(), 2, "{said}");
}

/// A script as agents write them, using the web platform's globals and forge's: it type-checks
/// with the declarations alone (no DOM lib), and misuses of those globals do not.
#[test]
fn the_web_platform_globals_type_check() {
    let sandbox = Sandbox::new();
    let dts = declarations(&sandbox);
    let good = sandbox.script("web.ts", WEB_SCRIPT);
    let (passed, said) = type_check(&sandbox, &dts, &good);
    assert!(passed, "{said}");
    let bad = sandbox.script("bad_web.ts", BAD_WEB_SCRIPT);
    let (passed, said) = type_check(&sandbox, &dts, &bad);
    assert!(!passed, "the declarations catch misuses: {said}");
    assert_eq!(said.matches("error TS").count(), 3, "{said}");
    for (line, what) in [
        (2, "new URL(5)"),
        (3, "setTimeout(\"code\", 1)"),
        (4, "randomUUID(1)"),
    ] {
        assert!(
            said.contains(&format!("bad_web.ts({line},")),
            "{what}: {said}"
        );
    }
}

const WEB_SCRIPT: &str = r#"export async function main(): Promise<unknown> {
  const url = new URL("/search?q=forge&page=2", "https://example.com");
  url.searchParams.set("page", "3");
  url.searchParams.append("tag", "wasm");
  const query = Object.fromEntries(url.searchParams);
  for (const [key, value] of url.searchParams) console.log(key, value);
  const bytes = new TextEncoder().encode("héllo");
  const decoded = new TextDecoder().decode(bytes);
  const copy = structuredClone({ at: new Date(0), seen: new Set([1, 2]) });
  copy.seen.add(3);
  await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise<void>((resolve) => setTimeout(resolve, 10));
  const timer = setInterval(() => progress("tick"), 1000);
  clearInterval(timer);
  queueMicrotask(() => {});
  const controller = new AbortController();
  const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(5000)]);
  signal.addEventListener("abort", () => console.warn("aborted", signal.reason), { once: true });
  controller.abort();
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const key = await crypto.subtle.importKey(
    "raw", new TextEncoder().encode("secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, bytes);
  const valid = await crypto.subtle.verify("HMAC", key, mac, bytes);
  const id: string = crypto.randomUUID();
  const random = crypto.getRandomValues(new Uint8Array(16));
  const data: { n: number } = await new Response('{"n": 1}').json();
  const response = new Response(JSON.stringify({ ok: true }), { headers: { "content-type": "application/json" } });
  const headers = new Headers(response.headers);
  const blob = new Blob(["a,b\n", bytes], { type: "text/csv" });
  const file = new File([blob], "data.csv", { type: "text/csv" });
  const stream = new ReadableStream<string>({
    start(controller) {
      controller.enqueue("hello ");
      controller.enqueue("world");
      controller.close();
    },
  });
  const upper = new TransformStream<string, string>({
    transform(chunk, controller) {
      controller.enqueue(chunk.toUpperCase());
    },
  });
  let shouted = "";
  for await (const chunk of stream.pipeThrough(upper)) shouted += chunk;
  const gzipped = await new Response(
    file.stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer();
  const roundTrip = await new Response(
    new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip")).pipeThrough(new TextDecoderStream()),
  ).text();
  const reader = new Blob(["x"]).stream().getReader();
  const first = await reader.read();
  if (!first.done) console.log(first.value.byteLength);
  const started = performance.now();
  console.table([{ a: 1 }, { a: 2 }]);
  console.time("t");
  console.timeEnd("t");
  const runs = (state.get<number>("runs") ?? 0) + 1;
  state.set("runs", runs);
  text(`run ${runs} at ${navigator.userAgent}`);
  progress("done", 1, 1);
  try {
    await fetch("https://example.com");
  } catch (error) {
    if (error instanceof TypeError) console.error(error.message);
  }
  const event = new CustomEvent("ready", { detail: { n: 1 } });
  const target = new EventTarget();
  target.addEventListener("ready", (e) => console.log((e as CustomEvent<{ n: number }>).detail.n));
  target.dispatchEvent(event);
  const price = new Intl.NumberFormat("de-DE", { style: "currency", currency: "EUR" }).format(12.5);
  const when = new Date(0).toLocaleString("en-US", { timeZone: "Asia/Tokyo", dateStyle: "medium" });
  const words = [...new Intl.Segmenter("en", { granularity: "word" }).segment("a b")].length;
  const sorted = ["b", "a"].sort(new Intl.Collator("de").compare).join();
  const failure = new ForgeError("TOOL_FAILED", "no");
  const aborted = new DOMException("stop", "AbortError");
  return {
    href: url.href, query, decoded, hex, valid, id, random: random.length, n: data.n,
    type: headers.get("content-type"), size: file.size, name: file.name, shouted, roundTrip,
    elapsed: performance.now() - started, code: failure.code, abortName: aborted.name,
    b64: btoa("hi"), plain: atob("aGk="), price, when, words, sorted,
  };
}
"#;

const BAD_WEB_SCRIPT: &str = r#"export async function main(): Promise<unknown> {
  const url = new URL(5);
  setTimeout("code", 1);
  return [url.href, crypto.randomUUID(1)];
}
"#;
