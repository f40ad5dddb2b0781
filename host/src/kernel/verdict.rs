//! Who decides how an execution ended (docs/scripts.md). The host's own stop wins: a deadline is
//! `TIMEOUT`, a cancellation `CANCELLED`, whatever the guest said. Traps are classified by their
//! cause (wasmtime's trap code, the host's typed stop, the limiter's record), never by text. A
//! code the guest reports is believed only when the guest can know it.

use wasmtime::Trap;

use crate::error::{ErrorCode, HostStop};
use crate::journal::ExecutionState;
use crate::primitives::truncate_at;

/// A stop the host made on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDecision {
    /// The wall-clock deadline passed.
    Deadline,
    /// The caller cancelled.
    Cancelled,
}

/// What the guest did, when the host let it finish.
#[derive(Debug)]
pub enum GuestOutcome {
    /// `run` returned a value (or none).
    Returned(Option<String>),
    /// `run` returned a script error.
    Failed {
        /// The code the engine reported.
        code: String,
        /// Its message.
        message: String,
        /// Its stack or traceback.
        stack: Option<String>,
    },
    /// The instance trapped, or a host function stopped it.
    Trapped(wasmtime::Error),
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The terminal state.
    pub status: ExecutionState,
    /// The error, unless it succeeded.
    pub error: Option<(ErrorCode, String)>,
    /// The guest's stack or traceback, when it reported one.
    pub stack: Option<String>,
}

impl Verdict {
    /// A success, so far.
    pub fn succeeded_now() -> Self {
        Verdict {
            status: ExecutionState::Succeeded,
            error: None,
            stack: None,
        }
    }

    /// Whether the run stands as a success.
    pub fn succeeded(&self) -> bool {
        self.status == ExecutionState::Succeeded
    }

    /// A failure with `code`.
    pub fn failed(code: ErrorCode, message: impl Into<String>) -> Self {
        Verdict {
            status: ExecutionState::Failed,
            error: Some((code, message.into())),
            stack: None,
        }
    }
}

/// What the host refused the guest during the run. A plain failure after a refusal is the
/// refusal's doing: a denied memory growth makes it `MEMORY_LIMIT`, a denied write `DISK_LIMIT`,
/// a write the host's own full disk refused `HOST_DISK_FULL`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refusals {
    /// A memory growth was denied.
    pub memory: bool,
    /// A write past the disk quota was denied.
    pub disk: bool,
    /// A write within the quota failed because the host's disk is full.
    pub host_disk: bool,
}

/// Codes only the host can know; a guest reporting one of them is a plain script failure.
fn host_only(code: ErrorCode) -> bool {
    use ErrorCode::*;
    matches!(
        code,
        Timeout
            | Cancelled
            | FuelExhausted
            | ToolBudget
            | ProtocolViolation
            | StateConflict
            | PublicationRejected
            | EngineUnavailable
            | DiskLimit
            | HostDiskFull
            | ClusterUnreachable
    )
}

/// The code a guest-reported failure stands as: the guest's own, except a code only the host
/// can know. After a denied memory growth, a plain runtime failure (QuickJS's `InternalError:
/// out of memory` or thrown `null`, Python's `MemoryError`) is the memory cap's doing.
pub fn guest_code(reported: &str, refusals: Refusals) -> ErrorCode {
    match ErrorCode::parse(reported) {
        Some(ErrorCode::ScriptRuntime) | None if refusals.memory => ErrorCode::MemoryLimit,
        Some(ErrorCode::ScriptRuntime) | None if refusals.disk => ErrorCode::DiskLimit,
        Some(ErrorCode::ScriptRuntime) | None if refusals.host_disk => ErrorCode::HostDiskFull,
        Some(code) if host_only(code) => ErrorCode::ScriptRuntime,
        Some(code) => code,
        None => ErrorCode::ScriptRuntime,
    }
}

