//! The execution state machine of SPEC §4: `validating -> preparing -> running -> collecting ->
//! committing -> {succeeded | failed | cancelled | timed_out}`, where a terminal state is reached
//! exactly once. A failure may end the execution from any non-terminal state.

use serde::{Deserialize, Serialize};

/// One state of an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionState {
    /// Checking the request and its limits.
    Validating,
    /// Loading the engine, the state snapshot and the inputs.
    Preparing,
    /// The guest runs.
    Running,
    /// Classifying how it ended and collecting outputs.
    Collecting,
    /// Committing state and publishing outputs.
    Committing,
    /// Ended well.
    Succeeded,
    /// Ended with an error code.
    Failed,
    /// Stopped by the caller.
    Cancelled,
    /// Stopped by its deadline.
    TimedOut,
}

impl ExecutionState {
    /// Whether this state ends the execution.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            ExecutionState::Succeeded
                | ExecutionState::Failed
                | ExecutionState::Cancelled
                | ExecutionState::TimedOut
        )
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExecutionState::Validating => "validating",
            ExecutionState::Preparing => "preparing",
            ExecutionState::Running => "running",
            ExecutionState::Collecting => "collecting",
            ExecutionState::Committing => "committing",
            ExecutionState::Succeeded => "succeeded",
            ExecutionState::Failed => "failed",
            ExecutionState::Cancelled => "cancelled",
            ExecutionState::TimedOut => "timed_out",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        use ExecutionState::*;
        [
            Validating, Preparing, Running, Collecting, Committing, Succeeded, Failed, Cancelled,
            TimedOut,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Whether the diagram allows `self -> to`.
    pub fn can_become(self, to: ExecutionState) -> bool {
        use ExecutionState::*;
        match (self, to) {
            (from, _) if from.is_terminal() => false,
            (Validating, Preparing)
            | (Preparing, Running)
            | (Running, Collecting)
            | (Collecting, Committing) => true,
            // The host's own stops and failures end an execution from wherever it is.
            (_, Failed) | (_, Cancelled) | (_, TimedOut) => true,
            (Committing, Succeeded) => true,
            _ => false,
        }
    }
}

/// A transition the diagram does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an execution cannot go from {from:?} to {to:?}")]
pub struct InvalidTransition {
    /// Where it was.
    pub from: ExecutionState,
    /// Where it was asked to go.
    pub to: ExecutionState,
}

/// The in-memory state of one execution; the journal mirrors its steps.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    history: Vec<ExecutionState>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            history: vec![ExecutionState::Validating],
        }
    }
}

impl Lifecycle {
    /// The current state.
    pub fn state(&self) -> ExecutionState {
        self.history
            .last()
            .copied()
            .unwrap_or(ExecutionState::Validating)
    }

    /// Every state reached, in order.
    pub fn history(&self) -> &[ExecutionState] {
        &self.history
    }

    /// Moves to `to`, if the diagram allows it.
    pub fn advance(&mut self, to: ExecutionState) -> Result<(), InvalidTransition> {
        let from = self.state();
        if !from.can_become(to) {
            return Err(InvalidTransition { from, to });
        }
        self.history.push(to);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ExecutionState::*;
    use super::*;

    #[test]
    fn the_happy_path_and_early_failures_are_allowed() {
        let mut life = Lifecycle::default();
        for to in [Preparing, Running, Collecting, Committing, Succeeded] {
            life.advance(to).expect("allowed");
        }
        let mut early = Lifecycle::default();
        early.advance(Failed).expect("a validation failure ends it");
    }

    #[test]
    fn a_terminal_state_is_reached_once_and_steps_are_not_skipped() {
        let mut life = Lifecycle::default();
        assert!(life.advance(Running).is_err(), "cannot skip preparing");
        assert!(
            life.advance(Succeeded).is_err(),
            "cannot succeed without committing"
        );
        life.advance(TimedOut).expect("stop");
        for to in [Failed, Succeeded, Cancelled, TimedOut, Running] {
            assert_eq!(
                life.advance(to),
                Err(InvalidTransition { from: TimedOut, to })
            );
        }
        for state in [Succeeded, Failed, Cancelled, TimedOut, Running] {
            assert_eq!(ExecutionState::parse(state.as_str()), Some(state));
        }
    }
}
