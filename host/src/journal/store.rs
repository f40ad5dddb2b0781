//! The redb side of the journal: every operation is one short transaction on the data
//! directory's database, shared by every process that uses it (redb `MultiWriter` mode).

use std::sync::{Arc, OnceLock};

use redb::{Database, ReadableDatabase, ReadableTable, TableError};

use super::Closing;
use super::JournalError;
use super::group::{Change, GroupCommit};
use super::schema::{
    self, CALLS, CallRecord, EXECUTIONS, ExecutionRecord, ExecutionState, META, OPEN, SCHEMA_KEY,
    SCHEMA_VERSION, STATE_COMMITS, StateCommitMark, TAPES,
};
use super::transaction::{close_in, create_in, database, decode, encode};
use crate::datadir::DataDir;

/// Which executions `list` returns.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this session.
    pub session: Option<String>,
    /// Only this status.
    pub status: Option<ExecutionState>,
    /// At most this many, most recent first.
    pub limit: Option<usize>,
}

/// The journal of a data directory.
#[derive(Clone)]
pub struct Journal {
    /// Where the database handle comes from: a fresh one after an I/O failure
    /// ([`DataDir::recover_from`]).
    dir: DataDir,
    /// Started on the first grouped write; `None` inside if its thread could not start.
    group: Arc<OnceLock<Option<GroupCommit>>>,
}

impl Journal {
    /// Opens the journal of `dir`: checks (or writes) the schema version, then reconciles
    /// executions that a dead process left open.
    pub fn open(dir: &DataDir) -> Result<Self, JournalError> {
        let journal = Journal {
            dir: dir.clone(),
            group: Arc::new(OnceLock::new()),
        };
        journal.check_schema()?;
        journal.reconcile()?;
        Ok(journal)
    }

    /// The database handle.
    pub(super) fn db(&self) -> Result<Arc<Database>, JournalError> {
        self.dir.database().map_err(JournalError::Open)
    }

    /// Runs `write` on the database; after an I/O failure the next operation gets a fresh
    /// handle, so that a full disk given room again does not leave this process broken.
    pub(super) fn writing<T>(
        &self,
        write: impl FnOnce(&Database) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        let db = self.db()?;
        let result = write(&db);
        if let Err(JournalError::Database(error)) = &result {
            self.dir.recover_from(&db, error);
        }
        result
    }

