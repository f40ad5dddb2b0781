//! The calls of an execution through its [`Deck`]: live calls recorded as the guest receives
//! them (a begin and what it answered; a completion when `wait-any` or `call` hands it over), or,
//! in a replay, answers taken from the tape with no tool running. A replayed catalog is the
//! recorded one, each tool a [`RecordedTool`] that refuses to run.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{Completion, Tool, ToolCalls, ToolError, ToolFuture, ToolInfo, ToolRegistry};
use crate::error::{ErrorCode, HostStop};
use crate::journal::{BeginOutcome, CallRecord, CallStatus, PendingApproval, RecordedTool};
use crate::permissions::{Approval, Effect};
use crate::primitives::sha256_hex;
use crate::tape::{Deck, Recorder, Served};

impl ToolCalls {
    /// Records every call's answers on `deck`, or plays them from it.
    pub fn with_deck(mut self, deck: Deck) -> Self {
        self.deck = deck;
        self
    }

    /// A person's answer to the call a paused run stopped at.
    pub fn with_approval(mut self, approval: Option<Approval>) -> Self {
        self.approval = approval;
        self
    }

    /// The call this run paused at, waiting for approval.
    pub fn pending(&self) -> Option<&PendingApproval> {
        self.pending.as_ref()
    }

    fn recorder(&self) -> Option<Recorder> {
        match &self.deck {
            Deck::Recording(recorder) => Some(recorder.clone()),
            Deck::Playing(player) => player.recorder(),
            Deck::Off => None,
        }
    }

    /// Starts a call. `Err` ends the execution (budget spent, contract broken, a call that needs
    /// approval, or in a replay a call the recorded run did not make); `Ok(Err)` is a failure the
    /// script sees and may handle.
    pub fn begin(&mut self, name: &str, input: &str) -> Result<Result<u64, ToolError>, HostStop> {
        if let Deck::Playing(player) = &self.deck
            && let Served::Tape(outcome) = player
                .begin(name, input)
                .map_err(HostStop::ReplayDiverged)?
        {
            return self.begun_on_tape(name, input, outcome);
        }
        let outcome = self.begin_live(name, input);
        if let Some(recorder) = self.recorder() {
            recorder.begin(name, input, begin_outcome(&outcome));
        }
        outcome
    }

    /// A begin the tape answered, kept in the call log as a live one would be (so that calls
    /// begun live after it get the ids that follow).
    fn begun_on_tape(
        &mut self,
        name: &str,
        input: &str,
        outcome: BeginOutcome,
    ) -> Result<Result<u64, ToolError>, HostStop> {
        let effect = self
            .registry
            .get(name)
            .map_or(Effect::Internal, |tool| tool.info().effect);
        let record = |status, error_code, position| CallRecord {
            position,
            tool: name.to_string(),
            effect,
            input_sha256: sha256_hex(input.as_bytes()),
            status,
            error_code,
            duration_ms: None,
            paths: Vec::new(),
            decision: Some("replayed from the recording".into()),
        };
        match outcome {
            BeginOutcome::Started { id } => {
                let position = u32::try_from(id).unwrap_or(u32::MAX);
                self.records
                    .push(record(CallStatus::Started, None, position));
                Ok(Ok(id))
            }
            BeginOutcome::Refused { code, message } => {
                if code == ErrorCode::ToolDenied {
                    let position = self.count() + 1;
                    self.records
                        .push(record(CallStatus::Denied, Some(code), position));
                }
                Ok(Err(ToolError { code, message }))
            }
            // The recorded run paused here: so does the replay, with the same pending call.
            BeginOutcome::AwaitingApproval { reason } => {
                self.pending = Some(PendingApproval {
                    tool: name.to_string(),
                    effect,
                    input: serde_json::from_str(input)
                        .unwrap_or_else(|_| Value::String(input.to_string())),
                    input_sha256: sha256_hex(input.as_bytes()),
                    reason: reason.clone(),
                });
                Err(HostStop::ApprovalRequired {
                    tool: name.to_string(),
                    effect: effect.as_str(),
                    reason,
                })
            }
            BeginOutcome::Stopped { code, message } => match code {
                ErrorCode::ToolBudget => Err(HostStop::ToolBudget {
                    max: self.max_calls,
                }),
                _ => Err(HostStop::ProtocolViolation(message)),
            },
        }
    }

    /// A completion the tape answered, in the call log too.
    fn completed_on_tape(
        &mut self,
        id: u64,
        outcome: Result<String, (ErrorCode, String)>,
    ) -> Completion {
        let error_code = outcome.as_ref().err().map(|(code, _)| *code);
        self.records.update(id, |record| {
            record.status = match error_code {
                None => CallStatus::Succeeded,
                Some(ErrorCode::ToolDenied) => CallStatus::Denied,
                Some(_) => CallStatus::Failed,
            };
            record.error_code = error_code;
        });
        Completion {
            id,
            outcome: outcome.map_err(|(code, message)| ToolError { code, message }),
        }
    }

    /// Waits for the next call to finish; `None` when nothing is in flight.
    pub async fn wait_any(&mut self) -> Result<Option<Completion>, HostStop> {
        if let Deck::Playing(player) = &self.deck
            && let Served::Tape(played) = player.wait_any().map_err(HostStop::ReplayDiverged)?
        {
            return Ok(played.map(|(id, outcome)| self.completed_on_tape(id, outcome)));
        }
        let done = self.wait_any_live().await;
        if let (Some(done), Some(recorder)) = (&done, self.recorder()) {
            recorder.complete(done.id, as_answer(&done.outcome));
        }
        Ok(done)
    }

