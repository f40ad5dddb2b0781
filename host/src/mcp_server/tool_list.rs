//! The tools forge-host serves, as `tools/list` gives them: the run tools' descriptions carry
//! the typed catalog of every tool a script may call.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations};
use serde_json::{Value, json};

use super::request;
use crate::permissions::Policy;
use crate::tools::{ToolRegistry, declare};

/// The server's tools; the run tools' descriptions carry the catalog a script can call.
pub(super) fn tool_list(catalog: &ToolRegistry, policy: &Policy) -> Vec<McpTool> {
    // A run changes session state (never destructively: a commit is checked against what the
    // run read); it reaches the open world only through tools the server's policy lets out.
    let runs = ToolAnnotations::new()
        .read_only(false)
        .destructive(false)
        .open_world(policy.allow_external);
    let runs_again = runs.clone();
    let reads = ToolAnnotations::new().read_only(true).open_world(false);
    let object = |value: Value| match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(serde_json::Map::new()),
    };
    let run_javascript = format!(
        "Runs JavaScript (QuickJS, ES2023) in a sandbox with no network and hard limits, and returns \
its report: status, value, error {{code, message}}, text, stdout, stderr, metrics, id. The script's \
top level is an async function body: `return` its result. It calls tools as async functions \
(`await tools.NAME(input)`; `tools.call(name, input)` also works), keeps shared state with \
`state.get(key)` / `state.set(key, value)`, reports `progress(message, done, total)`, and \
reads inputs from /input and writes files to /output.\n\nThe tools it can call:\n```ts\n{}```",
        declare::typescript(catalog)
    );
    let run_python = format!(
        "Runs Python (CPython; numpy and pandas available) in a sandbox with no network and hard \
limits, and returns its report: status, value, error {{code, message}}, text, stdout, stderr, \
metrics, id. `import forge`: `forge.result(value)` sets the result, tools are functions \
(`forge.tools.NAME(**input)`; `forge.call(name, input)` also works), `forge.state` is shared state, \
`forge.progress(message, done, total)` reports progress; inputs are in /input, files written to \
/output are published.\n\nThe tools it can call:\n```python\n{}```",
        declare::python(catalog)
    );
    vec![
        McpTool::new("run_javascript", run_javascript, object(request::run_schema()))
            .with_annotations(runs.clone()),
        McpTool::new("run_python", run_python, object(request::run_schema()))
            .with_annotations(runs),
        McpTool::new(
            "search_tools",
            "Finds the tools scripts can call whose name or description holds the query's words: their names, descriptions, effects and JSON schemas.",
            object(json!({
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": false
            })),
        )
        .with_annotations(reads.clone()),
        McpTool::new(
            "get_run",
            "The journal's record of a run by id: status, error, engine, limits, metrics, nested tool calls.",
            object(json!({
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
                "additionalProperties": false
            })),
        )
        .with_annotations(reads),
        McpTool::new(
            "resume_run",
            "Continues a run that paused (status paused, APPROVAL_REQUIRED) at a tool call that \
needs a person's approval: approve true runs that call, false fails it with TOOL_DENIED; the \
script then goes on, in a new run whose report this returns. Nothing before the pause runs twice.",
            object(json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The paused run's id"},
                    "approve": {"type": "boolean", "description": "Whether the pending call may run"}
                },
                "required": ["id", "approve"],
                "additionalProperties": false
            })),
        )
        .with_annotations(runs_again),
    ]
}
