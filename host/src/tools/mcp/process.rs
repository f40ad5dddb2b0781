//! A stdio MCP server as a child process: started in its own process group so that its whole
//! tree can be ended, its stderr kept (a tail for error messages) and passed to the task logs,
//! and its stdout cut into lines no longer than the response budget allows.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};

use super::McpError;
use crate::json_lines::{BoundedLines, Oversized};
use crate::tools::ServerLogs;

/// Lines of stderr kept for error messages.
const TAIL_LINES: usize = 20;
/// Longest stderr line kept or logged, in bytes.
const MAX_STDERR_LINE: usize = 4096;
/// How long ending a server waits for its processes to be gone (a process killed but not yet
/// reaped by its parent still counts).
const STOP_WAIT: std::time::Duration = std::time::Duration::from_millis(250);
/// The JSON-RPC error code of a response forge-host refused while reading it (implementation-
/// defined server-error range of JSON-RPC).
pub const OVERSIZED_RESPONSE: i32 = -32099;

/// The last lines a server wrote to stderr.
#[derive(Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Sent `true` when stderr reached its end (the server closed it, or exited).
    ended: Arc<tokio::sync::watch::Sender<bool>>,
}

/// How long an error message waits for a failing server's last words.
const LAST_WORDS_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

impl StderrTail {
    /// Waits (briefly) until stderr has ended, so that a server that failed has said why.
    pub async fn settle(&self) {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(LAST_WORDS_WAIT, ended.wait_for(|ended| *ended)).await;
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines, one per line, or a note that there were none.
    pub fn text(&self) -> String {
        let lines = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        if lines.is_empty() {
            "(it wrote nothing to stderr)".into()
        } else {
            lines.into_iter().collect::<Vec<_>>().join("\n")
        }
    }
}

/// A running server process. Dropping it ends its whole process group.
pub struct ServerProcess {
    group: Option<i32>,
    exit: Arc<Mutex<Option<String>>>,
    /// What it wrote to stderr last.
    pub stderr: StderrTail,
}

impl ServerProcess {
    /// How it ended, once it has.
    pub fn exit(&self) -> Option<String> {
        self.exit.lock().ok().and_then(|e| e.clone())
    }

    /// Ends the process group: TERM, then KILL for whatever is left, and waits (briefly) until
    /// no process of it is left, so that nothing of the server outlives forge-host.
    pub fn stop(&mut self) {
        let Some(group) = self.group.take() else {
            return;
        };
        // SAFETY: killpg only sends a signal; the group is the one the child leads.
        unsafe {
            libc::killpg(group, libc::SIGTERM);
            libc::killpg(group, libc::SIGKILL);
        }
        let deadline = std::time::Instant::now() + STOP_WAIT;
        // SAFETY: signal 0 only asks whether a process of the group still exists.
        while unsafe { libc::killpg(group, 0) } == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `program`; returns the process, the reader of its (metered) stdout and its stdin.
pub fn spawn(
    name: &str,
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&PathBuf>,
    max_line_bytes: usize,
    logs: ServerLogs,
) -> Result<(ServerProcess, tokio::io::DuplexStream, ChildStdin), McpError> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    // forge-host's own secrets are not the server's, unless its configuration gives them.
    for name in crate::primitives::SECRET_VARIABLES {
        if !env.contains_key(name) {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().map_err(|source| McpError::Spawn {
        server: name.to_string(),
        program: program.to_string(),
        source,
    })?;
    let group = child.id().and_then(|id| i32::try_from(id).ok());
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(McpError::Start {
            server: name.to_string(),
            why: "its standard streams could not be opened".into(),
            stderr: String::new(),
        });
    };
    let tail = StderrTail::default();
    tokio::spawn(drain_stderr(name.to_string(), stderr, tail.clone(), logs));
    let exit = Arc::new(Mutex::new(None));
    tokio::spawn(watch(child, exit.clone()));
    let (reader, writer) = tokio::io::duplex(64 << 10);
    tokio::spawn(pump_lines(stdout, writer, max_line_bytes));
    Ok((
        ServerProcess {
            group,
            exit,
            stderr: tail,
        },
        reader,
        stdin,
    ))
}

async fn watch(mut child: Child, exit: Arc<Mutex<Option<String>>>) {
    let status = match child.wait().await {
        Ok(status) => status.to_string(),
        Err(error) => format!("could not be waited for: {error}"),
    };
    if let Ok(mut slot) = exit.lock() {
        *slot = Some(status);
    }
}

async fn drain_stderr(
    name: String,
    stderr: impl AsyncRead + Unpin,
    tail: StderrTail,
    logs: ServerLogs,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_STDERR_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => {
                tail.ended.send_replace(true);
                return;
            }
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        logs.publish(format!("[mcp {name}] {text}\n").as_bytes());
        tail.push(text.to_string());
    }
}

/// Copies `stdout` to `out` a line at a time. A line longer than `max_line_bytes` is never
/// held whole: it is skipped, and an error response for its request id takes its place, so the
/// call waiting for it fails at once.
async fn pump_lines(
    stdout: impl AsyncRead + Unpin,
    mut out: tokio::io::DuplexStream,
    max_line_bytes: usize,
) {
    let mut lines = BoundedLines::new(stdout, max_line_bytes, Box::new(refusal));
    let _ = tokio::io::copy(&mut lines, &mut out).await;
    let _ = out.shutdown().await;
}

/// The error response standing for a refused response line, when its id can be found.
fn refusal(oversized: &Oversized<'_>) -> Option<Vec<u8>> {
    let message = format!(
        "the response is {} bytes or more, over the {} bytes forge-host reads of one message (--max-call-response)",
        oversized.size, oversized.max
    );
    let reply = serde_json::json!({
        "jsonrpc": "2.0",
        "id": oversized.id()?,
        "error": {"code": OVERSIZED_RESPONSE, "message": message},
    });
    Some(format!("{reply}\n").into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_line_is_answered_under_its_id() {
        let oversized = Oversized {
            head: br#"{"jsonrpc":"2.0","id":7,"result":{"#,
            tail: b"",
            size: 100,
            max: 10,
        };
        let reply = String::from_utf8(refusal(&oversized).expect("an id")).expect("text");
        assert!(
            reply.contains(r#""id":7"#) && reply.contains("-32099"),
            "{reply}"
        );
        let anonymous = Oversized {
            head: b"{\"method\":\"x\"",
            tail: b"\"params\":{}}",
            size: 100,
            max: 10,
        };
        assert!(refusal(&anonymous).is_none());
    }

    #[tokio::test]
    async fn long_lines_are_replaced_and_short_ones_pass() {
        let long = format!(
            "{{\"result\":{{\"text\":\"{}\"}},\"jsonrpc\":\"2.0\",\"id\":3}}\n",
            "x".repeat(200_000)
        );
        let input = format!("{{\"a\":1}}\n{long}{{\"b\":2}}\n");
        let (reader, writer) = tokio::io::duplex(1 << 10);
        let pump = tokio::spawn(pump_lines(
            std::io::Cursor::new(input.into_bytes()),
            writer,
            1000,
        ));
        let mut out = String::new();
        let mut reader = reader;
        reader.read_to_string(&mut out).await.expect("read");
        pump.await.expect("pump");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0], r#"{"a":1}"#);
        assert!(lines[1].contains(r#""id":3"#) && lines[1].contains("-32099"));
        assert_eq!(lines[2], r#"{"b":2}"#);
    }
}
