//! The native baseline of test262 (`tests/test262/`): every test of the suite at `SUITE_DIR`,
//! wrapped and judged as the engine's test does (`tests/test262/suite.rs`), on native QuickJS-ng
//! of the version the engine embeds, each in a fresh runtime and context. Prints one JSON line
//! per test, in the suite's order: `{"test", "pass"}`, with `"skip"` (why it does not run) or
//! `"why"` (why it failed).
//!
//! Usage: `test262-native SUITE_DIR [PREFIX...]` (only the tests whose path starts with a
//! prefix, `built-ins/Array/`).

#[path = "../../../tests/test262/suite.rs"]
mod suite;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Promise, Runtime, Value};
use serde_json::json;

use suite::{Outcome, Plan};

/// `Name: message` for an `Error`, `Uncaught …` for any other value: what the engine's
/// `describeError` writes.
fn describe(value: &Value<'_>) -> String {
    if let Some(error) = value.as_exception() {
        let name: String = error
            .get::<_, rquickjs::Coerced<String>>("name")
            .map(|n| n.0)
            .unwrap_or_default();
        return format!("{name}: {}", error.message().unwrap_or_default());
    }
    let text = value
        .get::<rquickjs::Coerced<String>>()
        .map(|t| t.0)
        .unwrap_or_else(|_| format!("{value:?}"));
    format!("Uncaught {text}")
}

/// The thrown value of a failed call, as text.
fn thrown(ctx: &Ctx<'_>, error: rquickjs::Error) -> String {
    match error {
        rquickjs::Error::Exception => describe(&ctx.catch()),
        other => format!("Uncaught {other}"),
    }
}

/// One test, as the engine runs a script: the body of an async function evaluated as a
/// non-strict global script, its promise driven by the job queue to the end.
fn run(script: &str, filename: &str) -> Outcome {
    let deadline = Instant::now() + Duration::from_secs(suite::TIMEOUT_SECS);
    let Ok(runtime) = Runtime::new() else {
        return Outcome::Stopped("no runtime".into());
    };
    runtime.set_memory_limit(suite::MEMORY_BYTES);
    runtime.set_interrupt_handler(Some(Box::new(move || Instant::now() > deadline)));
    let Ok(context) = Context::full(&runtime) else {
        return Outcome::Stopped("no context".into());
    };
    let outcome = context.with(|ctx| {
        let mut options = EvalOptions::default();
        options.global = true;
        options.strict = false;
        options.filename = Some(filename.to_string());
        let wrapped = format!("(async function () {{{script}\n}})");
        let body: Function = match ctx.eval_with_options(wrapped, options) {
            Ok(body) => body,
            Err(error) => return Outcome::Syntax(thrown(&ctx, error)),
        };
        let promise: Promise = match body.call(()) {
            Ok(promise) => promise,
            Err(error) => return Outcome::Threw(thrown(&ctx, error)),
        };
        while ctx.execute_pending_job() {}
        if Instant::now() > deadline {
            return Outcome::Stopped("timeout".into());
        }
        match promise.state() {
            PromiseState::Pending => Outcome::Stopped("a promise nothing settles".into()),
            PromiseState::Rejected => match promise.result::<Value>() {
                Some(Err(error)) => Outcome::Threw(thrown(&ctx, error)),
                Some(Ok(value)) => Outcome::Threw(describe(&value)),
                None => Outcome::Threw("Uncaught undefined".into()),
            },
            PromiseState::Resolved => Outcome::Returned(
                promise
                    .result::<Value>()
                    .and_then(|v| v.ok())
                    .and_then(|v| v.as_string().and_then(|s| s.to_string().ok())),
            ),
        }
    });
    drop(context);
    outcome
}

fn line(root: &Path, harness: &suite::Harness, test: &str) -> String {
    match harness.plan(root, test) {
        Err(error) => json!({"test": test, "pass": false, "why": format!("unreadable: {error}")}),
        Ok(Plan::Skip(reason)) => json!({"test": test, "pass": false, "skip": reason}),
        Ok(Plan::Run { script, meta }) => match suite::verdict(&meta, &run(&script, test)) {
            Ok(()) => json!({"test": test, "pass": true}),
            Err(why) => json!({"test": test, "pass": false, "why": why}),
        },
    }
    .to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first().map(PathBuf::from) else {
        eprintln!("usage: test262-native SUITE_DIR [PREFIX...]");
        std::process::exit(2);
    };
    let prefixes = &args[1..];
    let tests: Vec<String> = match suite::discover(&root) {
        Ok(tests) => tests
            .into_iter()
            .filter(|t| prefixes.is_empty() || prefixes.iter().any(|p| t.starts_with(p)))
            .collect(),
        Err(error) => {
            eprintln!("test262-native: cannot read {}: {error}", root.display());
            std::process::exit(1);
        }
    };
    let harness = match suite::Harness::load(&root) {
        Ok(harness) => harness,
        Err(error) => {
            eprintln!(
                "test262-native: cannot read {}/harness: {error}",
                root.display()
            );
            std::process::exit(1);
        }
    };
    let results: Vec<Mutex<String>> = tests.iter().map(|_| Mutex::new(String::new())).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            // QuickJS stops at its own stack limit (1 MiB) well inside this.
            let worker = std::thread::Builder::new().stack_size(64 << 20);
            let spawned = worker.spawn_scoped(scope, || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(test) = tests.get(i) else { break };
                    let text = line(&root, &harness, test);
                    *results[i].lock().unwrap_or_else(|p| p.into_inner()) = text;
                }
            });
            if let Err(error) = spawned {
                eprintln!("test262-native: cannot start a worker: {error}");
                std::process::exit(1);
            }
        }
    });
    for result in results {
        println!("{}", result.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
}
