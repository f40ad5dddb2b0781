//! A model test of the state store (proptest): random interleavings of two sessions' snapshots,
//! sets, deletes and commits run against [`RedbStateStore`] and against a plain in-memory model
//! of what a commit does. They must agree on every value, every revision and every
//! `STATE_CONFLICT` and budget refusal.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{Changes, Commit, CommitError, Entry, Reads, RedbStateStore, Snapshot, StateStore};
use crate::datadir::DataDir;

const SESSIONS: [&str; 2] = ["a", "b"];
const KEYS: [&str; 3] = ["x", "y", "z"];
/// The budget of every commit: small, so that some commits go over it.
const BUDGET: u64 = 24;

#[derive(Debug, Clone)]
enum Op {
    /// Execution `slot` takes a snapshot of session `session` (its pending changes are dropped).
    Begin { slot: usize, session: usize },
    /// Execution `slot` sets `key` (a value of `len` bytes) or deletes it.
    Change {
        slot: usize,
        key: usize,
        len: Option<usize>,
    },
    /// Execution `slot` reads `key`: its commit compares it too.
    Read { slot: usize, key: usize },
    /// Execution `slot` commits.
    Commit { slot: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3usize, 0..2usize).prop_map(|(slot, session)| Op::Begin { slot, session }),
        (0..3usize, 0..3usize, proptest::option::of(1..12usize))
            .prop_map(|(slot, key, len)| Op::Change { slot, key, len }),
        (0..3usize, 0..3usize).prop_map(|(slot, key)| Op::Read { slot, key }),
        (0..3usize).prop_map(|slot| Op::Commit { slot }),
    ]
}

/// What a commit came to, comparable between the store and the model.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Committed(u64),
    Conflict(String),
    OverBudget(u64),
}

/// The model: every session's entries, and the store-wide revision.
#[derive(Default)]
struct Model {
    sessions: BTreeMap<String, BTreeMap<String, Entry>>,
    revision: u64,
}

impl Model {
    fn snapshot(&self, session: &str) -> Snapshot {
        Snapshot {
            entries: self.sessions.get(session).cloned().unwrap_or_default(),
        }
    }

    fn commit(
        &mut self,
        session: &str,
        base: &Snapshot,
        changes: &Changes,
        reads: &Reads,
    ) -> Outcome {
        let entries = self.sessions.entry(session.to_string()).or_default();
        let compared: std::collections::BTreeSet<&String> =
            changes.keys().chain(reads.iter()).collect();
        for key in compared {
            let now = entries.get(key).map(|e| e.revision);
            if now != base.entries.get(key).map(|e| e.revision) {
                return Outcome::Conflict(key.clone());
            }
        }
        let kept: u64 = entries
            .iter()
            .filter(|(k, _)| !changes.contains_key(*k))
            .filter_map(|(k, e)| e.value.as_ref().map(|v| (k.len() + v.len()) as u64))
            .sum();
        let added: u64 = changes
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.len() + v.len()) as u64))
            .sum();
        if kept + added > BUDGET {
            return Outcome::OverBudget(kept + added);
        }
        self.revision += 1;
        for (key, value) in changes {
            entries.insert(
                key.clone(),
                Entry {
                    value: value.clone(),
                    revision: self.revision,
                },
            );
        }
        Outcome::Committed(self.revision)
    }
}

fn outcome(result: Result<u64, CommitError>) -> Outcome {
    match result {
        Ok(revision) => Outcome::Committed(revision),
        Err(CommitError::Conflict { key }) => Outcome::Conflict(key),
        Err(CommitError::OverBudget { total, .. }) => Outcome::OverBudget(total),
        Err(other) => panic!("the store failed: {other}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_store_agrees_with_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = RedbStateStore::new(DataDir::new(dir.path()));
        let mut model = Model::default();
        // Per slot: its session, its snapshot, its pending changes, its reads.
        let mut slots: Vec<Option<(String, Snapshot, Changes, Reads)>> = vec![None, None, None];
        for op in ops {
            match op {
                Op::Begin { slot, session } => {
                    let session = SESSIONS[session];
                    let stored = store.snapshot(session).expect("snapshot");
                    prop_assert_eq!(&stored, &model.snapshot(session));
                    slots[slot] = Some((session.to_string(), stored, Changes::new(), Reads::new()));
                }
                Op::Change { slot, key, len } => {
                    if let Some((_, _, changes, _)) = slots[slot].as_mut() {
                        let value = len.map(|n| format!("\"{}\"", "v".repeat(n.saturating_sub(2))));
                        changes.insert(KEYS[key].to_string(), value);
                    }
                }
                Op::Read { slot, key } => {
                    if let Some((_, _, changes, reads)) = slots[slot].as_mut()
                        && !changes.contains_key(KEYS[key])
                    {
                        reads.insert(KEYS[key].to_string());
                    }
                }
                Op::Commit { slot } => {
                    let Some((session, base, changes, reads)) = slots[slot].take() else {
                        continue;
                    };
                    if changes.is_empty() {
                        continue;
                    }
                    let commit = Commit::new(&base, &changes, BUDGET).reading(&reads, false);
                    let stored = outcome(store.commit(&session, &commit));
                    let expected = model.commit(&session, &base, &changes, &reads);
                    prop_assert_eq!(stored, expected);
                }
            }
        }
        for session in SESSIONS {
            prop_assert_eq!(store.snapshot(session).expect("snapshot"), model.snapshot(session));
        }
    }
}