/// Classifies a trap by its cause.
pub fn classify_trap(error: &wasmtime::Error, memory_denied: bool) -> (ErrorCode, String) {
    if let Some(stop) = error.downcast_ref::<HostStop>() {
        return (stop.code(), stop.to_string());
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => (ErrorCode::FuelExhausted, "the fuel budget is spent".into()),
        Some(Trap::StackOverflow) => (
            ErrorCode::StackLimit,
            "the wasm stack overflowed (recursion too deep)".into(),
        ),
        Some(Trap::Interrupt) => (ErrorCode::Timeout, "the deadline passed".into()),
        // After a denied growth, an engine that cannot recover (a Rust allocation failure
        // aborts, a C engine may dereference what malloc could not give) traps somehow: the
        // cause is the memory cap.
        _ if memory_denied => (
            ErrorCode::MemoryLimit,
            format!("the memory limit was reached ({})", first_line(error)),
        ),
        Some(trap) => (
            ErrorCode::IsolateFailure,
            format!("the engine trapped: {trap}"),
        ),
        None => (
            ErrorCode::IsolateFailure,
            format!("the engine failed: {}", first_line(error)),
        ),
    }
}

fn first_line(error: &wasmtime::Error) -> String {
    error
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Longest stderr line quoted in a message, in bytes.
const MAX_LAST_WORDS_BYTES: usize = 500;

/// An engine that fails hard usually says why on stderr first (a native extension's C++
/// exception, a Rust panic): the last non-empty line of its stderr joins an `ISOLATE_FAILURE`
/// message, quoted as the engine's words. The code never depends on it.
pub fn add_last_words(verdict: &mut Verdict, stderr: &str) {
    let Some((ErrorCode::IsolateFailure, message)) = &mut verdict.error else {
        return;
    };
    let Some(line) = stderr.lines().rev().map(str::trim).find(|l| !l.is_empty()) else {
        return;
    };
    let line = truncate_at(line, MAX_LAST_WORDS_BYTES);
    message.push_str(&format!("; the engine's last stderr line: {line}"));
}

/// A deadline that fell while the guest slept in a timer's wait names what it waited for
/// (`pending`, the guest's own words: quoted, never trusted for the code).
pub fn add_pending(verdict: &mut Verdict, pending: Option<String>) {
    if let (Some((ErrorCode::Timeout, message)), Some(pending)) = (&mut verdict.error, pending) {
        message.push_str(&format!("; still pending: {pending}"));
    }
}

/// Decides the verdict from the host's stop (if any) and the guest's outcome (if it finished).
pub fn decide(
    stop: Option<HostDecision>,
    outcome: Option<GuestOutcome>,
    refusals: Refusals,
) -> Verdict {
    match stop {
        Some(HostDecision::Deadline) => {
            return Verdict {
                status: ExecutionState::TimedOut,
                error: Some((
                    ErrorCode::Timeout,
                    "the execution passed its timeout".into(),
                )),
                stack: None,
            };
        }
        Some(HostDecision::Cancelled) => {
            return Verdict {
                status: ExecutionState::Cancelled,
                error: Some((ErrorCode::Cancelled, "the execution was cancelled".into())),
                stack: None,
            };
        }
        None => {}
    }
    match outcome {
        Some(GuestOutcome::Returned(_)) => Verdict::succeeded_now(),
        Some(GuestOutcome::Failed {
            code,
            message,
            stack,
        }) => Verdict {
            status: ExecutionState::Failed,
            error: Some((guest_code(&code, refusals), message)),
            stack,
        },
        Some(GuestOutcome::Trapped(error)) => {
            let (code, message) = classify_trap(&error, refusals.memory);
            if code == ErrorCode::Timeout {
                return decide(Some(HostDecision::Deadline), None, refusals);
            }
            if code == ErrorCode::ApprovalRequired {
                return Verdict {
                    status: ExecutionState::Paused,
                    error: Some((code, message)),
                    stack: None,
                };
            }
            Verdict::failed(code, message)
        }
        None => Verdict::failed(
            ErrorCode::IsolateFailure,
            "the engine ended without an outcome",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(code: &str) -> Option<GuestOutcome> {
        Some(GuestOutcome::Failed {
            code: code.into(),
            message: "m".into(),
            stack: None,
        })
    }

    const MEMORY: Refusals = Refusals {
        memory: true,
        disk: false,
        host_disk: false,
    };

    #[test]
    fn the_hosts_stop_wins_over_whatever_the_guest_said() {
        let v = decide(
            Some(HostDecision::Deadline),
            Some(GuestOutcome::Returned(None)),
            Refusals::default(),
        );
        assert_eq!(
            (v.status, v.error.map(|e| e.0)),
            (ExecutionState::TimedOut, Some(ErrorCode::Timeout))
        );
        let v = decide(
            Some(HostDecision::Cancelled),
            failed("SCRIPT_RUNTIME"),
            Refusals::default(),
        );
        assert_eq!(v.status, ExecutionState::Cancelled);
    }

    #[test]
    fn a_guest_cannot_claim_what_only_the_host_knows() {
        for forged in [
            "TIMEOUT",
            "CANCELLED",
            "TOOL_BUDGET",
            "FUEL_EXHAUSTED",
            "DISK_LIMIT",
            "HOST_DISK_FULL",
            "CLUSTER_UNREACHABLE",
            "NONSENSE",
        ] {
            let v = decide(None, failed(forged), Refusals::default());
            assert_eq!(
                v.error.map(|e| e.0),
                Some(ErrorCode::ScriptRuntime),
                "{forged}"
            );
        }
        assert_eq!(guest_code("MEMORY_LIMIT", MEMORY), ErrorCode::MemoryLimit);
        assert_eq!(
            guest_code("STACK_LIMIT", Refusals::default()),
            ErrorCode::StackLimit
        );
        assert_eq!(guest_code("SCRIPT_RUNTIME", MEMORY), ErrorCode::MemoryLimit);
        assert_eq!(guest_code("SCRIPT_SYNTAX", MEMORY), ErrorCode::ScriptSyntax);
        assert_eq!(
            guest_code("TOOL_FAILED", Refusals::default()),
            ErrorCode::ToolFailed
        );
        assert_eq!(
            guest_code("SCRIPT_SYNTAX", Refusals::default()),
            ErrorCode::ScriptSyntax
        );
        let disk = Refusals {
            disk: true,
            ..Refusals::default()
        };
        assert_eq!(guest_code("SCRIPT_RUNTIME", disk), ErrorCode::DiskLimit);
        assert_eq!(guest_code("TOOL_FAILED", disk), ErrorCode::ToolFailed);
        let host_full = Refusals {
            host_disk: true,
            ..Refusals::default()
        };
        assert_eq!(
            guest_code("SCRIPT_RUNTIME", host_full),
            ErrorCode::HostDiskFull
        );
        assert_eq!(
            guest_code("SCRIPT_SYNTAX", host_full),
            ErrorCode::ScriptSyntax
        );
    }

    #[test]
    fn an_isolate_failure_quotes_the_engines_last_words() {
        let mut trapped = Verdict::failed(ErrorCode::IsolateFailure, "the engine trapped");
        add_last_words(
            &mut trapped,
            "before\nforge: a C++ exception (std::bad_alloc)\n\n",
        );
        assert_eq!(
            trapped.error.map(|e| e.1).as_deref(),
            Some(
                "the engine trapped; the engine's last stderr line: forge: a C++ exception (std::bad_alloc)"
            )
        );
        let mut script = Verdict::failed(ErrorCode::ScriptRuntime, "boom");
        add_last_words(&mut script, "noise");
        assert_eq!(script.error.map(|e| e.1).as_deref(), Some("boom"));
    }

    #[test]
    fn traps_are_classified_by_type() {
        let (code, _) = classify_trap(&wasmtime::Error::new(Trap::OutOfFuel), false);
        assert_eq!(code, ErrorCode::FuelExhausted);
        let (code, _) = classify_trap(&wasmtime::Error::new(Trap::StackOverflow), false);
        assert_eq!(code, ErrorCode::StackLimit);
        let (code, _) = classify_trap(&wasmtime::Error::new(Trap::UnreachableCodeReached), true);
        assert_eq!(code, ErrorCode::MemoryLimit);
        let (code, _) = classify_trap(&wasmtime::Error::new(Trap::UnreachableCodeReached), false);
        assert_eq!(code, ErrorCode::IsolateFailure);
        let stop = wasmtime::Error::new(HostStop::ToolBudget { max: 3 });
        assert_eq!(classify_trap(&stop, false).0, ErrorCode::ToolBudget);
        // Text that looks like a cause is not a cause.
        let forged = wasmtime::Error::msg("wasm trap: all fuel consumed by WebAssembly");
        assert_eq!(classify_trap(&forged, false).0, ErrorCode::IsolateFailure);
    }
}
