//! Group commit: the changes that executions running at the same time send to the journal are
//! written together, in one durable transaction, by one thread per journal. An fsync costs the
//! same for one record as for fifty, so under load each execution pays a fraction of one. No
//! caller's thread blocks while it waits.
//!
//! A new execution's record is held for up to [`HOLD`] before it is committed: a short run's
//! record then goes in with its close, one fsync for the whole run. Anything else that commits
//! (a close, another run's flush) takes every held record with it, and [`Change::Flush`] commits
//! them at once: the kernel sends it before anything that changes the world outside.
//!
//! Each change is checked before it writes (see `transaction::create_in`), so one refused change (a
//! second close, say) fails alone and the others in its group still commit. If the group's
//! commit itself fails, every change in it is tried again in a transaction of its own, so that
//! each caller gets its own precise answer.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use redb::Database;
use tokio::sync::oneshot;

use super::transaction::{close_in, create_in, database};
use super::{Closing, ExecutionRecord, JournalError};
use crate::datadir::DataDir;

/// One change an execution asks for.
pub(super) enum Change {
    /// A new execution.
    Create(Box<ExecutionRecord>),
    /// The end of an execution.
    Close(String, Box<Closing>),
    /// Commit the held records now.
    Flush,
}

/// How long a new execution's record may wait for company before it is committed on its own.
/// Long enough for a short run to end (its record then costs no fsync of its own), short enough
/// that `journal list` in another process soon shows a long one.
pub(super) const HOLD: Duration = Duration::from_millis(25);

/// What a change gives back: the closed record, for a close.
pub(super) type Answer = Result<Option<ExecutionRecord>, JournalError>;

struct Request {
    change: Change,
    reply: oneshot::Sender<Answer>,
}

/// The sending side; the committing thread ends when the last one is dropped.
pub(super) struct GroupCommit {
    queue: mpsc::Sender<Request>,
}

impl GroupCommit {
    /// Starts the committing thread of the database of `dir`.
    pub(super) fn start(dir: DataDir) -> std::io::Result<Self> {
        let (queue, requests) = mpsc::channel();
        std::thread::Builder::new()
            .name("forge-journal".into())
            .spawn(move || commit_loop(&dir, &requests))?;
        Ok(GroupCommit { queue })
    }

    /// Queues `change` now; the future resolves once it is durable (or refused).
    pub(super) fn submit(&self, change: Change) -> impl Future<Output = Answer> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let queued = self.queue.send(Request { change, reply }).is_ok();
        async move {
            if !queued {
                return Err(JournalError::Stopped);
            }
            answer.await.map_err(|_| JournalError::Stopped)?
        }
    }
}

/// Takes whatever is queued, holds new records, commits when something is due, and waits for
/// more (or until the oldest held record is due).
fn commit_loop(db: &DataDir, requests: &mpsc::Receiver<Request>) {
    let mut held: VecDeque<(Request, Instant)> = VecDeque::new();
    let mut unclosed = Vec::new();
    loop {
        let next = match held.front() {
            None => match requests.recv() {
                Ok(request) => Some(request),
                Err(_) => return,
            },
            Some((_, since)) => {
                match requests
                    .recv_timeout((*since + HOLD).saturating_duration_since(Instant::now()))
                {
                    Ok(request) => Some(request),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        let group = held.drain(..).map(|(r, _)| r).collect();
                        commit_group(db, group, &mut unclosed);
                        return;
                    }
                }
            }
        };
        let mut others = Vec::new();
        for request in next.into_iter().chain(requests.try_iter()) {
            match request.change {
                Change::Create(_) => held.push_back((request, Instant::now())),
                _ => others.push(request),
            }
        }
        let due = !others.is_empty()
            || held
                .front()
                .is_some_and(|(_, since)| since.elapsed() >= HOLD);
        if due {
            let mut group: Vec<Request> = held.drain(..).map(|(r, _)| r).collect();
            group.extend(others);
            commit_group(db, group, &mut unclosed);
        }
    }
}

fn apply(write: &redb::WriteTransaction, change: Change) -> Answer {
    match change {
        Change::Create(record) => create_in(write, &record).map(|()| None),
        Change::Close(id, closing) => close_in(write, &id, *closing).map(Some),
        Change::Flush => Ok(None),
    }
}

/// The database a group is written to, and the data directory that gets a fresh handle after an
/// I/O failure ([`DataDir::recover_from`]).
struct Target<'a> {
    dir: &'a DataDir,
    db: Arc<Database>,
}

