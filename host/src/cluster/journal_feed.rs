//! The journal stream: each attempt at a queued run publishes its journal record there when it is
//! `running` and again when it ends, one subject per run and attempt, so that the stream keeps
//! the latest record of each. An attempt whose worker died is closed there by the worker that
//! answers the run next, as a restarted forge-host closes its own open records.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use bytes::Bytes;
use tokio::task::JoinHandle;

use super::Cluster;
use super::names;
use super::wire::JournalEntry;
use crate::journal::Journal;
use crate::limits::{GaveUp, patiently};

/// Publishes the records of one attempt.
#[derive(Clone)]
pub(super) struct JournalFeed {
    jetstream: jetstream::Context,
    journal: Journal,
    worker: String,
    run: String,
    attempt: u32,
    /// The `running` record's publication, awaited before the final one so that the final one
    /// is the latest.
    running: Arc<Mutex<Option<JoinHandle<()>>>>,
    /// How long a record is tried again while NATS is away.
    patience: Duration,
}

impl JournalFeed {
    /// The feed of attempt `attempt` at run `run`, by `worker`, from its local `journal`.
    pub(super) fn new(
        cluster: &Cluster,
        journal: Journal,
        worker: &str,
        run: &str,
        attempt: u32,
    ) -> Self {
        JournalFeed {
            jetstream: cluster.jetstream.clone(),
            journal,
            worker: worker.to_string(),
            run: run.to_string(),
            attempt,
            running: Arc::new(Mutex::new(None)),
            patience: cluster.patience(),
        }
    }

    /// The execution `execution` started (its `running` record is durable): publishes it in the
    /// background, since the run goes on meanwhile.
    pub(super) fn started(&self, execution: &str) {
        let feed = self.clone();
        let execution = execution.to_string();
        let handle = tokio::spawn(async move { feed.publish(&execution).await });
        if let Ok(mut running) = self.running.lock() {
            *running = Some(handle);
        }
    }

    /// The execution ended: publishes its final record, after the `running` one.
    pub(super) async fn ended(&self, execution: &str) {
        let running = self.running.lock().ok().and_then(|mut slot| slot.take());
        if let Some(running) = running {
            let _ = running.await;
        }
        self.publish(execution).await;
    }

    async fn publish(&self, execution: &str) {
        let Ok(record) = self.journal.get(execution) else {
            return;
        };
        let entry = JournalEntry {
            worker: self.worker.clone(),
            run: self.run.clone(),
            attempt: self.attempt,
            record,
        };
        publish(&self.jetstream, &entry, self.patience).await;
    }
}

async fn publish(jetstream: &jetstream::Context, entry: &JournalEntry, patience: Duration) {
    let Ok(bytes) = serde_json::to_vec(entry) else {
        return;
    };
    let subject = names::journal_subject(&entry.run, entry.attempt);
    // Tried again while NATS is away: the subject keeps only its latest record, so a record
    // that lands twice is kept once.
    let published = patiently(
        patience,
        || {
            let (subject, bytes) = (subject.clone(), Bytes::from(bytes.clone()));
            async move {
                let ack = jetstream
                    .publish(subject, bytes)
                    .await
                    .map_err(|error| error.to_string())?;
                ack.await.map_err(|error| error.to_string())
            }
        },
        |_| true,
        |_| {},
    )
    .await;
    if let Err(GaveUp::OutOfPatience(error) | GaveUp::Refused(error)) = published {
        eprintln!(
            "forge-host worker {}: publishing the journal record of run {}: {error}",
            entry.worker, entry.run
        );
    }
}

/// Closes the record attempt `attempt` at run `run` left open when its worker died, saying
/// `why`; nothing when it published none, or closed it.
pub(super) async fn close_dead_attempt(cluster: &Cluster, run: &str, attempt: u32, why: &str) {
    let subject = names::journal_subject(run, attempt);
    let Ok(message) = cluster
        .journal
        .get_last_raw_message_by_subject(&subject)
        .await
    else {
        return;
    };
    let Ok(mut entry) = serde_json::from_slice::<JournalEntry>(&message.payload) else {
        return;
    };
    if entry.record.status.is_terminal() {
        return;
    }
    entry.record.close_interrupted(why.to_string());
    publish(&cluster.jetstream, &entry, cluster.patience()).await;
}
