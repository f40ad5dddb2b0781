//! The calls of an execution through its [`Deck`]: live calls recorded as the guest receives
//! them (a begin and what it answered; a completion when `wait-any` or `call` hands it over), or,
//! in a replay, answers taken from the tape with no tool running. A replayed catalog is the
//! recorded one, each tool a [`RecordedTool`] that refuses to run.

use std::sync::Arc;

use serde_json::Value;

use super::{Completion, Tool, ToolCalls, ToolError, ToolFuture, ToolInfo, ToolRegistry};
use crate::error::{ErrorCode, HostStop};
use crate::journal::{BeginOutcome, RecordedTool};
use crate::tape::{Deck, Player};

impl ToolCalls {
    /// Records every call's answers on `deck`, or plays them from it.
    pub fn with_deck(mut self, deck: Deck) -> Self {
        self.deck = deck;
        self
    }

    /// Starts a call. `Err` ends the execution (budget spent, contract broken, or in a replay a
    /// call the recorded run did not make); `Ok(Err)` is a failure the script sees and may
    /// handle.
    pub fn begin(&mut self, name: &str, input: &str) -> Result<Result<u64, ToolError>, HostStop> {
        match self.deck.clone() {
            Deck::Playing(player) => self.begin_played(&player, name, input),
            Deck::Recording(recorder) => {
                let outcome = self.begin_live(name, input);
                recorder.begin(name, input, begin_outcome(&outcome));
                outcome
            }
            Deck::Off => self.begin_live(name, input),
        }
    }

    fn begin_played(
        &mut self,
        player: &Player,
        name: &str,
        input: &str,
    ) -> Result<Result<u64, ToolError>, HostStop> {
        match player
            .begin(name, input)
            .map_err(HostStop::ReplayDiverged)?
        {
            BeginOutcome::Started { id } => Ok(Ok(id)),
            BeginOutcome::Refused { code, message } => Ok(Err(ToolError { code, message })),
            BeginOutcome::Stopped { code, message } => match code {
                ErrorCode::ToolBudget => Err(HostStop::ToolBudget {
                    max: self.max_calls,
                }),
                _ => Err(HostStop::ProtocolViolation(message)),
            },
        }
    }

    /// Waits for the next call to finish; `None` when nothing is in flight.
    pub async fn wait_any(&mut self) -> Result<Option<Completion>, HostStop> {
        match self.deck.clone() {
            Deck::Playing(player) => {
                let played = player.wait_any().map_err(HostStop::ReplayDiverged)?;
                Ok(played.map(|(id, outcome)| Completion {
                    id,
                    outcome: outcome.map_err(|(code, message)| ToolError { code, message }),
                }))
            }
            Deck::Recording(recorder) => {
                let done = self.wait_any_live().await;
                if let Some(done) = &done {
                    recorder.complete(done.id, as_answer(&done.outcome));
                }
                Ok(done)
            }
            Deck::Off => Ok(self.wait_any_live().await),
        }
    }

    /// Begins a call and waits for it, keeping other calls that finish meanwhile for `wait_any`.
    pub async fn call(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<String, ToolError>, HostStop> {
        match self.deck.clone() {
            Deck::Playing(player) => {
                let id = match self.begin_played(&player, name, input)? {
                    Ok(id) => id,
                    Err(error) => return Ok(Err(error)),
                };
                match player.wait_any().map_err(HostStop::ReplayDiverged)? {
                    Some((done, outcome)) if done == id => {
                        Ok(outcome.map_err(|(code, message)| ToolError { code, message }))
                    }
                    _ => {
                        let why = format!(
                            "call {id} (`{name}`): the recorded run got another call's answer first"
                        );
                        player.note_divergence(why.clone());
                        Err(HostStop::ReplayDiverged(why))
                    }
                }
            }
            Deck::Recording(recorder) => {
                let begun = self.call_live(name, input).await;
                if let Ok((id, outcome)) = &begun {
                    let started = match id {
                        Some(id) => BeginOutcome::Started { id: *id },
                        None => refused(outcome),
                    };
                    recorder.begin(name, input, started);
                    if let Some(id) = id {
                        recorder.complete(*id, as_answer(outcome));
                    }
                } else if let Err(stop) = &begun {
                    recorder.begin(name, input, stopped(stop));
                }
                begun.map(|(_, outcome)| outcome)
            }
            Deck::Off => self
                .call_live(name, input)
                .await
                .map(|(_, outcome)| outcome),
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
    BeginOutcome::Stopped {
        code: stop.code(),
        message: stop.to_string(),
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
