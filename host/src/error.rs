//! The stable error codes (docs/scripts.md lists them) and the library's error type.
//!
//! Codes are part of the public interface: they appear in `--json` reports, in the journal and in
//! the errors scripts see. Never rename one.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares [`ErrorCode`] once: each code's doc, variant and wire name, from which the enum,
/// its serde names, [`ErrorCode::ALL`] and [`ErrorCode::as_str`] are all made, so that no list
/// of codes can drift from another.
macro_rules! declare_error_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $wire:literal,)+) => {
        /// A stable error code: reports, the journal and the errors scripts see carry it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ #[serde(rename = $wire)] $variant,)+
        }

        impl ErrorCode {
            /// Every code, in the order of their declaration.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The code as it appears on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)+
                }
            }
        }
    };
}

declare_error_codes! {
    /// The script does not parse.
    ScriptSyntax = "SCRIPT_SYNTAX",
    /// The script threw or raised.
    ScriptRuntime = "SCRIPT_RUNTIME",
    /// The wall-clock deadline passed.
    Timeout = "TIMEOUT",
    /// The caller cancelled the execution.
    Cancelled = "CANCELLED",
    /// The deterministic CPU budget (fuel) is spent.
    FuelExhausted = "FUEL_EXHAUSTED",
    /// The host denied a memory growth.
    MemoryLimit = "MEMORY_LIMIT",
    /// The wasm stack overflowed (or the language's own recursion limit was hit).
    StackLimit = "STACK_LIMIT",
    /// More tool calls than allowed.
    ToolBudget = "TOOL_BUDGET",
    /// The permission gate denied a tool call.
    ToolDenied = "TOOL_DENIED",
    /// A tool call failed.
    ToolFailed = "TOOL_FAILED",
    /// No tool has that name.
    ToolNotFound = "TOOL_NOT_FOUND",
    /// The script waits on a promise that nothing can settle.
    UnresolvablePromise = "UNRESOLVABLE_PROMISE",
    /// The guest broke the host/guest contract.
    ProtocolViolation = "PROTOCOL_VIOLATION",
    /// A state key changed since the execution's snapshot.
    StateConflict = "STATE_CONFLICT",
    /// A state, output, call or result byte budget was exceeded.
    BudgetExceeded = "BUDGET_EXCEEDED",
    /// The host denied a write past the run's disk quota (`--max-disk`), and the run then failed.
    DiskLimit = "DISK_LIMIT",
    /// A Python import is not installed.
    PackageUnavailable = "PACKAGE_UNAVAILABLE",
    /// An output file failed validation.
    PublicationRejected = "PUBLICATION_REJECTED",
    /// Bad request, bad configuration or bad input file.
    InvalidInput = "INVALID_INPUT",
    /// No engine for the file, or its hash or compile check failed.
    EngineUnavailable = "ENGINE_UNAVAILABLE",
    /// The engine crashed or trapped for another reason.
    IsolateFailure = "ISOLATE_FAILURE",
    /// A replayed run asked the host for something the recorded run did not (`replay`).
    ReplayDiverged = "REPLAY_DIVERGED",
    /// A tool call needs a person's approval: the run paused (`resume ID --approve`).
    ApprovalRequired = "APPROVAL_REQUIRED",
    /// The host's own disk (the data directory, or where outputs are published) has no space
    /// left: not the script's doing. Nothing half-written was kept; the run can go again once
    /// there is room.
    HostDiskFull = "HOST_DISK_FULL",
    /// NATS or etcd did not answer for longer than forge-host waits for it
    /// (`--nats-patience`, `--etcd-patience`): what is down is named. A run it was waiting for
    /// may still end on its worker, and its outcome is kept there; a state commit that gave up
    /// wrote nothing.
    ClusterUnreachable = "CLUSTER_UNREACHABLE",
}

impl ErrorCode {
    /// The codes the host's imports fail with (`error-info.code` in `wit/forge.wit`). An uncaught
    /// failure of a host call carrying one of them ends the run with that code; any other code a
    /// script puts on an error is `ScriptRuntime` (a script cannot claim `Timeout` or
    /// `MemoryLimit`). Engines learn this list from each `run-request` instead of keeping a copy.
    pub const PASS_THROUGH: [ErrorCode; 5] = [
        ErrorCode::ToolFailed,
        ErrorCode::ToolDenied,
        ErrorCode::ToolNotFound,
        ErrorCode::BudgetExceeded,
        ErrorCode::InvalidInput,
    ];

    /// Parses a wire code; `None` for anything that is not one of [`ErrorCode::ALL`].
    pub fn parse(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of the library before or around an execution (not a script's own failure, which is
/// a [`crate::RunReport`] with a failed status). It keeps the typed error it came from as its
/// [`std::error::Error::source`]; `message` already reads the whole chain.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            source: None,
        }
    }

