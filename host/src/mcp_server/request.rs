//! The arguments of forge-host's MCP tools, checked strictly (unknown fields are refused), and
//! the limits a client asks for clamped to the server's own, which are ceilings.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::limits::{Limits, MIN_MEMORY_BYTES};

/// `run_javascript` and `run_python`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArguments {
    /// The script.
    pub code: String,
    /// The session whose state it shares.
    pub session: Option<String>,
    /// Asked-for wall clock, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Asked-for memory cap, in MiB.
    pub memory_mb: Option<u64>,
    /// Files and folders copied into `/input`: paths inside the server's inputs root
    /// (`--inputs-root`), relative to it or absolute.
    #[serde(default)]
    pub inputs: Vec<PathBuf>,
}

/// `search_tools`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArguments {
    /// Words looked for in tool names and descriptions.
    pub query: String,
}

/// `get_run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetRunArguments {
    /// The run's id.
    pub id: String,
}

/// `resume_run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeArguments {
    /// The paused run's id.
    pub id: String,
    /// The person's answer to its pending call.
    pub approve: bool,
}

/// Parses a tool's arguments, with a message that names the tool.
pub fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<T, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| format!("bad arguments for `{tool}`: {e}"))
}

/// A limit the server lowered or raised from what the client asked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Clamp {
    /// The argument (`timeout_ms`, `memory_mb`).
    pub argument: &'static str,
    /// What the client asked for.
    pub requested: u64,
    /// What the run got.
    pub used: u64,
    /// Why.
    pub reason: String,
}

/// The limits of one run: the server's, lowered to what the client asked for, never above them.
pub fn limits(ceilings: &Limits, arguments: &RunArguments) -> (Limits, Vec<Clamp>) {
    let mut limits = ceilings.clone();
    let mut clamps = Vec::new();
    if let Some(requested) = arguments.timeout_ms {
        let ceiling = u64::try_from(ceilings.timeout.as_millis()).unwrap_or(u64::MAX);
        let used = requested.clamp(1, ceiling);
        if used != requested {
            clamps.push(Clamp {
                argument: "timeout_ms",
                requested,
                used,
                reason: if requested > ceiling {
                    format!("the server's --timeout is {ceiling} ms")
                } else {
                    "the shortest timeout is 1 ms".into()
                },
            });
        }
        limits.timeout = Duration::from_millis(used);
    }
    if let Some(requested) = arguments.memory_mb {
        let ceiling = ceilings.memory_bytes >> 20;
        let floor = MIN_MEMORY_BYTES >> 20;
        let used = requested.min(ceiling).max(floor.min(ceiling));
        if used != requested {
            clamps.push(Clamp {
                argument: "memory_mb",
                requested,
                used,
                reason: if requested > ceiling {
                    format!("the server's --memory is {ceiling} MiB")
                } else {
                    format!("no engine starts with less than {floor} MiB")
                },
            });
        }
        limits.memory_bytes = used << 20;
        // Budgets that must fit in memory shrink with it.
        for budget in [
            &mut limits.max_call_input_bytes,
            &mut limits.max_call_response_bytes,
            &mut limits.max_output_bytes,
            &mut limits.max_result_bytes,
            &mut limits.max_state_bytes,
            &mut limits.max_log_bytes,
        ] {
            *budget = (*budget).min(limits.memory_bytes);
        }
        limits.max_state_value_bytes = limits.max_state_value_bytes.min(limits.max_state_bytes);
    }
    (limits, clamps)
}

/// The input schema of `run_javascript` and `run_python`.
pub fn run_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The script"},
            "session": {"type": "string", "description": "Session whose shared state the script reads and writes"},
            "timeout_ms": {"type": "integer", "minimum": 1, "description": "Wall-clock limit in milliseconds (capped by the server's)"},
            "memory_mb": {"type": "integer", "minimum": 1, "description": "Memory cap in MiB (capped by the server's)"},
            "inputs": {"type": "array", "items": {"type": "string"}, "description": "Files or folders under the server's inputs root (relative to it, or absolute inside it), copied read-only into /input"}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(timeout_ms: Option<u64>, memory_mb: Option<u64>) -> RunArguments {
        RunArguments {
            code: String::new(),
            session: None,
            timeout_ms,
            memory_mb,
            inputs: Vec::new(),
        }
    }

    #[test]
    fn asked_limits_are_clamped_to_the_ceilings_and_the_clamp_is_said() {
        let ceilings = Limits::default();
        let (limits, clamps) = limits(&ceilings, &arguments(Some(500), Some(64)));
        assert_eq!(limits.timeout, Duration::from_millis(500));
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert!(clamps.is_empty());
        limits.validate().expect("valid");

        let (limits, clamps) = super::limits(&ceilings, &arguments(Some(10_000_000), Some(1)));
        assert_eq!(limits.timeout, ceilings.timeout);
        assert_eq!(limits.memory_bytes, MIN_MEMORY_BYTES);
        let names: Vec<_> = clamps.iter().map(|c| c.argument).collect();
        assert_eq!(names, ["timeout_ms", "memory_mb"]);
        limits.validate().expect("valid");
    }

    #[test]
    fn unknown_or_missing_fields_are_refused_with_the_tool_named() {
        let missing = parse::<RunArguments>("run_python", None).expect_err("no code");
        assert!(
            missing.contains("run_python") && missing.contains("code"),
            "{missing}"
        );
        let mut extra = serde_json::Map::new();
        extra.insert("code".into(), json!("1"));
        extra.insert("cwd".into(), json!("/"));
        assert!(parse::<RunArguments>("run_python", Some(extra)).is_err());
        let mut wrong = serde_json::Map::new();
        wrong.insert("code".into(), json!(5));
        assert!(parse::<RunArguments>("run_python", Some(wrong)).is_err());
    }
}
