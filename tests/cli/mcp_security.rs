//! The MCP front door lets in only what it was told to (issue 26): a client's `inputs` lie
//! inside `--inputs-root`, every HTTP request carries the server's bearer token (TLS off
//! loopback), and no caller makes the server hold an unbounded message, script or queue. The
//! clients are the official Python MCP SDK and, for floods, raw JSON-RPC lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{Value, json};

use crate::certs::TestCa;
use crate::mcp_server::{HttpServer, Transport, drive};
use crate::util::{Sandbox, args, repo};

/// A folder to share, a secret beside it, and the ways out of it a client might try.
struct Shared {
    _dir: tempfile::TempDir,
    root: PathBuf,
    secret: PathBuf,
}

const SECRET: &str = "ssh-ed25519 not-for-the-sandbox";

impl Shared {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("shared");
        let outside = dir.path().join("private");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(root.join("data.csv"), "a,b\n1,2\n").expect("write");
        std::fs::write(root.join("sub/notes.txt"), "inside").expect("write");
        let secret = outside.join("id_rsa");
        std::fs::write(&secret, SECRET).expect("write");
        std::os::unix::fs::symlink(&secret, root.join("leak")).expect("symlink");
        std::os::unix::fs::symlink(&outside, root.join("away")).expect("symlink");
        Shared {
            _dir: dir,
            root,
            secret,
        }
    }

    /// Paths that lead out of the root, as a client would write them.
    fn escapes(&self) -> Vec<String> {
        vec![
            self.secret.display().to_string(),
            "../private/id_rsa".into(),
            format!("{}/../private/id_rsa", self.root.display()),
            "leak".into(),
            "away/id_rsa".into(),
            format!("{}/away/id_rsa", self.root.display()),
            "/etc/passwd".into(),
        ]
    }
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(kind) if kind.is_file() => {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    if bytes
                        .windows(needle.len())
                        .any(|window| window == needle.as_bytes())
                    {
                        found.push(path);
                    }
                }
                _ => {}
            }
        }
    }
    found
}

fn check_confinement(out: &Value, shared: &Shared) {
    let results = out["results"].as_array().expect("results");
    assert_eq!(results[0]["structured"]["value"]["data.csv"], "a,b\n1,2\n");
    assert_eq!(results[1]["structured"]["value"]["notes.txt"], "inside");
    for (result, path) in results[2..].iter().zip(shared.escapes()) {
        assert_eq!(result["is_error"], true, "{path}: {result}");
        assert_eq!(
            result["structured"]["error"]["code"], "INVALID_INPUT",
            "{path}: {result}"
        );
        let message = result["structured"]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(message.starts_with("inputs[0]"), "{path}: {message}");
        assert!(!message.contains(SECRET), "{message}");
    }
}