    /// An error with `code` that keeps `source`; the message is `source` and its own sources.
    /// A chain that ends in the host's disk being full is `HOST_DISK_FULL` whatever `code` says
    /// ([`code_of`]).
    pub fn from_source(
        code: ErrorCode,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error {
            code: code_of(code, &source),
            message: chain_text(&source),
            source: Some(Box::new(source)),
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

    /// Whether it is the caller's doing (bad usage, bad input, no engine for the file) rather
    /// than a failure inside forge-host: the CLI exits 2 for these and 1 otherwise.
    pub fn is_usage(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::InvalidInput | ErrorCode::EngineUnavailable
        )
    }
}

/// The code a failure stands as: `code`, unless `error` or one of its sources says the host's
/// disk is full (ENOSPC, EDQUOT), which is `HOST_DISK_FULL` whatever the operation was: the
/// operation was sound, the machine had no room.
pub fn code_of(code: ErrorCode, error: &(dyn std::error::Error + 'static)) -> ErrorCode {
    if out_of_space(error) {
        ErrorCode::HostDiskFull
    } else {
        code
    }
}

/// Whether `error` or one of its sources is the host's disk being full. redb's errors do not
/// give their I/O error as a source, so they are looked into by type.
pub fn out_of_space(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if io_of(error).is_some_and(is_out_of_space) {
            return true;
        }
        next = error.source();
    }
    false
}

/// Whether an I/O error is a full disk or an exhausted disk quota of the host's user (by its
/// kind too: a wrapped one, such as tempfile's with the path, keeps its kind but not its errno).
pub fn is_out_of_space(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{QuotaExceeded, StorageFull};
    matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
        || matches!(error.kind(), StorageFull | QuotaExceeded)
}

/// The I/O error `error` is, or that a redb error carries.
fn io_of<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a std::io::Error> {
    fn storage(error: &redb::StorageError) -> Option<&std::io::Error> {
        match error {
            redb::StorageError::Io(io) => Some(io),
            _ => None,
        }
    }
    if let Some(io) = error.downcast_ref::<std::io::Error>() {
        return Some(io);
    }
    if let Some(redb::Error::Io(io)) = error.downcast_ref::<redb::Error>() {
        return Some(io);
    }
    if let Some(error) = error.downcast_ref::<redb::StorageError>() {
        return storage(error);
    }
    match error.downcast_ref::<redb::CommitError>() {
        Some(redb::CommitError::Storage(error)) => return storage(error),
        Some(_) => return None,
        None => {}
    }
    match error.downcast_ref::<redb::TransactionError>() {
        Some(redb::TransactionError::Storage(error)) => return storage(error),
        Some(_) => return None,
        None => {}
    }
    match error.downcast_ref::<redb::TableError>() {
        Some(redb::TableError::Storage(error)) => return storage(error),
        Some(_) => return None,
        None => {}
    }
    match error.downcast_ref::<redb::DatabaseError>() {
        Some(redb::DatabaseError::Storage(error)) => storage(error),
        _ => None,
    }
}

/// `error` and each of its sources, joined by `: `.
pub fn chain_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(source) = next {
        let more = source.to_string();
        // Some errors repeat their source in their own text; say it once.
        if !text.ends_with(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        next = source.source();
    }
    text
}

/// The error of a failed execution, as reports and `provenance.json` show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorReport {
    /// Stable code.
    pub code: ErrorCode,
    /// Why.
    pub message: String,
    /// The guest's stack trace or traceback, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the host stopped a guest from inside a host call. Returned as the trap's error and
/// recovered by type (`downcast_ref`), never by its text.
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
    /// In a replay, the guest asked for a call the recorded run did not make.
    #[error("the replay diverged: {0}")]
    ReplayDiverged(String),
    /// A call needs a person's approval and there is nobody to ask now: the run pauses.
    #[error("`{tool}` ({effect} effect) needs approval: {reason}")]
    ApprovalRequired {
        /// The tool.
        tool: String,
        /// Its effect's name.
        effect: &'static str,
        /// Why the policy would not let it run.
        reason: String,
    },
}

impl HostStop {
    /// The code the execution ends with.
    pub fn code(&self) -> ErrorCode {
        match self {
            HostStop::ToolBudget { .. } => ErrorCode::ToolBudget,
            HostStop::ProtocolViolation(_) => ErrorCode::ProtocolViolation,
            HostStop::ReplayDiverged(_) => ErrorCode::ReplayDiverged,
            HostStop::ApprovalRequired { .. } => ErrorCode::ApprovalRequired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_wire_name() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
        assert_eq!(ErrorCode::parse("NOT_A_CODE"), None);
    }

    #[test]
    fn an_error_keeps_its_source_and_reads_the_whole_chain() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = Error::from_source(ErrorCode::IsolateFailure, io);
        assert_eq!(error.message, "no such file");
        let source = std::error::Error::source(&error).expect("kept");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
        assert!(!error.is_usage());
        assert!(Error::invalid_input("x").is_usage());
    }

    #[test]
    fn a_full_disk_anywhere_in_the_chain_is_the_hosts_not_the_operations() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot publish")]
        struct Publish(#[source] std::io::Error);
        let full = || std::io::Error::from_raw_os_error(libc::ENOSPC);
        let error = Error::from_source(ErrorCode::PublicationRejected, Publish(full()));
        assert_eq!(error.code, ErrorCode::HostDiskFull);
        let quota = std::io::Error::from_raw_os_error(libc::EDQUOT);
        assert_eq!(
            code_of(ErrorCode::IsolateFailure, &quota),
            ErrorCode::HostDiskFull
        );
        // redb keeps its I/O error out of `source()`: it is found by type.
        let redb = redb::Error::from(redb::StorageError::Io(full()));
        assert_eq!(
            code_of(ErrorCode::IsolateFailure, &redb),
            ErrorCode::HostDiskFull
        );
        let commit = redb::CommitError::Storage(redb::StorageError::Io(full()));
        assert!(out_of_space(&commit));
        let wrapped = std::io::Error::new(std::io::ErrorKind::StorageFull, "at path /x");
        assert!(out_of_space(&wrapped), "a wrapped error keeps its kind");
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            Error::from_source(ErrorCode::IsolateFailure, Publish(denied)).code,
            ErrorCode::IsolateFailure
        );
    }
}
