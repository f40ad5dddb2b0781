//! The embedded [`StateStore`]: one redb table keyed by (session, key), each value carrying the
//! revision that last changed it, and a store-wide revision counter (like etcd's).

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use super::{Commit, CommitError, Entry, Snapshot, StateStore};
use crate::datadir::DataDir;
use crate::journal::{Journal, StateCommitMark};

/// (session, key) -> revision (8 bytes LE) + tag (1 = value, 0 = tombstone) + JSON text.
const STATE: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("state");
/// Counters; `state_revision` is the last revision handed out.
const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");
const REVISION: &str = "state_revision";

fn encode(entry_revision: u64, value: Option<&str>) -> Vec<u8> {
    let mut bytes = entry_revision.to_le_bytes().to_vec();
    match value {
        Some(text) => {
            bytes.push(1);
            bytes.extend_from_slice(text.as_bytes());
        }
        None => bytes.push(0),
    }
    bytes
}

fn decode(key: &str, bytes: &[u8]) -> Result<Entry, CommitError> {
    let corrupt = || CommitError::Corrupt {
        key: key.to_string(),
    };
    let (revision, rest) = bytes.split_first_chunk::<8>().ok_or_else(corrupt)?;
    let (tag, text) = rest.split_first().ok_or_else(corrupt)?;
    let value = match tag {
        1 => Some(String::from_utf8(text.to_vec()).map_err(|_| corrupt())?),
        0 => None,
        _ => return Err(corrupt()),
    };
    Ok(Entry {
        value,
        revision: u64::from_le_bytes(*revision),
    })
}

fn storage(error: impl Into<redb::Error>) -> CommitError {
    CommitError::Storage(error.into())
}

/// Session state in the data directory's redb file.
#[derive(Debug, Clone)]
pub struct RedbStateStore {
    dir: DataDir,
}

impl RedbStateStore {
    /// The state store of `dir`.
    pub fn new(dir: DataDir) -> Self {
        RedbStateStore { dir }
    }

    fn database(&self) -> Result<std::sync::Arc<redb::Database>, CommitError> {
        self.dir.database().map_err(CommitError::Open)
    }

    /// Every session with state.
    pub fn sessions(&self) -> Result<Vec<String>, CommitError> {
        let db = self.database()?;
        let read = db.begin_read().map_err(storage)?;
        let table = match read.open_table(STATE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(error) => return Err(storage(error)),
        };
        let mut sessions: Vec<String> = Vec::new();
        for row in table.iter().map_err(storage)? {
            let (key, _) = row.map_err(storage)?;
            let session = key.value().0;
            if sessions.last().map(String::as_str) != Some(session) {
                sessions.push(session.to_string());
            }
        }
        Ok(sessions)
    }
}

impl StateStore for RedbStateStore {
    fn snapshot(&self, session: &str) -> Result<Snapshot, CommitError> {
        let db = self.database()?;
        let read = db.begin_read().map_err(storage)?;
        let table = match read.open_table(STATE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Snapshot::default()),
            Err(error) => return Err(storage(error)),
        };
        let mut snapshot = Snapshot::default();
        for row in table.range((session, "")..).map_err(storage)? {
            let (key, value) = row.map_err(storage)?;
            let (row_session, name) = key.value();
            if row_session != session {
                break;
            }
            snapshot
                .entries
                .insert(name.to_string(), decode(name, value.value())?);
        }
        Ok(snapshot)
    }

    fn commit(&self, session: &str, commit: &Commit<'_>) -> Result<u64, CommitError> {
        self.commit_marked(None, session, commit)
    }

    fn commit_for(
        &self,
        execution: &str,
        session: &str,
        commit: &Commit<'_>,
    ) -> Result<u64, CommitError> {
        self.commit_marked(Some(execution), session, commit)
    }
}

