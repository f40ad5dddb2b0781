//! One conformance case: a `case.json` saying how a run must end, and one script per language.
//! The format is language-neutral on purpose, so that an engine author adds a `script.<ext>` for
//! their language beside the others and nothing else. docs/engines.md documents every field.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::limits::{LimitSpec, Limits, MAX_MEMORY_BYTES, set_limit};

/// The expectations of a case (`case.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// One line: what the case shows.
    #[serde(default)]
    pub about: String,
    /// Limits, as `--config` takes them (`{"timeout": "1s"}`). `memory` and `fuel` may be
    /// relative to what the engine needs to run an empty script: `"+32MiB"`, `"+5000000"`.
    #[serde(default)]
    pub limits: BTreeMap<String, Value>,
    /// Only these engine ids run the case (a case about one profile's packages).
    #[serde(default)]
    pub engines: Vec<String>,
    /// The session's state before the run.
    #[serde(default)]
    pub state_before: BTreeMap<String, Value>,
    /// `succeeded`, `failed`, `timed_out` or `cancelled`.
    pub status: String,
    /// The error code, when it did not succeed.
    pub error_code: Option<String>,
    /// Text the error message contains.
    pub message_contains: Option<String>,
    /// A line number the error message or stack names (a syntax error's line).
    pub error_line: Option<u32>,
    /// Text the error's stack or traceback contains (a function name of the script).
    pub stack_contains: Option<String>,
    /// The result.
    pub value: Option<Value>,
    /// The run returns no result.
    #[serde(default)]
    pub no_value: bool,
    /// Every `text()` value, in order.
    pub text: Option<Vec<Value>>,
    /// Every progress report, in order: `{"message", "completed", "total"}`.
    pub progress: Option<Vec<Value>>,
    /// Text the retained stdout contains.
    pub stdout_contains: Option<String>,
    /// Text the retained stderr contains.
    pub stderr_contains: Option<String>,
    /// The most bytes the retained stdout may hold (a flood is cut to its tail).
    pub stdout_at_most: Option<u64>,
    /// The most bytes the retained stderr may hold.
    pub stderr_at_most: Option<u64>,
    /// Every published file (path below `/output` -> its text); `{}` when nothing may be.
    pub files: Option<BTreeMap<String, String>>,
    /// The session's whole state after the run.
    pub state_after: Option<BTreeMap<String, Value>>,
}

/// What an engine needs just to start: an empty script's peak memory and fuel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Baseline {
    /// Peak linear memory and tables of the empty run.
    pub memory_bytes: u64,
    /// Fuel the empty run used.
    pub fuel: u64,
}

impl Case {
    /// Reads a `case.json`.
    pub fn parse(name: &str, text: &str) -> Result<Case> {
        let case: Case =
            serde_json::from_str(text).map_err(|e| Error::invalid_input(format!("{name}: {e}")))?;
        const STATUSES: [&str; 4] = ["succeeded", "failed", "timed_out", "cancelled"];
        if !STATUSES.contains(&case.status.as_str()) {
            return Err(Error::invalid_input(format!(
                "{name}: status `{}` is not one of {}",
                case.status,
                STATUSES.join(", ")
            )));
        }
        if (case.status == "succeeded") == case.error_code.is_some() {
            return Err(Error::invalid_input(format!(
                "{name}: a case that succeeds has no error_code, and any other has one"
            )));
        }
        case.limits(Baseline {
            memory_bytes: 0,
            fuel: 0,
        })
        .map_err(|e| Error::invalid_input(format!("{name}: {}", e.message)))?;
        Ok(case)
    }

    /// Whether the case applies to engine `id`.
    pub fn applies_to(&self, id: &str) -> bool {
        self.engines.is_empty() || self.engines.iter().any(|e| e == id)
    }

    /// The limits of the run, relative ones added to `baseline`.
    pub fn limits(&self, baseline: Baseline) -> Result<Limits> {
        let mut limits = Limits::default();
        for (key, value) in &self.limits {
            let relative = value.as_str().and_then(|text| text.strip_prefix('+'));
            let Some(extra) = relative else {
                set_limit(&mut limits, key, value)?;
                continue;
            };
            let spec = LimitSpec::named(key)
                .ok_or_else(|| Error::invalid_input(format!("unknown limit `{key}`")))?;
            let extra = spec
                .parse(extra)
                .map_err(|message| Error::invalid_input(format!("limit `{key}`: {message}")))?;
            let mut parsed = Limits::default();
            (spec.set)(&mut parsed, extra);
            match key.as_str() {
                "memory" => {
                    limits.memory_bytes =
                        (baseline.memory_bytes + parsed.memory_bytes).min(MAX_MEMORY_BYTES);
                }
                "fuel" => {
                    limits.fuel = parsed.fuel.map(|fuel| baseline.fuel.saturating_add(fuel));
                }
                _ => {
                    return Err(Error::invalid_input(format!(
                        "limit `{key}`: only memory and fuel may be relative (`+...`)"
                    )));
                }
            }
        }
        Ok(limits)
    }
}

/// A case with its scripts.
#[derive(Debug, Clone)]
pub struct KitCase {
    /// The folder name: the case's id.
    pub id: String,
    /// Its expectations.
    pub case: Case,
    /// Script file name -> source (`script.js`, `script.py`, ...).
    pub scripts: BTreeMap<String, String>,
}

