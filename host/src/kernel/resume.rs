//! `resume ID --approve|--deny`: a paused execution continues in a new one. The new execution
//! plays the paused run's tape (nothing before the pause runs twice; the clocks and random bytes
//! read before it read the same), then meets the pending call, which runs (approved) or fails
//! with `TOOL_DENIED` (denied), and goes on live. Its state commits against the paused run's
//! snapshot, so a key someone changed in between is a `STATE_CONFLICT`, never an overwrite.

use std::sync::Arc;

use super::replay::ReplayInput;
use super::{ExecutionRequestBuilder, Kernel, execute, taped};
use crate::error::{Error, Result};
use crate::journal::{Blobs, RecordMode};
use crate::permissions::Approval;
use crate::tape::Player;

impl Kernel {
    /// The request that resumes paused execution `id`, with the person's answer (`approve`).
    /// It is claimed now: a second resume is refused. Set where its outputs go, its events and
    /// cancellation, then pass it to [`Kernel::run`]; the tools must be the ones the paused run
    /// had (the journal keeps how the caller described them, `tool_sources`).
    pub fn resume(&self, id: &str, approve: bool) -> Result<ExecutionRequestBuilder> {
        let record = self.journal.get(id)?;
        if let Some(original) = &record.replay_of {
            return Err(Error::invalid_input(format!(
                "execution {id} is a replay of {original}, which ran nothing: resume {original} itself"
            )));
        }
        let tape = self.journal.tape(id)?;
        let (Some(pending), Some(tape)) = (record.pending.clone(), tape) else {
            if record.status == crate::journal::ExecutionState::Paused {
                return Err(Error::invalid_input(format!(
                    "execution {id} paused, but was not recorded (--record off), so it cannot be resumed"
                )));
            }
            return Err(Error::invalid_input(format!(
                "execution {id} is {}, not paused: only a paused run can be resumed",
                record.status.as_str()
            )));
        };
        if let Some(why) = &tape.not_replayable {
            return Err(Error::invalid_input(format!(
                "execution {id} cannot be resumed: its recording is incomplete ({why})"
            )));
        }
        let new_id = execute::new_execution_id();
        self.journal
            .claim_resume(id, &new_id)?
            .map_err(|refused| Error::invalid_input(refused.to_string()))?;
        let request = self.rerun(id)?;
        let recorder = taped::resume_recorder(self, &request.options().limits, &tape);
        let player = Player::resuming(&tape, Blobs::new(self.data_dir.blob_dir()), recorder);
        Ok(request
            .replay(ReplayInput {
                of: id.to_string(),
                tape: Arc::new(tape),
                player,
                resume: Some(Approval {
                    tool: pending.tool,
                    input_sha256: pending.input_sha256,
                    approve,
                }),
            })
            .id(new_id)
            .record(RecordMode::Full))
    }
}
