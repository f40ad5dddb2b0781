//! The tools forge-host serves, as `tools/list` gives them: the run tools' descriptions carry
//! the typed catalog of every tool a script may call.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations};
use serde_json::{Value, json};

use super::request;
use crate::permissions::Policy;
use crate::tools::{ToolRegistry, declare};

/// The tools the server serves: the one list that both `tools/list` and dispatch read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ServedTool {
    RunJavascript,
    RunPython,
    SearchTools,
    GetRun,
    ResumeRun,
}

impl ServedTool {
    /// Every tool, in the order `tools/list` gives them.
    pub(super) const ALL: [ServedTool; 5] = [
        ServedTool::RunJavascript,
        ServedTool::RunPython,
        ServedTool::SearchTools,
        ServedTool::GetRun,
        ServedTool::ResumeRun,
    ];

    /// Its name on the wire.
    pub(super) const fn name(self) -> &'static str {
        match self {
            ServedTool::RunJavascript => "run_javascript",
            ServedTool::RunPython => "run_python",
            ServedTool::SearchTools => "search_tools",
            ServedTool::GetRun => "get_run",
            ServedTool::ResumeRun => "resume_run",
        }
    }

    /// The tool called `name`; `None` when the server has none of that name.
    pub(super) fn parse(name: &str) -> Option<ServedTool> {
        ServedTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// Every name, as an error lists them: `run_javascript, run_python, ...`.
    pub(super) fn names() -> String {
        ServedTool::ALL.map(ServedTool::name).join(", ")
    }
}

/// The server's tools; the run tools' descriptions carry the catalog a script can call.
pub(super) fn tool_list(catalog: &ToolRegistry, policy: &Policy) -> Vec<McpTool> {
    // A run changes session state (never destructively: a commit is checked against what the
    // run read); it reaches the open world only through tools the server's policy lets out.
    let runs = ToolAnnotations::new()
        .read_only(false)
        .destructive(false)
        .open_world(policy.allow_external);
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
    let search_schema = json!({
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": false
    });
    let get_run_schema = json!({
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": false
    });
    let resume_schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The paused run's id"},
            "approve": {"type": "boolean", "description": "Whether the pending call may run"}
        },
        "required": ["id", "approve"],
        "additionalProperties": false
    });
    ServedTool::ALL
        .into_iter()
        .map(|tool| {
            let (description, schema, annotations) = match tool {
                ServedTool::RunJavascript => {
                    (run_javascript.clone(), request::run_schema(), runs.clone())
                }
                ServedTool::RunPython => (run_python.clone(), request::run_schema(), runs.clone()),
                ServedTool::SearchTools => (
                    "Finds the tools scripts can call whose name or description holds the query's words: their names, descriptions, effects and JSON schemas.".to_string(),
                    search_schema.clone(),
                    reads.clone(),
                ),
                ServedTool::GetRun => (
                    "The journal's record of a run by id: status, error, engine, limits, metrics, nested tool calls.".to_string(),
                    get_run_schema.clone(),
                    reads.clone(),
                ),
                ServedTool::ResumeRun => (
                    "Continues a run that paused (status paused, APPROVAL_REQUIRED) at a tool call that \
needs a person's approval: approve true runs that call, false fails it with TOOL_DENIED; the \
script then goes on, in a new run whose report this returns. Nothing before the pause runs twice."
                        .to_string(),
                    resume_schema.clone(),
                    runs.clone(),
                ),
            };
            McpTool::new(tool.name(), description, object(schema)).with_annotations(annotations)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::ServedTool;

    #[test]
    fn every_served_tool_parses_back_from_its_name() {
        for tool in ServedTool::ALL {
            assert_eq!(ServedTool::parse(tool.name()), Some(tool));
        }
        assert_eq!(ServedTool::parse("run_ruby"), None);
        assert!(ServedTool::names().contains("resume_run"));
    }
}
