//! Reading replay records back, and pruning old ones with the blobs only they referred to
//! (`journal prune`).

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use redb::{ReadableDatabase, ReadableTable, TableError};

use super::schema::{EXECUTIONS, ExecutionRecord, TAPES};
use super::transaction::{database, decode};
use super::{Blobs, CompletionOutcome, Journal, JournalError, Tape, TapeEvent};
use crate::primitives::utc_timestamp;

/// What `journal prune` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    /// Replay records removed.
    pub tapes: usize,
    /// Blobs no remaining record refers to, removed.
    pub blobs: usize,
    /// Replay records kept.
    pub kept: usize,
}

fn blobs_of(tape: &Tape) -> impl Iterator<Item = &String> {
    tape.events.iter().filter_map(|event| match event {
        TapeEvent::Complete {
            outcome: CompletionOutcome::Response { sha256, .. },
            ..
        } => Some(sha256),
        _ => None,
    })
}

impl Journal {
    /// The replay record of execution `id`, if it was recorded.
    pub fn tape(&self, id: &str) -> Result<Option<Tape>, JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let tapes = match read.open_table(TAPES) {
            Ok(tapes) => tapes,
            // A journal written before replay records existed has none yet.
            Err(TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(error) => return Err(database(error)),
        };
        match tapes.get(id).map_err(database)? {
            Some(bytes) => Ok(Some(decode(id, bytes.value())?)),
            None => Ok(None),
        }
    }

    /// Removes the replay records of executions that started more than `older_than` ago, then
    /// every blob in `blobs` that no remaining record names (blobs of runs that never closed
    /// included). Execution records stay.
    pub fn prune_tapes(&self, older_than: Duration, blobs: &Blobs) -> Result<Pruned, JournalError> {
        let cutoff = utc_timestamp(
            SystemTime::now()
                .checked_sub(older_than)
                .unwrap_or(SystemTime::UNIX_EPOCH),
        );
        let write = self.db()?.begin_write().map_err(database)?;
        let mut pruned = Pruned::default();
        let mut keep = HashSet::new();
        {
            let executions = write.open_table(EXECUTIONS).map_err(database)?;
            let mut tapes = write.open_table(TAPES).map_err(database)?;
            let mut old = Vec::new();
            for row in tapes.iter().map_err(database)? {
                let (key, bytes) = row.map_err(database)?;
                let id = key.value().to_string();
                let started = match executions.get(id.as_str()).map_err(database)? {
                    Some(record) => decode::<ExecutionRecord>(&id, record.value())?.started_at,
                    None => String::new(),
                };
                if started < cutoff {
                    old.push(id);
                } else {
                    let tape: Tape = decode(&id, bytes.value())?;
                    keep.extend(blobs_of(&tape).cloned());
                    pruned.kept += 1;
                }
            }
            for id in &old {
                tapes.remove(id.as_str()).map_err(database)?;
            }
            pruned.tapes = old.len();
        }
        write.commit().map_err(database)?;
        // The records are gone first: a crash here leaves unreferenced blobs, never a record
        // whose blobs are missing.
        pruned.blobs = blobs
            .remove_all_but(&keep)
            .map_err(|error| JournalError::Blobs(Box::new(error)))?;
        Ok(pruned)
    }
}

#[cfg(test)]
mod tests {
    use crate::datadir::DataDir;
    use crate::journal::Journal;

    #[test]
    fn a_journal_without_replay_records_answers_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = DataDir::new(dir.path());
        let journal = Journal::open(&data).expect("journal");
        // A journal of this schema whose tapes table was never created (an older forge-host).
        let write = journal.db().expect("db").begin_write().expect("write");
        assert!(write.delete_table(super::TAPES).expect("drop the table"));
        write.commit().expect("commit");
        let journal = Journal::open(&data).expect("opened again");
        assert_eq!(journal.tape("nothing").expect("no error"), None);
    }
}
