//! Claiming a paused execution for its resume, once: a second resume is refused while the first
//! runs or after it ended, and allowed again only when the first never got going (its process
//! died: reconciled as `interrupted`, or gone before it wrote its record).

use redb::ReadableTable;

use super::schema::{EXECUTIONS, EndReason, ExecutionRecord, ExecutionState};
use super::transaction::{database, decode, update_in};
use super::{Journal, JournalError};

/// Why a paused execution cannot be resumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeRefused {
    /// It is not paused.
    #[error("execution {id} is {status}, not paused: only a paused run can be resumed")]
    NotPaused {
        /// The execution.
        id: String,
        /// Its state's wire name.
        status: &'static str,
    },
    /// Another execution resumes, or resumed, it.
    #[error("execution {id} was already resumed, by execution {by}")]
    AlreadyResumed {
        /// The paused execution.
        id: String,
        /// The one that resumed it.
        by: String,
    },
}

impl Journal {
    /// Marks paused execution `id` as resumed by `by`, or says why it cannot be.
    pub fn claim_resume(
        &self,
        id: &str,
        by: &str,
    ) -> Result<Result<(), ResumeRefused>, JournalError> {
        let write = self.db()?.begin_write().map_err(database)?;
        let refusal = {
            let executions = write.open_table(EXECUTIONS).map_err(database)?;
            let read = |key: &str| -> Result<Option<ExecutionRecord>, JournalError> {
                match executions.get(key).map_err(database)? {
                    Some(bytes) => Ok(Some(decode(key, bytes.value())?)),
                    None => Ok(None),
                }
            };
            let paused = read(id)?.ok_or_else(|| JournalError::NotFound(id.to_string()))?;
            if paused.status != ExecutionState::Paused {
                Some(ResumeRefused::NotPaused {
                    id: id.to_string(),
                    status: paused.status.as_str(),
                })
            } else {
                match &paused.resumed_by {
                    Some(earlier) => {
                        let died = match read(earlier)? {
                            None => true,
                            Some(record) => {
                                record.status == ExecutionState::Failed
                                    && record.reason == Some(EndReason::Interrupted)
                            }
                        };
                        (!died).then(|| ResumeRefused::AlreadyResumed {
                            id: id.to_string(),
                            by: earlier.clone(),
                        })
                    }
                    None => None,
                }
            }
        };
        if let Some(refusal) = refusal {
            return Ok(Err(refusal));
        }
        update_in(&write, id, &[], |record, _| {
            record.resumed_by = Some(by.to_string());
            Ok(())
        })?;
        write.commit().map_err(database)?;
        Ok(Ok(()))
    }
}
