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
use super::{Tool, ToolError, ToolRegistry};
use crate::error::{ErrorCode, HostStop};
use crate::journal::{CallRecord, CallStatus};
use crate::limits::Limits;
use crate::permissions::{Asker, Decision, Effect, Policy, Question};
use crate::primitives::{sha256_hex, truncate_at};

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

/// Resolves once the execution's `running` record is durable in the journal, or with why it
/// could not be written.
pub type RecordDurable =
    futures::future::Shared<futures::future::BoxFuture<'static, Result<(), Arc<str>>>>;

/// The nested calls of one execution.
pub struct ToolCalls {
    registry: Arc<ToolRegistry>,
    policy: Policy,
    max_calls: u32,
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
    records: CallLog,
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

    /// Starts a call. `Err` ends the execution (budget spent, contract broken); `Ok(Err)` is a
    /// failure the script sees and may handle.
    pub fn begin(&mut self, name: &str, input: &str) -> Result<Result<u64, ToolError>, HostStop> {
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
            Decision::Ask(reason) => {
                return Ok(Err(self.deny(
                    record,
                    name,
                    format!("{reason}; --ask has no terminal to ask on"),
                )));
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
            if let Some(Err(why)) = match record_durable {
                Some(durable) => Some(durable.await),
                None => None,
            } {
                return Finished {
                    id,
                    outcome: Err(ToolError {
                        code: ErrorCode::IsolateFailure,
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

    /// Waits for the next call to finish; `None` when nothing is in flight.
    pub async fn wait_any(&mut self) -> Option<Completion> {
        if let Some(done) = self.ready.pop_front() {
            return Some(done);
        }
        let finished = self.join_next().await?;
        Some(self.complete(finished))
    }

    /// Begins a call and waits for it, keeping other calls that finish meanwhile for `wait_any`.
    pub async fn call(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<String, ToolError>, HostStop> {
        let id = match self.begin(name, input)? {
            Ok(id) => id,
            Err(error) => return Ok(Err(error)),
        };
        loop {
            if let Some(index) = self.ready.iter().position(|c| c.id == id) {
                let done = self.ready.remove(index).map(|c| c.outcome);
                return Ok(done.unwrap_or_else(|| Err(ToolError::failed("the call was lost"))));
            }
            match self.join_next().await {
                Some(finished) => {
                    let done = self.complete(finished);
                    self.ready.push_back(done);
                }
                None => return Ok(Err(ToolError::failed("the call was lost"))),
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
mod tests {
    use super::*;

    fn calls(limits: Limits) -> ToolCalls {
        ToolCalls::new(
            Arc::new(ToolRegistry::with_builtins()),
            Policy::default(),
            &limits,
        )
    }

    #[tokio::test]
    async fn calls_complete_and_are_recorded_with_a_hash_of_their_input() {
        let mut calls = calls(Limits::default());
        let id = calls
            .begin("echo", r#"{"x":1}"#)
            .expect("no stop")
            .expect("begun");
        let done = calls.wait_any().await.expect("one completion");
        assert_eq!(
            done,
            Completion {
                id,
                outcome: Ok(r#"{"x":1}"#.into())
            }
        );
        assert!(calls.wait_any().await.is_none(), "nothing left in flight");
        let record = &calls.log().snapshot()[0];
        assert_eq!(record.status, CallStatus::Succeeded);
        assert_eq!(record.input_sha256.len(), 64);
    }

    #[tokio::test]
    async fn the_budget_stops_the_execution_and_bad_calls_fail_cleanly() {
        let mut calls = calls(Limits {
            max_tool_calls: 1,
            max_call_input_bytes: 16,
            ..Limits::default()
        });
        let unknown = calls
            .begin("nope", "{}")
            .expect("no stop")
            .expect_err("unknown");
        assert_eq!(unknown.code, ErrorCode::ToolNotFound);
        let big = calls
            .begin("echo", &format!("\"{}\"", "x".repeat(32)))
            .expect("no stop");
        assert_eq!(big.expect_err("too big").code, ErrorCode::BudgetExceeded);
        assert!(matches!(
            calls.begin("echo", "{"),
            Err(HostStop::ProtocolViolation(_))
        ));
        calls.begin("echo", "1").expect("no stop").expect("begun");
        assert_eq!(
            calls.begin("echo", "1"),
            Err(HostStop::ToolBudget { max: 1 })
        );
    }

    /// A tool that answers (or panics) after yielding once, so that it runs on a task of its
    /// own; or, when `.2` is false, at its first poll.
    struct Later(super::super::ToolInfo, bool, bool);
    impl super::super::Tool for Later {
        fn info(&self) -> &super::super::ToolInfo {
            &self.0
        }
        fn call(&self, input: Value) -> super::super::ToolFuture {
            let (panics, yields) = (self.1, self.2);
            Box::pin(async move {
                if yields {
                    tokio::task::yield_now().await;
                }
                assert!(!panics, "this tool panics on purpose");
                Ok(input)
            })
        }
    }

    fn later(name: &str, panics: bool) -> Arc<dyn super::super::Tool> {
        tool(name, panics, true)
    }

    fn tool(name: &str, panics: bool, yields: bool) -> Arc<dyn super::super::Tool> {
        Arc::new(Later(
            super::super::ToolInfo {
                name: name.into(),
                description: String::new(),
                input_schema: Value::Null,
                effect: Effect::Internal,
            },
            panics,
            yields,
        ))
    }

    // Issue 9: a tool task that panicked was blamed on the oldest started call.
    #[tokio::test]
    async fn a_panicking_tool_fails_its_own_call_and_no_other() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(Waits));
        registry.register(later("crashes", true));
        registry.register(later("answers", false));
        let mut calls = ToolCalls::new(Arc::new(registry), Policy::default(), &Limits::default());
        let waiting = calls.begin("waits", "{}").expect("no stop").expect("begun");
        let crashing = calls
            .begin("crashes", "{}")
            .expect("no stop")
            .expect("begun");
        let answering = calls
            .begin("answers", "1")
            .expect("no stop")
            .expect("begun");
        let mut seen = Vec::new();
        for _ in 0..2 {
            let done = calls.wait_any().await.expect("a completion");
            seen.push((done.id, done.outcome.map_err(|e| e.code)));
        }
        seen.sort_by_key(|(id, _)| *id);
        assert_eq!(
            seen,
            [
                (crashing, Err(ErrorCode::ToolFailed)),
                (answering, Ok("1".to_string()))
            ]
        );
        let records = calls.log().snapshot();
        assert_eq!(
            records[0].status,
            CallStatus::Started,
            "the waiting call is not blamed"
        );
        assert_eq!(records[1].status, CallStatus::Failed);
        assert_eq!(u64::from(records[0].position), waiting);
    }

    #[tokio::test]
    async fn a_tool_that_panics_at_its_first_poll_fails_its_call() {
        let mut registry = ToolRegistry::new();
        registry.register(tool("at-once", true, false));
        let mut calls = ToolCalls::new(Arc::new(registry), Policy::default(), &Limits::default());
        let id = calls
            .begin("at-once", "{}")
            .expect("no stop")
            .expect("begun");
        let done = calls.wait_any().await.expect("a completion");
        assert_eq!(
            (done.id, done.outcome.map_err(|e| e.code)),
            (id, Err(ErrorCode::ToolFailed))
        );
    }

    /// A tool that never answers.
    struct Waits;
    impl super::super::Tool for Waits {
        fn info(&self) -> &super::super::ToolInfo {
            static INFO: std::sync::OnceLock<super::super::ToolInfo> = std::sync::OnceLock::new();
            INFO.get_or_init(|| super::super::ToolInfo {
                name: "waits".into(),
                description: String::new(),
                input_schema: Value::Null,
                effect: Effect::Internal,
            })
        }
        fn call(&self, _: Value) -> super::super::ToolFuture {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn calls_that_change_the_world_wait_for_the_record_and_others_do_not() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Counted(super::super::ToolInfo, Arc<AtomicUsize>);
        impl super::super::Tool for Counted {
            fn info(&self) -> &super::super::ToolInfo {
                &self.0
            }
            fn call(&self, _: Value) -> super::super::ToolFuture {
                self.1.fetch_add(1, Ordering::SeqCst);
                Box::pin(async { Ok(Value::Null) })
            }
        }
        let mut registry = ToolRegistry::new();
        let ran: Vec<Arc<AtomicUsize>> = (0..5).map(|_| Arc::default()).collect();
        let effects = [
            Effect::Write,
            Effect::Process,
            Effect::External,
            Effect::Read,
            Effect::Internal,
        ];
        for (effect, ran) in effects.iter().zip(&ran) {
            let info = super::super::ToolInfo {
                name: effect.as_str().into(),
                description: String::new(),
                input_schema: Value::Null,
                effect: *effect,
            };
            registry.register(Arc::new(Counted(info, ran.clone())));
        }
        let (written, durable) = tokio::sync::oneshot::channel::<()>();
        let durable: RecordDurable = futures::FutureExt::shared(Box::pin(async move {
            durable.await.map_err(|_| Arc::<str>::from("dropped"))
        })
            as futures::future::BoxFuture<'static, _>);
        let mut calls = ToolCalls::new(Arc::new(registry), Policy::allow_all(), &Limits::default());
        calls.hold_effects_until(durable);
        for effect in effects {
            calls
                .begin(effect.as_str(), "{}")
                .expect("no stop")
                .expect("begun");
        }
        // `read` and `internal` finish without the record; the others have not started.
        for _ in 0..2 {
            calls.wait_any().await.expect("a completion");
        }
        let counts = || {
            ran.iter()
                .map(|r| r.load(Ordering::SeqCst))
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(), [0, 0, 0, 1, 1]);
        written.send(()).expect("the calls wait");
        for _ in 0..3 {
            let done = calls.wait_any().await.expect("a completion");
            assert!(done.outcome.is_ok(), "{done:?}");
        }
        assert_eq!(counts(), [1, 1, 1, 1, 1]);
    }

    #[tokio::test]
    async fn a_record_that_cannot_be_written_fails_the_calls_that_wait_for_it() {
        let mut registry = ToolRegistry::new();
        let info = super::super::ToolInfo {
            name: "process".into(),
            description: String::new(),
            input_schema: Value::Null,
            effect: Effect::Process,
        };
        struct Never(super::super::ToolInfo);
        impl super::super::Tool for Never {
            fn info(&self) -> &super::super::ToolInfo {
                &self.0
            }
            fn call(&self, _: Value) -> super::super::ToolFuture {
                panic!("it must not run without its record")
            }
        }
        registry.register(Arc::new(Never(info)));
        let failed: RecordDurable = futures::FutureExt::shared(Box::pin(std::future::ready(Err(
            Arc::<str>::from("disk full"),
        )))
            as futures::future::BoxFuture<'static, _>);
        let mut calls = ToolCalls::new(Arc::new(registry), Policy::allow_all(), &Limits::default());
        calls.hold_effects_until(failed);
        calls
            .begin("process", "{}")
            .expect("no stop")
            .expect("begun");
        let done = calls.wait_any().await.expect("a completion");
        let error = done.outcome.expect_err("it fails");
        assert_eq!(error.code, ErrorCode::IsolateFailure);
        assert!(error.message.contains("disk full"), "{}", error.message);
    }

    #[tokio::test]
    async fn a_denied_effect_never_runs() {
        struct Writer(super::super::ToolInfo);
        impl super::super::Tool for Writer {
            fn info(&self) -> &super::super::ToolInfo {
                &self.0
            }
            fn call(&self, _: Value) -> super::super::ToolFuture {
                Box::pin(async { panic!("a denied tool must not run") })
            }
        }
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(Writer(super::super::ToolInfo {
            name: "write".into(),
            description: String::new(),
            input_schema: Value::Null,
            effect: Effect::Write,
        })));
        let mut calls = ToolCalls::new(Arc::new(registry), Policy::default(), &Limits::default());
        let denied = calls
            .begin("write", "{}")
            .expect("no stop")
            .expect_err("denied");
        assert_eq!(denied.code, ErrorCode::ToolDenied);
        assert_eq!(calls.log().snapshot()[0].status, CallStatus::Denied);
        assert!(calls.wait_any().await.is_none());
    }
}
