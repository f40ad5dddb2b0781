//! Tools that exist only while the kit runs, for behaviour no built-in tool can provoke: a state
//! change committed by "another execution" in the middle of a run, and calls that can only finish
//! together, which an engine that runs calls one by one never gets past.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::state::{Changes, Commit, StateStore};
use crate::tools::{Effect, Tool, ToolError, ToolFuture, ToolInfo, ToolRegistry};

/// The built-in tools plus the kit's, over `state`.
pub fn registry(state: Arc<dyn StateStore>) -> ToolRegistry {
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(CommitElsewhere::new(state)));
    tools.register(Arc::new(Rendezvous::new()));
    tools
}

fn info(name: &str, description: &str, input_schema: Value) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        description: description.into(),
        input_schema,
        effect: Effect::Internal,
    }
}

/// `commit_elsewhere {session, key, value}`: commits `key = value` to `session` at once, as a
/// concurrent execution would, so that the calling run's own change of `key` conflicts.
struct CommitElsewhere {
    info: ToolInfo,
    state: Arc<dyn StateStore>,
}

impl CommitElsewhere {
    fn new(state: Arc<dyn StateStore>) -> Self {
        CommitElsewhere {
            info: info(
                "commit_elsewhere",
                "Commits {key: value} to session `session` now, as another execution would.",
                json!({"type": "object", "required": ["session", "key", "value"]}),
            ),
            state,
        }
    }
}

impl Tool for CommitElsewhere {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn call(&self, input: Value) -> ToolFuture {
        let state = self.state.clone();
        Box::pin(async move {
            let (Some(session), Some(key), Some(value)) = (
                input["session"].as_str(),
                input["key"].as_str(),
                input.get("value"),
            ) else {
                return Err(ToolError::failed("needs {session, key, value}"));
            };
            let base = state
                .snapshot(session)
                .map_err(|e| ToolError::failed(e.to_string()))?;
            let changes: Changes = BTreeMap::from([(key.to_string(), Some(value.to_string()))]);
            let revision = state
                .commit(session, &Commit::new(&base, &changes, u64::MAX))
                .map_err(|e| ToolError::failed(e.to_string()))?;
            Ok(json!({"revision": revision}))
        })
    }
}

/// `rendezvous {group, parties}`: returns `{arrived: n}` (1 for the first caller) once `parties`
/// calls of `group` are waiting at the same time.
struct Rendezvous {
    info: ToolInfo,
    groups: Arc<Mutex<HashMap<String, tokio::sync::watch::Sender<u64>>>>,
}

impl Rendezvous {
    fn new() -> Self {
        Rendezvous {
            info: info(
                "rendezvous",
                "Returns {arrived: n} once `parties` calls of `group` are waiting together.",
                json!({"type": "object", "required": ["group", "parties"]}),
            ),
            groups: Arc::default(),
        }
    }
}

impl Tool for Rendezvous {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn call(&self, input: Value) -> ToolFuture {
        let groups = self.groups.clone();
        Box::pin(async move {
            let (Some(group), Some(parties)) = (input["group"].as_str(), input["parties"].as_u64())
            else {
                return Err(ToolError::failed("needs {group, parties}"));
            };
            let (arrived, mut receiver) = {
                let mut groups = groups
                    .lock()
                    .map_err(|_| ToolError::failed("rendezvous: poisoned"))?;
                let sender = groups
                    .entry(group.to_string())
                    .or_insert_with(|| tokio::sync::watch::channel(0).0);
                sender.send_modify(|count| *count += 1);
                let arrived = *sender.borrow();
                let receiver = sender.subscribe();
                if arrived >= parties {
                    // Everyone is here: the next calls of this group meet afresh.
                    groups.remove(group);
                }
                (arrived, receiver)
            };
            // The sender may be gone once the group is complete; its last value still counts.
            let _ = receiver.wait_for(|count| *count >= parties).await;
            Ok(json!({"arrived": arrived}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rendezvous_returns_only_when_every_party_is_waiting() {
        let tool = Rendezvous::new();
        let first = tool.call(json!({"group": "g", "parties": 2}));
        let first = tokio::spawn(first);
        tokio::task::yield_now().await;
        assert!(!first.is_finished());
        let second = tool.call(json!({"group": "g", "parties": 2})).await;
        assert_eq!(second, Ok(json!({"arrived": 2})));
        assert_eq!(first.await.expect("join"), Ok(json!({"arrived": 1})));
    }
}
