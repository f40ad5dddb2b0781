//! The in-memory walk of one execution through its state machine. The states and the
//! diagram ([`ExecutionState::can_become`]) belong to the journal, which enforces the same
//! diagram on what it persists.

use crate::journal::ExecutionState;

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
    }
}
