//! The redb side of the journal: every operation is one short transaction on the data
//! directory's database, shared by every process that uses it (redb `MultiWriter` mode).

use std::sync::{Arc, OnceLock};

use redb::{Database, ReadableDatabase, ReadableTable, TableError};

use super::Closing;
use super::JournalError;
use super::group::{Change, GroupCommit};
use super::schema::{
    self, CALLS, CallRecord, EXECUTIONS, ExecutionRecord, ExecutionState, META, OPEN, SCHEMA_KEY,
    SCHEMA_VERSION, STATE_COMMITS, StateCommitMark, Step,
};
use crate::datadir::DataDir;
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
    pub(super) db: Arc<Database>,
    /// Started on the first grouped write; `None` inside if its thread could not start.
    group: Arc<OnceLock<Option<GroupCommit>>>,
}

impl Journal {
    /// Opens the journal of `dir`: checks (or writes) the schema version, then reconciles
    /// executions that a dead process left open.
    pub fn open(dir: &DataDir) -> Result<Self, JournalError> {
        let db = dir.database().map_err(JournalError::Open)?;
        let journal = Journal {
            db,
            group: Arc::new(OnceLock::new()),
        };
        journal.check_schema()?;
        journal.reconcile()?;
        Ok(journal)
    }

    fn check_schema(&self) -> Result<(), JournalError> {
        let read = self.db.begin_read().map_err(database)?;
        let found = match read.open_table(META) {
            Ok(meta) => meta.get(SCHEMA_KEY).map_err(database)?.map(|v| v.value()),
            Err(TableError::TableDoesNotExist(_)) => None,
            Err(error) => return Err(database(error)),
        };
        drop(read);
        if found == Some(SCHEMA_VERSION) {
            return Ok(());
        }
        let write = self.db.begin_write().map_err(database)?;
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
        }
        write.commit().map_err(database)
    }

    /// Records a new execution (durably).
    pub fn create(&self, record: &ExecutionRecord) -> Result<(), JournalError> {
        let write = self.db.begin_write().map_err(database)?;
        create_in(&write, record)?;
        write.commit().map_err(database)
    }

    /// Applies `change` to execution `id` in one transaction (see [`update_in`]).
    fn update(
        &self,
        id: &str,
        path: &[ExecutionState],
        change: impl FnOnce(&mut ExecutionRecord, &redb::WriteTransaction) -> Result<(), JournalError>,
    ) -> Result<ExecutionRecord, JournalError> {
        let write = self.db.begin_write().map_err(database)?;
        let record = update_in(&write, id, path, change)?;
        write.commit().map_err(database)?;
        Ok(record)
    }

    /// Moves execution `id` to the non-terminal state `to`.
    pub fn advance(&self, id: &str, to: ExecutionState) -> Result<(), JournalError> {
        if to.is_terminal() {
            return Err(JournalError::WrongOperation {
                id: id.to_string(),
                to,
            });
        }
        self.update(id, &[to], |_, _| Ok(())).map(|_| ())
    }

    /// [`Journal::create`], committed in one transaction with the other executions' writes
    /// queued at the same time. It is queued now, in order with this journal's other grouped
    /// writes; the future resolves once it is durable, and the caller's thread never blocks.
    pub fn create_grouped(
        &self,
        record: ExecutionRecord,
    ) -> impl Future<Output = Result<(), JournalError>> + Send + 'static {
        let answer = self.grouped(Change::Create(Box::new(record)));
        async move { answer.await.map(|_| ()) }
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
            .get_or_init(|| GroupCommit::start(self.db.clone()).ok());
        match group {
            Some(group) => Box::pin(group.submit(change)),
            // No thread for it: commit here, as the plain operations do.
            None => {
                let answer = match change {
                    Change::Create(record) => self.create(&record).map(|()| None),
                    Change::Close(id, closing) => self.close(&id, *closing).map(Some),
                };
                Box::pin(std::future::ready(answer))
            }
        }
    }

    /// Ends execution `id`, once: a second close fails and changes nothing. Its nested calls are
    /// written in the same transaction.
    pub fn close(&self, id: &str, closing: Closing) -> Result<ExecutionRecord, JournalError> {
        let write = self.db.begin_write().map_err(database)?;
        let record = close_in(&write, id, closing)?;
        write.commit().map_err(database)?;
        Ok(record)
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
        let read = self.db.begin_read().map_err(database)?;
        let executions = read.open_table(EXECUTIONS).map_err(database)?;
        let bytes = executions
            .get(id)
            .map_err(database)?
            .ok_or_else(|| JournalError::NotFound(id.to_string()))?;
        decode(id, bytes.value())
    }

    /// Execution `id`'s nested calls, in order.
    pub fn calls(&self, id: &str) -> Result<Vec<CallRecord>, JournalError> {
        let read = self.db.begin_read().map_err(database)?;
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
        let read = self.db.begin_read().map_err(database)?;
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
fn update_in(
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
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::{JournalInput, Owner};
    use super::*;
    use crate::error::ErrorCode;
    use crate::limits::Limits;

    fn record(id: &str, owner: Owner) -> ExecutionRecord {
        ExecutionRecord {
            id: id.into(),
            session: "s".into(),
            engine: "javascript-quickjs".into(),
            engine_sha256: "e".repeat(64),
            script: "a.js".into(),
            script_sha256: "a".repeat(64),
            inputs: vec![JournalInput {
                name: "x.csv".into(),
                size: 1,
                sha256: "b".repeat(64),
                source: "/tmp/x.csv".into(),
            }],
            limits: serde_json::to_value(Limits::default()).expect("limits"),
            policy: Default::default(),
            status: ExecutionState::Preparing,
            steps: Vec::new(),
            error_code: None,
            error_message: None,
            reason: None,
            started_at: now_utc(),
            ended_at: None,
            metrics: None,
            out_dir: None,
            outputs: Vec::new(),
            owner,
        }
    }

    fn closing(status: ExecutionState) -> Closing {
        Closing {
            status,
            error: None,
            metrics: None,
            calls: Vec::new(),
            out_dir: None,
            outputs: Vec::new(),
            passed: vec![ExecutionState::Collecting, ExecutionState::Committing],
        }
    }

    fn journal() -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = Journal::open(&DataDir::new(dir.path())).expect("open");
        (dir, journal)
    }

    #[test]
    fn the_state_machine_is_enforced_and_a_terminal_state_is_reached_once() {
        let (_dir, journal) = journal();
        journal
            .create(&record("a", Owner::current()))
            .expect("create");
        assert!(matches!(
            journal.create(&record("a", Owner::current())),
            Err(JournalError::Duplicate(_))
        ));
        assert!(
            matches!(
                journal.close("a", closing(ExecutionState::Succeeded)),
                Err(JournalError::Transition { .. })
            ),
            "cannot succeed without running"
        );
        journal.advance("a", ExecutionState::Running).expect("run");
        journal
            .close("a", closing(ExecutionState::Succeeded))
            .expect("close");
        let before = journal.get("a").expect("get");
        let again = journal.close("a", closing(ExecutionState::Failed));
        assert!(matches!(again, Err(JournalError::Transition { .. })));
        assert_eq!(
            journal.get("a").expect("get"),
            before,
            "a second close changes nothing"
        );
        let states: Vec<_> = before.steps.iter().map(|s| s.state.as_str()).collect();
        assert_eq!(states, ["running", "collecting", "committing", "succeeded"]);
        assert!(matches!(journal.get("zzz"), Err(JournalError::NotFound(_))));
    }

    #[tokio::test]
    async fn grouped_writes_commit_together_and_a_refused_one_fails_alone() {
        let (_dir, journal) = journal();
        let running = |id: &str| {
            let mut record = record(id, Owner::current());
            record.status = ExecutionState::Running;
            record
        };
        // All queued before any is awaited: the committing thread takes them in groups, in
        // order, so each close follows its own create.
        let mut creates = Vec::new();
        let mut closes = Vec::new();
        for i in 0..50 {
            let id = format!("r{i}");
            creates.push(journal.create_grouped(running(&id)));
            closes.push({
                let journal = journal.clone();
                async move {
                    journal
                        .close_grouped(&id, closing(ExecutionState::Succeeded))
                        .await
                }
            });
        }
        let duplicate = journal.create_grouped(running("r7"));
        let second_close = journal.close_grouped("r3", closing(ExecutionState::Failed));
        for created in futures::future::join_all(creates).await {
            created.expect("created");
        }
        for closed in futures::future::join_all(closes).await {
            assert_eq!(closed.expect("closed").status, ExecutionState::Succeeded);
        }
        assert!(matches!(duplicate.await, Err(JournalError::Duplicate(_))));
        assert!(matches!(
            second_close.await,
            Err(JournalError::Transition { .. })
        ));
        let all = journal.list(&ListFilter::default()).expect("list");
        assert_eq!(all.len(), 50);
        assert!(all.iter().all(|r| r.status == ExecutionState::Succeeded));
    }

    #[test]
    fn executions_of_dead_processes_are_reconciled_and_live_ones_left_alone() {
        let (dir, journal) = journal();
        let dead = Owner {
            pid: u32::MAX - 3,
            start_ticks: Some(5),
        };
        journal.create(&record("dead", dead)).expect("create");
        journal
            .create(&record("live", Owner::current()))
            .expect("create");
        let reopened = Journal::open(&DataDir::new(dir.path())).expect("reopen");
        let gone = reopened.get("dead").expect("get");
        assert_eq!(gone.status, ExecutionState::Failed);
        assert_eq!(gone.error_code, Some(ErrorCode::IsolateFailure));
        assert_eq!(gone.reason.as_deref(), Some("interrupted"));
        assert_eq!(
            reopened.get("live").expect("get").status,
            ExecutionState::Preparing
        );
        assert_eq!(reopened.reconcile().expect("again"), 0, "reconciled once");
    }

    #[test]
    fn calls_are_kept_in_order_and_lists_filter() {
        let (_dir, journal) = journal();
        for (id, session) in [("01", "x"), ("02", "y"), ("03", "x")] {
            let mut r = record(id, Owner::current());
            r.session = session.into();
            journal.create(&r).expect("create");
        }
        journal.advance("03", ExecutionState::Running).expect("run");
        let mut end = closing(ExecutionState::Failed);
        end.error = Some((ErrorCode::ToolFailed, "x".repeat(10_000)));
        end.calls = (1..=3)
            .map(|position| CallRecord {
                position,
                tool: "echo".into(),
                effect: crate::permissions::Effect::Internal,
                input_sha256: "c".repeat(64),
                status: super::super::CallStatus::Succeeded,
                error_code: None,
                duration_ms: Some(1),
                paths: Vec::new(),
                decision: None,
            })
            .collect();
        journal.close("03", end).expect("close");
        assert_eq!(
            journal
                .calls("03")
                .expect("calls")
                .iter()
                .map(|c| c.position)
                .collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert!(
            journal
                .get("03")
                .expect("get")
                .error_message
                .expect("message")
                .len()
                < 5000
        );
        let xs: Vec<_> = journal
            .list(&ListFilter {
                session: Some("x".into()),
                ..ListFilter::default()
            })
            .expect("list")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(xs, ["03", "01"], "most recent first");
        let failed = journal
            .list(&ListFilter {
                status: Some(ExecutionState::Failed),
                limit: Some(5),
                ..ListFilter::default()
            })
            .expect("list");
        assert_eq!(failed.len(), 1);
    }

    proptest::proptest! {
        /// Any bytes in place of a record decode or fail as corrupt, never a panic.
        #[test]
        fn any_bytes_decode_or_are_corrupt(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = decode::<ExecutionRecord>("id", &bytes);
            let _ = decode::<CallRecord>("id", &bytes);
        }
    }
}
