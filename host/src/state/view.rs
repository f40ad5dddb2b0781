//! The private view of one execution: its snapshot plus its own pending changes, with the
//! per-value and total budgets checked at every `set`.

use super::{Changes, Commit, Reads, Snapshot};
use crate::error::{ErrorCode, HostStop};
use crate::limits::Limits;

/// Longest state key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// Reads remembered key by key; past them, the commit compares the whole session, so that a guest
/// cannot grow the host's memory by reading many keys.
pub const MAX_REMEMBERED_READS: usize = 1024;

/// The state an execution sees.
#[derive(Debug, Clone)]
pub struct StateView {
    base: Snapshot,
    pending: Changes,
    /// Keys the guest read from `base`: the commit compares them too.
    reads: Reads,
    /// The guest read the whole session: the commit compares all of it.
    read_everything: bool,
    live_bytes: u64,
    max_bytes: u64,
    max_value_bytes: u64,
}

/// A state operation the script can recover from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFailure {
    /// `INVALID_INPUT` or `BUDGET_EXCEEDED`.
    pub code: ErrorCode,
    /// Why.
    pub message: String,
}

fn check_key(key: &str) -> Result<(), StateFailure> {
    let bad = |message: String| {
        Err(StateFailure {
            code: ErrorCode::InvalidInput,
            message,
        })
    };
    if key.is_empty() {
        return bad("state keys must not be empty".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return bad(format!(
            "state keys are at most {MAX_KEY_BYTES} bytes, this one has {}",
            key.len()
        ));
    }
    if key.chars().any(char::is_control) {
        return bad("state keys must not contain control characters".into());
    }
    Ok(())
}

impl StateView {
    /// A view over `base` under the state budgets of `limits`.
    pub fn new(base: Snapshot, limits: &Limits) -> Self {
        StateView {
            live_bytes: base.live_bytes(),
            base,
            pending: Changes::new(),
            reads: Reads::new(),
            read_everything: false,
            max_bytes: limits.max_state_bytes,
            max_value_bytes: limits.max_state_value_bytes,
        }
    }

    /// The per-value budget.
    pub fn max_value_bytes(&self) -> u64 {
        self.max_value_bytes
    }

    /// The snapshot the execution started from.
    pub fn base(&self) -> &Snapshot {
        &self.base
    }

    /// The changes to commit.
    pub fn changes(&self) -> &Changes {
        &self.pending
    }

    /// The keys the guest read from the snapshot.
    pub fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Whether the guest read the whole session: it listed the keys, or read more keys than
    /// are remembered one by one.
    pub fn read_everything(&self) -> bool {
        self.read_everything
    }

    /// What committing this view asks of the store.
    pub fn commit(&self) -> Commit<'_> {
        Commit::new(&self.base, &self.pending, self.max_bytes)
            .reading(&self.reads, self.read_everything)
    }

    /// [`StateView::get`] for the guest: a value read from the snapshot is remembered, so that
    /// the commit fails if someone changed it meanwhile.
    pub fn read(&mut self, key: &str) -> Option<&str> {
        if !self.read_everything && !self.pending.contains_key(key) && check_key(key).is_ok() {
            if self.reads.len() < MAX_REMEMBERED_READS {
                self.reads.insert(key.to_string());
            } else {
                self.read_everything = true;
                self.reads.clear();
            }
        }
        self.get(key)
    }

    /// [`StateView::keys`] for the guest: which keys exist depends on the whole session.
    pub fn list(&mut self) -> Vec<String> {
        self.read_everything = true;
        self.reads.clear();
        self.keys()
    }

    /// The value of `key` as this execution sees it.
    pub fn get(&self, key: &str) -> Option<&str> {
        match self.pending.get(key) {
            Some(change) => change.as_deref(),
            None => self.base.get(key),
        }
    }

    /// Every live key, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .base
            .entries
            .keys()
            .chain(self.pending.keys())
            .filter(|k| self.get(k).is_some())
            .cloned()
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// Sets `key` to `value` as the guest sent it: a value within budget that is not JSON
    /// breaks the contract and stops the run; budget and key failures are the script's to
    /// handle.
    pub fn set_json(
        &mut self,
        key: &str,
        value: &str,
    ) -> Result<Result<(), StateFailure>, HostStop> {
        // The size check comes first: never parse what is over budget anyway.
        if value.len() as u64 <= self.max_value_bytes
            && let Err(error) = crate::json::parse_as::<serde::de::IgnoredAny>(value)
        {
            if error.is_script_error() {
                return Ok(Err(StateFailure {
                    code: ErrorCode::InvalidInput,
                    message: format!("the value for state key `{key}` cannot be kept: {error}"),
                }));
            }
            return Err(HostStop::ProtocolViolation(format!(
                "the value set for state key `{key}` is not JSON"
            )));
        }
        Ok(self.set(key, value))
    }

    /// Sets `key` to the JSON text `value` (already checked to be JSON by the caller).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), StateFailure> {
        check_key(key)?;
        if value.len() as u64 > self.max_value_bytes {
            return Err(StateFailure {
                code: ErrorCode::BudgetExceeded,
                message: format!(
                    "the value of `{key}` is {} bytes, over the per-value budget of {} bytes",
                    value.len(),
                    self.max_value_bytes
                ),
            });
        }
        let old = self.get(key).map_or(0, |v| (key.len() + v.len()) as u64);
        let total = self.live_bytes - old + (key.len() + value.len()) as u64;
        if total > self.max_bytes {
            return Err(StateFailure {
                code: ErrorCode::BudgetExceeded,
                message: format!(
                    "setting `{key}` would make the state {total} bytes, over the budget of {} bytes",
                    self.max_bytes
                ),
            });
        }
        self.live_bytes = total;
        self.pending
            .insert(key.to_string(), Some(value.to_string()));
        Ok(())
    }

    /// Deletes `key`; deleting a missing key is not an error.
    pub fn delete(&mut self, key: &str) -> Result<(), StateFailure> {
        check_key(key)?;
        if let Some(old) = self.get(key) {
            self.live_bytes -= (key.len() + old.len()) as u64;
            self.pending.insert(key.to_string(), None);
        } else if self.base.get(key).is_some() {
            self.pending.insert(key.to_string(), None);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Entry;
    use super::*;

    fn snapshot(pairs: &[(&str, &str)]) -> Snapshot {
        let mut s = Snapshot::default();
        for (k, v) in pairs {
            s.entries.insert(
                k.to_string(),
                Entry {
                    value: Some(v.to_string()),
                    revision: 1,
                },
            );
        }
        s
    }

    #[test]
    fn the_guests_reads_of_the_snapshot_are_what_the_commit_compares() {
        let mut view = StateView::new(snapshot(&[("a", "1")]), &Limits::default());
        view.set("b", "2").expect("set");
        assert_eq!(view.read("a"), Some("1"));
        assert_eq!(view.read("b"), Some("2"), "its own write");
        assert_eq!(view.read("absent"), None);
        assert_eq!(view.read(&"k".repeat(MAX_KEY_BYTES + 1)), None);
        assert_eq!(view.get("c"), None, "the host's own look is no read");
        let reads: Vec<&str> = view.commit().checked_keys().collect();
        assert_eq!(reads, ["a", "absent", "b"]);
        assert!(!view.commit().reads_everything);

        view.list();
        assert!(
            view.commit().reads_everything,
            "a listing reads the whole session"
        );

        let mut many = StateView::new(Snapshot::default(), &Limits::default());
        for i in 0..MAX_REMEMBERED_READS {
            many.read(&format!("k{i}"));
        }
        assert!(!many.read_everything());
        many.read("one-more");
        assert!(many.read_everything() && many.reads().is_empty());
    }

    #[test]
    fn reads_see_pending_changes_over_the_snapshot() {
        let mut view = StateView::new(snapshot(&[("a", "1"), ("b", "2")]), &Limits::default());
        view.set("c", "3").expect("set");
        view.delete("a").expect("delete");
        assert_eq!(view.get("a"), None);
        assert_eq!(view.get("b"), Some("2"));
        assert_eq!(view.keys(), ["b", "c"]);
        assert_eq!(view.changes().get("a"), Some(&None));
        assert_eq!(
            view.base().get("a"),
            Some("1"),
            "the snapshot itself never changes"
        );
    }

    #[test]
    fn budgets_and_keys_are_checked_at_set() {
        let limits = Limits {
            max_state_bytes: 20,
            max_state_value_bytes: 10,
            ..Limits::default()
        };
        let mut view = StateView::new(Snapshot::default(), &limits);
        assert_eq!(
            view.set("k", "12345678901").map_err(|e| e.code),
            Err(ErrorCode::BudgetExceeded)
        );
        view.set("a", "123456789").expect("10 bytes");
        view.set("b", "123456789").expect("20 bytes");
        assert_eq!(
            view.set("c", "1").map_err(|e| e.code),
            Err(ErrorCode::BudgetExceeded)
        );
        view.set("a", "1").expect("shrinking frees room");
        view.set("c", "1").expect("now it fits");
        assert_eq!(
            view.set("", "1").map_err(|e| e.code),
            Err(ErrorCode::InvalidInput)
        );
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        assert_eq!(
            view.set(&long, "1").map_err(|e| e.code),
            Err(ErrorCode::InvalidInput)
        );
    }
}
