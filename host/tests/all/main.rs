//! Library tests: the kernel embedded in-process, as an agent host would use it.
//! The engines must be built first (`cargo xtask test` does it).

mod layers;

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
        .expect("kernel")
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
        let request = js(source).into_builder().limits(limits).build();
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
    let request = js("while (true) {}")
        .into_builder()
        .cancel(Some(cancel.clone()))
        .build();
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
    let allowed = js(source)
        .into_builder()
        .policy(Policy {
            allow_write: true,
            ..Policy::default()
        })
        .build();
    let report = kernel.run(allowed).await.expect("runs");
    assert_eq!(report.value, Some(json!({"appended": 3})));
    assert_eq!(report.calls.len(), 1);
    assert_eq!(report.calls[0].input_sha256.len(), 64);
}

/// A copy of the built engines in a scratch folder, with its lock rewritten by `edit`.
fn engines_copy(edit: impl Fn(&mut serde_json::Value)) -> tempfile::TempDir {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/engines");
    let copy = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(&built).expect("engines") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, copy.path().join(path.file_name().expect("name"))).expect("copy");
    }
    let lock_path = copy.path().join("engines.lock");
    let mut lock: Value =
        serde_json::from_slice(&std::fs::read(&lock_path).expect("lock")).expect("json");
    edit(&mut lock);
    std::fs::write(&lock_path, lock.to_string()).expect("write lock");
    copy
}

async fn kernel_over(engines: &Path, data: &Path, cache: &Path) -> Kernel {
    Kernel::builder(DataDir::new(data))
        .engine_dirs(vec![engines.to_path_buf()])
        .cache(forge_host::engines::Cache::new(cache))
        .build()
        .await
        .expect("kernel")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_whose_bytes_do_not_match_its_pin_is_refused() {
    let engines = engines_copy(|lock| {
        lock["engines"][0]["sha256"] = json!("0".repeat(64));
    });
    let scratch = tempfile::tempdir().expect("tempdir");
    let kernel = kernel_over(
        engines.path(),
        &scratch.path().join("data"),
        &scratch.path().join("cache"),
    )
    .await;
    assert!(
        kernel
            .engines()
            .problems()
            .iter()
            .any(|p| p.contains("sha256")),
        "{:?}",
        kernel.engines().problems()
    );
    let error = kernel.run(js("return 1")).await.expect_err("no engine");
    assert_eq!(error.code, ErrorCode::EngineUnavailable);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_that_is_not_what_its_lock_says_is_refused_at_load() {
    let engines = engines_copy(|lock| {
        let quickjs = lock["engines"]
            .as_array_mut()
            .and_then(|all| all.iter_mut().find(|e| e["id"] == "javascript-quickjs"))
            .expect("quickjs in the lock");
        quickjs["id"] = json!("javascript-impostor");
    });
    let scratch = tempfile::tempdir().expect("tempdir");
    let kernel = kernel_over(
        engines.path(),
        &scratch.path().join("data"),
        &scratch.path().join("cache"),
    )
    .await;
    let error = kernel.run(js("return 1")).await.expect_err("refused");
    assert_eq!(error.code, ErrorCode::EngineUnavailable);
    assert!(
        error.message.contains("javascript-impostor"),
        "{}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_run_compiles_only_the_engine_it_needs_and_later_ones_compile_nothing() {
    let engines = engines_copy(|_| {});
    let scratch = tempfile::tempdir().expect("tempdir");
    let cache = scratch.path().join("cache");
    let kernel = kernel_over(engines.path(), &scratch.path().join("data"), &cache).await;
    kernel.run(js("return 1")).await.expect("runs");
    let compiled: Vec<String> = std::fs::read_dir(cache.join("compiled"))
        .expect("compiled")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".cwasm"))
        .collect();
    assert_eq!(compiled.len(), 1, "only QuickJS was compiled: {compiled:?}");
    let again = kernel_over(engines.path(), &scratch.path().join("data"), &cache).await;
    let entry = again
        .engines()
        .by_id("javascript-quickjs")
        .expect("engine")
        .clone();
    let (_, timing) = again.engines().load(&entry, false).await.expect("loads");
    assert!(!timing.compiled, "a new registry maps the cached file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_science_engine_survives_numpy_bombs_and_runs_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kernel = kernel(dir.path(), ToolRegistry::with_builtins()).await;
    let py = |source: &str| ExecutionRequest::new(source, "analysis.py");
    let stops: Vec<(&str, Limits, ErrorCode)> = vec![
        (
            "import numpy as np\nheld = []\nwhile True:\n    held.append(np.ones(10**7))\n",
            Limits {
                memory_bytes: 192 << 20,
                ..Limits::default()
            },
            ErrorCode::MemoryLimit,
        ),
        (
            "import numpy as np\nwhile True:\n    np.linalg.inv(np.random.random((50, 50)))\n",
            Limits {
                timeout: Duration::from_millis(500),
                ..Limits::default()
            },
            ErrorCode::Timeout,
        ),
    ];
    let after = "import forge, pandas as pd\n\
                 frame = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]})\n\
                 forge.result(frame.groupby('k')['v'].sum().to_dict())\n";
    for (source, limits, code) in stops {
        let request = py(source).into_builder().limits(limits).build();
        let report = kernel.run(request).await.expect("runs");
        assert_eq!(report.engine, "python-science", "{report:?}");
        assert_eq!(
            report.error.as_ref().map(|e| e.code),
            Some(code),
            "{source}: {report:?}"
        );
        let next = kernel.run(py(after)).await.expect("runs");
        assert_eq!(next.value, Some(json!({"a": 4, "b": 2})), "{next:?}");
    }
}
