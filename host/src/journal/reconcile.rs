//! Restart reconciliation: an execution left open by a process that is gone becomes
//! `failed` / `ISOLATE_FAILURE` with reason `interrupted`. Whether a process is gone is told by
//! its [`Owner`].

use redb::{ReadableDatabase, ReadableTable};

use super::owner::Owner;
use super::schema::{
    EXECUTIONS, EndReason, ExecutionRecord, ExecutionState, OPEN, STATE_COMMITS, StateCommitMark,
    Step,
};
use super::transaction::{database, decode, encode};
use super::{Journal, JournalError};
use crate::error::ErrorCode;
use crate::primitives::now_utc;

impl Journal {
    /// Every execution left open by a process that is gone becomes `failed` /
    /// `ISOLATE_FAILURE` with reason `interrupted`; those of live processes are left alone.
    /// Returns how many were reconciled.
    pub fn reconcile(&self) -> Result<usize, JournalError> {
        let dead = self.open_of_dead_owners()?;
        if dead.is_empty() {
            return Ok(0);
        }
        let write = self.db()?.begin_write().map_err(database)?;
        let mut reconciled = 0;
        {
            let mut executions = write.open_table(EXECUTIONS).map_err(database)?;
            let mut open = write.open_table(OPEN).map_err(database)?;
            let mut state_commits = write.open_table(STATE_COMMITS).map_err(database)?;
            for id in dead {
                // Another process may have reconciled it meanwhile: re-check inside the write.
                if open.remove(id.as_str()).map_err(database)?.is_none() {
                    continue;
                }
                let Some(bytes) = executions
                    .get(id.as_str())
                    .map_err(database)?
                    .map(|v| v.value().to_vec())
                else {
                    continue;
                };
                let mut record: ExecutionRecord = decode(&id, &bytes)?;
                if record.status.is_terminal() {
                    continue;
                }
                let committed = state_commits
                    .remove(id.as_str())
                    .map_err(database)?
                    .map(|mark| decode::<StateCommitMark>(&id, mark.value()))
                    .transpose()?;
                interrupt(&mut record, committed.as_ref());
                let text = encode(&id, &record)?;
                executions
                    .insert(id.as_str(), text.as_slice())
                    .map_err(database)?;
                reconciled += 1;
            }
        }
        write.commit().map_err(database)?;
        Ok(reconciled)
    }

    /// Ids of open executions whose owner is gone (read without taking the write lock).
    fn open_of_dead_owners(&self) -> Result<Vec<String>, JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let open = read.open_table(OPEN).map_err(database)?;
        let mut dead = Vec::new();
        for row in open.iter().map_err(database)? {
            let (id, owner) = row.map_err(database)?;
            let owner: Owner = decode(id.value(), owner.value())?;
            if !owner.is_alive() {
                dead.push(id.value().to_string());
            }
        }
        Ok(dead)
    }
}

/// Closes `record` as a process that died would have wanted it closed, saying whether its state
/// change was committed before it died.
fn interrupt(record: &mut ExecutionRecord, committed: Option<&StateCommitMark>) {
    record.close_interrupted(match committed {
        None => "the process running it ended before it did".into(),
        Some(mark) => format!(
            "the process running it ended after its state was committed (revision {} of session `{}`, which stands) and before the run was closed; its outputs may be unpublished",
            mark.revision, mark.session
        ),
    });
}

impl ExecutionRecord {
    /// Closes a record whose process is gone: `failed` / `ISOLATE_FAILURE`, reason
    /// `interrupted`, with `message` saying what is known of its end.
    pub fn close_interrupted(&mut self, message: String) {
        let at = now_utc();
        self.status = ExecutionState::Failed;
        self.steps.push(Step {
            state: ExecutionState::Failed,
            at: at.clone(),
        });
        self.error_code = Some(ErrorCode::IsolateFailure);
        self.error_message = Some(message);
        self.reason = Some(EndReason::Interrupted);
        self.ended_at = Some(at);
    }
}
