//! One tool of an MCP server, as a [`Tool`]: its effect from its annotations (or `--trust`),
//! its call a `tools/call`, and its answer mapped to what the script sees.

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::{Value, json};

use super::process::{OVERSIZED_RESPONSE, ServerProcess, StderrTail};
use crate::error::ErrorCode;
use crate::permissions::Effect;
use crate::tools::{Tool, ToolError, ToolFuture, ToolInfo};

/// Paths recorded for one call, at most.
const MAX_RECORDED_PATHS: usize = 64;

/// MCP has no field for the paths a call touches; the journal records the strings of the
/// arguments whose names say they are paths (`path`, `paths`, `source`, `destination`, `file`,
/// `directory`, ...), as filesystem servers name them.
fn argument_paths(input: &Value) -> Vec<String> {
    let Value::Object(arguments) = input else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for (key, value) in arguments {
        let key = key.to_ascii_lowercase();
        let named = ["path", "source", "destination", "file", "dir", "folder"]
            .iter()
            .any(|word| key.contains(word));
        if !named {
            continue;
        }
        match value {
            Value::String(path) => paths.push(path.clone()),
            Value::Array(items) => {
                paths.extend(items.iter().filter_map(Value::as_str).map(str::to_string));
            }
            _ => {}
        }
    }
    paths.truncate(MAX_RECORDED_PATHS);
    paths
}

/// What every tool of one server shares: its session, and how to tell that it is gone.
pub struct ServerLink {
    name: String,
    peer: Peer<RoleClient>,
    trust: Option<Effect>,
    process: Option<(Arc<Mutex<ServerProcess>>, StderrTail)>,
}

impl ServerLink {
    /// The link to server `name` over `peer`.
    pub fn new(
        name: &str,
        peer: Peer<RoleClient>,
        trust: Option<Effect>,
        process: Option<(Arc<Mutex<ServerProcess>>, StderrTail)>,
    ) -> Self {
        ServerLink {
            name: name.to_string(),
            peer,
            trust,
            process,
        }
    }

    /// The failure of a call to a server that is gone, with how it ended.
    fn gone(&self) -> ToolError {
        let Some((process, tail)) = &self.process else {
            return ToolError::failed(format!("MCP server `{}` closed the connection", self.name));
        };
        let exit = process.lock().ok().and_then(|p| p.exit());
        ToolError::failed(format!(
            "MCP server `{}` is gone ({}); the end of its stderr:\n{}",
            self.name,
            exit.map_or_else(
                || "its connection closed".into(),
                |s| format!("it exited: {s}")
            ),
            tail.text()
        ))
    }
}

/// The effect a tool's annotations give: read-only is `read`, otherwise `write`; an open world,
/// or no annotations at all, is `external`.
pub fn effect_of(info: &rmcp::model::Tool) -> Effect {
    let Some(annotations) = &info.annotations else {
        return Effect::External;
    };
    if annotations.open_world_hint == Some(true) {
        Effect::External
    } else if annotations.read_only_hint == Some(true) {
        Effect::Read
    } else {
        Effect::Write
    }
}

/// A tool of an MCP server.
pub struct McpTool {
    info: ToolInfo,
    remote_name: String,
    output_schema: Option<Value>,
    link: Arc<ServerLink>,
}

impl McpTool {
    /// Tool `info` of the server behind `link`, named `SERVER.TOOL`.
    pub fn new(server: &str, info: &rmcp::model::Tool, link: Arc<ServerLink>) -> Self {
        let effect = link.trust.unwrap_or_else(|| effect_of(info));
        McpTool {
            info: ToolInfo {
                name: format!("{server}.{}", info.name),
                description: info
                    .description
                    .as_deref()
                    .or(info.title.as_deref())
                    .unwrap_or_default()
                    .to_string(),
                input_schema: Value::Object((*info.input_schema).clone()),
                effect,
            },
            remote_name: info.name.to_string(),
            output_schema: info
                .output_schema
                .as_ref()
                .map(|schema| Value::Object((**schema).clone())),
            link,
        }
    }
}

/// The text of a result's content, for an error message.
fn content_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    if texts.is_empty() {
        "(no text)".into()
    } else {
        texts.join("\n")
    }
}

