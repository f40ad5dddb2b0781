//! State shared by the executions of one session (SPEC §6): small JSON values with a revision per
//! key. An execution reads a [`Snapshot`], changes only its private [`StateView`], and its
//! changes are committed in one transaction, against the snapshot, only when it succeeds.
//!
//! The store sits behind [`StateStore`]: [`RedbStateStore`] is the embedded default, and
//! [`EtcdStateStore`] keeps state in etcd (`--state etcd://...`) for forge-hosts on several
//! machines, on etcd's `mod_revision` and compare-and-swap transactions.

pub mod contract;
pub mod etcd;
#[cfg(test)]
mod model_test;
mod redb_store;
mod view;

use std::collections::BTreeMap;

pub use etcd::{EtcdLocation, EtcdStateStore};
pub use redb_store::RedbStateStore;
pub use view::{MAX_KEY_BYTES, StateFailure, StateView};

use crate::error::ErrorCode;

/// One key as a snapshot saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The JSON text, or `None` for a tombstone (a deleted key keeps its revision so that a later
    /// conflict is still detected).
    pub value: Option<String>,
    /// The store revision that last changed the key.
    pub revision: u64,
}

/// The state of a session at the start of an execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Every key, tombstones included.
    pub entries: BTreeMap<String, Entry>,
}

impl Snapshot {
    /// The live value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).and_then(|e| e.value.as_deref())
    }

    /// Bytes the live entries use (keys plus values), as the budget counts them.
    pub fn live_bytes(&self) -> u64 {
        self.entries
            .iter()
            .filter_map(|(k, e)| e.value.as_ref().map(|v| (k.len() + v.len()) as u64))
            .sum()
    }
}

/// Pending changes of an execution: `Some(json)` sets, `None` deletes.
pub type Changes = BTreeMap<String, Option<String>>;

/// Why a commit failed. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// `key` changed since the snapshot.
    #[error("state key `{key}` was changed by another execution since this one started")]
    Conflict {
        /// The first conflicting key.
        key: String,
    },
    /// The session's state would exceed its budget.
    #[error("the session state would be {total} bytes, over the budget of {max} bytes")]
    OverBudget {
        /// Bytes after the commit.
        total: u64,
        /// The budget.
        max: u64,
    },
    /// The data directory's database could not be opened.
    #[error("state store")]
    Open(#[source] crate::datadir::DataDirError),
    /// The store failed.
    #[error("state store")]
    Storage(#[source] redb::Error),
    /// The journal's mark of the commit could not be written (nothing was committed).
    #[error("state store: marking the commit in the journal")]
    Mark(#[source] crate::journal::JournalError),
    /// A stored entry does not read back.
    #[error("state store: the entry of `{key}` is corrupt")]
    Corrupt {
        /// Its key.
        key: String,
    },
    /// etcd could not be reached, or refused the request (nothing was committed).
    #[error("state store")]
    Etcd(#[source] etcd::EtcdError),
    /// The store could not do its work (nothing was committed).
    #[error("state store: {0}")]
    Unavailable(String),
    /// More keys than one etcd transaction can change.
    #[error(
        "a commit to etcd changes at most {max} keys (etcd's --max-txn-ops), and this one changes {keys}"
    )]
    TooManyKeys {
        /// Keys the commit changes.
        keys: usize,
        /// The most it may.
        max: usize,
    },
}

impl CommitError {
    /// The code the execution ends with.
    pub fn code(&self) -> ErrorCode {
        match self {
            CommitError::Conflict { .. } => ErrorCode::StateConflict,
            CommitError::OverBudget { .. } | CommitError::TooManyKeys { .. } => {
                ErrorCode::BudgetExceeded
            }
            CommitError::Open(_)
            | CommitError::Storage(_)
            | CommitError::Mark(_)
            | CommitError::Corrupt { .. }
            | CommitError::Etcd(_)
            | CommitError::Unavailable(_) => ErrorCode::IsolateFailure,
        }
    }
}

/// A store of session state with revisions and atomic, checked commits.
pub trait StateStore: Send + Sync {
    /// Every key of `session`, tombstones included.
    fn snapshot(&self, session: &str) -> Result<Snapshot, CommitError>;

    /// Applies `changes` atomically if every changed key still has the revision it had in
    /// `base`, and the session's live bytes stay within `max_bytes`. Returns the new revision.
    fn commit(
        &self,
        session: &str,
        base: &Snapshot,
        changes: &Changes,
        max_bytes: u64,
    ) -> Result<u64, CommitError>;

    /// [`StateStore::commit`] for execution `execution`. A store that shares the journal's
    /// database marks the commit in the same transaction, so that a run killed right after it
    /// is closed saying its state change stands; others just commit.
    fn commit_for(
        &self,
        execution: &str,
        session: &str,
        base: &Snapshot,
        changes: &Changes,
        max_bytes: u64,
    ) -> Result<u64, CommitError> {
        let _ = execution;
        self.commit(session, base, changes, max_bytes)
    }

    /// Deletes `key` of `session` outside any execution (`forge-host state delete`). Returns
    /// whether it had a value.
    fn delete_now(&self, session: &str, key: &str) -> Result<bool, CommitError> {
        let base = self.snapshot(session)?;
        if base.get(key).is_none() {
            return Ok(false);
        }
        let changes = Changes::from([(key.to_string(), None)]);
        self.commit(session, &base, &changes, u64::MAX)?;
        Ok(true)
    }

    /// Where the state is kept, when it is not the data directory's journal (`etcd://...`):
    /// the journal keeps it with each run, so that a resume commits where the run started.
    fn location(&self) -> Option<String> {
        None
    }
}