impl RedbStateStore {
    /// Commits `changes`, and marks execution `execution`'s commit in the journal in the same
    /// transaction.
    fn commit_marked(
        &self,
        execution: Option<&str>,
        session: &str,
        commit: &Commit<'_>,
    ) -> Result<u64, CommitError> {
        let db = self.database()?;
        let result = Self::commit_in(&db, execution, session, commit);
        // A handle that met an I/O failure (a full disk) refuses everything after: the next
        // commit gets a fresh one.
        if let Err(CommitError::Storage(error)) = &result {
            self.dir.recover_from(&db, error);
        }
        result
    }

    fn commit_in(
        db: &redb::Database,
        execution: Option<&str>,
        session: &str,
        commit: &Commit<'_>,
    ) -> Result<u64, CommitError> {
        let (changes, max_bytes) = (commit.changes, commit.max_bytes);
        let write = db.begin_write().map_err(storage)?;
        let revision = {
            let mut table = write.open_table(STATE).map_err(storage)?;
            let mut counters = write.open_table(COUNTERS).map_err(storage)?;
            for key in commit.checked_keys() {
                let current = match table.get((session, key)).map_err(storage)? {
                    Some(bytes) => Some(decode(key, bytes.value())?.revision),
                    None => None,
                };
                if current != commit.base_revision(key) {
                    // Dropping `write` without commit aborts: nothing partial is written.
                    return Err(CommitError::Conflict {
                        key: key.to_string(),
                    });
                }
            }
            let mut total = 0u64;
            for row in table.range((session, "")..).map_err(storage)? {
                let (key, value) = row.map_err(storage)?;
                let (row_session, name) = key.value();
                if row_session != session {
                    break;
                }
                if changes.contains_key(name) {
                    continue;
                }
                let entry = decode(name, value.value())?;
                if commit.reads_everything && Some(entry.revision) != commit.base_revision(name) {
                    return Err(CommitError::Conflict {
                        key: name.to_string(),
                    });
                }
                if let Some(text) = entry.value {
                    total += (name.len() + text.len()) as u64;
                }
            }
            total += changes
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| (k.len() + v.len()) as u64))
                .sum::<u64>();
            if total > max_bytes {
                return Err(CommitError::OverBudget {
                    total,
                    max: max_bytes,
                });
            }
            let revision = counters
                .get(REVISION)
                .map_err(storage)?
                .map_or(0, |r| r.value())
                + 1;
            counters.insert(REVISION, revision).map_err(storage)?;
            for (key, value) in changes {
                table
                    .insert(
                        (session, key.as_str()),
                        encode(revision, value.as_deref()).as_slice(),
                    )
                    .map_err(storage)?;
            }
            revision
        };
        if let Some(execution) = execution {
            let mark = StateCommitMark {
                session: session.to_string(),
                revision,
            };
            Journal::mark_state_commit(&write, execution, &mark).map_err(CommitError::Mark)?;
        }
        write.commit().map_err(storage)?;
        Ok(revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redb_store_keeps_the_state_store_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = RedbStateStore::new(DataDir::new(dir.path()));
        if let Err(failure) = crate::state::contract::check(std::sync::Arc::new(store.clone()), "t")
        {
            panic!("{failure}");
        }
        let sessions = store.sessions().expect("sessions");
        assert!(
            sessions
                .iter()
                .any(|s| s == "t-the-budget-counts-the-session-at-commit")
        );
    }

    #[test]
    fn deletions_leave_tombstones_with_a_revision() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = RedbStateStore::new(DataDir::new(dir.path()));
        let empty = store.snapshot("s").expect("snapshot");
        let set = crate::state::Changes::from([("a".to_string(), Some("1".to_string()))]);
        store
            .commit("s", &Commit::new(&empty, &set, 1 << 20))
            .expect("set");
        let with_a = store.snapshot("s").expect("snapshot");
        assert!(store.delete_now("s", "a").expect("delete"));
        let after = store.snapshot("s").expect("snapshot");
        assert_eq!(after.entries["a"].value, None);
        assert!(after.entries["a"].revision > with_a.entries["a"].revision);
    }
}
