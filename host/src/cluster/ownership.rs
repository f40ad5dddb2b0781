//! Who owns a queued run: its record in the `forge_runs` bucket, taken by compare-and-set on the
//! record's revision. A delivery runs the request only if no earlier attempt answered it or may
//! have had effects; the record is marked before the run's first effect. The worker that takes
//! over from a dead attempt closes that attempt's journal record as `interrupted`.

use std::sync::Mutex;

use bytes::Bytes;

use super::journal_feed::close_dead_attempt;
use super::names;
use super::patience::{UpdateFailed, update_patiently};
use super::wire::{RunMessage, RunRecord, StoredOutcome};
use super::{Cluster, ClusterError};
use crate::error::{Error, ErrorCode};
use crate::primitives::now_utc;

/// What a worker does with a delivered request.
pub(super) enum Ownership {
    /// Run it: the record this worker wrote when it took it, and its revision.
    Run(u64, RunRecord),
    /// It was answered already (or must not run again): this is the answer.
    Answered(StoredOutcome),
}

/// A record's bytes in the bucket.
pub(super) fn record_bytes(record: &RunRecord) -> Result<Bytes, ClusterError> {
    serde_json::to_vec(record)
        .map(Bytes::from)
        .map_err(|source| ClusterError::Encode {
            what: "a run record",
            source,
        })
}

/// What a delivery of a run does, decided from the run's record alone.
#[derive(Debug)]
pub(super) enum Decision {
    /// No attempt holds it: take it as attempt 1 (the record is created).
    TakeNew(RunRecord),
    /// Attempt `dead` ended before any effect: run it again as `taken` (the record is updated)
    /// and close the dead attempt's journal record saying `why`.
    TakeOver {
        /// The record this attempt writes.
        taken: RunRecord,
        /// The attempt that died.
        dead: u32,
        /// What the dead attempt's journal record is closed with.
        why: String,
    },
    /// It was answered: this is the answer.
    Answered(StoredOutcome),
    /// It must not run again: `record` (with its outcome) is stored and attempt `dead` closed
    /// with `error`.
    NeverAgain {
        /// The record with its refusal as outcome.
        record: RunRecord,
        /// The attempt that died.
        dead: u32,
        /// Why it is not run again.
        error: Error,
    },
}

/// The at-most-once rule: given the run's record (`None` when there is none), whether its
/// submitter asked to cancel it, and the taker's name and clock, what this delivery does. A run
/// whose earlier attempt may have had effects is never run again; one cancelled while a dead
/// attempt held it neither.
pub(super) fn decide(
    previous: Option<RunRecord>,
    cancel_asked: bool,
    worker: &str,
    now: String,
) -> Decision {
    let fresh = |attempt: u32| RunRecord {
        attempt,
        worker: worker.to_string(),
        started_at: now.clone(),
        effects: false,
        outcome: None,
    };
    let Some(previous) = previous else {
        return Decision::TakeNew(fresh(1));
    };
    if let Some(outcome) = &previous.outcome {
        return Decision::Answered(outcome.clone());
    }
    let dead = previous.attempt;
    let which = format!(
        "attempt {dead} on worker `{}` (started {})",
        previous.worker, previous.started_at
    );
    let never_again = if cancel_asked {
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
        let record = RunRecord {
            outcome: Some(StoredOutcome::refused(&error)),
            ..previous
        };
        return Decision::NeverAgain {
            record,
            dead,
            error,
        };
    }
    // The attempt ended before any effect: run it again.
    let taken = fresh(dead + 1);
    let why = format!(
        "worker `{}` stopped before the run had any effect outside itself; attempt {} on worker `{worker}` runs it again",
        previous.worker, taken.attempt
    );
    Decision::TakeOver { taken, dead, why }
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
    let id = request.id.as_str();
    let entry = match cluster.owners.entry(id).await {
        Ok(entry) => entry.filter(|e| e.operation == async_nats::jetstream::kv::Operation::Put),
        Err(error) => {
            log(&format!("reading the record of {id}: {error}"));
            return None;
        }
    };
    let (previous, revision) = match &entry {
        None => (None, 0),
        Some(entry) => match serde_json::from_slice::<RunRecord>(&entry.value) {
            Ok(record) => (Some(record), entry.revision),
            Err(error) => {
                log(&format!("the record of {id} does not parse: {error}"));
                return None;
            }
        },
    };
    let cancelled = match &previous {
        Some(record) if record.outcome.is_none() => cancel_asked(cluster, id).await,
        _ => false,
    };
    let encoded = |record: &RunRecord| {
        record_bytes(record)
            .map_err(|error| log(&crate::error::chain_text(&error)))
            .ok()
    };
    match decide(previous, cancelled, worker, now_utc()) {
        Decision::Answered(outcome) => Some(Ownership::Answered(outcome)),
        Decision::TakeNew(taken) => match cluster.owners.create(id, encoded(&taken)?).await {
            Ok(revision) => Some(Ownership::Run(revision, taken)),
            Err(error) => {
                log(&format!("taking {id}: {error}"));
                None
            }
        },
        Decision::TakeOver { taken, dead, why } => {
            let revision = cluster
                .owners
                .update(id, encoded(&taken)?, revision)
                .await
                .ok()?;
            close_dead_attempt(cluster, id, dead, &why).await;
            Some(Ownership::Run(revision, taken))
        }
        Decision::NeverAgain {
            record,
            dead,
            error,
        } => {
            let outcome = record.outcome.clone()?;
            cluster
                .owners
                .update(id, encoded(&record)?, revision)
                .await
                .ok()?;
            close_dead_attempt(cluster, id, dead, &error.message).await;
            Some(Ownership::Answered(outcome))
        }
    }
}

