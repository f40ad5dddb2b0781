//! numpy's and pandas' own test suites (a curated subset) run inside the python-science engine
//! by the real CLI: the test kit `components/python-science/testkit.py` assembles (pytest, the
//! upstream test files, the selection and the known failures; `cargo xtask test` builds it into
//! `target/science-testkit`, `FORGE_SCIENCE_TESTKIT` points elsewhere) is the run's input and
//! its `upstream/run_upstream.py` the script. See components/python-science/upstream/README.md.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{Sandbox, args, repo};

/// The run's wall-clock limit. The suite takes about 5 min on a quiet 2-core machine; a CI machine
/// running the other CLI tests beside it was seen at 69% after 10 min, so the limit leaves room
/// for a machine three times slower, and still ends a suite that hangs.
const TIMEOUT: &str = "25m";

/// Fewer passing tests than this means the run went wrong even with no unexpected failure (a
/// selection that collects nothing, a suite that stopped early). Measured: 27794 passed.
const PASSED_FLOOR: u64 = 25_000;

fn testkit() -> PathBuf {
    std::env::var_os("FORGE_SCIENCE_TESTKIT")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/science-testkit"))
}

fn count(value: &Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or(0)
}

/// The last `max` bytes of `text` (or a few more, to start on a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let start = text.len().saturating_sub(max);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

#[test]
fn numpy_and_pandas_upstream_tests_pass_inside_the_science_engine() {
    let sandbox = Sandbox::new();
    let listed = sandbox.forge(&["engines", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed.stdout()).unwrap_or(Value::Null);
    let has_science = listed["engines"]
        .as_array()
        .is_some_and(|engines| engines.iter().any(|e| e["id"] == "python-science"));
    assert!(
        has_science,
        "the python-science engine is not in the engines dir (`cargo xtask build` builds it): {listed}"
    );
    let kit = testkit();
    let runner = kit.join("upstream/run_upstream.py");
    assert!(
        runner.is_file(),
        "no test kit at {} (`cargo xtask test` assembles it with \
         components/python-science/testkit.py --out target/science-testkit)",
        kit.display()
    );
    let out = sandbox.dir.path().join("out");
    let run = sandbox.forge(&args![
        "run",
        &runner,
        "--engine",
        "python-science",
        "--input",
        &kit,
        "--memory",
        "1GiB",
        "--timeout",
        TIMEOUT,
        "--max-output",
        "1MiB",
        "--publish-on-error",
        "--out",
        &out,
        "--json",
    ]);
    let report = run.report();
    if report["status"] != "succeeded" {
        // A trap ends the whole run: the runner names the test it had started.
        let current = std::fs::read_to_string(out.join("upstream-current-test.txt"))
            .unwrap_or_else(|_| "(unknown)".to_string());
        let stdout = tail(report["stdout"].as_str().unwrap_or_default(), 3000);
        panic!(
            "the upstream run did not succeed: {}\nlast test started: {}\n\
             (a test that traps the instance belongs in upstream/deselect.txt)\nstdout tail:\n{stdout}\nstderr:\n{}",
            report["error"],
            current.trim(),
            report["stderr"].as_str().unwrap_or_default()
        );
    }
    let value = &report["value"];
    eprintln!(
        "upstream numpy/pandas tests in python-science: {} passed, {} failed, {} errors, {} skipped, \
         {} xfailed, {} xpassed, {} deselected; {} s in the engine, memory peak {} MB; tz data from the {}",
        count(value, "passed"),
        count(value, "failed"),
        count(value, "errors"),
        count(value, "skipped"),
        count(value, "xfailed"),
        count(value, "xpassed"),
        count(value, "deselected"),
        value["seconds"],
        count(&report["metrics"], "memory_peak_bytes") / 1_000_000,
        value["tzdata"].as_str().unwrap_or("?"),
    );
    eprintln!("per suite: {}", value["suites"]);
    let fixed = value["fixed"].as_array().map(Vec::len).unwrap_or(0);
    if fixed > 0 {
        eprintln!(
            "known failures that now pass (remove them from upstream/known-failures.txt): {:#}",
            value["fixed"]
        );
    }
    let unexpected = value["unexpected"].as_array().cloned().unwrap_or_default();
    if !unexpected.is_empty() {
        let full: Value = std::fs::read(out.join("upstream-report.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Value::Null);
        let details: Vec<String> = unexpected
            .iter()
            .take(20)
            .map(|id| {
                let id = id.as_str().unwrap_or_default();
                let text = full["details"][id].as_str().unwrap_or_default();
                format!("--- {id}\n{}", tail(text, 1200))
            })
            .collect();
        panic!(
            "{} unexpected failures (not in upstream/known-failures.txt):\n{}",
            count(value, "unexpected_total"),
            details.join("\n")
        );
    }
    assert!(
        count(value, "passed") >= PASSED_FLOOR,
        "only {} upstream tests passed (floor {PASSED_FLOOR}): {value:#}",
        count(value, "passed")
    );
}