/// What the script sees of a result: `structuredContent` when there is one, otherwise the
/// content blocks as MCP gives them; `isError` fails the call.
fn response(name: &str, result: CallToolResult) -> Result<Value, ToolError> {
    if result.is_error == Some(true) {
        return Err(ToolError::failed(format!(
            "`{name}` failed: {}",
            content_text(&result)
        )));
    }
    match result.structured_content {
        Some(value) => Ok(value),
        None => Ok(json!({ "content": result.content })),
    }
}

impl Tool for McpTool {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    fn paths(&self, input: &Value) -> Vec<String> {
        argument_paths(input)
    }

    fn call(&self, input: Value) -> ToolFuture {
        let name = self.info.name.clone();
        let link = self.link.clone();
        let remote = self.remote_name.clone();
        Box::pin(async move {
            let arguments = match input {
                Value::Object(map) => map,
                Value::Null => serde_json::Map::new(),
                _ => {
                    return Err(ToolError::invalid_input(format!(
                        "the input of `{name}` must be a JSON object of its arguments"
                    )));
                }
            };
            if link.peer.is_transport_closed() {
                return Err(link.gone());
            }
            let request = CallToolRequestParams::new(remote).with_arguments(arguments);
            match link.peer.call_tool(request).await {
                Ok(result) => response(&name, result),
                Err(ServiceError::McpError(error)) if error.code.0 == OVERSIZED_RESPONSE => {
                    Err(ToolError {
                        code: ErrorCode::BudgetExceeded,
                        message: format!("the response of `{name}`: {}", error.message),
                    })
                }
                Err(ServiceError::McpError(error)) => Err(ToolError::failed(format!(
                    "`{name}`: the server answered with error {}: {}",
                    error.code.0, error.message
                ))),
                Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                    Err(link.gone())
                }
                Err(other) if link.peer.is_transport_closed() => {
                    let _ = other;
                    Err(link.gone())
                }
                Err(other) => Err(ToolError::failed(format!("`{name}`: {other}"))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock as Content, ToolAnnotations};

    fn tool(annotations: Option<ToolAnnotations>) -> rmcp::model::Tool {
        let mut tool = rmcp::model::Tool::new("t", "d", Arc::new(serde_json::Map::new()));
        tool.annotations = annotations;
        tool
    }

    #[test]
    fn effects_come_from_the_annotations() {
        assert_eq!(effect_of(&tool(None)), Effect::External);
        assert_eq!(
            effect_of(&tool(Some(ToolAnnotations::new().read_only(true)))),
            Effect::Read
        );
        assert_eq!(
            effect_of(&tool(Some(ToolAnnotations::new().read_only(false)))),
            Effect::Write
        );
        assert_eq!(
            effect_of(&tool(Some(ToolAnnotations::new()))),
            Effect::Write
        );
        assert_eq!(
            effect_of(&tool(Some(
                ToolAnnotations::new().read_only(true).open_world(true)
            ))),
            Effect::External
        );
    }

    #[test]
    fn the_paths_of_a_call_are_the_arguments_named_as_paths() {
        let input = json!({"source": "/a", "destination": "/b", "content": "/not-a-path",
                           "paths": ["/c", 1], "mode": 7});
        assert_eq!(argument_paths(&input), ["/b", "/c", "/a"]);
        assert!(argument_paths(&json!(["/x"])).is_empty());
    }

    #[test]
    fn results_map_to_structured_content_or_content_and_errors_fail() {
        let mut result = CallToolResult::success(vec![Content::text("hi")]);
        assert_eq!(
            response("s.t", result.clone()).expect("ok"),
            json!({"content": [{"type": "text", "text": "hi"}]})
        );
        result.structured_content = Some(json!({"n": 1}));
        assert_eq!(response("s.t", result).expect("ok"), json!({"n": 1}));
        let failed = response(
            "s.t",
            CallToolResult::error(vec![Content::text("no such file")]),
        )
        .expect_err("isError");
        assert_eq!(failed.code, ErrorCode::ToolFailed);
        assert!(
            failed.message.contains("no such file"),
            "{}",
            failed.message
        );
    }
}
