//! The built-in tools, always present. They are small on purpose and double as diagnostics:
//! `echo` proves the round trip, `sleep` proves that calls overlap, `fail` proves error paths.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Effect, Tool, ToolError, ToolFuture, ToolInfo};

/// Returns its input.
pub struct EchoTool(ToolInfo);

impl EchoTool {
    /// The `echo` tool.
    pub fn new() -> Self {
        EchoTool(ToolInfo {
            name: "echo".into(),
            description: "Returns its input unchanged.".into(),
            input_schema: json!({}),
            effect: Effect::Internal,
        })
    }
}

impl Default for EchoTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for EchoTool {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, input: Value) -> ToolFuture {
        Box::pin(async move { Ok(input) })
    }
}

/// Waits `{ms}` milliseconds without blocking other calls, then returns `{slept: ms}`.
pub struct SleepTool(ToolInfo);

/// The longest `sleep` accepted; the execution's timeout usually ends it sooner.
const MAX_SLEEP_MS: u64 = 24 * 3600 * 1000;

impl SleepTool {
    /// The `sleep` tool.
    pub fn new() -> Self {
        SleepTool(ToolInfo {
            name: "sleep".into(),
            description:
                "Waits `ms` milliseconds without blocking other calls, then returns {slept: ms}."
                    .into(),
            input_schema: json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0}},
                "required": ["ms"],
            }),
            effect: Effect::Internal,
        })
    }
}

impl Default for SleepTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for SleepTool {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, input: Value) -> ToolFuture {
        Box::pin(async move {
            let ms = input
                .get("ms")
                .and_then(Value::as_u64)
                .filter(|ms| *ms <= MAX_SLEEP_MS)
                .ok_or_else(|| {
                    ToolError::invalid_input(format!(
                        "sleep needs {{\"ms\": <integer 0..{MAX_SLEEP_MS}>}}"
                    ))
                })?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({ "slept": ms }))
        })
    }
}

/// Fails with `TOOL_FAILED` and the given `{message}`.
pub struct FailTool(ToolInfo);

impl FailTool {
    /// The `fail` tool.
    pub fn new() -> Self {
        FailTool(ToolInfo {
            name: "fail".into(),
            description: "Fails with TOOL_FAILED and the given message.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"message": {"type": "string"}},
            }),
            effect: Effect::Internal,
        })
    }
}

impl Default for FailTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for FailTool {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, input: Value) -> ToolFuture {
        Box::pin(async move {
            let message = input
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the fail tool was called")
                .to_string();
            Err(ToolError::failed(message))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[tokio::test]
    async fn echo_sleep_and_fail_behave_as_documented() {
        assert_eq!(
            EchoTool::new().call(json!({"a": [1]})).await,
            Ok(json!({"a": [1]}))
        );
        assert_eq!(
            SleepTool::new().call(json!({"ms": 1})).await,
            Ok(json!({"slept": 1}))
        );
        let bad = SleepTool::new()
            .call(json!({"ms": "soon"}))
            .await
            .expect_err("bad input");
        assert_eq!(bad.code, ErrorCode::InvalidInput);
        let failed = FailTool::new()
            .call(json!({"message": "boom"}))
            .await
            .expect_err("fails");
        assert_eq!(failed, ToolError::failed("boom"));
    }
}