impl KitCase {
    /// The script for an engine running `extensions`, with its file name.
    pub fn script_for(&self, extensions: &[String]) -> Option<(&str, &str)> {
        self.scripts
            .iter()
            .find(|(name, _)| {
                extensions
                    .iter()
                    .any(|extension| name.strip_prefix("script") == Some(extension.as_str()))
            })
            .map(|(name, source)| (name.as_str(), source.as_str()))
    }
}

/// Every case of the kit.
#[derive(Debug, Clone)]
pub struct Kit {
    /// Sorted by id.
    pub cases: Vec<KitCase>,
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/conformance_cases.rs"));
}

impl Kit {
    /// The kit compiled into this binary (the repository's `tests/cases/`).
    pub fn embedded() -> Result<Kit> {
        Kit::from_files(
            embedded::FILES
                .iter()
                .map(|(case, name, text)| (case.to_string(), name.to_string(), text.to_string())),
        )
    }

    /// The kit in `dir`: one folder per case, each with a `case.json` and `script.<ext>` files.
    pub fn from_dir(dir: &Path) -> Result<Kit> {
        let unreadable = |path: &Path, e: std::io::Error| {
            Error::invalid_input(format!("{}: {e}", path.display()))
        };
        let mut files = Vec::new();
        for folder in std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
            let folder = folder.map_err(|e| unreadable(dir, e))?.path();
            if !folder.is_dir() {
                continue;
            }
            let case = folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            for file in std::fs::read_dir(&folder).map_err(|e| unreadable(&folder, e))? {
                let path = file.map_err(|e| unreadable(&folder, e))?.path();
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !path.is_file() || !(name == "case.json" || name.starts_with("script.")) {
                    continue;
                }
                let bytes = std::fs::read(&path).map_err(|e| unreadable(&path, e))?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    Error::invalid_input(format!("{} is not UTF-8 text", path.display()))
                })?;
                files.push((case.clone(), name, text));
            }
        }
        let kit = Kit::from_files(files)?;
        if kit.cases.is_empty() {
            return Err(Error::invalid_input(format!(
                "{} holds no case (a folder with a case.json)",
                dir.display()
            )));
        }
        Ok(kit)
    }

    fn from_files(files: impl IntoIterator<Item = (String, String, String)>) -> Result<Kit> {
        let mut folders: BTreeMap<String, (Option<String>, BTreeMap<String, String>)> =
            BTreeMap::new();
        for (case, name, text) in files {
            let folder = folders.entry(case).or_default();
            if name == "case.json" {
                folder.0 = Some(text);
            } else if name.starts_with("script.") {
                folder.1.insert(name, text);
            }
        }
        let mut cases = Vec::new();
        for (id, (json, scripts)) in folders {
            let Some(json) = json else {
                return Err(Error::invalid_input(format!(
                    "case `{id}` has no case.json"
                )));
            };
            let case = Case::parse(&format!("{id}/case.json"), &json)?;
            if scripts.is_empty() {
                return Err(Error::invalid_input(format!("case `{id}` has no script")));
            }
            cases.push(KitCase { id, case, scripts });
        }
        Ok(Kit { cases })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn every_embedded_case_reads() {
        let kit = Kit::embedded().expect("the embedded kit");
        assert!(kit.cases.len() > 50, "{} cases", kit.cases.len());
        assert!(kit.cases.iter().any(|c| c.id == "echo-round-trip"));
    }

    #[test]
    fn memory_and_fuel_may_be_relative_to_the_start() {
        let case = Case::parse(
            "t",
            r#"{"limits": {"memory": "+32MiB", "fuel": "+1000", "timeout": "1s"}, "status": "succeeded"}"#,
        )
        .expect("case");
        let limits = case
            .limits(Baseline {
                memory_bytes: 70 * MIB,
                fuel: 500,
            })
            .expect("limits");
        assert_eq!(limits.memory_bytes, 102 * MIB);
        assert_eq!(limits.fuel, Some(1500));
        assert_eq!(limits.timeout, std::time::Duration::from_secs(1));
    }

    #[test]
    fn bad_cases_are_refused_with_their_name() {
        for text in [
            r#"{"status": "won"}"#,
            r#"{"status": "failed"}"#,
            r#"{"status": "succeeded", "error_code": "X"}"#,
            r#"{"status": "succeeded", "limits": {"timeout": "+1s"}}"#,
            r#"{"status": "succeeded", "limits": {"speed": 1}}"#,
            r#"{"status": "succeeded", "surprise": 1}"#,
        ] {
            let error = Case::parse("odd/case.json", text).expect_err(text);
            assert!(
                error.message.starts_with("odd/case.json"),
                "{}",
                error.message
            );
        }
        assert!(Case::parse("t", &json!({"status": "succeeded"}).to_string()).is_ok());
    }

    #[test]
    fn the_script_is_picked_by_the_engines_extensions() {
        let kit = Kit::from_files([
            (
                "a".into(),
                "case.json".into(),
                r#"{"status": "succeeded"}"#.into(),
            ),
            ("a".into(), "script.js".into(), "return 1".into()),
            ("a".into(), "script.py".into(), "pass".into()),
        ])
        .expect("kit");
        let case = &kit.cases[0];
        let js = [".js".to_string(), ".mjs".to_string()];
        assert_eq!(case.script_for(&js), Some(("script.js", "return 1")));
        assert_eq!(case.script_for(&[".lua".to_string()]), None);
    }
}
