//! The private view of one execution: its snapshot plus its own pending changes, with the
//! per-value and total budgets checked at every `set`.

use super::{Changes, Snapshot};
use crate::error::{ErrorCode, HostStop};
use crate::limits::Limits;

/// Longest state key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// The state an execution sees.
#[derive(Debug, Clone)]
pub struct StateView {
    base: Snapshot,
    pending: Changes,
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
