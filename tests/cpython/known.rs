//! `known-failures.txt`: the tests that pass natively and do not pass in the engine, each under
//! the reason why; and the comparison of a run with it.
//!
//! A test is named by its module and its unittest id, `test_json test.test_json.test_fail.…`
//! (a doctest's id, `json.encoder.JSONEncoder.encode`, does not say its module). Under a
//! `reason:` line the tests run in the engine and fail there; under a `not run:` line they are
//! not run in the engine at all, since they stop the run (a trap, a hang) and would take the
//! module's remaining tests with them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One test's outcome on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `pass`, `fail`, `error`, `skip`, `xfail`, `xpass` (the runner's words), or `stopped`.
    pub kind: String,
    pub detail: String,
}

impl Outcome {
    /// Passed, or failed as the test expects (`@expectedFailure`).
    pub fn passes(&self) -> bool {
        self.kind == "pass" || self.kind == "xfail"
    }

    pub fn describe(&self) -> String {
        if self.detail.is_empty() {
            self.kind.clone()
        } else {
            format!("{}: {}", self.kind, self.detail)
        }
    }
}

/// Test id -> outcome, for one module on one side.
pub type Outcomes = BTreeMap<String, Outcome>;

/// `module id` -> reason, and which of them are not run in the engine.
#[derive(Debug, Default)]
pub struct Known {
    pub reasons: BTreeMap<(String, String), String>,
    pub not_run: BTreeSet<(String, String)>,
}

impl Known {
    /// The test ids of `module` that the engine does not run.
    pub fn not_run_in(&self, module: &str) -> Vec<String> {
        self.not_run
            .iter()
            .filter(|(m, _)| m == module)
            .map(|(_, id)| id.clone())
            .collect()
    }
}

/// Reads the list: `reason: …` or `not run: …` lines, each followed by the `MODULE ID` lines it
/// covers; `#` starts a comment line.
pub fn load(path: &Path) -> Known {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut known = Known::default();
    let mut reason: Option<(String, bool)> = None;
    for (number, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), number + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(text) = line.strip_prefix("reason:") {
            reason = Some((text.trim().to_string(), false));
            continue;
        }
        if let Some(text) = line.strip_prefix("not run:") {
            reason = Some((text.trim().to_string(), true));
            continue;
        }
        let Some((why, not_run)) = &reason else {
            panic!("{}: a test before any `reason:` line", at());
        };
        let Some((module, id)) = line.split_once(' ') else {
            panic!("{}: `{line}` is not `MODULE ID`", at());
        };
        let key = (module.to_string(), id.trim().to_string());
        if *not_run {
            known.not_run.insert(key.clone());
        }
        let previous = known.reasons.insert(key, why.clone());
        assert!(previous.is_none(), "{}: {line} is listed twice", at());
    }
    known
}

/// A run held against the list.
#[derive(Debug, Default)]
pub struct Report {
    /// Natively passing tests, and how many of them pass in the engine.
    pub native_pass: usize,
    pub engine_pass: usize,
    /// Engine failures the list names, per reason.
    pub by_reason: BTreeMap<String, usize>,
    /// Natively passing tests that fail in the engine, unlisted: `module id` -> what happened.
    pub unexpected: BTreeMap<String, String>,
    /// Listed tests that are no engine-only failure: `module id` -> what they are instead.
    pub stale: BTreeMap<String, String>,
}

impl Report {
    pub fn known(&self) -> usize {
        self.by_reason.values().sum()
    }

    /// Adds `other` (another module's report) to this one.
    pub fn add(&mut self, other: Report) {
        self.native_pass += other.native_pass;
        self.engine_pass += other.engine_pass;
        for (reason, count) in other.by_reason {
            *self.by_reason.entry(reason).or_default() += count;
        }
        self.unexpected.extend(other.unexpected);
        self.stale.extend(other.stale);
    }
}

/// Holds `module`'s engine outcomes against its native ones and the list. `missing` says why a
/// natively passing test has no outcome in the engine (the run stopped, or a fixture failed).
pub fn compare(
    known: &Known,
    module: &str,
    native: &Outcomes,
    engine: &Outcomes,
    missing: &str,
) -> Report {
    let mut report = Report::default();
    for id in native.iter().filter(|(_, o)| o.passes()).map(|(id, _)| id) {
        report.native_pass += 1;
        let key = (module.to_string(), id.clone());
        let why = match engine.get(id) {
            Some(theirs) if theirs.passes() => {
                report.engine_pass += 1;
                if known.reasons.contains_key(&key) {
                    report
                        .stale
                        .insert(format!("{module} {id}"), "passes in the engine".into());
                }
                continue;
            }
            Some(theirs) => theirs.describe(),
            None => missing.to_string(),
        };
        match known.reasons.get(&key) {
            Some(reason) => *report.by_reason.entry(reason.clone()).or_default() += 1,
            None => {
                report.unexpected.insert(format!("{module} {id}"), why);
            }
        }
    }
    for (m, id) in known.reasons.keys().filter(|(m, _)| m == module) {
        let state = match native.get(id) {
            None => "is not in the suite",
            Some(o) if !o.passes() => "does not pass natively",
            Some(_) => continue,
        };
        report.stale.insert(format!("{m} {id}"), state.into());
    }
    report
}
