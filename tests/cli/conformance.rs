//! The conformance kit (`tests/cases/`, built into forge-host): every engine passes it, a
//! component file is checked without being registered, and `engines add` refuses an engine that
//! fails it unless `--force` is given, which the lock records. Issue 14.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{Sandbox, args};

/// The engines the repository builds: all of them must pass the whole kit.
const ENGINES: [&str; 4] = [
    "javascript-quickjs",
    "python-cpython",
    "python-science",
    "lua",
];

fn check(sandbox: &Sandbox, extra: &[&std::ffi::OsStr]) -> (i32, Value) {
    let mut all = args!["engines", "check", "--json"].to_vec();
    all.extend_from_slice(extra);
    let run = sandbox.forge(&all);
    let report = serde_json::from_str(&run.stdout())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout(), run.stderr()));
    (run.code(), report)
}

/// `case -> failures` of every case an engine failed.
fn failures(engine: &Value) -> Vec<String> {
    engine["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["passed"] != true)
        .map(|c| format!("{}: {}", c["case"], c["failures"]))
        .collect()
}

#[test]
fn every_engine_passes_the_conformance_kit() {
    let sandbox = Sandbox::new();
    let (code, report) = check(&sandbox, &[]);
    let engines = report["engines"].as_array().expect("engines");
    for id in ENGINES {
        let engine = engines
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("{id} was not checked: {report:#}"));
        assert_eq!(engine["error"], Value::Null, "{id}: {engine:#}");
        assert_eq!(failures(engine), Vec::<String>::new(), "{id} failed cases");
        let passed = engine["passed"].as_u64().unwrap_or_default();
        assert!(passed >= 40, "{id} ran only {passed} cases");
        assert!(
            engine["baseline"]["memory_bytes"].as_u64() > Some(0),
            "{engine:#}"
        );
    }
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], true);
}

/// A kit folder of two cases for JavaScript, one of which `return 1` cannot pass.
fn kit_with_a_failing_case(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.data_dir().with_file_name("kit");
    let case = |name: &str, json: &str| {
        std::fs::create_dir_all(dir.join(name)).expect("mkdir");
        std::fs::write(dir.join(name).join("case.json"), json).expect("case.json");
        std::fs::write(dir.join(name).join("script.js"), "return 1;").expect("script");
        // A script for another language only: not for this engine, not a failure.
        std::fs::write(dir.join(name).join("script.rb"), "1").expect("script");
    };
    case("returns-one", r#"{"status": "succeeded", "value": 1}"#);
    case("returns-two", r#"{"status": "succeeded", "value": 2}"#);
    dir
}

fn quickjs() -> PathBuf {
    crate::util::engine_path("javascript-quickjs")
}

#[test]
fn a_component_file_is_checked_without_being_registered() {
    let sandbox = Sandbox::new();
    let (code, report) = check(&sandbox, &args![&quickjs()]);
    assert_eq!(code, 0, "{report:#}");
    let engines = report["engines"].as_array().expect("engines");
    assert_eq!(engines.len(), 1, "{report:#}");
    assert_eq!(engines[0]["id"], "javascript-quickjs");
    assert!(engines[0]["passed"].as_u64() >= Some(40), "{report:#}");
    assert!(
        !sandbox.data_dir().join("engines").exists(),
        "nothing registered"
    );
}

#[test]
fn a_failing_case_is_named_with_its_reason_and_the_exit_is_1() {
    let sandbox = Sandbox::new();
    let kit = kit_with_a_failing_case(&sandbox);
    let run = sandbox.forge(&args![
        "engines",
        "check",
        "javascript-quickjs",
        "--cases",
        &kit
    ]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    let out = run.stdout();
    assert!(out.contains("pass  returns-one"), "{out}");
    assert!(out.contains("FAIL  returns-two"), "{out}");
    assert!(out.contains("value: expected 2, got 1"), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}

fn lock(data_dir: &Path) -> Option<Value> {
    let text = std::fs::read(data_dir.join("engines/engines.lock")).ok()?;
    serde_json::from_slice(&text).ok()
}

#[test]
fn add_refuses_an_engine_that_fails_the_kit_unless_forced_and_the_lock_records_it() {
    let sandbox = Sandbox::new();
    let kit = kit_with_a_failing_case(&sandbox);
    let refused = sandbox.forge(&args!["engines", "add", &quickjs(), "--cases", &kit]);
    assert_ne!(refused.code(), 0, "{}", refused.stdout());
    assert!(
        refused.stdout().contains("FAIL  returns-two"),
        "{}",
        refused.stdout()
    );
    let stderr = refused.stderr();
    assert!(
        stderr.contains("returns-two") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(lock(&sandbox.data_dir()), None, "nothing registered");

    let forced = sandbox.forge(&args![
        "engines",
        "add",
        &quickjs(),
        "--cases",
        &kit,
        "--force"
    ]);
    assert_eq!(forced.code(), 0, "{}", forced.stderr());
    assert!(forced.stdout().contains("--force"), "{}", forced.stdout());
    let lock = lock(&sandbox.data_dir()).expect("a lock");
    let entry = &lock["engines"][0];
    assert_eq!(entry["id"], "javascript-quickjs");
    assert_eq!(
        entry["conformance"],
        serde_json::json!({"passed": 1, "failed": ["returns-two"], "forced": true})
    );
    let listed = sandbox.forge(&["engines", "list"]);
    assert!(
        listed
            .stdout()
            .contains("added with --force: fails returns-two"),
        "{}",
        listed.stdout()
    );
}

#[test]
fn add_runs_the_built_in_kit_and_records_a_clean_pass() {
    let sandbox = Sandbox::new();
    let added = sandbox.forge(&args!["engines", "add", &quickjs()]);
    assert_eq!(added.code(), 0, "{}", added.stderr());
    assert!(
        added.stdout().contains("cases passed"),
        "{}",
        added.stdout()
    );
    let lock = lock(&sandbox.data_dir()).expect("a lock");
    let conformance = &lock["engines"][0]["conformance"];
    assert_eq!(conformance["forced"], false, "{lock:#}");
    assert_eq!(conformance["failed"], serde_json::json!([]));
    assert!(conformance["passed"].as_u64() >= Some(40), "{lock:#}");
}

#[test]
fn bad_kits_and_unknown_engines_get_clear_errors() {
    let sandbox = Sandbox::new();
    let kit = sandbox.data_dir().with_file_name("bad-kit");
    std::fs::create_dir_all(kit.join("no-status")).expect("mkdir");
    std::fs::write(kit.join("no-status/case.json"), r#"{"value": 1}"#).expect("write");
    std::fs::write(kit.join("no-status/script.js"), "return 1").expect("write");
    let bad = sandbox.forge(&args![
        "engines",
        "check",
        "javascript-quickjs",
        "--cases",
        &kit
    ]);
    assert_eq!(bad.code(), 2, "{}", bad.stderr());
    assert!(
        bad.stderr()
            .starts_with("error INVALID_INPUT: no-status/case.json"),
        "{}",
        bad.stderr()
    );
    let unknown = sandbox.forge(&["engines", "check", "cobol"]);
    assert_ne!(unknown.code(), 0);
    assert!(
        unknown.stderr().contains("ENGINE_UNAVAILABLE") && unknown.stderr().contains("cobol"),
        "{}",
        unknown.stderr()
    );
}
