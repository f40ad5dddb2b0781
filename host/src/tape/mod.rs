//! Recording a run's nondeterministic inputs, and playing them back (docs/replay-and-approval.md).
//!
//! A [`Deck`] is shared by everything that answers the guest with something the world chose:
//! the WASI clocks and random generators ([`wasi`]) and the nested tool calls
//! (`tools::ToolCalls`). Recording, each answer is appended to the execution's [`Tape`] as it is
//! given; playing, each is taken from the tape instead of the world, and the first request that
//! does not match what was recorded is the divergence a replay reports. Clocks and random bytes
//! are served from their own queues (a guest asks for them in the same order every time it does
//! the same thing); tool calls must match in order, name and input hash.

mod player;
pub mod random;
pub mod wasi;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::error::ErrorCode;
use crate::journal::{
    BeginOutcome, Blobs, CompletionOutcome, RecordMode, RecordedOutcome, Tape, TapeEvent,
};
use crate::primitives::sha256_hex;
use random::RandomStreams;

pub use player::Player;

/// What answers the guest: the world (recording or not) or a tape.
#[derive(Clone, Default)]
pub enum Deck {
    /// The world, unrecorded.
    #[default]
    Off,
    /// The world, recorded.
    Recording(Recorder),
    /// A tape.
    Playing(Player),
}

/// Where an answer comes from when a tape is playing.
#[derive(Debug, Clone, PartialEq)]
pub enum Served<T> {
    /// From the tape.
    Tape(T),
    /// The tape is done and the run goes on live (a resumed run past its pause).
    Live,
}

/// A completion taken from the tape: the call id and its response text or failure.
pub type PlayedCompletion = (u64, Result<String, (ErrorCode, String)>);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding it cannot leave a tape half-appended: every change is one push.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Appends what the world answered to a tape.
#[derive(Clone)]
pub struct Recorder(Arc<Mutex<Recording>>);

struct Recording {
    tape: Tape,
    blobs: Blobs,
    /// Where the run's random bytes come from (keyed by the tape's `random_seed`).
    random: RandomStreams,
    /// Bytes of responses and random data the tape may still keep.
    budget_left: u64,
    budget: u64,
}

impl Recorder {
    /// A recorder for a run recorded in `mode`, keeping up to `budget` bytes of responses (in
    /// `blobs`). `tape` holds what is known at the start (seeds, catalog, snapshot); without a
    /// `random_seed` it gets a new one.
    pub fn new(mode: RecordMode, budget: u64, blobs: Blobs, tape: Tape) -> Self {
        let mut tape = Tape { mode, ..tape };
        let random = match RandomStreams::from_hex(&tape.random_seed) {
            Some(random) => random,
            None => {
                tape.random_seed = RandomStreams::fresh_seed();
                RandomStreams::from_hex(&tape.random_seed)
                    .unwrap_or_else(|| RandomStreams::new([0; random::SEED_BYTES]))
            }
        };
        Recorder(Arc::new(Mutex::new(Recording {
            tape,
            blobs,
            random,
            budget_left: budget,
            budget,
        })))
    }

    /// Takes `bytes` from the budget; past it, the tape stops being replayable and says why.
    fn spend(recording: &mut Recording, bytes: u64) -> bool {
        if recording.tape.not_replayable.is_some() {
            return false;
        }
        if bytes > recording.budget_left {
            recording.tape.not_replayable = Some(format!(
                "its record budget (--max-record {} bytes) ran out",
                recording.budget
            ));
            recording.tape.events.clear();
            return false;
        }
        recording.budget_left -= bytes;
        true
    }

    fn push(&self, event: TapeEvent, bytes: u64) {
        let mut recording = lock(&self.0);
        if Self::spend(&mut recording, bytes) {
            recording.tape.events.push(event);
        }
    }

    /// A wall-clock reading.
    pub fn wall(&self, now: Duration) {
        self.push(
            TapeEvent::WallClock {
                secs: now.as_secs(),
                nanos: now.subsec_nanos(),
            },
            0,
        );
    }

    /// A monotonic-clock reading.
    pub fn monotonic(&self, nanos: u64) {
        self.push(TapeEvent::Monotonic { nanos }, 0);
    }

    /// Fills `dst` with the run's next random bytes (`insecure`: `wasi:random/insecure`'s),
    /// and records the read.
    pub fn fill_random(&self, dst: &mut [u8], insecure: bool) {
        let mut recording = lock(&self.0);
        recording.random.fill(dst, insecure);
        Self::note_random(&mut recording, dst.len(), insecure);
    }

    /// Records a read of `len` random bytes drawn elsewhere (by a resumed run's player, from
    /// the same streams).
    pub fn random_read(&self, len: usize, insecure: bool) {
        Self::note_random(&mut lock(&self.0), len, insecure);
    }

    /// A read of the same kind and length as the one just before joins its event.
    fn note_random(recording: &mut Recording, len: usize, insecure: bool) {
        if recording.tape.not_replayable.is_some() {
            return;
        }
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        match recording.tape.events.last_mut() {
            Some(TapeEvent::Random { bytes, reads })
                if !insecure && *bytes == len && *reads < u32::MAX =>
            {
                *reads += 1;
            }
            Some(TapeEvent::InsecureRandom { bytes, reads })
                if insecure && *bytes == len && *reads < u32::MAX =>
            {
                *reads += 1;
            }
            _ => recording.tape.events.push(if insecure {
                TapeEvent::InsecureRandom {
                    bytes: len,
                    reads: 1,
                }
            } else {
                TapeEvent::Random {
                    bytes: len,
                    reads: 1,
                }
            }),
        }
    }

    /// A `begin-call` and what it answered.
    pub fn begin(&self, name: &str, input: &str, outcome: BeginOutcome) {
        self.push(
            TapeEvent::Begin {
                name: name.to_string(),
                input_sha256: sha256_hex(input.as_bytes()),
                outcome,
            },
            0,
        );
    }

    /// A completion handed to the guest. A response is kept in the blob store when the tape is
    /// `full` and its budget allows.
    pub fn complete(&self, id: u64, outcome: Result<&str, (ErrorCode, &str)>) {
        let mut recording = lock(&self.0);
        let event = match outcome {
            Ok(response) => {
                let bytes = response.len() as u64;
                let sha256 = if recording.tape.mode == RecordMode::Full {
                    if !Self::spend(&mut recording, bytes) {
                        return;
                    }
                    match recording.blobs.put(response.as_bytes()) {
                        Ok(sha256) => sha256,
                        Err(error) => {
                            recording.tape.not_replayable =
                                Some(format!("a tool response could not be kept: {error}"));
                            recording.tape.events.clear();
                            return;
                        }
                    }
                } else {
                    sha256_hex(response.as_bytes())
                };
                CompletionOutcome::Response { sha256, bytes }
            }
            Err((code, message)) => CompletionOutcome::Failed {
                code,
                message: message.to_string(),
            },
        };
        if recording.tape.not_replayable.is_none() {
            recording
                .tape
                .events
                .push(TapeEvent::Complete { id, outcome: event });
        }
    }

    /// A `wait-for` that ran out of time before any call finished.
    pub fn elapsed(&self, nanos: u64) {
        self.push(TapeEvent::Elapsed { nanos }, 0);
    }

    /// The tape, closed with how the run ended.
    pub fn finish(&self, outcome: RecordedOutcome) -> Tape {
        let mut recording = lock(&self.0);
        let mut tape = std::mem::take(&mut recording.tape);
        tape.outcome = Some(outcome);
        tape
    }
}

#[cfg(test)]
mod tests;
