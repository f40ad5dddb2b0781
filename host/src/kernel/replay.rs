//! `replay ID`: the same engine component (by sha256) runs the same script on the same inputs,
//! fed the recorded clocks, random bytes, catalog, state snapshot and tool answers. No tool runs,
//! no state is committed and nothing is published. The replay is identical when it asked for
//! exactly what the recorded run asked for and ended the same way (status, code, result, text,
//! stdout and stderr, and fuel when it was metered); otherwise the report names the first
//! divergence.

use std::sync::Arc;

use serde::Serialize;

use super::Kernel;
use super::taped::outcome_of;
use crate::error::{Error, ErrorCode, Result};
use crate::journal::{
    Blobs, CompletionOutcome, ExecutionState, RecordMode, RecordedOutcome, Tape, TapeEvent,
};
use crate::permissions::Approval;
use crate::tape::Player;

/// A run fed from a recording instead of the world.
#[derive(Clone)]
pub struct ReplayInput {
    /// The execution whose recording it plays.
    pub of: String,
    /// The recording.
    pub tape: Arc<Tape>,
    /// Serves it to the guest.
    pub player: Player,
    /// For a resume: the person's answer to the pending call. The run then goes on live past
    /// its tape, commits its state and publishes as any run; without it, it is a replay.
    pub resume: Option<Approval>,
}

impl ReplayInput {
    /// Whether this is a pure replay (nothing live, nothing committed or published).
    pub fn is_replay(&self) -> bool {
        self.resume.is_none()
    }
}

/// What `replay` found.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The execution replayed.
    pub id: String,
    /// The replay's own execution (journaled with `replay_of`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_id: Option<String>,
    /// Whether the replay did exactly what the recorded run did.
    pub identical: bool,
    /// The first difference, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<String>,
    /// The recorded run's and the replay's terminal states.
    pub recorded_status: String,
    /// The replay's terminal state, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replayed_status: Option<String>,
    /// Tool calls the recorded run began.
    pub calls: usize,
    /// What a reader should know (a wall-clock stop is not a replayable point, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The host interactions served, in order (`--trace`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<String>,
}

fn refuse(message: String) -> Error {
    Error::invalid_input(message)
}

/// Why `tape` cannot be replayed, if it cannot.
fn unplayable(id: &str, tape: &Tape) -> Option<String> {
    if let Some(why) = &tape.not_replayable {
        return Some(format!("execution {id} cannot be replayed: {why}"));
    }
    let responses = tape.events.iter().any(|event| {
        matches!(
            event,
            TapeEvent::Complete {
                outcome: CompletionOutcome::Response { .. },
                ..
            }
        )
    });
    (tape.mode == RecordMode::Hashes && responses).then(|| {
        format!(
            "execution {id} was recorded with --record hashes: its tool responses were not kept, so it cannot be fed back"
        )
    })
}

/// The first way `replayed` ended differently from `recorded`.
fn outcome_difference(recorded: &RecordedOutcome, replayed: &RecordedOutcome) -> Option<String> {
    if recorded.status != replayed.status || recorded.error_code != replayed.error_code {
        let show = |o: &RecordedOutcome| match o.error_code {
            Some(code) => format!("{} ({code})", o.status),
            None => o.status.clone(),
        };
        return Some(format!(
            "the run ended differently: recorded {}, replay {}",
            show(recorded),
            show(replayed)
        ));
    }
    let fields = [
        ("result", &recorded.value_sha256, &replayed.value_sha256),
        (
            "text()",
            &Some(recorded.text_sha256.clone()),
            &Some(replayed.text_sha256.clone()),
        ),
        (
            "stdout",
            &Some(recorded.stdout_sha256.clone()),
            &Some(replayed.stdout_sha256.clone()),
        ),
        (
            "stderr",
            &Some(recorded.stderr_sha256.clone()),
            &Some(replayed.stderr_sha256.clone()),
        ),
    ];
    for (what, then, now) in fields {
        if then != now {
            return Some(format!("{what} differs"));
        }
    }
    match (recorded.fuel_consumed, replayed.fuel_consumed) {
        (Some(then), Some(now)) if then != now => Some(format!(
            "fuel differs: the recorded run used {then}, the replay {now}"
        )),
        _ => None,
    }
}

