//! The walk of one execution through its state machine, and the one place its steps are kept:
//! the journal record is made from them, and its close names the ones it passed through. The
//! states and the diagram ([`ExecutionState::can_become`]) belong to the journal, which enforces
//! the same diagram on what it persists.

use crate::error::{Error, ErrorCode};
use crate::journal::{ExecutionState, Step};
use crate::primitives::now_utc;

/// A transition the diagram does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an execution cannot go from {from:?} to {to:?}")]
pub struct InvalidTransition {
    /// Where it was.
    pub from: ExecutionState,
    /// Where it was asked to go.
    pub to: ExecutionState,
}

impl From<InvalidTransition> for Error {
    /// A kernel that asks for a transition the diagram forbids has a bug: it is reported as the
    /// host's failure, not the script's.
    fn from(invalid: InvalidTransition) -> Self {
        Error::from_source(ErrorCode::IsolateFailure, invalid)
    }
}

/// The steps of one execution so far, each with when it was reached.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    steps: Vec<Step>,
}

impl Default for Lifecycle {
    /// Validating, from now.
    fn default() -> Self {
        Lifecycle {
            steps: vec![Step {
                state: ExecutionState::Validating,
                at: now_utc(),
            }],
        }
    }
}

impl Lifecycle {
    /// The current state.
    pub fn state(&self) -> ExecutionState {
        self.steps
            .last()
            .map_or(ExecutionState::Validating, |step| step.state)
    }

    /// When it began (validating), RFC 3339 UTC.
    pub fn began_at(&self) -> &str {
        self.steps.first().map_or("", |step| step.at.as_str())
    }

    /// Every step reached, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Moves to `to`, now, if the diagram allows it.
    pub fn advance(&mut self, to: ExecutionState) -> Result<(), InvalidTransition> {
        let from = self.state();
        if !from.can_become(to) {
            return Err(InvalidTransition { from, to });
        }
        self.steps.push(Step {
            state: to,
            at: now_utc(),
        });
        Ok(())
    }

    /// The states passed through after `durable` (the last step the journal holds) and before
    /// the current one, which the journal's close records as the path it took.
    pub fn passed_since(&self, durable: ExecutionState) -> Vec<ExecutionState> {
        let states: Vec<ExecutionState> = self.steps.iter().map(|step| step.state).collect();
        let after = states
            .iter()
            .rposition(|state| *state == durable)
            .map_or(states.len(), |at| at + 1);
        let before_current = states.len().saturating_sub(1).max(after);
        states[after..before_current].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::ExecutionState::*;
    use super::*;

    fn states(life: &Lifecycle) -> Vec<ExecutionState> {
        life.steps().iter().map(|step| step.state).collect()
    }

    #[test]
    fn the_happy_path_and_early_failures_are_allowed() {
        let mut life = Lifecycle::default();
        for to in [Preparing, Running, Collecting, Committing, Succeeded] {
            life.advance(to).expect("allowed");
        }
        assert_eq!(
            states(&life),
            [
                Validating, Preparing, Running, Collecting, Committing, Succeeded
            ]
        );
        assert_eq!(life.passed_since(Running), [Collecting, Committing]);
        let mut early = Lifecycle::default();
        early.advance(Failed).expect("a validation failure ends it");
        assert_eq!(early.state(), Failed);
    }

    #[test]
    fn the_path_after_the_durable_step_leaves_out_both_ends() {
        let mut life = Lifecycle::default();
        for to in [Preparing, Running, Collecting, Failed] {
            life.advance(to).expect("allowed");
        }
        assert_eq!(life.passed_since(Running), [Collecting]);
        let mut straight = Lifecycle::default();
        for to in [Preparing, Running, Cancelled] {
            straight.advance(to).expect("allowed");
        }
        assert!(straight.passed_since(Running).is_empty());
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
        assert_eq!(
            states(&life),
            [Validating, TimedOut],
            "refusals leave no step"
        );
    }
}
