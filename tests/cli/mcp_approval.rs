//! Approval over MCP (issue 15): `forge-host mcp --ask` puts a call the policy would deny to the
//! person behind a client that declared elicitation, live; a client that cannot ask gets a
//! paused run, which `resume_run {id, approve}` continues. Driven by the official Python SDK.

use std::path::Path;

use serde_json::Value;

use crate::mcp_server::{HttpServer, Transport, drive};
use crate::util::Sandbox;

/// Draws a random number, writes it through a `write` tool (which needs approval), and
/// returns it.
const DRAW_THEN_WRITE: &str = "const n = Math.random();\n\
    await tools.workspace.write({path: 'out.txt', content: 'n=' + n});\n\
    return n;";

fn server_args(ws: &Path, ask: &str) -> Vec<String> {
    vec!["--workspace".into(), ws.display().to_string(), ask.into()]
}

fn written(ws: &Path) -> Option<String> {
    std::fs::read_to_string(ws.join("out.txt")).ok()
}

#[test]
fn a_client_that_declared_elicitation_is_asked_live_on_both_transports() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let server = HttpServer::start(
        &sandbox,
        &["--workspace", &ws.display().to_string(), "--ask"],
    );
    for transport in [
        Transport::Stdio(server_args(&ws, "--ask")),
        server.transport(),
    ] {
        let _ = std::fs::remove_file(ws.join("out.txt"));
        let out = drive(
            &sandbox,
            "elicit",
            &transport,
            &["--answer", "approve", "--code", DRAW_THEN_WRITE],
        );
        let report = &out["result"]["structured"];
        assert_eq!(report["status"], "succeeded", "{out:#}");
        let asked = out["asked"].as_array().expect("asked");
        assert_eq!(asked.len(), 1, "one question for one call: {out:#}");
        let call = &asked[0]["call"];
        assert_eq!(call["tool"], "workspace.write");
        assert_eq!(call["effect"], "write");
        assert_eq!(call["input"]["path"], "out.txt");
        let message = asked[0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("workspace.write") && message.contains("out.txt"),
            "{message}"
        );
        assert_eq!(
            asked[0]["schema"]["properties"]["approve"]["type"],
            "boolean"
        );
        assert_eq!(written(&ws), Some(format!("n={}", report["value"])));

        for answer in ["deny", "decline"] {
            let _ = std::fs::remove_file(ws.join("out.txt"));
            let out = drive(
                &sandbox,
                "elicit",
                &transport,
                &["--answer", answer, "--code", DRAW_THEN_WRITE],
            );
            let report = &out["result"]["structured"];
            assert_eq!(report["status"], "failed", "{answer}: {out:#}");
            assert_eq!(report["error"]["code"], "TOOL_DENIED", "{answer}");
            assert_eq!(out["asked"].as_array().map(Vec::len), Some(1));
            assert_eq!(written(&ws), None, "{answer}: nothing written");
        }
    }
}

#[test]
fn ask_pause_pauses_even_a_client_that_can_be_asked() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let out = drive(
        &sandbox,
        "elicit",
        &Transport::Stdio(server_args(&ws, "--ask=pause")),
        &["--code", DRAW_THEN_WRITE],
    );
    assert_eq!(out["asked"], serde_json::json!([]), "{out:#}");
    assert_eq!(out["result"]["structured"]["status"], "paused");
    assert_eq!(written(&ws), None);
}

/// Runs the `pause` scenario: the run pauses, then `resume_run` with `answer`, twice.
fn pause_then_resume(sandbox: &Sandbox, transport: &Transport, ws: &Path, answer: &str) -> Value {
    let out = drive(
        sandbox,
        "pause",
        transport,
        &[
            "--answer",
            answer,
            "--code",
            DRAW_THEN_WRITE,
            "--absent",
            &ws.join("out.txt").display().to_string(),
        ],
    );
    let paused = &out["paused"]["structured"];
    assert_eq!(paused["status"], "paused", "{out:#}");
    assert_eq!(paused["error"]["code"], "APPROVAL_REQUIRED");
    assert_eq!(paused["pending"]["tool"], "workspace.write");
    assert_eq!(paused["pending"]["effect"], "write");
    assert!(paused["pending"]["reason"].is_string());
    assert_eq!(
        out["absent_before_resume"],
        serde_json::json!([true]),
        "the paused run wrote nothing"
    );
    let text = out["paused"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("resume_run"),
        "the text says how to go on: {text}"
    );
    let again = &out["again"];
    assert_eq!(again["is_error"], true);
    assert!(
        again["text"]
            .as_str()
            .unwrap_or_default()
            .contains("already resumed"),
        "{again:#}"
    );
    let resumed_id = out["resumed"]["structured"]["id"].clone();
    assert_eq!(out["record"]["structured"]["resumed_by"], resumed_id);
    out
}

#[test]
fn a_client_that_cannot_ask_gets_a_paused_run_and_resume_run_continues_it_on_both_transports() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let server = HttpServer::start(
        &sandbox,
        &["--workspace", &ws.display().to_string(), "--ask"],
    );
    for transport in [
        Transport::Stdio(server_args(&ws, "--ask")),
        server.transport(),
    ] {
        let _ = std::fs::remove_file(ws.join("out.txt"));
        let out = pause_then_resume(&sandbox, &transport, &ws, "approve");
        let drawn = out["paused"]["structured"]["pending"]["input"]["content"].clone();
        let resumed = &out["resumed"]["structured"];
        assert_eq!(resumed["status"], "succeeded", "{out:#}");
        assert_eq!(
            serde_json::json!(format!("n={}", resumed["value"])),
            drawn,
            "the resumed run drew the paused run's random number"
        );
        assert_eq!(
            written(&ws),
            drawn.as_str().map(String::from),
            "written once, by the resume"
        );

        let _ = std::fs::remove_file(ws.join("out.txt"));
        let out = pause_then_resume(&sandbox, &transport, &ws, "deny");
        let resumed = &out["resumed"]["structured"];
        assert_eq!(resumed["error"]["code"], "TOOL_DENIED", "{out:#}");
        assert_eq!(written(&ws), None);
    }
}

#[test]
fn a_run_paused_over_mcp_resumes_from_the_command_line_too() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let out = drive(
        &sandbox,
        "elicit",
        &Transport::Stdio(server_args(&ws, "--ask=pause")),
        &["--code", DRAW_THEN_WRITE],
    );
    let id = out["result"]["structured"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    // The journal keeps the server's tool sources, which the command line connects again.
    let resumed = sandbox.forge(&["resume", &id, "--approve", "--json"]);
    assert_eq!(
        resumed.code(),
        0,
        "{}\n{}",
        resumed.stdout(),
        resumed.stderr()
    );
    assert!(written(&ws).is_some());
}