/// Whether the run's submitter asked to cancel it after a worker took it
/// ([`names::cancel_key`]).
async fn cancel_asked(cluster: &Cluster, id: &str) -> bool {
    matches!(cluster.owners.get(names::cancel_key(id)).await, Ok(Some(_)))
}

/// Why this attempt may not go on to its first effect.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotOwner {
    /// Another worker took the run meanwhile (the record moved), or NATS did not take the mark
    /// within its patience.
    #[error("this worker could not mark run {run} as about to change things: {source}")]
    Unmarked {
        /// The run.
        run: String,
        /// Why.
        #[source]
        source: UpdateFailed,
    },
    /// The record this worker holds was poisoned by a panic.
    #[error("the record of run {0} is poisoned")]
    Poisoned(String),
    /// The marked record could not be encoded.
    #[error(transparent)]
    Encode(ClusterError),
}

/// Marks the run's record: this attempt may now change things outside itself, tried again
/// while NATS is away (up to `patience`). It fails when another worker took the run meanwhile
/// (the record moved), or NATS stayed away, and then nothing happens.
pub(super) async fn mark_effects(
    owners: &async_nats::jetstream::kv::Store,
    id: &str,
    record: &Mutex<(u64, RunRecord)>,
    patience: std::time::Duration,
    away: &(dyn Fn(&str) + Sync),
) -> Result<(), NotOwner> {
    let (revision, mut marked) = record
        .lock()
        .map_err(|_| NotOwner::Poisoned(id.to_string()))?
        .clone();
    marked.effects = true;
    let bytes = record_bytes(&marked).map_err(NotOwner::Encode)?;
    let revision = update_patiently(owners, id, (bytes, revision), patience, away)
        .await
        .map_err(|source| NotOwner::Unmarked {
            run: id.to_string(),
            source,
        })?;
    if let Ok(mut held) = record.lock() {
        *held = (revision, marked);
    }
    Ok(())
}

/// Stores `outcome` in run `id`'s record as this attempt holds it, trying again while NATS
/// is away, up to `patience` ([`update_patiently`]); `away` hears the first failed try.
pub(super) async fn store_outcome(
    owners: &async_nats::jetstream::kv::Store,
    id: &str,
    record: &Mutex<(u64, RunRecord)>,
    outcome: &StoredOutcome,
    (patience, away): (std::time::Duration, &(dyn Fn(&str) + Sync)),
) -> Result<(), String> {
    let (revision, mut current) = record
        .lock()
        .map_err(|_| format!("the record of run {id} is poisoned"))?
        .clone();
    current.outcome = Some(outcome.clone());
    let bytes = record_bytes(&current).map_err(|e| crate::error::chain_text(&e))?;
    update_patiently(owners, id, (bytes, revision), patience, away)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(attempt: u32, effects: bool) -> RunRecord {
        RunRecord {
            attempt,
            worker: "w1".into(),
            started_at: "2026-12-02T00:00:00Z".into(),
            effects,
            outcome: None,
        }
    }

    fn decide_now(previous: Option<RunRecord>, cancel_asked: bool) -> Decision {
        decide(previous, cancel_asked, "w2", "2026-12-02T00:01:00Z".into())
    }

    #[test]
    fn a_new_run_is_taken_as_attempt_one() {
        let Decision::TakeNew(taken) = decide_now(None, false) else {
            panic!("not taken");
        };
        assert_eq!((taken.attempt, taken.worker.as_str()), (1, "w2"));
        assert!(!taken.effects && taken.outcome.is_none());
    }

    #[test]
    fn an_answered_run_gets_its_answer_whatever_else_is_asked() {
        let outcome = StoredOutcome::refused(&Error::new(ErrorCode::Cancelled, "x"));
        let answered = RunRecord {
            outcome: Some(outcome),
            ..held(3, true)
        };
        assert!(matches!(
            decide_now(Some(answered), true),
            Decision::Answered(_)
        ));
    }

    #[test]
    fn a_dead_attempt_without_effects_is_run_again_by_the_next_attempt() {
        let Decision::TakeOver { taken, dead, why } = decide_now(Some(held(2, false)), false)
        else {
            panic!("not taken over");
        };
        assert_eq!((taken.attempt, dead), (3, 2));
        assert!(why.contains("attempt 3 on worker `w2`"), "{why}");
    }

    #[test]
    fn a_dead_attempt_that_may_have_had_effects_is_never_run_again() {
        let Decision::NeverAgain {
            record,
            dead,
            error,
        } = decide_now(Some(held(1, true)), false)
        else {
            panic!("run again");
        };
        assert_eq!(dead, 1);
        assert_eq!(error.code, ErrorCode::IsolateFailure);
        assert!(
            error
                .message
                .starts_with("interrupted: attempt 1 on worker `w1`")
        );
        assert!(record.outcome.is_some(), "the refusal is stored");
    }

    #[test]
    fn a_run_cancelled_while_a_dead_attempt_held_it_is_not_run_again() {
        for effects in [false, true] {
            let Decision::NeverAgain { error, .. } = decide_now(Some(held(1, effects)), true)
            else {
                panic!("run again");
            };
            assert_eq!(error.code, ErrorCode::Cancelled);
        }
    }
}