impl Kernel {
    /// Replays execution `id` from its recording (see the module docs); `trace` keeps the
    /// timeline of what was served. `Err` when it cannot be replayed at all: not recorded, not
    /// replayable, its engine component or an input gone or changed.
    pub async fn replay(&self, id: &str, trace: bool) -> Result<ReplayReport> {
        let record = self.journal.get(id)?;
        if !record.status.is_terminal() {
            return Err(refuse(format!(
                "execution {id} is still {}; replay it once it has ended",
                record.status.as_str()
            )));
        }
        let tape = self.journal.tape(id)?.ok_or_else(|| {
            refuse(format!(
                "execution {id} was not recorded (run with --record full to replay it)"
            ))
        })?;
        if let Some(why) = unplayable(id, &tape) {
            return Err(refuse(why));
        }
        let recorded = tape
            .outcome
            .clone()
            .ok_or_else(|| refuse(format!("the recording of {id} has no outcome")))?;
        let engine = self
            .registry
            .entries()
            .iter()
            .find(|e| e.description.id == record.engine);
        match engine {
            Some(entry) if entry.sha256 == record.engine_sha256 => {}
            // Another component under the same id: what ran is not what would replay.
            Some(entry) => {
                return Ok(ReplayReport {
                    id: id.to_string(),
                    replay_id: None,
                    identical: false,
                    divergence: Some(format!(
                        "the engine component changed: `{}` ran as sha256 {}, and is sha256 {} now ({})",
                        record.engine,
                        record.engine_sha256,
                        entry.sha256,
                        entry.path.display()
                    )),
                    recorded_status: recorded.status,
                    replayed_status: None,
                    calls: 0,
                    notes: Vec::new(),
                    trace: Vec::new(),
                });
            }
            None => {
                let problems = self.registry.problems().join("; ");
                return Err(Error::new(
                    ErrorCode::EngineUnavailable,
                    format!(
                        "the engine component that ran {id} (`{}`, sha256 {}) is gone; a replay needs exactly that component{}",
                        record.engine,
                        record.engine_sha256,
                        if problems.is_empty() {
                            String::new()
                        } else {
                            format!(" ({problems})")
                        }
                    ),
                ));
            }
        }
        let player = Player::new(&tape, Blobs::new(self.data_dir.blob_dir()), trace);
        let calls = tape
            .events
            .iter()
            .filter(|e| matches!(e, TapeEvent::Begin { .. }))
            .count();
        let request = self
            .rerun(id)?
            .record(RecordMode::Off)
            .replay(ReplayInput {
                of: id.to_string(),
                tape: Arc::new(tape),
                player: player.clone(),
                resume: None,
            })
            .keep_job(false)
            .build();
        let report = self.run(request).await?;
        let replayed = outcome_of(&report);
        let divergence = player
            .divergence()
            .or_else(|| outcome_difference(&recorded, &replayed))
            .or_else(|| player.unplayed());
        if let Some(why) = &divergence {
            player.note_divergence(why.clone());
        }
        let mut notes = Vec::new();
        let limits = record.limits();
        if record.status == ExecutionState::TimedOut && limits.fuel.is_none() {
            notes.push(
                "the recorded run was stopped by its deadline: a wall-clock stop is not a replayable point (the replay stops wherever its own deadline falls); set --fuel for runs whose stop must replay".to_string(),
            );
        }
        Ok(ReplayReport {
            id: id.to_string(),
            replay_id: Some(report.id.clone()),
            identical: divergence.is_none(),
            divergence,
            recorded_status: recorded.status,
            replayed_status: Some(replayed.status),
            calls,
            notes,
            trace: player.trace(),
        })
    }
}