impl Target<'_> {
    fn noted(&self, answer: Answer) -> Answer {
        if let Err(JournalError::Database(error)) = &answer {
            self.dir.recover_from(&self.db, error);
        }
        answer
    }
}

/// Most closes kept to be tried again after an I/O failure; past it the oldest are left to
/// reconciliation, as a crash would.
const MAX_UNCLOSED: usize = 10_000;

/// Commits `group`. A close that failed for an I/O failure (a full disk) is answered with that
/// failure and kept in `unclosed`, to be tried again with each later group: once there is room,
/// its record is closed as the run ended, rather than left `running` until this process is gone.
fn commit_group(dir: &DataDir, mut group: Vec<Request>, unclosed: &mut Vec<Change>) {
    // A flush writes nothing itself: it is answered once the rest is committed.
    let (flushes, mut changes): (Vec<Request>, Vec<Request>) = group
        .drain(..)
        .partition(|request| matches!(request.change, Change::Flush));
    let mut closes = Vec::new();
    for change in unclosed.drain(..) {
        let (reply, answer) = oneshot::channel();
        closes.push((change.clone_for_retry(), answer, None));
        changes.insert(0, Request { change, reply });
    }
    for request in &mut changes {
        if matches!(request.change, Change::Close(..)) {
            let (reply, answer) = oneshot::channel();
            let caller = std::mem::replace(&mut request.reply, reply);
            closes.push((request.change.clone_for_retry(), answer, Some(caller)));
        }
    }
    commit_on(dir, changes);
    for (change, mut answer, caller) in closes {
        let answer = answer.try_recv().unwrap_or(Err(JournalError::Stopped));
        if answer.as_ref().is_err_and(JournalError::is_io_failure) && unclosed.len() < MAX_UNCLOSED
        {
            unclosed.push(change);
        }
        if let Some(caller) = caller {
            let _ = caller.send(answer);
        }
    }
    for flush in flushes {
        let _ = flush.reply.send(Ok(None));
    }
}

fn commit_on(dir: &DataDir, changes: Vec<Request>) {
    match dir.database() {
        Ok(db) => commit_changes(&Target { dir, db }, changes),
        Err(error) => {
            let why = Arc::new(error);
            for request in changes {
                let _ = request.reply.send(Err(JournalError::Reopen(why.clone())));
            }
        }
    }
}

fn commit_changes(db: &Target<'_>, group: Vec<Request>) {
    if group.is_empty() {
        return;
    }
    if group.len() == 1 {
        for request in group {
            let answer = commit_alone(db, request.change);
            let _ = request.reply.send(answer);
        }
        return;
    }
    let Ok(write) = db.db.begin_write() else {
        return commit_each(db, group);
    };
    // Each change is kept (cloned) until the commit succeeds, to be retried alone if it fails.
    let mut answered = Vec::with_capacity(group.len());
    for request in group {
        let retry = request.change.clone_for_retry();
        let answer = apply(&write, request.change);
        answered.push((retry, request.reply, answer));
    }
    // A database failure part-way through a change may have left half of it in the transaction:
    // throw the whole group away and write each change on its own.
    if answered
        .iter()
        .any(|(_, _, answer)| matches!(answer, Err(JournalError::Database(_))))
    {
        drop(write);
        let again = answered
            .into_iter()
            .map(|(change, reply, _)| Request { change, reply })
            .collect();
        return commit_each(db, again);
    }
    match write.commit() {
        Ok(()) => {
            for (_, reply, answer) in answered {
                let _ = reply.send(answer);
            }
        }
        Err(_) => {
            let again = answered
                .into_iter()
                .map(|(change, reply, _)| Request { change, reply })
                .collect();
            commit_each(db, again);
        }
    }
}

fn commit_each(db: &Target<'_>, group: Vec<Request>) {
    for request in group {
        let answer = commit_alone(db, request.change);
        let _ = request.reply.send(answer);
    }
}

fn commit_alone(db: &Target<'_>, change: Change) -> Answer {
    let committed = (|| {
        let write = db.db.begin_write().map_err(database)?;
        let answer = apply(&write, change)?;
        write.commit().map_err(database)?;
        Ok(answer)
    })();
    db.noted(committed)
}

impl Change {
    fn clone_for_retry(&self) -> Change {
        match self {
            Change::Create(record) => Change::Create(record.clone()),
            Change::Close(id, closing) => Change::Close(id.clone(), closing.clone()),
            Change::Flush => Change::Flush,
        }
    }
}
