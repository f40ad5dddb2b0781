//! The nested calls of one execution: the checks before a call starts (budget, size, JSON,
//! catalog, policy), concurrent running under `max_concurrency`, and the record of every call.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::call_log::CallLog;
use super::wait_note::WaitNote;
use super::{Tool, ToolError, ToolRegistry};
use crate::error::{ErrorCode, HostStop};
use crate::journal::{CallRecord, CallStatus, PendingApproval};
use crate::limits::Limits;
use crate::permissions::{Approval, Asker, Decision, Effect, Policy, Question};
use crate::primitives::{sha256_hex, truncate_at};
use crate::tape::Deck;

/// A finished call, as handed back to the guest.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The id `begin` returned.
    pub id: u64,
    /// The response JSON text, or why the call failed.
    pub outcome: Result<String, ToolError>,
}

struct Finished {
    id: u64,
    outcome: Result<String, ToolError>,
    duration: Duration,
    /// A decision made while the call ran (a person's answer under `--ask`).
    decision: Option<String>,
}

type CallFuture = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// Resolves once the execution's `running` record is durable in the journal, or with the code
/// and the reason it could not be written (`HOST_DISK_FULL` when the host's disk is full).
pub type RecordDurable =
    futures::future::Shared<futures::future::BoxFuture<'static, Result<(), (ErrorCode, Arc<str>)>>>;

/// The nested calls of one execution.
pub struct ToolCalls {
    pub(super) registry: Arc<ToolRegistry>,
    policy: Policy,
    pub(super) max_calls: u32,
    max_input_bytes: u64,
    max_response_bytes: u64,
    tool_timeout: Option<Duration>,
    permits: Arc<Semaphore>,
    /// Puts calls the policy would deny to a person (`--ask`), one question at a time.
    asker: Option<(Asker, Arc<tokio::sync::Mutex<()>>)>,
    /// What a call that can change the world outside waits for (see [`ToolCalls::hold_effects_until`]).
    record_durable: Option<RecordDurable>,
    running: JoinSet<Finished>,
    /// The call each running task serves, so that a task that panics is blamed on its own call.
    tasks: HashMap<tokio::task::Id, u64>,
    /// Calls that finished while the guest waited for another one (blocking `call`).
    ready: VecDeque<Completion>,
    /// Shared with the kernel so that the record survives a stop (timeout, cancellation).
    pub(super) records: CallLog,
    /// Records what the calls answered, or answers from a tape instead of running tools.
    pub(super) deck: Deck,
    /// What the guest waits for during a `wait-for`, for a deadline's message.
    pub(super) waiting: WaitNote,
    /// A person's answer to the call a paused run stopped at (`resume`).
    pub(super) approval: Option<Approval>,
    /// The call this run paused at, waiting for approval.
    pub(super) pending: Option<PendingApproval>,
}

/// Longest tool name quoted back in an error message, in bytes.
const MAX_QUOTED_NAME_BYTES: usize = 200;

impl ToolCalls {
    /// The calls of an execution with `limits` and `policy` over `registry`.
    pub fn new(registry: Arc<ToolRegistry>, policy: Policy, limits: &Limits) -> Self {
        ToolCalls {
            registry,
            policy,
            max_calls: limits.max_tool_calls,
            max_input_bytes: limits.max_call_input_bytes,
            max_response_bytes: limits.max_call_response_bytes,
            tool_timeout: limits.tool_timeout_ms.map(Duration::from_millis),
            permits: Arc::new(Semaphore::new(limits.max_concurrency as usize)),
            asker: None,
            record_durable: None,
            running: JoinSet::new(),
            tasks: HashMap::new(),
            ready: VecDeque::new(),
            records: CallLog::default(),
            deck: Deck::Off,
            waiting: WaitNote::default(),
            approval: None,
            pending: None,
        }
    }

    /// Calls the policy would deny are put to `asker` when the policy says `--ask`.
    pub fn with_asker(mut self, asker: Option<Asker>) -> Self {
        self.asker = asker.map(|asker| (asker, Arc::default()));
        self
    }

