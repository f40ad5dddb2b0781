//! Keeping on while NATS is away (a restart, a partition): what a worker must not lose (the
//! mark before a run's first effect, its outcome, its journal records and the ack that follows)
//! is tried again with a growing pause until the cluster's patience (`--nats-patience`) runs
//! out.

use std::time::Duration;

use async_nats::jetstream::kv::{Store, UpdateErrorKind};
use bytes::Bytes;
use tokio::time::Instant;

/// The first pause before trying NATS again, doubled each time up to [`LAST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
/// The longest pause between tries.
const LAST_RETRY: Duration = Duration::from_secs(4);

/// Pauses between tries, growing, until a deadline.
pub(super) struct Backoff {
    deadline: Instant,
    pause: Duration,
}

impl Backoff {
    /// Tries for `patience` from now.
    pub(super) fn new(patience: Duration) -> Self {
        Backoff {
            deadline: Instant::now() + patience,
            pause: FIRST_RETRY,
        }
    }

    /// Waits before the next try; `false` (at once) when the patience has run out.
    pub(super) async fn wait(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        tokio::time::sleep(self.pause.min(self.deadline - now)).await;
        self.pause = (self.pause * 2).min(LAST_RETRY);
        true
    }
}

/// Why a record could not be updated.
#[derive(Debug, thiserror::Error)]
pub(super) enum UpdateFailed {
    /// The record is not the revision this attempt holds: another worker moved it.
    #[error("the record moved: {0}")]
    Moved(String),
    /// NATS did not take the update within the patience.
    #[error("NATS did not take it within {}: {last}", crate::limits::format_duration(*patience))]
    Unreachable {
        /// The patience that ran out.
        patience: Duration,
        /// The last try's error.
        last: String,
    },
}

/// Writes `bytes` over `id`'s record at `revision`, trying again while NATS is away, up to
/// `patience`; the new revision. `away` hears the first failed try, once.
pub(super) async fn update_patiently(
    owners: &Store,
    id: &str,
    (bytes, revision): (Bytes, u64),
    patience: Duration,
    away: &(dyn Fn(&str) + Sync),
) -> Result<u64, UpdateFailed> {
    let mut backoff = Backoff::new(patience);
    let mut first = true;
    loop {
        let failed = match owners.update(id, bytes.clone(), revision).await {
            Ok(revision) => return Ok(revision),
            // A try whose answer was lost may have landed: then the record holds these bytes.
            Err(error) if error.kind() == UpdateErrorKind::WrongLastRevision => {
                match owners.entry(id).await {
                    Ok(Some(entry)) if entry.value == bytes => return Ok(entry.revision),
                    Ok(_) => return Err(UpdateFailed::Moved(error.to_string())),
                    Err(read) => read.to_string(),
                }
            }
            Err(error) if error.kind() == UpdateErrorKind::InvalidKey => {
                return Err(UpdateFailed::Moved(error.to_string()));
            }
            Err(error) => error.to_string(),
        };
        if std::mem::take(&mut first) {
            away(&format!(
                "{failed}; trying again for up to {}",
                crate::limits::format_duration(patience)
            ));
        }
        if !backoff.wait().await {
            return Err(UpdateFailed::Unreachable {
                patience,
                last: failed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pauses_grow_to_the_last_and_stop_at_the_deadline() {
        let began = Instant::now();
        let mut backoff = Backoff::new(Duration::from_secs(10));
        let mut pauses = Vec::new();
        let mut before = Instant::now();
        while backoff.wait().await {
            pauses.push(before.elapsed().as_millis());
            before = Instant::now();
        }
        assert_eq!(pauses, [250, 500, 1000, 2000, 4000, 2250]);
        assert_eq!(began.elapsed(), Duration::from_secs(10));
    }
}
