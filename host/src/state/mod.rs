//! State shared by the executions of one session: small JSON values with a revision per
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

use std::collections::{BTreeMap, BTreeSet};

pub use etcd::{EtcdAccess, EtcdConfigError, EtcdLocation, EtcdStateStore};
pub use redb_store::RedbStateStore;
pub use view::{MAX_KEY_BYTES, MAX_REMEMBERED_READS, StateFailure, StateView};

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

/// Keys an execution read from its snapshot.
pub type Reads = BTreeSet<String>;

/// No reads: for commits made outside any execution.
pub static NO_READS: Reads = BTreeSet::new();

/// What a commit asks of a store: apply `changes` if every key in `reads` or `changes` (or, with
/// `reads_everything`, every key of the session) still has the revision it had in `base` (a key
/// absent from `base` must still be absent), and the session's live bytes stay within
/// `max_bytes`. Comparing the reads too makes a run that
/// decided its writes from a value someone changed meanwhile conflict instead of committing.
#[derive(Debug, Clone, Copy)]
pub struct Commit<'a> {
    /// The snapshot the execution started from.
    pub base: &'a Snapshot,
    /// What it set and deleted.
    pub changes: &'a Changes,
    /// What it read.
    pub reads: &'a Reads,
    /// It read the whole session (listed its keys, or read too many to name): nothing in the
    /// session may have changed since `base`.
    pub reads_everything: bool,
    /// The session's byte budget.
    pub max_bytes: u64,
}

impl<'a> Commit<'a> {
    /// A commit of `changes` against `base` that read nothing else.
    pub fn new(base: &'a Snapshot, changes: &'a Changes, max_bytes: u64) -> Self {
        Commit {
            base,
            changes,
            reads: &NO_READS,
            reads_everything: false,
            max_bytes,
        }
    }

    /// The same commit, having read `reads`, or everything.
    pub fn reading(self, reads: &'a Reads, everything: bool) -> Self {
        Commit {
            reads,
            reads_everything: everything,
            ..self
        }
    }

    /// Every key whose revision the commit compares, sorted, each once.
    pub fn checked_keys(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        let mut keys: Vec<&'a str> = self
            .reads
            .iter()
            .chain(self.changes.keys())
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys.into_iter()
    }

    /// The revision `key` had in the snapshot (`None`: it did not exist).
    pub fn base_revision(&self, key: &str) -> Option<u64> {
        self.base.entries.get(key).map(|entry| entry.revision)
    }
}

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
            CommitError::Etcd(error) => error.code(),
            CommitError::Open(_)
            | CommitError::Storage(_)
            | CommitError::Mark(_)
            | CommitError::Corrupt { .. }
            | CommitError::Unavailable(_) => ErrorCode::IsolateFailure,
        }
    }
}

/// A store of session state with revisions and atomic, checked commits.
pub trait StateStore: Send + Sync {
    /// Every key of `session`, tombstones included.
    fn snapshot(&self, session: &str) -> Result<Snapshot, CommitError>;

    /// Applies `commit` atomically, as [`Commit`] says. Returns the new revision.
    fn commit(&self, session: &str, commit: &Commit<'_>) -> Result<u64, CommitError>;

    /// [`StateStore::commit`] for execution `execution`. A store that shares the journal's
    /// database marks the commit in the same transaction, so that a run killed right after it
    /// is closed saying its state change stands; others just commit.
    fn commit_for(
        &self,
        execution: &str,
        session: &str,
        commit: &Commit<'_>,
    ) -> Result<u64, CommitError> {
        let _ = execution;
        self.commit(session, commit)
    }

    /// Deletes `key` of `session` outside any execution (`forge-host state delete`). Returns
    /// whether it had a value.
    fn delete_now(&self, session: &str, key: &str) -> Result<bool, CommitError> {
        let base = self.snapshot(session)?;
        if base.get(key).is_none() {
            return Ok(false);
        }
        let changes = Changes::from([(key.to_string(), None)]);
        self.commit(session, &Commit::new(&base, &changes, u64::MAX))?;
        Ok(true)
    }

    /// Where the state is kept, when it is not the data directory's journal (`etcd://...`):
    /// the journal keeps it with each run, so that a resume commits where the run started.
    fn location(&self) -> Option<String> {
        None
    }
}
