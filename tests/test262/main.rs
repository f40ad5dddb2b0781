//! test262 inside the QuickJS engine, against native QuickJS-ng of the same version as the
//! baseline: every test that passes natively must pass in the engine, or be listed in
//! `known-failures.txt` with its reason; a listed test that passes (or no longer passes
//! natively) fails the test too, so the list stays honest. See README.md beside this file.
//!
//! The suite is the folder `FORGE_TEST262_DIR` names (`harness/` and `test/`); without it the
//! test says it skipped and passes. `cargo xtask test` extracts the pinned copy of
//! `../shared/upstream/` into `target/` and sets it. The native side is the `test262-native`
//! binary of `bench/quickjs-native` (`cargo build --release -p quickjs-native`, which `cargo
//! xtask test` runs; it cannot build in the same cargo invocation as the host). The engine
//! side runs each natively passing test in a fresh instance of the engine's snapshot
//! (`forge_host::engines::run_alone`: the sandbox a run gets, without the journal), several at
//! a time. `FORGE_TEST262_FILTER` (comma-separated path prefixes, `built-ins/Array/`) narrows
//! the run while working on it.

mod known;
mod suite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forge_host::engines::bindings::{GuestLimits, RunRequest};
use forge_host::{DataDir, Kernel, Limits};
use futures::StreamExt;
use serde_json::Value;

use suite::{Outcome, Plan};

const SUITE_ENV: &str = "FORGE_TEST262_DIR";
/// The fewest `test/intl402` tests that must pass in the engine, with why (see the file).
const INTL402_FLOOR: &str = "tests/test262/intl402-floor.txt";
const FILTER_ENV: &str = "FORGE_TEST262_FILTER";
/// Runs in the engine at once: enough to keep two cores busy while some wait.
const CONCURRENCY: usize = 4;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// One test's native result.
struct Native {
    test: String,
    pass: bool,
    skip: Option<String>,
}

