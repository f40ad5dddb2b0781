//! Runs behind the HTTP door outlive their client's connection (issue 42 §1): an event stream
//! its client stops reading is dropped after the send timeout, with the server's memory bounded,
//! and a client that disconnects mid-run finds the run finished and kept. Raw MCP over loopback
//! sockets plays the clients, so that one can stop reading or hang up where a test says.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::doors::{closed_by_server, read_head};
use crate::mcp_server::HttpServer;
use crate::util::{Sandbox, status_kib};

/// An MCP session over raw HTTP/1.1.
struct Session<'a> {
    server: &'a HttpServer,
    id: String,
}

impl<'a> Session<'a> {
    /// Initializes a session, as a client does first.
    fn open(server: &'a HttpServer) -> Self {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "doors", "version": "1"}}});
        let mut stream = send(server, None, &initialize, &plain);
        let answer = read_head(&mut stream).expect("initialized");
        assert_eq!(answer.status, 200, "{}", answer.head);
        let id = answer.header("mcp-session-id").expect("a session id");
        let session = Session { server, id };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut stream = session.send(&initialized);
        let answer = read_head(&mut stream).expect("accepted");
        assert_eq!(answer.status, 202, "{}", answer.head);
        session
    }

    /// Sends `message` in this session on a connection of its own, closed after the answer.
    fn send(&self, message: &Value) -> TcpStream {
        send(self.server, Some(&self.id), message, &plain)
    }

    /// Calls a tool and reads the result to its end.
    fn call(&self, tool: &str, arguments: Value) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let mut stream = self.send(&call);
        let answer = read_head(&mut stream).expect("answered");
        assert_eq!(answer.status, 200, "{}", answer.head);
        let mut body = Vec::new();
        stream.read_to_end(&mut body).expect("the body");
        events(&body)
            .into_iter()
            .find(|event| event["id"] == 1)
            .unwrap_or_else(|| panic!("no result in {}", String::from_utf8_lossy(&body)))["result"]
            ["structuredContent"]
            .clone()
    }
}

/// A connection as any client opens it.
fn plain(address: &str) -> std::io::Result<TcpStream> {
    TcpStream::connect(address)
}

/// Writes `message` as a POST to the server's `/mcp`, on a stream `connect` opens.
fn send(
    server: &HttpServer,
    session: Option<&str>,
    message: &Value,
    connect: &dyn Fn(&str) -> std::io::Result<TcpStream>,
) -> TcpStream {
    let body = message.to_string();
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.address(),
        server.token(),
        body.len()
    );
    let mut stream = connect(&server.address()).expect("connect");
    stream.write_all(request.as_bytes()).expect("write");
    stream
}

/// The JSON messages of an event stream's `data:` lines (its chunk framing is skipped: a chunk
/// size line is never JSON).
fn events(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// Reads `stream` until `seen` is in what came, and returns how many bytes that took.
fn read_until(stream: &mut TcpStream, seen: &str) -> usize {
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(seen) {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "the stream ended before `{seen}`");
        got.extend_from_slice(&buf[..n]);
    }
    got.len()
}

/// A `tools/call` of `run_javascript` that asks for progress.
fn call_with_progress(code: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_javascript", "arguments": {"code": code},
        "_meta": {"progressToken": "watched"}}})
}

/// The journal's record of the one run that is none of `known`.
fn the_other_run(sandbox: &Sandbox, known: &[&Value]) -> Value {
    let listed = sandbox.forge(&["journal", "list", "--json"]);
    let runs: Value = serde_json::from_str(&listed.stdout()).expect("json");
    let others: Vec<&Value> = runs
        .as_array()
        .expect("runs")
        .iter()
        .filter(|run| !known.contains(&&run["id"]))
        .collect();
    assert_eq!(others.len(), 1, "{runs:#}");
    others[0].clone()
}

#[test]
fn an_event_stream_its_client_stops_reading_is_dropped_and_the_run_goes_on() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &["--send-timeout", "3s", "--max-runs", "1"]);
    let watcher = Session::open(&server);
    // 60,000 progress reports of 4,000 bytes: 240 MB the client will never read.
    let code = "const big = 'x'.repeat(4000); \
for (let i = 1; i <= 60000; i++) progress(big, i, 60000); return 'finished'";
    let small_window = |address: &str| {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.set_recv_buffer_size(4096)?;
        let address: std::net::SocketAddr = address.parse().expect("address");
        socket.connect(&address.into())?;
        Ok(TcpStream::from(socket))
    };
    // A first run loads the engine; the peak is counted from after it.
    let warm = watcher.call("run_javascript", json!({"code": "return 'warm'"}));
    assert_eq!(warm["value"], "warm", "{warm:#}");
    std::fs::write(format!("/proc/{}/clear_refs", server.pid()), "5").expect("reset the peak");
    let rss_before = status_kib(server.pid(), "VmRSS:");
    let mut stalled = send(
        &server,
        Some(&watcher.id),
        &call_with_progress(code),
        &small_window,
    );
    // The run has begun once its first report comes; from here the client reads nothing.
    read_until(&mut stalled, "notifications/progress");
    // One run at a time: a call of another session is served once the first run has ended.
    let other = Session::open(&server);
    let after = other.call("run_javascript", json!({"code": "return 'after'"}));
    assert_eq!(after["value"], "after", "{after:#}");
    let peak = status_kib(server.pid(), "VmHWM:");
    let first = the_other_run(&sandbox, &[&warm["id"], &after["id"]]);
    assert_eq!(first["status"], "succeeded", "{first:#}");
    // Its result stays readable, though its stream was dropped.
    let read = other.call("get_run", json!({"id": first["id"]}));
    assert_eq!(read["status"], "succeeded", "{read:#}");
    assert_eq!(read["value"], "finished", "{read:#}");
    // The server cut the stalled stream: what it holds for it is what the socket buffers.
    closed_by_server(&mut stalled);
    println!(
        "doors: a stalled event stream of 240 MB of progress: the server's RSS {} MiB before, \
peak {} MiB",
        rss_before / 1024,
        peak / 1024
    );
    assert!(
        peak < rss_before + 128 * 1024,
        "the server's peak RSS grew from {rss_before} KiB to {peak} KiB"
    );
}

#[test]
fn a_client_that_hangs_up_mid_run_finds_the_run_finished_and_kept() {
    let sandbox = Sandbox::new();
    let server = HttpServer::start(&sandbox, &["--max-runs", "1"]);
    let caller = Session::open(&server);
    let code = "progress('started'); await tools.sleep({ms: 500}); return 'kept'";
    let mut call = caller.send(&call_with_progress(code));
    read_until(&mut call, "notifications/progress");
    // Mid-run: the client goes away.
    call.shutdown(std::net::Shutdown::Both).expect("hang up");
    drop(call);
    let other = Session::open(&server);
    let after = other.call("run_javascript", json!({"code": "return 'after'"}));
    assert_eq!(after["value"], "after", "{after:#}");
    let first = the_other_run(&sandbox, &[&after["id"]]);
    assert_eq!(first["status"], "succeeded", "{first:#}");
    // The caller, back on a new connection, reads the result it did not wait for.
    let read = caller.call("get_run", json!({"id": first["id"]}));
    assert_eq!(read["value"], "kept", "{read:#}");
}
