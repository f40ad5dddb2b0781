//! The stable error codes of SPEC §4 and the library's error type.
//!
//! Codes are part of the public interface: they appear in `--json` reports, in the journal and in
//! the errors scripts see. Never rename one.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A stable error code (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The script does not parse.
    ScriptSyntax,
    /// The script threw or raised.
    ScriptRuntime,
    /// The wall-clock deadline passed.
    Timeout,
    /// The caller cancelled the execution.
    Cancelled,
    /// The deterministic CPU budget (fuel) is spent.
    FuelExhausted,
    /// The host denied a memory growth.
    MemoryLimit,
    /// The wasm stack overflowed (or the language's own recursion limit was hit).
    StackLimit,
    /// More tool calls than allowed.
    ToolBudget,
    /// The permission gate denied a tool call.
    ToolDenied,
    /// A tool call failed.
    ToolFailed,
    /// No tool has that name.
    ToolNotFound,
    /// The script waits on a promise that nothing can settle.
    UnresolvablePromise,
    /// The guest broke the host/guest contract.
    ProtocolViolation,
    /// A state key changed since the execution's snapshot.
    StateConflict,
    /// A state, output, call or result byte budget was exceeded.
    BudgetExceeded,
    /// A Python import is not installed.
    PackageUnavailable,
    /// An output file failed validation.
    PublicationRejected,
    /// Bad request, bad configuration or bad input file.
    InvalidInput,
    /// No engine for the file, or its hash or compile check failed.
    EngineUnavailable,
    /// The engine crashed or trapped for another reason.
    IsolateFailure,
}

impl ErrorCode {
    /// Every code, in SPEC order.
    pub const ALL: [ErrorCode; 20] = [
        ErrorCode::ScriptSyntax,
        ErrorCode::ScriptRuntime,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::FuelExhausted,
        ErrorCode::MemoryLimit,
        ErrorCode::StackLimit,
        ErrorCode::ToolBudget,
        ErrorCode::ToolDenied,
        ErrorCode::ToolFailed,
        ErrorCode::ToolNotFound,
        ErrorCode::UnresolvablePromise,
        ErrorCode::ProtocolViolation,
        ErrorCode::StateConflict,
        ErrorCode::BudgetExceeded,
        ErrorCode::PackageUnavailable,
        ErrorCode::PublicationRejected,
        ErrorCode::InvalidInput,
        ErrorCode::EngineUnavailable,
        ErrorCode::IsolateFailure,
    ];

    /// The code as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ScriptSyntax => "SCRIPT_SYNTAX",
            ErrorCode::ScriptRuntime => "SCRIPT_RUNTIME",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::FuelExhausted => "FUEL_EXHAUSTED",
            ErrorCode::MemoryLimit => "MEMORY_LIMIT",
            ErrorCode::StackLimit => "STACK_LIMIT",
            ErrorCode::ToolBudget => "TOOL_BUDGET",
            ErrorCode::ToolDenied => "TOOL_DENIED",
            ErrorCode::ToolFailed => "TOOL_FAILED",
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::UnresolvablePromise => "UNRESOLVABLE_PROMISE",
            ErrorCode::ProtocolViolation => "PROTOCOL_VIOLATION",
            ErrorCode::StateConflict => "STATE_CONFLICT",
            ErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCode::PackageUnavailable => "PACKAGE_UNAVAILABLE",
            ErrorCode::PublicationRejected => "PUBLICATION_REJECTED",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::EngineUnavailable => "ENGINE_UNAVAILABLE",
            ErrorCode::IsolateFailure => "ISOLATE_FAILURE",
        }
    }

    /// Parses a wire code; `None` for anything that is not one of SPEC §4.
    pub fn parse(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == text)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of the library before or around an execution (not a script's own failure, which is
/// a [`crate::RunReport`] with a failed status).
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_INPUT`.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidInput, message)
    }

    /// `ENGINE_UNAVAILABLE`.
    pub fn engine_unavailable(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::EngineUnavailable, message)
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_wire_name() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
        assert_eq!(ErrorCode::parse("NOT_A_CODE"), None);
    }
}

/// Why the host stopped a guest from inside a host call. Returned as the trap's error and
/// recovered by type (`downcast_ref`), never by its text (SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostStop {
    /// The script began more tool calls than allowed.
    #[error("more than {max} tool calls")]
    ToolBudget {
        /// The execution's budget.
        max: u32,
    },
    /// The guest broke the contract of `wit/`.
    #[error("the engine broke the host contract: {0}")]
    ProtocolViolation(String),
}

impl HostStop {
    /// The code the execution ends with.
    pub fn code(&self) -> ErrorCode {
        match self {
            HostStop::ToolBudget { .. } => ErrorCode::ToolBudget,
            HostStop::ProtocolViolation(_) => ErrorCode::ProtocolViolation,
        }
    }
}