    /// Waits for the next call to finish or for `nanos` to pass (`None`), whichever is first.
    /// `pending` (what the guest waits for) is kept while it waits, for a deadline's message.
    /// Which came first is recorded; a replay is answered from the tape at once.
    pub async fn wait_for(
        &mut self,
        nanos: u64,
        pending: &str,
    ) -> Result<Option<Completion>, HostStop> {
        if let Deck::Playing(player) = &self.deck
            && let Served::Tape(played) = player.wait_for().map_err(HostStop::ReplayDiverged)?
        {
            return Ok(played.map(|(id, outcome)| self.completed_on_tape(id, outcome)));
        }
        self.waiting.set(pending);
        let done = self.wait_for_live(Duration::from_nanos(nanos)).await;
        self.waiting.clear();
        if let Some(recorder) = self.recorder() {
            match &done {
                Some(done) => recorder.complete(done.id, as_answer(&done.outcome)),
                None => recorder.elapsed(nanos),
            }
        }
        Ok(done)
    }

    /// Begins a call and waits for it, keeping other calls that finish meanwhile for `wait_any`.
    pub async fn call(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<String, ToolError>, HostStop> {
        if let Deck::Playing(player) = self.deck.clone()
            && let Served::Tape(outcome) = player
                .begin(name, input)
                .map_err(HostStop::ReplayDiverged)?
        {
            let id = match self.begun_on_tape(name, input, outcome)? {
                Ok(id) => id,
                Err(error) => return Ok(Err(error)),
            };
            return match player.wait_any().map_err(HostStop::ReplayDiverged)? {
                Served::Tape(Some((done, outcome))) if done == id => {
                    Ok(self.completed_on_tape(id, outcome).outcome)
                }
                _ => {
                    let why = format!(
                        "call {id} (`{name}`): the recorded run got another call's answer first"
                    );
                    player.note_divergence(why.clone());
                    Err(HostStop::ReplayDiverged(why))
                }
            };
        }
        let recorder = self.recorder();
        let begun = self.call_live(name, input).await;
        if let Some(recorder) = recorder {
            match &begun {
                Ok((Some(id), outcome)) => {
                    recorder.begin(name, input, BeginOutcome::Started { id: *id });
                    recorder.complete(*id, as_answer(outcome));
                }
                Ok((None, outcome)) => recorder.begin(name, input, refused(outcome)),
                Err(stop) => recorder.begin(name, input, stopped(stop)),
            }
        }
        begun.map(|(_, outcome)| outcome)
    }

    /// After a pause: lets the calls still in flight finish and records their answers, so that
    /// a resume is handed them instead of running them again.
    pub async fn drain_after_pause(&mut self) {
        // A replay of a paused run is handed what the recorded run's drain received.
        if let Deck::Playing(player) = self.deck.clone()
            && player.recorder().is_none()
        {
            while let Ok(Served::Tape(Some((id, outcome)))) = player.wait_any() {
                self.completed_on_tape(id, outcome);
            }
            return;
        }
        let recorder = self.recorder();
        while let Some(done) = self.wait_any_live().await {
            if let Some(recorder) = &recorder {
                recorder.complete(done.id, as_answer(&done.outcome));
            }
        }
    }
}

fn as_answer(outcome: &Result<String, ToolError>) -> Result<&str, (ErrorCode, &str)> {
    match outcome {
        Ok(text) => Ok(text),
        Err(error) => Err((error.code, error.message.as_str())),
    }
}

fn refused<T>(outcome: &Result<T, ToolError>) -> BeginOutcome {
    match outcome {
        Err(error) => BeginOutcome::Refused {
            code: error.code,
            message: error.message.clone(),
        },
        Ok(_) => BeginOutcome::Refused {
            code: ErrorCode::ToolFailed,
            message: String::new(),
        },
    }
}

fn stopped(stop: &HostStop) -> BeginOutcome {
    match stop {
        HostStop::ApprovalRequired { reason, .. } => BeginOutcome::AwaitingApproval {
            reason: reason.clone(),
        },
        _ => BeginOutcome::Stopped {
            code: stop.code(),
            message: stop.to_string(),
        },
    }
}

fn begin_outcome(outcome: &Result<Result<u64, ToolError>, HostStop>) -> BeginOutcome {
    match outcome {
        Ok(Ok(id)) => BeginOutcome::Started { id: *id },
        Ok(refusal) => refused(refusal),
        Err(stop) => stopped(stop),
    }
}

/// A tool of a recorded catalog: the same catalog entry, and no way to run.
struct Replayed(ToolInfo);

impl Tool for Replayed {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, _input: Value) -> ToolFuture {
        Box::pin(std::future::ready(Err(ToolError::failed(
            "a replay runs no tool: its answers come from the recording",
        ))))
    }
}

/// The catalog of a replay: the tools the recorded run saw, none of which runs.
pub fn replayed_registry(catalog: &[RecordedTool]) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in catalog {
        registry.register(Arc::new(Replayed(ToolInfo {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            effect: tool.effect,
        })));
    }
    registry
}

/// The catalog of `registry`, as a replay record keeps it.
pub fn recorded_catalog(registry: &ToolRegistry) -> Vec<RecordedTool> {
    registry
        .list()
        .map(|info| RecordedTool {
            name: info.name.clone(),
            description: info.description.clone(),
            input_schema: info.input_schema.clone(),
            effect: info.effect,
        })
        .collect()
}
