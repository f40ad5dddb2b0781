//! Keeping on while NATS is away (a restart, a partition): a record update a worker must not
//! lose (the mark before a run's first effect, its outcome) is tried again with a growing pause
//! ([`Backoff`]) until the cluster's patience (`--nats-patience`) runs out.

use std::time::Duration;

use async_nats::jetstream::kv::{Store, UpdateErrorKind};
use bytes::Bytes;

use crate::limits::Backoff;

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