    fn check_schema(&self) -> Result<(), JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let found = match read.open_table(META) {
            Ok(meta) => meta.get(SCHEMA_KEY).map_err(database)?.map(|v| v.value()),
            Err(TableError::TableDoesNotExist(_)) => None,
            Err(error) => return Err(database(error)),
        };
        drop(read);
        if found == Some(SCHEMA_VERSION) {
            return Ok(());
        }
        self.writing(|db| {
            let write = db.begin_write().map_err(database)?;
            {
                let mut meta = write.open_table(META).map_err(database)?;
                let current = meta.get(SCHEMA_KEY).map_err(database)?.map(|v| v.value());
                if let Some(version) = current {
                    schema::migrate(version, &write)?;
                }
                meta.insert(SCHEMA_KEY, SCHEMA_VERSION).map_err(database)?;
                // Create every table, so that readers never meet a missing one.
                write.open_table(EXECUTIONS).map_err(database)?;
                write.open_table(CALLS).map_err(database)?;
                write.open_table(OPEN).map_err(database)?;
                write.open_table(TAPES).map_err(database)?;
            }
            write.commit().map_err(database)
        })
    }

    /// Records a new execution (durably).
    pub fn create(&self, record: &ExecutionRecord) -> Result<(), JournalError> {
        self.writing(|db| {
            let write = db.begin_write().map_err(database)?;
            create_in(&write, record)?;
            write.commit().map_err(database)
        })
    }

    /// [`Journal::create`], committed in one transaction with the other executions' writes
    /// queued at the same time. It is queued now, in order with this journal's other grouped
    /// writes, and held (briefly) until something else commits or [`Journal::flush_grouped`]
    /// asks; the future resolves once it is durable, and the caller's thread never blocks.
    pub fn create_grouped(
        &self,
        record: ExecutionRecord,
    ) -> impl Future<Output = Result<(), JournalError>> + Send + 'static {
        let answer = self.grouped(Change::Create(Box::new(record)));
        async move { answer.await.map(|_| ()) }
    }

    /// Commits every execution record that [`Journal::create_grouped`] is still holding, without
    /// waiting: their futures resolve once they are durable.
    pub fn flush_grouped(&self) {
        drop(self.grouped(Change::Flush));
    }

    /// [`Journal::close`], committed like [`Journal::create_grouped`].
    pub async fn close_grouped(
        &self,
        id: &str,
        closing: Closing,
    ) -> Result<ExecutionRecord, JournalError> {
        self.grouped(Change::Close(id.to_string(), Box::new(closing)))
            .await?
            .ok_or_else(|| JournalError::NotFound(id.to_string()))
    }

    fn grouped(
        &self,
        change: Change,
    ) -> futures::future::BoxFuture<'static, Result<Option<ExecutionRecord>, JournalError>> {
        let group = self
            .group
            .get_or_init(|| GroupCommit::start(self.dir.clone()).ok());
        match group {
            Some(group) => Box::pin(group.submit(change)),
            // No thread for it: commit here, as the plain operations do.
            None => {
                let answer = match change {
                    Change::Create(record) => self.create(&record).map(|()| None),
                    Change::Close(id, closing) => self.close(&id, *closing).map(Some),
                    Change::Flush => Ok(None),
                };
                Box::pin(std::future::ready(answer))
            }
        }
    }

    /// Ends execution `id`, once: a second close fails and changes nothing. Its nested calls are
    /// written in the same transaction.
    pub fn close(&self, id: &str, closing: Closing) -> Result<ExecutionRecord, JournalError> {
        self.writing(|db| {
            let write = db.begin_write().map_err(database)?;
            let record = close_in(&write, id, closing)?;
            write.commit().map_err(database)?;
            Ok(record)
        })
    }

    /// Records, inside `write` (the state store's commit transaction), that execution `id`
    /// committed its state: if its process dies before [`Journal::close`], reconciliation says
    /// the state change stands.
    pub fn mark_state_commit(
        write: &redb::WriteTransaction,
        id: &str,
        mark: &StateCommitMark,
    ) -> Result<(), JournalError> {
        let text = encode(id, mark)?;
        write
            .open_table(STATE_COMMITS)
            .map_err(database)?
            .insert(id, text.as_slice())
            .map_err(database)?;
        Ok(())
    }

    /// Execution `id`.
    pub fn get(&self, id: &str) -> Result<ExecutionRecord, JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let executions = read.open_table(EXECUTIONS).map_err(database)?;
        let bytes = executions
            .get(id)
            .map_err(database)?
            .ok_or_else(|| JournalError::NotFound(id.to_string()))?;
        decode(id, bytes.value())
    }

    /// Execution `id`'s nested calls, in order.
    pub fn calls(&self, id: &str) -> Result<Vec<CallRecord>, JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let calls = read.open_table(CALLS).map_err(database)?;
        let mut out = Vec::new();
        for row in calls.range((id, 0)..=(id, u32::MAX)).map_err(database)? {
            let (_, bytes) = row.map_err(database)?;
            out.push(decode(id, bytes.value())?);
        }
        Ok(out)
    }

    /// Executions matching `filter`, most recent first.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<ExecutionRecord>, JournalError> {
        let read = self.db()?.begin_read().map_err(database)?;
        let executions = read.open_table(EXECUTIONS).map_err(database)?;
        let mut out = Vec::new();
        for row in executions.iter().map_err(database)?.rev() {
            let (key, bytes) = row.map_err(database)?;
            let record: ExecutionRecord = decode(key.value(), bytes.value())?;
            if filter
                .session
                .as_ref()
                .is_some_and(|s| *s != record.session)
                || filter.status.is_some_and(|s| s != record.status)
            {
                continue;
            }
            out.push(record);
            if filter.limit.is_some_and(|limit| out.len() >= limit) {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "store_test.rs"]
mod tests;
