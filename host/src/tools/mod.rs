//! Tools a script may call (docs/tools-and-mcp.md): the [`Tool`] trait an embedder implements, the
//! [`ToolRegistry`] the catalog is read from, the built-in tools, and the dispatcher that runs a
//! script's nested calls concurrently under the execution's limits.

pub mod binding;
mod builtin;
mod call_log;
pub mod declare;
mod dispatch;
pub mod mcp;
mod server_log;
mod taped;
mod wait_note;
pub mod workspace;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use builtin::{EchoTool, FailTool, SleepTool};
pub use call_log::CallLog;
pub use dispatch::{Completion, RecordDurable, ToolCalls};
pub use server_log::{LineSink, ServerLogs, Subscription};
pub use taped::{recorded_catalog, replayed_registry};
pub use wait_note::WaitNote;

use crate::error::ErrorCode;
pub use crate::permissions::Effect;

/// The catalog entry of a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Unique name.
    pub name: String,
    /// What it does, for the script's author.
    pub description: String,
    /// JSON schema of its input.
    pub input_schema: Value,
    /// What it may do.
    pub effect: Effect,
}

/// Why a tool call failed; `code` is a stable error code (usually `TOOL_FAILED`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolError {
    /// The stable code the script sees.
    pub code: ErrorCode,
    /// The reason.
    pub message: String,
}

impl ToolError {
    /// A `TOOL_FAILED` error.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError {
            code: ErrorCode::ToolFailed,
            message: message.into(),
        }
    }

    /// An `INVALID_INPUT` error: the input does not fit the tool's schema.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        ToolError {
            code: ErrorCode::InvalidInput,
            message: message.into(),
        }
    }
}

/// The future a tool call returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'static>>;

/// A tool a script can call. Implementations must not block: run blocking work on
/// `tokio::task::spawn_blocking`.
pub trait Tool: Send + Sync + 'static {
    /// Its catalog entry.
    fn info(&self) -> &ToolInfo;
    /// Runs one call with an already parsed JSON input.
    fn call(&self, input: Value) -> ToolFuture;

    /// The paths a call with `input` writes, for the journal; only asked of tools with
    /// the `write` effect.
    fn paths(&self, input: &Value) -> Vec<String> {
        let _ = input;
        Vec::new()
    }

    /// The JSON schema of its responses, when it has one (MCP's `outputSchema`).
    fn output_schema(&self) -> Option<&Value> {
        None
    }
}

/// The tools of an execution, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    logs: ServerLogs,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the built-in tools (`echo`, `sleep`, `fail`).
    pub fn with_builtins() -> Self {
        let mut registry = Self::new();
        registry.register(Arc::new(EchoTool::new()));
        registry.register(Arc::new(SleepTool::new()));
        registry.register(Arc::new(FailTool::new()));
        registry
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.info().name.clone(), tool);
    }

    /// Where tool sources (MCP servers) print; each execution subscribes its task log.
    pub fn server_logs(&self) -> &ServerLogs {
        &self.logs
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.values().map(|tool| tool.as_ref())
    }

    /// Every tool's entry, sorted by name.
    pub fn list(&self) -> impl Iterator<Item = &ToolInfo> {
        self.tools.values().map(|tool| tool.info())
    }

    /// Entries whose name or description contains `query`, case-insensitively.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&ToolInfo> {
        let query = query.to_lowercase();
        self.list()
            .filter(|info| {
                info.name.to_lowercase().contains(&query)
                    || info.description.to_lowercase().contains(&query)
            })
            .take(limit)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_listed_sorted_and_searchable() {
        let registry = ToolRegistry::with_builtins();
        let names: Vec<_> = registry.list().map(|info| info.name.as_str()).collect();
        assert_eq!(names, ["echo", "fail", "sleep"]);
        let found: Vec<_> = registry
            .search("WAIT", 10)
            .into_iter()
            .map(|i| &i.name)
            .collect();
        assert_eq!(found, ["sleep"]);
        assert!(registry.search("echo", 0).is_empty());
    }
}
