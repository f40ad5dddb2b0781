//! The replay record of one execution (its "tape"): every nondeterministic input the guest
//! received, in order, so that the same component can be fed them again and must then do exactly
//! the same. A guest's only contact with the world is its imports; the tape holds what
//! they answered: clock readings, random bytes, each tool call's begin and completion (the
//! response by sha256, its bytes in the blob store), and, taken once at the start, the catalog
//! and the state snapshot it saw. The input files are pinned by the execution record's hashes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorCode;
use crate::permissions::Effect;

/// How much of a run is recorded (`run --record`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordMode {
    /// Everything, tool responses included (in the blob store): the run can be replayed.
    #[default]
    Full,
    /// The sequence with hashes only: a replay can check a run without tool calls, and tell
    /// where one with tool calls would need what was not kept.
    Hashes,
    /// Nothing.
    Off,
}

impl RecordMode {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            RecordMode::Full => "full",
            RecordMode::Hashes => "hashes",
            RecordMode::Off => "off",
        }
    }
}

/// The tape of one execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tape {
    /// How it was recorded.
    pub mode: RecordMode,
    /// Why it cannot be replayed, when it cannot (its record budget ran out, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_replayable: Option<String>,
    /// The seed `wasi:random/insecure-seed` answered, as a decimal string (a u128).
    pub insecure_seed: String,
    /// The hex key of the streams the run's random bytes came from.
    pub random_seed: String,
    /// The catalog the script saw.
    pub catalog: Vec<RecordedTool>,
    /// The session's state as the run's snapshot held it.
    pub snapshot: Vec<RecordedEntry>,
    /// What the guest received, in the order it asked.
    pub events: Vec<TapeEvent>,
    /// How the run ended, by hashes, for the replay to compare.
    pub outcome: Option<RecordedOutcome>,
}

/// One tool of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedTool {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
    /// Its effect.
    pub effect: Effect,
}

/// One key of the state snapshot (a tombstone has no value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedEntry {
    /// The key.
    pub key: String,
    /// Its JSON text, or `None` for a tombstone.
    pub value: Option<String>,
    /// The store revision that last changed it.
    pub revision: u64,
}

/// One answer the guest received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TapeEvent {
    /// `wasi:clocks/wall-clock.now`.
    WallClock {
        /// Seconds since the Unix epoch.
        secs: u64,
        /// And nanoseconds.
        nanos: u32,
    },
    /// `wasi:clocks/monotonic-clock.now`.
    Monotonic {
        /// Nanoseconds.
        nanos: u64,
    },
    /// `wasi:random/random` reads: `reads` reads in a row of `bytes` bytes each (a guest that
    /// reads 4 bytes thousands of times costs one event). The bytes come from the stream the
    /// tape's `random_seed` keys, so they are not kept.
    Random {
        /// Bytes a read took.
        bytes: u32,
        /// How many reads.
        reads: u32,
    },
    /// `wasi:random/insecure` reads, as [`TapeEvent::Random`].
    InsecureRandom {
        /// Bytes a read took.
        bytes: u32,
        /// How many reads.
        reads: u32,
    },
    /// `begin-call` (or the first half of `call`).
    Begin {
        /// Tool name.
        name: String,
        /// sha256 of the input text.
        input_sha256: String,
        /// The call id, or the failure the host answered at once.
        outcome: BeginOutcome,
    },
    /// A completion `wait-any` (or `call`) returned.
    Complete {
        /// Its call id.
        id: u64,
        /// The response, or the failure.
        outcome: CompletionOutcome,
    },
    /// A `wait-for` whose time ran out before any call finished (a timer of the guest's event
    /// loop is due).
    Elapsed {
        /// How long the guest asked to wait, in nanoseconds.
        nanos: u64,
    },
}