    /// Calls with a `write`, `process` or `external` effect wait, before the tool runs, until
    /// `durable` resolves: the execution's `running` record is then in the journal, so crash
    /// reconciliation knows of every execution that could have changed something outside.
    /// Other calls run at once. A record that cannot be written fails such calls.
    pub fn hold_effects_until(&mut self, durable: RecordDurable) {
        self.record_durable = Some(durable);
    }

    /// The registry the catalog reads.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Calls begun so far (denied ones included).
    pub fn count(&self) -> u32 {
        u32::try_from(self.records.len()).unwrap_or(u32::MAX)
    }

    /// The shared record of every call.
    pub fn log(&self) -> CallLog {
        self.records.clone()
    }

    /// What the guest waits for while it sleeps in `wait-for`, shared with the kernel.
    pub fn wait_note(&self) -> WaitNote {
        self.waiting.clone()
    }

    /// Starts a call, live. `Err` ends the execution (budget spent, contract broken); `Ok(Err)`
    /// is a failure the script sees and may handle.
    pub(super) fn begin_live(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<u64, ToolError>, HostStop> {
        let (tool, parsed) = match self.admit(name, input)? {
            Ok(admitted) => admitted,
            Err(error) => return Ok(Err(error)),
        };
        let effect = tool.info().effect;
        let position = self.count() + 1;
        let mut record = CallRecord {
            position,
            tool: name.to_string(),
            effect,
            input_sha256: sha256_hex(input.as_bytes()),
            status: CallStatus::Started,
            error_code: None,
            duration_ms: None,
            paths: if effect == Effect::Write {
                tool.paths(&parsed)
            } else {
                Vec::new()
            },
            decision: None,
        };
        let decision = self.policy.decide(name, effect);
        let question = match decision {
            Decision::Allow(reason) => {
                record.decision = Some(reason);
                None
            }
            Decision::Ask(reason) if self.asker.is_some() => {
                record.decision = Some(format!("asked, because {reason}"));
                Some(Question {
                    tool: name.to_string(),
                    effect,
                    reason,
                    input: parsed.clone(),
                })
            }
            // Nobody to ask now: the run pauses here, unless a person already answered.
            Decision::Ask(reason) => {
                let sha256 = sha256_hex(input.as_bytes());
                let answered = self
                    .approval
                    .take_if(|a| a.tool == name && a.input_sha256 == sha256);
                match answered {
                    Some(approval) if approval.approve => {
                        record.decision = Some(format!(
                            "approved by a person (resume --approve), because {reason}"
                        ));
                        None
                    }
                    Some(_) => {
                        return Ok(Err(self.deny(
                            record,
                            name,
                            "a person denied it (resume --deny)".to_string(),
                        )));
                    }
                    None => {
                        self.pending = Some(PendingApproval {
                            tool: name.to_string(),
                            effect,
                            input: parsed,
                            input_sha256: sha256,
                            reason: reason.clone(),
                        });
                        return Err(HostStop::ApprovalRequired {
                            tool: name.to_string(),
                            effect: effect.as_str(),
                            reason,
                        });
                    }
                }
            }
            Decision::Deny(reason) => return Ok(Err(self.deny(record, name, reason))),
        };
        self.records.push(record);
        let id = u64::from(position);
        self.start(id, tool, parsed, question);
        Ok(Ok(id))
    }

    /// Records a denied call; it never runs.
    fn deny(&mut self, mut record: CallRecord, name: &str, reason: String) -> ToolError {
        record.status = CallStatus::Denied;
        record.error_code = Some(ErrorCode::ToolDenied);
        record.duration_ms = Some(0);
        record.decision = Some(reason.clone());
        self.records.push(record);
        ToolError {
            code: ErrorCode::ToolDenied,
            message: format!("`{name}`: {reason}"),
        }
    }

    /// The checks before a call is recorded: the budget and a well-formed input end the
    /// execution; an input over its budget or an unknown tool is the script's to handle.
    #[expect(clippy::type_complexity, reason = "the two error channels of `begin`")]
    fn admit(
        &self,
        name: &str,
        input: &str,
    ) -> Result<Result<(Arc<dyn Tool>, Value), ToolError>, HostStop> {
        if self.count() >= self.max_calls {
            return Err(HostStop::ToolBudget {
                max: self.max_calls,
            });
        }
        if input.len() as u64 > self.max_input_bytes {
            return Ok(Err(ToolError {
                code: ErrorCode::BudgetExceeded,
                message: format!(
                    "the input of `{name}` is {} bytes, over the budget of {} bytes",
                    input.len(),
                    self.max_input_bytes
                ),
            }));
        }
        let parsed: Value = match crate::json::parse(input) {
            Ok(parsed) => parsed,
            Err(error) if error.is_script_error() => {
                return Ok(Err(ToolError::invalid_input(format!(
                    "the input of `{}` cannot be sent: {error}",
                    truncate_at(name, MAX_QUOTED_NAME_BYTES)
                ))));
            }
            Err(error) => {
                return Err(HostStop::ProtocolViolation(format!(
                    "the input of a call to `{name}` is not JSON: {error}"
                )));
            }
        };
        match self.registry.get(name) {
            Some(tool) => Ok(Ok((tool.clone(), parsed))),
            None => Ok(Err(ToolError {
                code: ErrorCode::ToolNotFound,
                message: format!(
                    "no tool is called `{}`",
                    truncate_at(name, MAX_QUOTED_NAME_BYTES)
                ),
            })),
        }
    }

    /// Runs call `id`. A call that is done at its first poll (echo, a cached answer) finishes
    /// here, without a hop through another task; anything that waits runs on its own task.
    fn start(&mut self, id: u64, tool: Arc<dyn Tool>, input: Value, question: Option<Question>) {
        let mut call = self.call_future(id, tool, input, question);
        let waker = futures::task::noop_waker();
        let first_poll = std::panic::catch_unwind(AssertUnwindSafe(|| {
            call.as_mut().poll(&mut Context::from_waker(&waker))
        }));
        match first_poll {
            Ok(Poll::Ready(finished)) => {
                let done = self.complete(finished);
                self.ready.push_back(done);
            }
            Ok(Poll::Pending) => {
                let task = self.running.spawn(call).id();
                self.tasks.insert(task, id);
            }
            Err(_) => {
                let done = self.complete(crashed(id, "it panicked"));
                self.ready.push_back(done);
            }
        }
    }

    /// The future of one call: it asks a person first when it must, waits for a permit, runs the
    /// tool and meters its response.
    fn call_future(
        &self,
        id: u64,
        tool: Arc<dyn Tool>,
        input: Value,
        question: Option<Question>,
    ) -> CallFuture {
        let asker = question.and_then(|q| self.asker.clone().map(|(asker, turn)| (asker, turn, q)));
        // A free permit is taken now; otherwise the call waits for one in the task, and the
        // semaphore's fairness starts queued calls in the order they were begun.
        let permit = self.permits.clone().try_acquire_owned().ok();
        let permits = self.permits.clone();
        let max_response = self.max_response_bytes;
        let tool_timeout = self.tool_timeout;
        let record_durable = match tool.info().effect {
            Effect::Write | Effect::Process | Effect::External => self.record_durable.clone(),
            Effect::Read | Effect::Internal => None,
        };
        Box::pin(async move {
            let begun = Instant::now();
            let mut decision = None;
            if let Some((asker, turn, question)) = asker {
                let _turn = turn.lock().await;
                let tool_name = question.tool.clone();
                let yes = tokio::task::spawn_blocking(move || asker(&question))
                    .await
                    .unwrap_or(false);
                if !yes {
                    return Finished {
                        id,
                        outcome: Err(ToolError {
                            code: ErrorCode::ToolDenied,
                            message: format!("`{tool_name}`: the person asked (--ask) said no"),
                        }),
                        duration: begun.elapsed(),
                        decision: Some("asked: a person said no".into()),
                    };
                }
                decision = Some("asked: a person said yes".to_string());
            }
            let _permit = match permit {
                Some(permit) => Some(permit),
                None => permits.acquire_owned().await.ok(),
            };
            let name = tool.info().name.clone();
            if let Some(Err((code, why))) = match record_durable {
                Some(durable) => Some(durable.await),
                None => None,
            } {
                return Finished {
                    id,
                    outcome: Err(ToolError {
                        code,
                        message: format!(
                            "`{name}` did not run: the execution's journal record could not be written: {why}"
                        ),
                    }),
                    duration: begun.elapsed(),
                    decision,
                };
            }
            let called = tool.call(input);
            let answered = match tool_timeout {
                // Dropping the call's future cancels it (an MCP server is told so).
                Some(limit) => tokio::time::timeout(limit, called)
                    .await
                    .unwrap_or_else(|_| {
                        Err(ToolError::failed(format!(
                            "`{name}` took longer than --tool-timeout {}; it was cancelled",
                            crate::limits::format_duration(limit)
                        )))
                    }),
                None => called.await,
            };
            let outcome = answered.and_then(|value| {
                let text = value.to_string();
                if text.len() as u64 > max_response {
                    return Err(ToolError {
                        code: ErrorCode::BudgetExceeded,
                        message: format!(
                            "the response of `{name}` is {} bytes, over the budget of {max_response} bytes",
                            text.len()
                        ),
                    });
                }
                Ok(text)
            });
            Finished {
                id,
                outcome,
                duration: begun.elapsed(),
                decision,
            }
        })
    }

    /// The next task to end, as the call it served.
    async fn join_next(&mut self) -> Option<Finished> {
        let (task, finished) = match self.running.join_next_with_id().await? {
            Ok((task, finished)) => (task, Some(finished)),
            Err(error) => (error.id(), None),
        };
        let id = self.tasks.remove(&task)?;
        // A task ends without its result only when its tool panicked (tasks are never aborted
        // while the execution runs): that call, and only it, failed.
        Some(finished.unwrap_or_else(|| crashed(id, "it panicked")))
    }

    /// Waits for the next call to finish, live; `None` when nothing is in flight.
    pub(super) async fn wait_any_live(&mut self) -> Option<Completion> {
        if let Some(done) = self.ready.pop_front() {
            return Some(done);
        }
        let finished = self.join_next().await?;
        Some(self.complete(finished))
    }

    /// Waits, live, for the next call to finish or for `time` to pass (`None`).
    pub(super) async fn wait_for_live(&mut self, time: Duration) -> Option<Completion> {
        if let Some(done) = self.ready.pop_front() {
            return Some(done);
        }
        if self.running.is_empty() {
            tokio::time::sleep(time).await;
            return None;
        }
        tokio::select! {
            finished = self.join_next() => finished.map(|finished| self.complete(finished)),
            () = tokio::time::sleep(time) => None,
        }
    }

    /// Begins a call and waits for it, live, keeping other calls that finish meanwhile for
    /// `wait_any`. Returns the call's id too (`None` when it never began).
    pub(super) async fn call_live(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<(Option<u64>, Result<String, ToolError>), HostStop> {
        let id = match self.begin_live(name, input)? {
            Ok(id) => id,
            Err(error) => return Ok((None, Err(error))),
        };
        loop {
            if let Some(index) = self.ready.iter().position(|c| c.id == id) {
                let done = self.ready.remove(index).map(|c| c.outcome);
                let lost = || Err(ToolError::failed("the call was lost"));
                return Ok((Some(id), done.unwrap_or_else(lost)));
            }
            match self.join_next().await {
                Some(finished) => {
                    let done = self.complete(finished);
                    self.ready.push_back(done);
                }
                None => {
                    return Ok((Some(id), Err(ToolError::failed("the call was lost"))));
                }
            }
        }
    }

    fn complete(&mut self, finished: Finished) -> Completion {
        let error_code = finished.outcome.as_ref().err().map(|e| e.code);
        let duration_ms = finished.duration.as_millis().try_into().unwrap_or(u64::MAX);
        let decision = finished.decision;
        self.records.update(finished.id, |record| {
            record.duration_ms = Some(duration_ms);
            record.status = match error_code {
                None => CallStatus::Succeeded,
                Some(ErrorCode::ToolDenied) => CallStatus::Denied,
                Some(_) => CallStatus::Failed,
            };
            record.error_code = error_code;
            if decision.is_some() {
                record.decision = decision;
            }
        });
        Completion {
            id: finished.id,
            outcome: finished.outcome,
        }
    }
}

/// Call `id` failed because its tool crashed.
fn crashed(id: u64, why: &str) -> Finished {
    Finished {
        id,
        outcome: Err(ToolError::failed(format!("the tool crashed: {why}"))),
        duration: Duration::ZERO,
        decision: None,
    }
}

#[cfg(test)]
#[path = "dispatch_test.rs"]
mod tests;
