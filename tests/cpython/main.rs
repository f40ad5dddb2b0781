//! CPython's own test suite inside the CPython engine, against native CPython of the suite's
//! version as the baseline: every test of the curated modules (`modules.rs`) that passes
//! natively must pass in the engine, or be listed in `known-failures.txt` with its reason; a
//! listed test that passes in the engine (or no longer passes natively, or is gone) fails the
//! test too, so the list stays honest. See README.md beside this file.
//!
//! The suite is the folder `FORGE_CPYTHON_TESTS_DIR` names (it holds the `test/` package), the
//! native interpreter the file `FORGE_CPYTHON_NATIVE` names; without them the test says it
//! skipped and passes. `cargo xtask test` prepares both (`xtask/src/cpython.rs`). Each side runs
//! `runner.py` once per module in a fresh interpreter: natively as a process, in the engine
//! through the built `forge-host run` with the suite as an input, under the limits a user's
//! script gets (`modules.rs` names the modules that need more, and why).
//! `FORGE_CPYTHON_FILTER` (comma-separated module names, `test_json,test_re`) narrows the run.

mod known;
mod modules;
mod sides;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use known::Report;
use sides::Run;

const SUITE_ENV: &str = "FORGE_CPYTHON_TESTS_DIR";
const NATIVE_ENV: &str = "FORGE_CPYTHON_NATIVE";
const FILTER_ENV: &str = "FORGE_CPYTHON_FILTER";
/// Modules run at once on each side: one per core of the test command's machine.
const CONCURRENCY: usize = 2;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Runs `each` over `modules`, [`CONCURRENCY`] at a time; the runs by module, and the wall
/// time of them all.
fn run_all(
    modules: &[&'static str],
    each: impl Fn(&str) -> Run + Sync,
) -> (BTreeMap<&'static str, Run>, f64) {
    let started = Instant::now();
    let queue = Mutex::new(modules.to_vec());
    let runs = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..CONCURRENCY {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").pop();
                    let Some(module) = next else { break };
                    let run = each(module);
                    runs.lock().expect("runs").insert(module, run);
                }
            });
        }
    });
    (
        runs.into_inner().expect("runs"),
        started.elapsed().as_secs_f64(),
    )
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

#[test]
fn cpython_suite_passes_in_the_engine_wherever_it_passes_natively() {
    let given = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let (Some(suite), Some(python)) = (given(SUITE_ENV), given(NATIVE_ENV)) else {
        eprintln!(
            "cpython: SKIPPED, {SUITE_ENV} and {NATIVE_ENV} are not both set (`cargo xtask \
             test` sets them when Debian sid serves the pinned libpython3.14-testsuite)"
        );
        return;
    };
    let suite = PathBuf::from(suite);
    let python = PathBuf::from(python);
    assert!(
        suite.join("test/__init__.py").is_file() && suite.join("test/support").is_dir(),
        "{SUITE_ENV}={} holds no test package with test.support",
        suite.display()
    );
    let filter: Vec<String> = std::env::var(FILTER_ENV)
        .unwrap_or_default()
        .split(',')
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect();
    let modules: Vec<&'static str> = modules::MODULES
        .iter()
        .copied()
        .filter(|m| filter.is_empty() || filter.iter().any(|f| f == m))
        .collect();
    assert!(!modules.is_empty(), "{FILTER_ENV} names none of modules.rs");
    let known = known::load(&repo().join("tests/cpython/known-failures.txt"));
    for (module, id) in known.reasons.keys() {
        assert!(
            modules::MODULES.contains(&module.as_str()),
            "known-failures.txt lists {id} of {module}, which modules.rs does not run"
        );
    }
    let runner = repo().join("tests/cpython/runner.py");

    let (native, native_seconds) = run_all(&modules, |module| {
        sides::native(&python, &runner, &suite, module)
    });
    let engine = sides::Engine {
        binary: PathBuf::from(env!("CARGO_BIN_EXE_forge-host")),
        engines: repo().join("target/engines"),
        runner: runner.clone(),
        suite: suite.clone(),
    };
    let (in_engine, engine_seconds) = run_all(&modules, |module| {
        engine.run(module, modules::limits(module), &known.not_run_in(module))
    });

    let mut total = Report::default();
    let mut tests = 0;
    for module in &modules {
        let (Some(ours), Some(theirs)) = (native.get(module), in_engine.get(module)) else {
            panic!("cpython: {module} has no run on one side");
        };
        let missing = match &theirs.stopped {
            Some(why) => format!("not reached: the engine's run stopped ({why})"),
            None => "did not run in the engine (its class's or module's fixture failed)".into(),
        };
        let report = known::compare(&known, module, &ours.outcomes, &theirs.outcomes, &missing);
        eprintln!(
            "cpython: {module}: {} tests, {} pass natively, {} pass in the engine, {} known \
             failures, {} unexpected, {} listed but passing; {:.1} s native, {:.1} s and {:.0} \
             MiB in the engine{}",
            ours.outcomes.len(),
            report.native_pass,
            report.engine_pass,
            report.known(),
            report.unexpected.len(),
            report.stale.len(),
            ours.seconds,
            theirs.seconds,
            mib(theirs.memory_peak.unwrap_or_default()),
            theirs
                .stopped
                .as_ref()
                .map_or(String::new(), |why| format!(" (stopped: {why})")),
        );
        tests += ours.outcomes.len();
        total.add(report);
    }
    let peak = in_engine
        .iter()
        .filter_map(|(module, run)| run.memory_peak.map(|bytes| (bytes, *module)))
        .max();
    eprintln!(
        "cpython: {} modules, {tests} tests, {} pass natively, {} pass in the engine, {} known \
         failures, {} unexpected, {} listed but passing; {native_seconds:.0} s native, \
         {engine_seconds:.0} s in the engine{}",
        modules.len(),
        total.native_pass,
        total.engine_pass,
        total.known(),
        total.unexpected.len(),
        total.stale.len(),
        peak.map_or(String::new(), |(bytes, module)| format!(
            ", peak memory {:.0} MiB ({module})",
            mib(bytes)
        )),
    );
    for (reason, count) in &total.by_reason {
        eprintln!("cpython: known failures {count}: {reason}");
    }
    let mut problems = String::new();
    for (test, why) in &total.unexpected {
        problems.push_str(&format!("\n  fails in the engine only: {test}: {why}"));
    }
    for (test, why) in &total.stale {
        problems.push_str(&format!(
            "\n  listed in known-failures.txt but {why}: {test}"
        ));
    }
    assert!(
        problems.is_empty(),
        "cpython: the engine differs from native CPython beyond \
         tests/cpython/known-failures.txt:{problems}"
    );
}
