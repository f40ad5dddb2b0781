//! The HTTP door under load (issue 42 §4): `forge-host mcp --http` on loopback with its default
//! limits, 64 clients of the official Python MCP SDK calling `run_javascript` back to back for
//! `PHASE_SECONDS`, first alone and then while `tests/peers/slowloris.py` holds `FLOOD_SOCKETS`
//! half-open sockets against the same port (`tests/peers/mcp_load.py` drives both phases).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::Numbers;
use super::measure::capture;
use crate::Result;

/// Clients, each with an MCP session of its own.
const CLIENTS: &str = "64";
/// Seconds each phase lasts.
const PHASE_SECONDS: &str = "10";
/// Half-open sockets of the flood.
const FLOOD_SOCKETS: &str = "20000";

/// A `forge-host mcp --http` process, stopped when dropped.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `doors_{calm,flooded}_{runs_per_s,p50_ms,p99_ms,errors}` and the server's peak resident
/// memory over both phases, `doors_server_peak_rss_mib`.
pub fn doors_numbers(root: &Path, scratch: &Path) -> Result<Numbers> {
    let mut server = Server {
        child: Command::new(crate::paths::host_binary())
            .arg("--data-dir")
            .arg(scratch.join("doors-data"))
            .args(["mcp", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start forge-host mcp --http: {e}"))?,
    };
    let (url, token_file) = listening(&mut server.child)?;
    let load = capture(
        Command::new(crate::setup::test_peers_venv().join("bin/python"))
            .arg(root.join("tests/peers/mcp_load.py"))
            .args(["--http", &url, "--token-file"])
            .arg(&token_file)
            .args(["--clients", CLIENTS, "--seconds", PHASE_SECONDS])
            .args(["--flood", FLOOD_SOCKETS]),
    )?;
    let load: serde_json::Value =
        serde_json::from_str(&load).map_err(|e| format!("mcp_load.py printed no JSON: {e}"))?;
    let mut numbers = Numbers::new();
    for phase in ["calm", "flooded"] {
        for (field, key) in [
            ("runs_per_second", "runs_per_s"),
            ("p50_ms", "p50_ms"),
            ("p99_ms", "p99_ms"),
            ("errors", "errors"),
        ] {
            let value = load[phase][field]
                .as_f64()
                .ok_or_else(|| format!("mcp_load.py gave no {phase}.{field}: {load}"))?;
            numbers.insert(format!("doors_{phase}_{key}"), value);
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
        .map_err(|e| format!("the server's /proc status: {e}"))?;
    if let Some(kib) = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
    {
        numbers.insert("doors_server_peak_rss_mib".into(), kib / 1024.0);
    }
    Ok(numbers)
}

/// The URL the server says it serves and the file it wrote its token to, read from its stderr
/// (which is then drained, so that the server never blocks on it).
fn listening(child: &mut Child) -> Result<(String, PathBuf)> {
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let line = loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("serving http") => break line,
            Some(Ok(_)) => {}
            _ => return Err("forge-host mcp --http ended before it listened".into()),
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let url = line
        .split_once("serving ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .ok_or_else(|| format!("no URL in {line:?}"))?;
    let token = line
        .split_once("(bearer token in ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(path, _)| PathBuf::from(path))
        .ok_or_else(|| format!("no token file in {line:?}"))?;
    Ok((url.to_string(), token))
}
