//! `known-failures.txt`: the tests that pass natively and fail in the engine, each under the
//! `reason:` line that says why; and the comparison of a run with it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::Native;

/// Test path -> reason.
pub type Known = BTreeMap<String, String>;

/// Reads the list: `reason: …` lines, each followed by the paths it covers (relative to
/// `test/`); `#` starts a comment line.
pub fn load(path: &Path) -> Known {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut known = Known::new();
    let mut reason: Option<String> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(text) = line.strip_prefix("reason:") {
            reason = Some(text.trim().to_string());
            continue;
        }
        let Some(reason) = &reason else {
            panic!(
                "{}:{}: a test before any `reason:` line",
                path.display(),
                number + 1
            );
        };
        let previous = known.insert(line.to_string(), reason.clone());
        assert!(
            previous.is_none(),
            "{}:{}: {line} is listed twice",
            path.display(),
            number + 1
        );
    }
    known
}

/// A run held against the list.
pub struct Report {
    /// Failures in the engine that the list names.
    pub known: usize,
    /// Known failures per reason.
    pub by_reason: BTreeMap<String, usize>,
    /// Tests that pass natively and fail in the engine, unlisted: test -> why it failed.
    pub unexpected: BTreeMap<String, String>,
    /// Listed tests that are no engine-only failure: test -> what they are instead.
    pub stale: BTreeMap<String, String>,
}

/// Compares the engine's `failures` (among the natively passing tests of `native`) with
/// `known`. `whole` says the whole suite ran: only then is a listed test that did not run stale.
pub fn compare(
    known: &Known,
    native: &[Native],
    failures: &BTreeMap<String, String>,
    whole: bool,
) -> Report {
    let mut report = Report {
        known: 0,
        by_reason: BTreeMap::new(),
        unexpected: BTreeMap::new(),
        stale: BTreeMap::new(),
    };
    for (test, why) in failures {
        match known.get(test) {
            Some(reason) => {
                report.known += 1;
                *report.by_reason.entry(reason.clone()).or_default() += 1;
            }
            None => {
                report.unexpected.insert(test.clone(), why.clone());
            }
        }
    }
    let natively: BTreeMap<&str, &Native> = native.iter().map(|n| (n.test.as_str(), n)).collect();
    for test in known.keys() {
        let state = match natively.get(test.as_str()) {
            None if whole => "is not in the suite",
            None => continue,
            Some(n) if n.skip.is_some() => "is skipped",
            Some(n) if !n.pass => "fails natively too",
            Some(_) if !failures.contains_key(test) => "passes in the engine",
            Some(_) => continue,
        };
        report.stale.insert(test.clone(), state.to_string());
    }
    report
}
