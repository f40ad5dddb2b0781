//! How a run looks to an MCP client: `structuredContent` is the run report, `content` a short
//! text of it, `isError` true unless it succeeded.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::Clamp;
use crate::error::{Error, ErrorCode};
use crate::journal::{CallRecord, ExecutionRecord, ExecutionState};
use crate::kernel::RunReport;
use crate::primitives::truncate_at;

/// Longest value or output tail quoted in the text rendering, in bytes.
const MAX_QUOTED_BYTES: usize = 2000;

fn quoted(text: &str) -> String {
    if text.len() <= MAX_QUOTED_BYTES {
        text.to_string()
    } else {
        format!("{} [...]", truncate_at(text, MAX_QUOTED_BYTES))
    }
}

fn tail(text: &str) -> String {
    if text.len() <= MAX_QUOTED_BYTES {
        return text.to_string();
    }
    let mut start = text.len() - MAX_QUOTED_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[...] {}", &text[start..])
}

fn result(structured: Value, text: String, failed: bool) -> CallToolResult {
    let mut result = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// The report of a run that ended.
pub fn report(report: &RunReport, clamps: &[Clamp]) -> CallToolResult {
    let mut structured = serde_json::to_value(report).unwrap_or_else(|_| json!({}));
    if let Value::Object(fields) = &mut structured
        && !clamps.is_empty()
    {
        fields.insert("clamped".into(), json!(clamps));
    }
    let mut text = format!(
        "{} in {} ms (run {})",
        report.status.as_str(),
        report.metrics.wall_ms,
        report.id
    );
    if let Some(value) = &report.value {
        text.push_str(&format!("\nvalue: {}", quoted(&value.to_string())));
    }
    if let Some(error) = &report.error {
        text.push_str(&format!(
            "\nerror {}: {}",
            error.code,
            quoted(&error.message)
        ));
    }
    if let Some(pending) = &report.pending {
        text.push_str(&format!(
            "\npending: `{}` with {}\nresume_run {{\"id\": \"{}\", \"approve\": true|false}} continues it",
            pending.tool,
            quoted(&pending.input.to_string()),
            report.id
        ));
    }
    for value in &report.text {
        match value {
            Value::String(s) => text.push_str(&format!("\ntext: {}", quoted(s))),
            other => text.push_str(&format!("\ntext: {}", quoted(&other.to_string()))),
        }
    }
    if !report.stdout.is_empty() {
        text.push_str(&format!("\nstdout:\n{}", tail(&report.stdout)));
    }
    if !report.stderr.is_empty() {
        text.push_str(&format!("\nstderr:\n{}", tail(&report.stderr)));
    }
    for clamp in clamps {
        text.push_str(&format!(
            "\nclamped: {} {} -> {} ({})",
            clamp.argument, clamp.requested, clamp.used, clamp.reason
        ));
    }
    result(structured, text, !report.succeeded())
}

/// A run that could not start (bad input path, no engine, a limit out of range).
pub fn not_started(error: &Error) -> CallToolResult {
    failure(error, "failed before it started")
}

/// A run that did not end with a report: it could not be queued, its close could not be
/// written (the host's disk), or its task ended without one.
pub fn failed(error: &Error) -> CallToolResult {
    failure(error, "failed")
}

/// A failed call's result: the error's code and message, in the text after `said`.
fn failure(error: &Error, said: &str) -> CallToolResult {
    let structured = json!({
        "status": ExecutionState::Failed,
        "error": {"code": error.code, "message": error.message},
    });
    result(
        structured,
        format!("{said}: {}: {}", error.code, error.message),
        true,
    )
}

/// A call cancelled while it waited for a free run slot.
pub fn cancelled_in_queue() -> CallToolResult {
    let structured = json!({
        "status": ExecutionState::Cancelled,
        "error": {"code": ErrorCode::Cancelled, "message": "cancelled while queued; it never ran"},
    });
    result(structured, "cancelled while queued".into(), true)
}

/// A journaled run: its record and nested calls, with the full report when this server ran it
/// recently.
pub fn record(
    record: &ExecutionRecord,
    calls: &[CallRecord],
    recent: Option<&Value>,
) -> CallToolResult {
    let mut structured = match recent {
        Some(report) => report.clone(),
        None => json!({
            "id": record.id,
            "status": record.status,
            "engine": record.engine,
            "session": record.session,
            "started_at": record.started_at,
            "metrics": record.metrics,
            "error": record.error_code.map(|code| json!({
                "code": code,
                "message": record.error_message.clone().unwrap_or_default(),
            })),
        }),
    };
    if let Value::Object(fields) = &mut structured {
        fields.insert("ended_at".into(), json!(record.ended_at));
        fields.insert("script".into(), json!(record.script));
        fields.insert("script_sha256".into(), json!(record.script_sha256));
        fields.insert("limits".into(), record.limits.clone());
        fields.insert("calls".into(), json!(calls));
        if let Some(pending) = &record.pending {
            fields.insert("pending".into(), json!(pending));
        }
        if let Some(resumed_by) = &record.resumed_by {
            fields.insert("resumed_by".into(), json!(resumed_by));
        }
    }
    let mut text = format!("run {}: {}", record.id, record.status.as_str());
    if let (Some(code), Some(message)) = (record.error_code, &record.error_message) {
        text.push_str(&format!("\nerror {code}: {}", quoted(message)));
    }
    if !calls.is_empty() {
        text.push_str(&format!("\n{} tool call(s)", calls.len()));
    }
    result(structured, text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of a result's first block.
    fn text(result: &CallToolResult) -> String {
        serde_json::to_value(&result.content)
            .ok()
            .and_then(|blocks| blocks[0]["text"].as_str().map(String::from))
            .unwrap_or_default()
    }

    #[test]
    fn a_run_that_ran_is_not_said_to_have_failed_before_it_started() {
        let error = Error::new(
            ErrorCode::HostDiskFull,
            "the close of run e1 was not written",
        );
        let ran = failed(&error);
        assert_eq!(
            text(&ran),
            "failed: HOST_DISK_FULL: the close of run e1 was not written"
        );
        assert_eq!(ran.is_error, Some(true));
        let structured = ran.structured_content.unwrap_or_default();
        assert_eq!(structured["error"]["code"], "HOST_DISK_FULL");
        let refused = not_started(&Error::invalid_input("no such input"));
        assert!(text(&refused).starts_with("failed before it started: INVALID_INPUT"));
    }
}
