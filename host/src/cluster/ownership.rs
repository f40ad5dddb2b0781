//! Who owns a queued run: its record in the `forge_runs` bucket, taken by compare-and-set on the
//! record's revision. A delivery runs the request only if no earlier attempt answered it or may
//! have had effects; the record is marked before the run's first effect. The worker that takes
//! over from a dead attempt closes that attempt's journal record as `interrupted`.

use std::sync::Mutex;

use bytes::Bytes;

use super::Cluster;
use super::journal_feed::close_dead_attempt;
use super::names;
use super::wire::{RunMessage, RunRecord, StoredOutcome};
use crate::error::{Error, ErrorCode};
use crate::primitives::now_utc;

/// What a worker does with a delivered request.
pub(super) enum Ownership {
    /// Run it: the record this worker wrote when it took it, and its revision.
    Run(u64, RunRecord),
    /// It was answered already (or must not run again): this is the answer.
    Answered(StoredOutcome),
}

pub(super) fn record_bytes(record: &RunRecord) -> Bytes {
    Bytes::from(serde_json::to_vec(record).unwrap_or_default())
}

/// Reads the run's record and takes the run, or finds its answer; `None` when another worker
/// holds it now (the request is left alone). `worker` names the taker in the record; `log` hears
/// why a request was left alone.
pub(super) async fn take_ownership(
    cluster: &Cluster,
    worker: &str,
    request: &RunMessage,
    log: &(dyn Fn(&str) + Sync),
) -> Option<Ownership> {
    let fresh = |attempt: u32| RunRecord {
        attempt,
        worker: worker.to_string(),
        started_at: now_utc(),
        effects: false,
        outcome: None,
    };
    let entry = match cluster.owners.entry(request.id.as_str()).await {
        Ok(entry) => entry.filter(|e| e.operation == async_nats::jetstream::kv::Operation::Put),
        Err(error) => {
            log(&format!("reading the record of {}: {error}", request.id));
            return None;
        }
    };
    let Some(entry) = entry else {
        let taken = fresh(1);
        return match cluster
            .owners
            .create(request.id.as_str(), record_bytes(&taken))
            .await
        {
            Ok(revision) => Some(Ownership::Run(revision, taken)),
            Err(error) => {
                log(&format!("taking {}: {error}", request.id));
                None
            }
        };
    };
    let previous: RunRecord = match serde_json::from_slice(&entry.value) {
        Ok(record) => record,
        Err(error) => {
            log(&format!(
                "the record of {} does not parse: {error}",
                request.id
            ));
            return None;
        }
    };
    if let Some(outcome) = &previous.outcome {
        return Some(Ownership::Answered(outcome.clone()));
    }
    let dead = previous.attempt;
    let which = format!(
        "attempt {dead} on worker `{}` (started {})",
        previous.worker, previous.started_at
    );
    let never_again = if cancel_asked(cluster, &request.id).await {
        // Its submitter cancelled it while the attempt that died held it.
        Some(Error::new(
            ErrorCode::Cancelled,
            format!("cancelled by its submitter; {which} stopped, and it is not run again"),
        ))
    } else if previous.effects {
        // The attempt may have changed something outside itself: never run it twice.
        Some(Error::new(
            ErrorCode::IsolateFailure,
            format!(
                "interrupted: {which} stopped after it may have changed things outside itself (a write, process or external call, a state commit or a publication), so it is not run again"
            ),
        ))
    } else {
        None
    };
    if let Some(error) = never_again {
        let outcome = StoredOutcome::refused(&error);
        let record = RunRecord {
            outcome: Some(outcome.clone()),
            ..previous
        };
        return match cluster
            .owners
            .update(request.id.as_str(), record_bytes(&record), entry.revision)
            .await
        {
            Ok(_) => {
                close_dead_attempt(cluster, &request.id, dead, &error.message).await;
                Some(Ownership::Answered(outcome))
            }
            Err(_) => None,
        };
    }
    // The attempt ended before any effect: run it again.
    let taken = fresh(previous.attempt + 1);
    match cluster
        .owners
        .update(request.id.as_str(), record_bytes(&taken), entry.revision)
        .await
    {
        Ok(revision) => {
            let why = format!(
                "worker `{}` stopped before the run had any effect outside itself; attempt {} on worker `{worker}` runs it again",
                previous.worker, taken.attempt
            );
            close_dead_attempt(cluster, &request.id, previous.attempt, &why).await;
            Some(Ownership::Run(revision, taken))
        }
        Err(_) => None,
    }
}

/// Whether the run's submitter asked to cancel it after a worker took it
/// ([`names::cancel_key`]).
async fn cancel_asked(cluster: &Cluster, id: &str) -> bool {
    matches!(cluster.owners.get(names::cancel_key(id)).await, Ok(Some(_)))
}

/// Marks the run's record: this attempt may now change things outside itself. It fails when
/// another worker took the run meanwhile (the record moved), and then nothing happens.
pub(super) async fn mark_effects(
    owners: &async_nats::jetstream::kv::Store,
    id: &str,
    record: &Mutex<(u64, RunRecord)>,
) -> Result<(), String> {
    let (revision, mut marked) = record
        .lock()
        .map_err(|_| "the run's record is poisoned".to_string())?
        .clone();
    marked.effects = true;
    let revision = owners
        .update(id, record_bytes(&marked), revision)
        .await
        .map_err(|e| format!("this worker no longer owns run {id}: {e}"))?;
    if let Ok(mut held) = record.lock() {
        *held = (revision, marked);
    }
    Ok(())
}