#[test]
fn inputs_are_confined_to_the_inputs_root_on_both_transports() {
    let shared = Shared::new();
    let sandbox = Sandbox::new();
    let root = shared.root.display().to_string();
    let server = HttpServer::start(&sandbox, &["--inputs-root", &root]);
    let mut inputs = vec![
        "data.csv".to_string(),
        format!("{}/sub/notes.txt", shared.root.display()),
    ];
    inputs.extend(shared.escapes());
    let extra: Vec<String> = inputs
        .iter()
        .flat_map(|path| ["--input".to_string(), path.clone()])
        .collect();
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    for transport in [
        Transport::Stdio(vec!["--inputs-root".into(), root.clone()]),
        server.transport(),
    ] {
        let out = drive(&sandbox, "inputs", &transport, &extra);
        check_confinement(&out, &shared);
    }
    // Nothing of the secret was copied anywhere forge-host keeps files.
    assert_eq!(
        files_holding(&sandbox.data_dir(), SECRET),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn the_workspace_is_the_inputs_root_by_default_and_without_either_inputs_are_refused() {
    let shared = Shared::new();
    let sandbox = Sandbox::new();
    let root = shared.root.display().to_string();
    let secret = shared.secret.display().to_string();
    let out = drive(
        &sandbox,
        "inputs",
        &Transport::Stdio(vec!["--workspace".into(), root]),
        &["--input", "data.csv", "--input", &secret],
    );
    let results = out["results"].as_array().expect("results");
    assert_eq!(results[0]["structured"]["value"]["data.csv"], "a,b\n1,2\n");
    assert_eq!(results[1]["structured"]["error"]["code"], "INVALID_INPUT");

    let out = drive(
        &sandbox,
        "inputs",
        &Transport::Stdio(vec![]),
        &["--input", &secret],
    );
    let refused = &out["results"][0];
    assert_eq!(refused["structured"]["error"]["code"], "INVALID_INPUT");
    let message = refused["structured"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("--inputs-root"), "{message}");
    assert_eq!(
        files_holding(&sandbox.data_dir(), SECRET),
        Vec::<PathBuf>::new()
    );
}

/// `mcp_drive.py probe`: the status and `WWW-Authenticate` of one initialize request.
fn probe(sandbox: &Sandbox, url: &str, token_file: Option<&Path>, ca: Option<&Path>) -> Value {
    let mut extra = Vec::new();
    if let Some(file) = token_file {
        extra.extend(["--token-file".to_string(), file.display().to_string()]);
    }
    if let Some(ca) = ca {
        extra.extend(["--ca".to_string(), ca.display().to_string()]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let transport = Transport::Http {
        url: url.to_string(),
        token_file: None,
        ca: None,
    };
    drive(sandbox, "probe", &transport, &extra)
}

#[test]
fn http_needs_the_servers_own_bearer_token() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &[]);
    let other = HttpServer::start(&sandbox, &[]);
    let token_file = server.token_file.clone().expect("a generated token");
    let token = std::fs::read_to_string(&token_file).expect("token");
    let token = token.trim();
    assert_eq!(token.len(), 64, "32 random bytes, hex");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&token_file).expect("meta").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the token file is its owner's only");

    let missing = probe(&sandbox, &server.url, None, None);
    assert_eq!(missing["status"], 401, "{missing}");
    let challenge = missing["www_authenticate"].as_str().unwrap_or_default();
    assert!(challenge.starts_with("Bearer"), "{missing}");

    let wrong = sandbox.dir.path().join("wrong.token");
    std::fs::write(&wrong, "not-the-token").expect("write");
    let refused = probe(&sandbox, &server.url, Some(&wrong), None);
    assert_eq!(refused["status"], 401, "{refused}");
    assert!(
        refused["www_authenticate"]
            .as_str()
            .unwrap_or_default()
            .contains("invalid_token"),
        "{refused}"
    );
    let elsewhere = other.token_file.clone().expect("its own token");
    let foreign = probe(&sandbox, &server.url, Some(&elsewhere), None);
    assert_eq!(foreign["status"], 401, "another server's token: {foreign}");
    let allowed = probe(&sandbox, &server.url, Some(&token_file), None);
    assert_eq!(allowed["status"], 200, "{allowed}");

    // The SDK with the token runs a script.
    let out = drive(&sandbox, "basic", &server.transport(), &[]);
    crate::mcp_server::assert_basic(&out);

    // Refusals are logged, without any token.
    let logged: Vec<String> = server.stderr.try_iter().collect();
    let refusals: Vec<&String> = logged
        .iter()
        .filter(|l| l.contains("refused a request"))
        .collect();
    assert_eq!(refusals.len(), 3, "{logged:?}");
    let foreign_token = std::fs::read_to_string(&elsewhere).expect("token");
    for line in &logged {
        assert!(
            !line.contains(token) && !line.contains(foreign_token.trim()),
            "{line}"
        );
    }
}

#[test]
fn a_token_file_is_used_as_given_and_no_auth_or_clear_text_is_refused_off_loopback() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir.path().join("given.token");
    std::fs::write(&file, "a-token-the-operator-chose\n").expect("write");
    let path = file.display().to_string();
    let server = HttpServer::start(&sandbox, &["--token-file", &path]);
    assert_eq!(server.token_file, None, "nothing is generated or written");
    assert_eq!(
        probe(&sandbox, &server.url, Some(&file), None)["status"],
        200
    );
    assert_eq!(probe(&sandbox, &server.url, None, None)["status"], 401);

    let open = HttpServer::start(&sandbox, &["--no-auth"]);
    assert_eq!(probe(&sandbox, &open.url, None, None)["status"], 200);

    // Refused before anything is bound: no packet leaves loopback.
    for (bad, names) in [
        (
            args!["mcp", "--http", "0.0.0.0:0", "--no-auth"].to_vec(),
            "--no-auth",
        ),
        (args!["mcp", "--http", "0.0.0.0:0"].to_vec(), "--tls-cert"),
        (args!["mcp", "--no-auth"].to_vec(), "--http"),
        (
            args!["mcp", "--http", "0", "--token-file", "/nonexistent"].to_vec(),
            "--token-file",
        ),
    ] {
        let refused = sandbox.forge(&bad);
        assert_eq!(refused.code(), 2, "{bad:?}: {}", refused.stderr());
        assert!(
            refused.stderr().contains(names),
            "{bad:?}: {}",
            refused.stderr()
        );
    }
}

