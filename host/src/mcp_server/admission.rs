//! Which calls run now, which wait, and which are refused: a run needs one of `max_runs`
//! slots and, under `--max-memory`, room for all the memory its limits let it hold
//! ([`Limits::resident_bytes`](crate::limits::Limits::resident_bytes)), so that runs at their
//! caps never hold more than the server was given. A call that finds either taken waits, among
//! at most `max_queued`; one more is refused with `BUDGET_EXCEEDED`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, ErrorCode};

/// Memory is counted in whole mebibytes, rounded up, so that a semaphore's permits hold it.
const UNIT: u64 = 1 << 20;

/// The server's run slots, its memory for runs, and its queue.
pub struct Admission {
    runs: Arc<Semaphore>,
    /// Mebibytes runs at once may hold, and that total; `None` without a bound.
    memory: Option<(Arc<Semaphore>, u64)>,
    max_runs: usize,
    max_queued: usize,
    /// Calls waiting for a slot or for memory.
    waiting: AtomicUsize,
}

/// What a run holds while it runs; given back when dropped.
pub struct Admitted {
    _slot: OwnedSemaphorePermit,
    _memory: Option<OwnedSemaphorePermit>,
}

/// Why a call was not admitted.
pub enum Refused {
    /// Too many wait already, or the run may hold more than the server's whole memory bound.
    Refused(Error),
    /// The client cancelled it while it waited.
    Cancelled,
}

impl Admission {
    /// `max_runs` slots, a queue of `max_queued`, and `max_memory` bytes for runs at once.
    pub fn new(max_runs: usize, max_queued: usize, max_memory: Option<u64>) -> Self {
        let memory = max_memory.map(|bytes| {
            let units = (bytes / UNIT).min(Semaphore::MAX_PERMITS as u64);
            (Arc::new(Semaphore::new(units as usize)), units)
        });
        Admission {
            runs: Arc::new(Semaphore::new(max_runs.max(1))),
            memory,
            max_runs: max_runs.max(1),
            max_queued,
            waiting: AtomicUsize::new(0),
        }
    }

    /// A slot, and room for a run that may hold `resident` bytes: now when both are free,
    /// after a wait in the queue when not (unless `cancelled` completes first), or the refusal
    /// to answer with.
    pub async fn admit(
        &self,
        resident: u64,
        cancelled: impl Future<Output = ()>,
    ) -> Result<Admitted, Refused> {
        let units = match &self.memory {
            Some((_, total)) => {
                let units = resident.div_ceil(UNIT);
                if units > *total {
                    return Err(Refused::Refused(Error::new(
                        ErrorCode::BudgetExceeded,
                        format!(
                            "this run's limits let it hold {units} MiB, more than the {total} \
MiB this server gives all runs at once (--max-memory); ask for less memory_mb"
                        ),
                    )));
                }
                Some(u32::try_from(units).unwrap_or(u32::MAX))
            }
            None => None,
        };
        if let Some(admitted) = self.try_admit(units) {
            return Ok(admitted);
        }
        let place = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _place = QueuePlace(&self.waiting);
        if place >= self.max_queued {
            return Err(Refused::Refused(Error::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "the server is busy: {} runs at once (--max-runs){} and {} calls waiting \
(--max-queued); try again when one has ended",
                    self.max_runs,
                    match &self.memory {
                        Some((_, total)) => format!(" within {total} MiB (--max-memory)"),
                        None => String::new(),
                    },
                    self.max_queued
                ),
            )));
        }
        tokio::select! {
            admitted = self.wait(units) => admitted.ok_or(Refused::Cancelled),
            () = cancelled => Err(Refused::Cancelled),
        }
    }

    fn try_admit(&self, units: Option<u32>) -> Option<Admitted> {
        let slot = self.runs.clone().try_acquire_owned().ok()?;
        let memory = match (&self.memory, units) {
            (Some((memory, _)), Some(units)) => {
                Some(memory.clone().try_acquire_many_owned(units).ok()?)
            }
            _ => None,
        };
        Some(Admitted {
            _slot: slot,
            _memory: memory,
        })
    }

    /// Memory first, then a slot: a call that waits for memory holds no slot a smaller run
    /// could use.
    async fn wait(&self, units: Option<u32>) -> Option<Admitted> {
        let memory = match (&self.memory, units) {
            (Some((memory, _)), Some(units)) => {
                Some(memory.clone().acquire_many_owned(units).await.ok()?)
            }
            _ => None,
        };
        let slot = self.runs.clone().acquire_owned().await.ok()?;
        Some(Admitted {
            _slot: slot,
            _memory: memory,
        })
    }

    /// Calls waiting now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Waits (up to `within`) until every slot is free: no run holds one.
    pub async fn drained(&self, within: std::time::Duration) {
        let all = u32::try_from(self.max_runs).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(within, self.runs.acquire_many(all)).await;
    }
}

/// A call's place among those waiting, given back when dropped.
struct QueuePlace<'a>(&'a AtomicUsize);

impl Drop for QueuePlace<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use std::future::{pending, ready};

    use super::*;

    const MIB: u64 = 1 << 20;

    fn refused_code(refused: Result<Admitted, Refused>) -> Option<ErrorCode> {
        match refused {
            Err(Refused::Refused(error)) => Some(error.code),
            _ => None,
        }
    }

    #[tokio::test]
    async fn runs_wait_for_memory_and_the_queue_is_bounded() {
        let admission = Arc::new(Admission::new(4, 1, Some(300 * MIB)));
        let first = admission.admit(200 * MIB, pending()).await.ok();
        assert!(first.is_some());
        // A slot is free but the memory is not: the next waits, the one after is refused.
        let second = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit(200 * MIB, pending()).await.is_ok() }
        });
        while admission.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let third = admission.admit(50 * MIB, pending()).await;
        assert_eq!(refused_code(third), Some(ErrorCode::BudgetExceeded));
        drop(first);
        assert!(second.await.expect("joined"));
        assert_eq!(admission.waiting(), 0);
    }

    #[tokio::test]
    async fn a_run_larger_than_the_whole_bound_is_refused_at_once() {
        let admission = Admission::new(4, 4, Some(100 * MIB));
        let code = refused_code(admission.admit(101 * MIB, pending()).await);
        assert_eq!(code, Some(ErrorCode::BudgetExceeded));
        assert!(admission.admit(100 * MIB, pending()).await.is_ok());
    }

    #[tokio::test]
    async fn a_cancelled_wait_gives_its_place_back() {
        let admission = Admission::new(1, 1, None);
        let _held = admission.admit(0, pending()).await.ok();
        assert!(matches!(
            admission.admit(0, ready(())).await,
            Err(Refused::Cancelled)
        ));
        assert_eq!(admission.waiting(), 0);
    }
}