/// What `begin-call` answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BeginOutcome {
    /// The call started with this id.
    Started {
        /// The id.
        id: u64,
    },
    /// It failed at once.
    Refused {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
    },
    /// The run paused there: the call needs a person's approval (`--ask` with nobody to ask).
    /// A replay pauses at it too; a resume meets it live, with the person's answer.
    AwaitingApproval {
        /// What would deny it.
        reason: String,
    },
    /// The host stopped the run there (its tool-call budget was spent).
    Stopped {
        /// The code the run ended with.
        code: ErrorCode,
        /// Why.
        message: String,
    },
}

/// What a completion carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionOutcome {
    /// The response JSON text, by sha256 (its bytes are in the blob store when the tape is
    /// `full`).
    Response {
        /// sha256 of the text.
        sha256: String,
        /// Its length in bytes.
        bytes: u64,
    },
    /// The call failed.
    Failed {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
    },
}

/// How a recorded run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOutcome {
    /// Its terminal state's wire name.
    pub status: String,
    /// Its error code.
    pub error_code: Option<ErrorCode>,
    /// sha256 of the result's JSON text.
    pub value_sha256: Option<String>,
    /// sha256 of the `text()` values as one JSON array.
    pub text_sha256: String,
    /// sha256 of the retained stdout.
    pub stdout_sha256: String,
    /// sha256 of the retained stderr.
    pub stderr_sha256: String,
    /// Fuel the guest used, when it was metered.
    pub fuel_consumed: Option<u64>,
}

impl TapeEvent {
    /// One line for `replay --trace`.
    pub fn describe(&self) -> String {
        match self {
            TapeEvent::WallClock { secs, nanos } => format!("wall clock -> {secs}.{nanos:09} s"),
            TapeEvent::Monotonic { nanos } => format!("monotonic clock -> {nanos} ns"),
            TapeEvent::Random { bytes, reads } => {
                format!("random -> {reads} read(s) of {bytes} bytes")
            }
            TapeEvent::InsecureRandom { bytes, reads } => {
                format!("insecure random -> {reads} read(s) of {bytes} bytes")
            }
            TapeEvent::Begin {
                name,
                input_sha256,
                outcome,
            } => {
                let short = &input_sha256[..input_sha256.len().min(12)];
                match outcome {
                    BeginOutcome::Started { id } => {
                        format!("begin `{name}` input {short}… -> call {id}")
                    }
                    BeginOutcome::Refused { code, .. } => {
                        format!("begin `{name}` input {short}… -> refused {code}")
                    }
                    BeginOutcome::Stopped { code, .. } => {
                        format!("begin `{name}` input {short}… -> run stopped {code}")
                    }
                    BeginOutcome::AwaitingApproval { .. } => {
                        format!("begin `{name}` input {short}… -> paused for approval")
                    }
                }
            }
            TapeEvent::Complete { id, outcome } => match outcome {
                CompletionOutcome::Response { sha256, bytes } => format!(
                    "call {id} completed: {bytes} bytes, sha256 {}…",
                    &sha256[..sha256.len().min(12)]
                ),
                CompletionOutcome::Failed { code, .. } => format!("call {id} failed {code}"),
            },
            TapeEvent::Elapsed { nanos } => format!("wait of {nanos} ns -> elapsed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tape_round_trips_through_json() {
        let tape = Tape {
            mode: RecordMode::Full,
            insecure_seed: u128::MAX.to_string(),
            events: vec![
                TapeEvent::WallClock {
                    secs: 1 << 40,
                    nanos: 999_999_999,
                },
                TapeEvent::Begin {
                    name: "echo".into(),
                    input_sha256: "ab".repeat(32),
                    outcome: BeginOutcome::Started { id: 1 },
                },
                TapeEvent::Complete {
                    id: 1,
                    outcome: CompletionOutcome::Failed {
                        code: ErrorCode::ToolFailed,
                        message: "no".into(),
                    },
                },
            ],
            ..Tape::default()
        };
        let text = serde_json::to_string(&tape).expect("encode");
        assert_eq!(serde_json::from_str::<Tape>(&text).expect("decode"), tape);
        assert!(tape.events[1].describe().contains("begin `echo`"));
    }
}
