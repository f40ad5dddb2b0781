//! Library tests: the kernel embedded in-process, as an agent host would use it.
//! The engines must be built first (`cargo xtask test` does it).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use forge_host::tools::{Effect, Tool, ToolError, ToolFuture, ToolInfo, ToolRegistry};
use forge_host::{DataDir, ErrorCode, ExecutionRequest, ExecutionState, Kernel, Limits, Policy};
use serde_json::{Value, json};

async fn kernel(data: &Path, tools: ToolRegistry) -> Kernel {
    let engines = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/engines");
    Kernel::builder(DataDir::new(data))
        .engine_dirs(vec![engines])
        .tools(tools)
        .build()
        .await
}

fn js(source: &str) -> ExecutionRequest {
    ExecutionRequest::new(source, "test.js")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_kernel_survives_every_kind_of_stop_and_runs_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kernel = kernel(dir.path(), ToolRegistry::with_builtins()).await;
    assert!(
        kernel.engines().problems().is_empty(),
        "{:?}",
        kernel.engines().problems()
    );
    let stops: Vec<(&str, Limits, ErrorCode)> = vec![
        (
            "const k = []; while (true) k.push(new Array(1e5).fill(0));",
            Limits {
                memory_bytes: 64 << 20,
                ..Limits::default()
            },
            ErrorCode::MemoryLimit,
        ),
        (
            "while (true) {}",
            Limits {
                timeout: Duration::from_millis(300),
                ..Limits::default()
            },
            ErrorCode::Timeout,
        ),
        (
            "while (true) {}",
            Limits {
                fuel: Some(1_000_000),
                ..Limits::default()
            },
            ErrorCode::FuelExhausted,
        ),
        (
            "function f() { return f() + 1; } return f();",
            Limits::default(),
            ErrorCode::StackLimit,
        ),
    ];
    for (source, limits, code) in stops {
        let mut request = js(source);
        request.limits = limits;
        let report = kernel.run(request).await.expect("runs");
        assert_eq!(
            report.error.as_ref().map(|e| e.code),
            Some(code),
            "{source}: {report:?}"
        );
        let after = kernel.run(js("return 'still here';")).await.expect("runs");
        assert_eq!(after.value, Some(json!("still here")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_wins_over_the_guest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kernel = kernel(dir.path(), ToolRegistry::with_builtins()).await;
    let cancel = forge_host::CancelHandle::new();
    let mut request = js("while (true) {}");
    request.cancel = Some(cancel.clone());
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let report = kernel.run(request).await.expect("runs");
    stopper.await.expect("stopper");
    assert_eq!(report.status, ExecutionState::Cancelled);
    assert_eq!(report.error.map(|e| e.code), Some(ErrorCode::Cancelled));
}

/// A tool an embedder registers through the Rust trait, with an effect the gate checks.
struct Append(ToolInfo);

impl Tool for Append {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, input: Value) -> ToolFuture {
        Box::pin(async move {
            let line = input
                .get("line")
                .and_then(Value::as_str)
                .ok_or_else(|| ToolError::invalid_input("needs line"))?;
            Ok(json!({ "appended": line.len() }))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedder_tools_are_callable_and_gated_by_their_effect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Append(ToolInfo {
        name: "append".into(),
        description: "Appends a line to the log.".into(),
        input_schema: json!({"type": "object"}),
        effect: Effect::Write,
    })));
    let kernel = kernel(dir.path(), tools).await;
    let source =
        "try { return await tools.call('append', { line: 'abc' }); } catch (e) { return e.code; }";
    let denied = kernel.run(js(source)).await.expect("runs");
    assert_eq!(denied.value, Some(json!("TOOL_DENIED")));
    assert_eq!(denied.calls[0].effect, Effect::Write);
    let mut allowed = js(source);
    allowed.policy = Policy {
        allow_write: true,
        ..Policy::default()
    };
    let report = kernel.run(allowed).await.expect("runs");
    assert_eq!(report.value, Some(json!({"appended": 3})));
    assert_eq!(report.calls.len(), 1);
    assert_eq!(report.calls[0].input_sha256.len(), 64);
}
