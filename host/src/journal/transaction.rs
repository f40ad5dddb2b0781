//! What one write transaction does to the journal's tables: create an execution, move it along
//! its states (compare-and-set), close it with its nested calls and tape; and the encoding and
//! the errors every journal file shares. The plain operations (`store.rs`) and the group commit
//! (`group.rs`) both write through these.

use redb::ReadableTable;

use super::Closing;
use super::JournalError;
use super::schema::{
    CALLS, EXECUTIONS, ExecutionRecord, ExecutionState, OPEN, STATE_COMMITS, Step, TAPES,
};
use crate::primitives::{now_utc, truncate_at};

/// Longest error message kept (a Python traceback can be long).
const MAX_MESSAGE_BYTES: usize = 4096;

/// A database failure, whatever redb operation it came from.
pub(super) fn database(error: impl Into<redb::Error>) -> JournalError {
    JournalError::Database(error.into())
}

/// Reads a JSON record back.
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    key: &str,
    bytes: &[u8],
) -> Result<T, JournalError> {
    serde_json::from_slice(bytes).map_err(|source| JournalError::Corrupt {
        key: key.to_string(),
        source,
    })
}

/// Writes a record as JSON.
pub(super) fn encode<T: serde::Serialize>(key: &str, record: &T) -> Result<Vec<u8>, JournalError> {
    serde_json::to_vec(record).map_err(|source| JournalError::Corrupt {
        key: key.to_string(),
        source,
    })
}

fn truncate(text: String) -> String {
    if text.len() <= MAX_MESSAGE_BYTES {
        return text;
    }
    format!("{} [truncated]", truncate_at(&text, MAX_MESSAGE_BYTES))
}

/// Writes a new execution inside `write`. Checks before it writes: an error leaves `write` as it
/// was, so that one refused change does not spoil a group commit.
pub(super) fn create_in(
    write: &redb::WriteTransaction,
    record: &ExecutionRecord,
) -> Result<(), JournalError> {
    let text = encode(&record.id, record)?;
    let owner = encode(&record.id, &record.owner)?;
    let mut executions = write.open_table(EXECUTIONS).map_err(database)?;
    if executions
        .get(record.id.as_str())
        .map_err(database)?
        .is_some()
    {
        return Err(JournalError::Duplicate(record.id.clone()));
    }
    executions
        .insert(record.id.as_str(), text.as_slice())
        .map_err(database)?;
    if !record.status.is_terminal() {
        write
            .open_table(OPEN)
            .map_err(database)?
            .insert(record.id.as_str(), owner.as_slice())
            .map_err(database)?;
    }
    Ok(())
}

/// Applies `change` to execution `id` inside `write`, after checking that every state in `path`
/// is allowed in turn from where the record is now (compare-and-set). The checks come before any
/// write, as in [`create_in`]; `change` must fail, if at all, before it writes.
pub(super) fn update_in(
    write: &redb::WriteTransaction,
    id: &str,
    path: &[ExecutionState],
    change: impl FnOnce(&mut ExecutionRecord, &redb::WriteTransaction) -> Result<(), JournalError>,
) -> Result<ExecutionRecord, JournalError> {
    let mut executions = write.open_table(EXECUTIONS).map_err(database)?;
    let bytes = executions
        .get(id)
        .map_err(database)?
        .map(|v| v.value().to_vec())
        .ok_or_else(|| JournalError::NotFound(id.to_string()))?;
    let mut record: ExecutionRecord = decode(id, &bytes)?;
    let at = now_utc();
    for &to in path {
        if !record.status.can_become(to) {
            return Err(JournalError::Transition {
                id: id.to_string(),
                from: record.status,
                to,
            });
        }
        record.status = to;
        record.steps.push(Step {
            state: to,
            at: at.clone(),
        });
    }
    change(&mut record, write)?;
    let text = encode(id, &record)?;
    executions.insert(id, text.as_slice()).map_err(database)?;
    if record.status.is_terminal() {
        write
            .open_table(OPEN)
            .map_err(database)?
            .remove(id)
            .map_err(database)?;
    }
    Ok(record)
}

/// Ends execution `id` inside `write`, with its nested calls (see [`Journal::close`]).
pub(super) fn close_in(
    write: &redb::WriteTransaction,
    id: &str,
    closing: Closing,
) -> Result<ExecutionRecord, JournalError> {
    if !closing.status.is_terminal() {
        return Err(JournalError::WrongOperation {
            id: id.to_string(),
            to: closing.status,
        });
    }
    let calls = closing
        .calls
        .iter()
        .map(|call| Ok((call.position, encode(id, call)?)))
        .collect::<Result<Vec<_>, JournalError>>()?;
    let tape = closing
        .tape
        .as_ref()
        .map(|tape| encode(id, tape))
        .transpose()?;
    let mut path = closing.passed.clone();
    path.push(closing.status);
    update_in(write, id, &path, |record, write| {
        if let Some((code, message)) = closing.error {
            record.error_code = Some(code);
            record.error_message = Some(truncate(message));
        }
        record.ended_at = Some(now_utc());
        record.metrics = closing.metrics;
        record.out_dir = closing.out_dir;
        record.outputs = closing.outputs;
        record.pending = closing.pending;
        // Closed whole: the mark of its state commit is no longer needed.
        write
            .open_table(STATE_COMMITS)
            .map_err(database)?
            .remove(id)
            .map_err(database)?;
        let mut table = write.open_table(CALLS).map_err(database)?;
        for (position, text) in &calls {
            table
                .insert((id, *position), text.as_slice())
                .map_err(database)?;
        }
        if let Some(tape) = &tape {
            write
                .open_table(TAPES)
                .map_err(database)?
                .insert(id, tape.as_slice())
                .map_err(database)?;
        }
        Ok(())
    })
}
