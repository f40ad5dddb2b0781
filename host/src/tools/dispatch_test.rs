//! Tests of `dispatch.rs`: calls, budgets, panics, the permission gate, and calls that wait for
//! the execution's journal record.

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
    let done = calls
        .wait_any()
        .await
        .expect("no stop")
        .expect("one completion");
    assert_eq!(
        done,
        Completion {
            id,
            outcome: Ok(r#"{"x":1}"#.into())
        }
    );
    assert!(
        calls.wait_any().await.expect("no stop").is_none(),
        "nothing left in flight"
    );
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
        let done = calls
            .wait_any()
            .await
            .expect("no stop")
            .expect("a completion");
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
    let done = calls
        .wait_any()
        .await
        .expect("no stop")
        .expect("a completion");
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
        durable
            .await
            .map_err(|_| (ErrorCode::IsolateFailure, Arc::<str>::from("dropped")))
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
        calls
            .wait_any()
            .await
            .expect("no stop")
            .expect("a completion");
    }
    let counts = || {
        ran.iter()
            .map(|r| r.load(Ordering::SeqCst))
            .collect::<Vec<_>>()
    };
    assert_eq!(counts(), [0, 0, 0, 1, 1]);
    written.send(()).expect("the calls wait");
    for _ in 0..3 {
        let done = calls
            .wait_any()
            .await
            .expect("no stop")
            .expect("a completion");
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
    let failed: RecordDurable = futures::FutureExt::shared(Box::pin(std::future::ready(Err((
        ErrorCode::HostDiskFull,
        Arc::<str>::from("disk full"),
    ))))
        as futures::future::BoxFuture<'static, _>);
    let mut calls = ToolCalls::new(Arc::new(registry), Policy::allow_all(), &Limits::default());
    calls.hold_effects_until(failed);
    calls
        .begin("process", "{}")
        .expect("no stop")
        .expect("begun");
    let done = calls
        .wait_any()
        .await
        .expect("no stop")
        .expect("a completion");
    let error = done.outcome.expect_err("it fails");
    assert_eq!(error.code, ErrorCode::HostDiskFull, "the journal's code");
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
    assert!(calls.wait_any().await.expect("no stop").is_none());
}