#[test]
fn https_with_a_certificate_the_client_checks() {
    let sandbox = Sandbox::new();
    let ca = TestCa::new("forge-test-ca");
    let pair = ca.server("forge-mcp");
    let (cert, key) = (
        pair.cert.display().to_string(),
        pair.key.display().to_string(),
    );
    let server = HttpServer::start(&sandbox, &["--tls-cert", &cert, "--tls-key", &key]);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let transport = Transport::Http {
        url: server.url.clone(),
        token_file: server.token_file.clone(),
        ca: Some(ca.cert.clone()),
    };
    let out = drive(&sandbox, "basic", &transport, &[]);
    crate::mcp_server::assert_basic(&out);

    // A client that trusts another authority refuses the server.
    let stranger = TestCa::new("another-ca");
    let output = Command::new(repo().join("target/test-peers-venv/bin/python"))
        .arg(repo().join("tests/peers/mcp_drive.py"))
        .args(["probe", "--http", &server.url, "--ca"])
        .arg(&stranger.cert)
        .output()
        .expect("run the driver");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("CERTIFICATE_VERIFY_FAILED"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `forge-host mcp` on stdio, spoken to in raw JSON-RPC lines.
struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl RawServer {
    fn start(sandbox: &Sandbox, extra: &[&str]) -> Self {
        let mut all = vec!["mcp"];
        all.extend(extra);
        let mut child = sandbox
            .command(&all)
            .stdin(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start forge-host mcp");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut server = RawServer {
            child,
            stdin,
            lines,
        };
        server.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        let answer = server.next_message();
        assert_eq!(answer["id"], 0, "{answer}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn stdin(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().expect("stdin")
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin().write_all(line.as_bytes()).expect("write");
    }

    fn call(&mut self, id: &str, code: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_javascript", "arguments": {"code": code}}}));
    }

    fn next_message(&mut self) -> Value {
        loop {
            let line = self.lines.next().expect("a line").expect("read");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// The most resident memory the server has had, from the kernel's own count.
    fn peak_rss_kib(&self) -> u64 {
        crate::util::status_kib(self.child.id(), "VmHWM:")
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server's resident memory may not pass this, whatever a client sends: it reads one line
/// at a time, at most `--max-script` and a quarter plus 1 MiB, and holds at most `--max-runs` +
/// `--max-queued` + 64 calls (measured: 28 MiB before the floods, 60 MiB after).
const PEAK_RSS_BOUND_KIB: u64 = 256 * 1024;

#[test]
fn a_gigabyte_line_and_a_flood_of_calls_get_errors_and_the_server_stays_small() {
    let sandbox = Sandbox::new();
    let mut server = RawServer::start(&sandbox, &["--max-runs", "2", "--max-queued", "16"]);
    server.call("warm", "return 1");
    assert_eq!(server.next_message()["id"], "warm");
    let before = server.peak_rss_kib();

    // One line of 1 GiB, written as a client would stream it.
    let head = r#"{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"run_javascript","arguments":{"code":""#;
    server.stdin().write_all(head.as_bytes()).expect("write");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..1024 {
        server.stdin().write_all(&chunk).expect("write");
    }
    server.stdin().write_all(b"\"}}}\n").expect("write");
    let answer = server.next_message();
    assert_eq!(answer["id"], "huge", "{answer}");
    let said = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("--max-script"), "{answer}");

    // 100,000 calls at once: each is answered, the ones past the queue with BUDGET_EXCEEDED.
    let calls = 100_000;
    let mut writer = server.stdin.take().expect("stdin");
    let sender = std::thread::spawn(move || {
        for n in 0..calls {
            let line = json!({"jsonrpc": "2.0", "id": format!("c{n}"), "method": "tools/call",
                "params": {"name": "run_javascript", "arguments": {"code": "return 1"}}});
            writer
                .write_all(format!("{line}\n").as_bytes())
                .expect("write");
        }
        writer
    });
    let (mut succeeded, mut busy) = (0, 0);
    for _ in 0..calls {
        let answer = server.next_message();
        let result = &answer["result"];
        if result["isError"] == false {
            succeeded += 1;
        } else if result["structuredContent"]["error"]["code"] == "BUDGET_EXCEEDED" {
            busy += 1;
        } else {
            panic!("{answer}");
        }
    }
    server.stdin = Some(sender.join().expect("sender"));
    assert_eq!(succeeded + busy, calls);
    assert!(succeeded > 0 && busy > 0, "{succeeded} ran, {busy} refused");
    // And the server still serves.
    server.call("after", "return 'still here'");
    let after = server.next_message();
    assert_eq!(after["result"]["structuredContent"]["value"], "still here");
    let peak = server.peak_rss_kib();
    assert!(
        peak < PEAK_RSS_BOUND_KIB,
        "peak RSS {peak} KiB (before the floods: {before} KiB)"
    );
}

#[test]
fn an_oversized_script_is_budget_exceeded_and_an_oversized_body_is_413() {
    let sandbox = Sandbox::new();
    let mut server = RawServer::start(&sandbox, &["--max-script", "64KiB"]);
    server.call("big", &"x".repeat(65 * 1024));
    let answer = server.next_message();
    let error = &answer["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "BUDGET_EXCEEDED", "{answer}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("--max-script"),
        "{answer}"
    );
    server.call("small", "return 2");
    assert_eq!(
        server.next_message()["result"]["structuredContent"]["value"],
        2
    );

    let http = HttpServer::start(&sandbox, &["--max-script", "64KiB"]);
    let token = std::fs::read_to_string(http.token_file.as_ref().expect("token")).expect("token");
    let address = http
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&address).expect("connect");
    let body = vec![b' '; 4 << 20];
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
Content-Length: {}\r\n\r\n",
        token.trim(),
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write");
    // The server may answer and close before it has read the whole body.
    let _ = stream.write_all(&body);
    let mut status = [0u8; 12];
    stream.read_exact(&mut status).expect("a status line");
    assert_eq!(
        &status,
        b"HTTP/1.1 413",
        "{}",
        String::from_utf8_lossy(&status)
    );
}