fn native_results(root: &Path, filter: &[String]) -> Vec<Native> {
    let binary = repo().join("target/release/test262-native");
    assert!(
        binary.is_file(),
        "{} is missing: build it with `cargo build --release -p quickjs-native` \
         (`cargo xtask test` does)",
        binary.display()
    );
    // The engine has no time zone: local time is UTC there.
    let out = Command::new(&binary)
        .arg(root)
        .args(filter)
        .env("TZ", "UTC")
        .output()
        .expect("runs test262-native");
    assert!(
        out.status.success(),
        "test262-native failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("a JSON line");
            Native {
                test: value["test"].as_str().unwrap_or_default().to_string(),
                pass: value["pass"] == true,
                skip: value["skip"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// What the engine's run of `script` came to, in the terms of [`Outcome`].
async fn run_in_engine(kernel: &Kernel, test: &str, script: String) -> Outcome {
    let entry = match kernel.engines().by_id("javascript-quickjs") {
        Ok(entry) => entry.clone(),
        Err(error) => return Outcome::Stopped(format!("no engine: {error}")),
    };
    let request = RunRequest {
        source: script,
        filename: test.to_string(),
        limits: GuestLimits::from(&Limits::default()),
        inputs: Vec::new(),
        pass_through_codes: Vec::new(),
    };
    let run = forge_host::engines::run_alone(kernel.engines(), &entry, &request);
    match tokio::time::timeout(Duration::from_secs(suite::TIMEOUT_SECS), run).await {
        Err(_) => Outcome::Stopped("timeout".into()),
        Ok(Err(error)) => Outcome::Stopped(format!("host: {error}")),
        Ok(Ok(Ok(value))) => {
            Outcome::Returned(value.and_then(|json| serde_json::from_str::<String>(&json).ok()))
        }
        Ok(Ok(Err(error))) => match error.code.as_str() {
            "SCRIPT_SYNTAX" => Outcome::Syntax(error.message),
            "SCRIPT_RUNTIME" => Outcome::Threw(error.message),
            code => Outcome::Stopped(format!("{code}: {}", error.message)),
        },
    }
}

/// Runs `tests` in the engine; the ones that fail, with why.
fn engine_failures(root: &Path, tests: &[String]) -> BTreeMap<String, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    runtime.block_on(async {
        let data = tempfile::tempdir().expect("tempdir");
        let kernel = Kernel::builder(DataDir::new(data.path()))
            .engine_dirs(vec![repo().join("target/engines")])
            .build()
            .await
            .expect("kernel");
        let kernel = Arc::new(kernel);
        let harness = suite::Harness::load(root).expect("reads harness/");
        futures::stream::iter(tests)
            .map(|test| {
                let plan = harness.plan(root, test);
                let kernel = kernel.clone();
                async move {
                    let verdict = match plan {
                        Ok(Plan::Run { script, meta }) => {
                            suite::verdict(&meta, &run_in_engine(&kernel, test, script).await)
                        }
                        Ok(Plan::Skip(reason)) => Err(format!("skipped here only: {reason}")),
                        Err(error) => Err(format!("unreadable: {error}")),
                    };
                    verdict.err().map(|why| (test.clone(), why))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .filter_map(|failure| async move { failure })
            .collect::<BTreeMap<_, _>>()
            .await
    })
}

/// The suite's folder, or `None` (the test then says it skipped); and the filter.
fn suite(test: &str) -> Option<(PathBuf, Vec<String>)> {
    let Some(root) = std::env::var_os(SUITE_ENV).filter(|dir| !dir.is_empty()) else {
        eprintln!(
            "{test}: SKIPPED, {SUITE_ENV} is not set (`cargo xtask test` sets it when \
             ../shared/upstream/ holds the pinned test262)"
        );
        return None;
    };
    let root = PathBuf::from(root);
    assert!(
        root.join("harness/assert.js").is_file() && root.join("test").is_dir(),
        "{SUITE_ENV}={} holds no test262 (harness/ and test/)",
        root.display()
    );
    let filter: Vec<String> = std::env::var(FILTER_ENV)
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    Some((root, filter))
}

/// `test/intl402` in the engine: native QuickJS-ng has no `Intl`, so there is no baseline to
/// hold the engine to; instead the number of passing tests may not drop below the committed
/// floor (raise it when the engine does better).
#[test]
fn intl402_passes_in_the_engine_at_least_as_often_as_committed() {
    let Some((root, filter)) = suite("test262 intl402") else {
        return;
    };
    let tests: Vec<String> = suite::discover_in(&root, &[suite::INTL402])
        .expect("reads test/intl402")
        .into_iter()
        .filter(|test| filter.is_empty() || filter.iter().any(|prefix| test.starts_with(prefix)))
        .collect();
    let started = Instant::now();
    let failures = engine_failures(&root, &tests);
    let passed = tests.len() - failures.len();
    let mut by_folder: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for test in &tests {
        let folder = test
            .split('/')
            .nth(1)
            .unwrap_or_default()
            .trim_end_matches(".js");
        let entry = by_folder.entry(folder.to_string()).or_default();
        entry.0 += 1;
        if !failures.contains_key(test) {
            entry.1 += 1;
        }
    }
    eprintln!(
        "test262 intl402: {} tests, {passed} pass in the engine; {:.0} s",
        tests.len(),
        started.elapsed().as_secs_f64()
    );
    for (folder, (total, pass)) in &by_folder {
        eprintln!("test262 intl402: {folder}: {pass} of {total}");
    }
    if !filter.is_empty() {
        return;
    }
    let floor_text = std::fs::read_to_string(repo().join(INTL402_FLOOR)).expect("reads the floor");
    let floor: usize = floor_text
        .lines()
        .find(|line| !line.starts_with('#') && !line.trim().is_empty())
        .and_then(|line| line.trim().parse().ok())
        .expect("the floor file holds a number");
    assert!(
        passed >= floor,
        "test262 intl402: {passed} tests pass in the engine, fewer than the {floor} of {INTL402_FLOOR}"
    );
}

#[test]
fn test262_passes_in_the_engine_wherever_it_passes_natively() {
    let Some((root, filter)) = suite("test262") else {
        return;
    };
    let known = known::load(&repo().join("tests/test262/known-failures.txt"));

    let started = Instant::now();
    let native = native_results(&root, &filter);
    let native_seconds = started.elapsed().as_secs_f64();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for reason in native.iter().filter_map(|n| n.skip.as_ref()) {
        *skipped.entry(reason.clone()).or_default() += 1;
    }
    let ran = native.iter().filter(|n| n.skip.is_none()).count();
    let passing: Vec<String> = native
        .iter()
        .filter(|n| n.pass)
        .map(|n| n.test.clone())
        .collect();

    let started = Instant::now();
    let failures = engine_failures(&root, &passing);
    let engine_seconds = started.elapsed().as_secs_f64();

    let report = known::compare(&known, &native, &failures, filter.is_empty());
    eprintln!(
        "test262: {} tests, {} skipped, {ran} run, {} pass natively, {} pass in the engine, \
         {} known failures, {} unexpected, {} listed but passing; {native_seconds:.0} s native, \
         {engine_seconds:.0} s in the engine",
        native.len(),
        native.len() - ran,
        passing.len(),
        passing.len() - failures.len(),
        report.known,
        report.unexpected.len(),
        report.stale.len(),
    );
    for (reason, count) in &skipped {
        eprintln!("test262: skipped {count}: {reason}");
    }
    for (reason, count) in &report.by_reason {
        eprintln!("test262: known failures {count}: {reason}");
    }
    let mut problems = String::new();
    for (test, why) in &report.unexpected {
        problems.push_str(&format!("\n  fails in the engine only: {test}: {why}"));
    }
    for (test, why) in &report.stale {
        problems.push_str(&format!(
            "\n  listed in known-failures.txt but {why}: {test}"
        ));
    }
    assert!(
        problems.is_empty(),
        "test262: the engine differs from native QuickJS-ng beyond \
         tests/test262/known-failures.txt:{problems}"
    );
}
