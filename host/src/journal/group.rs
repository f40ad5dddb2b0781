//! Group commit: the changes that executions running at the same time send to the journal are
//! written together, in one durable transaction, by one thread per journal. An fsync costs the
//! same for one record as for fifty, so under load each execution pays a fraction of one; alone,
//! an execution pays what it did before. No caller's thread blocks while it waits.
//!
//! Each change is checked before it writes (see `store::create_in`), so one refused change (a
//! second close, say) fails alone and the others in its group still commit. If the group's
//! commit itself fails, every change in it is tried again in a transaction of its own, so that
//! each caller gets its own precise answer.

use std::sync::Arc;
use std::sync::mpsc;

use redb::Database;
use tokio::sync::oneshot;

use super::store::{close_in, create_in, database};
use super::{Closing, ExecutionRecord, JournalError};

/// One change an execution asks for.
pub(super) enum Change {
    /// A new execution.
    Create(Box<ExecutionRecord>),
    /// The end of an execution.
    Close(String, Box<Closing>),
}

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
    /// Starts the committing thread of `db`.
    pub(super) fn start(db: Arc<Database>) -> std::io::Result<Self> {
        let (queue, requests) = mpsc::channel();
        std::thread::Builder::new()
            .name("forge-journal".into())
            .spawn(move || commit_loop(&db, &requests))?;
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

/// Takes whatever is queued, writes it in one transaction, answers, and waits for more.
fn commit_loop(db: &Database, requests: &mpsc::Receiver<Request>) {
    while let Ok(first) = requests.recv() {
        let mut group = vec![first];
        group.extend(requests.try_iter());
        commit_group(db, group);
    }
}

fn apply(write: &redb::WriteTransaction, change: Change) -> Answer {
    match change {
        Change::Create(record) => create_in(write, &record).map(|()| None),
        Change::Close(id, closing) => close_in(write, &id, *closing).map(Some),
    }
}

fn commit_group(db: &Database, group: Vec<Request>) {
    if group.len() == 1 {
        for request in group {
            let answer = commit_alone(db, request.change);
            let _ = request.reply.send(answer);
        }
        return;
    }
    let Ok(write) = db.begin_write() else {
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

fn commit_each(db: &Database, group: Vec<Request>) {
    for request in group {
        let answer = commit_alone(db, request.change);
        let _ = request.reply.send(answer);
    }
}

fn commit_alone(db: &Database, change: Change) -> Answer {
    let write = db.begin_write().map_err(database)?;
    let answer = apply(&write, change)?;
    write.commit().map_err(database)?;
    Ok(answer)
}

impl Change {
    fn clone_for_retry(&self) -> Change {
        match self {
            Change::Create(record) => Change::Create(record.clone()),
            Change::Close(id, closing) => Change::Close(id.clone(), closing.clone()),
        }
    }
}
