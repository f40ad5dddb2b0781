//! Runs the kit against engines: each engine gets a kernel over a scratch data directory of its
//! own (so no case sees another's state or journal), a baseline run of an empty script (what the
//! engine needs just to start, which relative limits add to), then every case that has a script
//! in its language, a few at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use super::case::{Baseline, Kit, KitCase};
use super::kit_tools;
use crate::datadir::DataDir;
use crate::engines::{Cache, EngineEntry, EngineRegistry, stage_candidate};
use crate::error::{Error, ErrorCode, Result};
use crate::kernel::{ExecutionRequest, Kernel, RunReport};
use crate::output::{Event, EventSink};
use crate::state::{Changes, Commit, RedbStateStore, StateStore};

/// How one case went on one engine.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case id.
    pub case: String,
    /// The script that ran.
    pub script: String,
    /// Whether every expectation held.
    pub passed: bool,
    /// Each expectation that did not hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Wall time of the run.
    pub wall_ms: u64,
}

/// How one engine did on the kit.
#[derive(Debug, Clone, Serialize)]
pub struct EngineReport {
    /// Engine id.
    pub id: String,
    /// sha256 of its component.
    pub sha256: String,
    /// What it needs to run an empty script, when that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases with no script in its language, or for other engines only.
    pub not_applicable: usize,
    /// Every case that ran, by id.
    pub cases: Vec<CaseResult>,
    /// Why the engine could not be checked at all (it does not run an empty script).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl EngineReport {
    /// Whether it passed the whole kit.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.failed == 0
    }

    /// The ids of the cases it failed.
    pub fn failed_cases(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.case.clone())
            .collect()
    }
}

/// Runs `kit` against the engines pinned in `engine_dirs` (every one, or only `only`).
/// Problems finding engines are returned beside the reports.
pub async fn check_engines(
    kit: &Kit,
    engine_dirs: &[PathBuf],
    only: Option<&str>,
) -> Result<(Vec<EngineReport>, Vec<String>)> {
    let registry = EngineRegistry::discover(engine_dirs, Cache::default_location()).await;
    let entries: Vec<EngineEntry> = registry
        .entries()
        .iter()
        .filter(|e| only.is_none_or(|id| id == e.description.id))
        .cloned()
        .collect();
    if let Some(id) = only
        && entries.is_empty()
    {
        return Err(Error::engine_unavailable(format!(
            "no engine `{id}`{}",
            if registry.problems().is_empty() {
                String::new()
            } else {
                format!(" ({})", registry.problems().join("; "))
            }
        )));
    }
    let mut reports = Vec::new();
    for entry in &entries {
        reports.push(check_engine(kit, engine_dirs, entry).await?);
    }
    Ok((reports, registry.problems().to_vec()))
}

/// Runs `kit` against the component at `file`, which need not be registered anywhere.
pub async fn check_component(kit: &Kit, file: &Path) -> Result<EngineReport> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", file.display())))?;
    check_bytes(kit, &bytes, &file.display().to_string()).await
}

/// Runs `kit` against a component's `bytes` (`label` names it in errors).
pub async fn check_bytes(kit: &Kit, bytes: &[u8], label: &str) -> Result<EngineReport> {
    let scratch = scratch_dir()?;
    let dir = scratch.path().to_path_buf();
    let sha256 = stage_candidate(bytes, &dir)?;
    let (mut reports, problems) = check_engines(kit, std::slice::from_ref(&dir), None).await?;
    match reports.pop() {
        Some(report) if report.sha256 == sha256 => Ok(report),
        _ => Err(Error::engine_unavailable(format!(
            "{label} is not a forge:engine component: {}",
            problems.join("; ")
        ))),
    }
}

fn scratch_dir() -> Result<tempfile::TempDir> {
    tempfile::tempdir().map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))
}

/// Cases run at once: enough to overlap the ones that wait, few enough that none starves.
fn parallel_cases() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(2, 4)
}

async fn check_engine(
    kit: &Kit,
    engine_dirs: &[PathBuf],
    entry: &EngineEntry,
) -> Result<EngineReport> {
    let scratch = scratch_dir()?;
    let data = DataDir::new(scratch.path().join("data"));
    let state: Arc<dyn StateStore> = Arc::new(RedbStateStore::new(data.clone()));
    let kernel = Kernel::builder(data)
        .engine_dirs(engine_dirs.to_vec())
        .tools(kit_tools::registry(state))
        .build()
        .await?;
    let id = entry.description.id.clone();
    let mut report = EngineReport {
        id: id.clone(),
        sha256: entry.sha256.clone(),
        baseline: None,
        passed: 0,
        failed: 0,
        not_applicable: 0,
        cases: Vec::new(),
        error: None,
    };
    let extensions = &entry.description.extensions;
    let baseline = match baseline(&kernel, &id, extensions).await {
        Ok(baseline) => baseline,
        Err(error) => {
            report.error = Some(format!("an empty script does not run: {error}"));
            return Ok(report);
        }
    };
    report.baseline = Some(baseline);
    let runnable: Vec<(&KitCase, &str, &str)> = kit
        .cases
        .iter()
        .filter(|c| c.case.applies_to(&id))
        .filter_map(|c| {
            let (name, source) = c.script_for(extensions)?;
            Some((c, name, source))
        })
        .collect();
    report.not_applicable = kit.cases.len() - runnable.len();
    let out_root = scratch.path().join("out");
    let bench = Bench {
        kernel: &kernel,
        engine: &id,
        baseline,
        out_root: &out_root,
    };
    let mut results: Vec<CaseResult> = futures::stream::iter(runnable)
        .map(|(case, script, source)| run_case(&bench, case, script, source))
        .buffer_unordered(parallel_cases())
        .collect()
        .await;
    results.sort_by(|a, b| a.case.cmp(&b.case));
    report.passed = results.iter().filter(|r| r.passed).count();
    report.failed = results.len() - report.passed;
    report.cases = results;
    Ok(report)
}

/// What an empty script needs: its peak memory, and its fuel (metered for this run only).
async fn baseline(kernel: &Kernel, id: &str, extensions: &[String]) -> Result<Baseline> {
    let extension = extensions.first().map(String::as_str).unwrap_or_default();
    let limits = crate::limits::Limits {
        fuel: Some(u64::MAX / 2),
        ..Default::default()
    };
    let request = ExecutionRequest::builder("", format!("baseline{extension}"))
        .engine(id.to_string())
        .session("kit-baseline")
        .limits(limits)
        .build();
    let report = kernel.run(request).await?;
    if let Some(error) = report.error {
        return Err(Error::new(error.code, error.message));
    }
    Ok(Baseline {
        memory_bytes: report.metrics.memory_peak_bytes,
        fuel: report.metrics.fuel_consumed.unwrap_or_default(),
    })
}

/// What every case run of one engine shares.
struct Bench<'a> {
    kernel: &'a Kernel,
    engine: &'a str,
    baseline: Baseline,
    out_root: &'a Path,
}

async fn run_case(bench: &Bench<'_>, kit_case: &KitCase, script: &str, source: &str) -> CaseResult {
    let started = Instant::now();
    let outcome = run_and_compare(bench, kit_case, script, source).await;
    CaseResult {
        case: kit_case.id.clone(),
        script: script.to_string(),
        passed: matches!(&outcome, Ok(failures) if failures.is_empty()),
        failures: match outcome {
            Ok(failures) => failures,
            Err(error) => vec![format!("did not run: {error}")],
        },
        wall_ms: started.elapsed().as_millis() as u64,
    }
}

async fn run_and_compare(
    bench: &Bench<'_>,
    kit_case: &KitCase,
    script: &str,
    source: &str,
) -> Result<Vec<String>> {
    let Bench {
        kernel,
        engine,
        baseline,
        out_root,
    } = *bench;
    let progress: Arc<Mutex<Vec<Value>>> = Arc::default();
    let case = &kit_case.case;
    let session = kit_case.id.clone();
    if !case.state_before.is_empty() {
        let store = kernel.state_store();
        let base = store.snapshot(&session).map_err(state_error)?;
        let changes: Changes = case
            .state_before
            .iter()
            .map(|(key, value)| (key.clone(), Some(value.to_string())))
            .collect();
        store
            .commit(&session, &Commit::new(&base, &changes, u64::MAX))
            .map_err(state_error)?;
    }
    let out_dir = out_root.join(&kit_case.id);
    let mut request = ExecutionRequest::builder(source, script)
        .engine(engine.to_string())
        .limits(case.limits(baseline)?)
        .session(session.clone())
        .out_dir(out_dir.clone());
    if case.progress.is_some() {
        let sink = progress.clone();
        let events: EventSink = Arc::new(move |event| {
            if let Event::Progress {
                message,
                completed,
                total,
            } = event
                && let Ok(mut seen) = sink.lock()
            {
                let (completed, total) = (count(completed), count(total));
                seen.push(json!({"message": message, "completed": completed, "total": total}));
            }
        });
        request = request.events(Some(events));
    }
    let report = kernel.run(request.build()).await?;
    let progress = progress.lock().map(|p| p.clone()).unwrap_or_default();
    let state_after = match &case.state_after {
        Some(_) => Some(session_state(kernel, &session)?),
        None => None,
    };
    Ok(compare(
        case,
        &report,
        &progress,
        &out_dir,
        state_after.as_ref(),
    ))
}

/// A progress count as JSON: a whole number as an integer, so that `1` in a case matches `1.0`.
fn count(value: Option<f64>) -> Value {
    match value {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => json!(v as i64),
        Some(v) => json!(v),
        None => Value::Null,
    }
}

fn state_error(error: crate::state::CommitError) -> Error {
    Error::from_source(error.code(), error)
}

fn session_state(kernel: &Kernel, session: &str) -> Result<BTreeMap<String, Value>> {
    let snapshot = kernel
        .state_store()
        .snapshot(session)
        .map_err(state_error)?;
    Ok(snapshot
        .entries
        .iter()
        .filter_map(|(key, entry)| {
            let value = serde_json::from_str(entry.value.as_deref()?).ok()?;
            Some((key.clone(), value))
        })
        .collect())
}

/// Every expectation of `case` that `report` breaks, as a sentence.
fn compare(
    case: &super::case::Case,
    report: &RunReport,
    progress: &[Value],
    out_dir: &Path,
    state_after: Option<&BTreeMap<String, Value>>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut expect = |holds: bool, failure: String| {
        if !holds {
            failures.push(failure);
        }
    };
    let error = report.error.as_ref();
    let ended = match error {
        Some(error) => format!(
            "{} {}: {}",
            report.status.as_str(),
            error.code,
            cut(&error.message)
        ),
        None => report.status.as_str().to_string(),
    };
    expect(
        report.status.as_str() == case.status,
        format!("status: expected {}, got {ended}", case.status),
    );
    let code = error.map(|e| e.code.as_str());
    if code != case.error_code.as_deref() {
        expect(
            false,
            format!(
                "error code: expected {}, got {}",
                case.error_code.as_deref().unwrap_or("none"),
                code.unwrap_or("none")
            ),
        );
    }
    let message = error.map(|e| e.message.as_str()).unwrap_or_default();
    let stack = error.and_then(|e| e.stack.as_deref()).unwrap_or_default();
    if let Some(part) = &case.message_contains {
        expect(
            message.contains(part.as_str()),
            format!(
                "message: expected it to contain {part:?}, got {:?}",
                cut(message)
            ),
        );
    }
    if let Some(line) = case.error_line {
        expect(
            names_number(message, line) || names_number(stack, line),
            format!(
                "error line: expected the message or stack to name line {line}, got {:?}",
                cut(message)
            ),
        );
    }
    if let Some(part) = &case.stack_contains {
        expect(
            stack.contains(part.as_str()),
            format!(
                "stack: expected it to contain {part:?}, got {:?}",
                cut(stack)
            ),
        );
    }
    if let Some(value) = &case.value {
        expect(
            report.value.as_ref() == Some(value),
            format!(
                "value: expected {value}, got {}",
                shown(report.value.as_ref())
            ),
        );
    }
    if case.no_value {
        expect(
            report.value.is_none(),
            format!("value: expected none, got {}", shown(report.value.as_ref())),
        );
    }
    if let Some(text) = &case.text {
        expect(
            &report.text == text,
            format!(
                "text: expected {}, got {}",
                Value::from(text.clone()),
                Value::from(report.text.clone())
            ),
        );
    }
    if let Some(expected) = &case.progress {
        expect(
            progress == expected.as_slice(),
            format!(
                "progress: expected {}, got {}",
                Value::from(expected.clone()),
                Value::from(progress.to_vec())
            ),
        );
    }
    for (name, tail, part, at_most) in [
        (
            "stdout",
            &report.stdout,
            &case.stdout_contains,
            case.stdout_at_most,
        ),
        (
            "stderr",
            &report.stderr,
            &case.stderr_contains,
            case.stderr_at_most,
        ),
    ] {
        if let Some(part) = part {
            expect(
                tail.contains(part.as_str()),
                format!(
                    "{name}: expected it to contain {part:?}, got {:?}",
                    cut(tail)
                ),
            );
        }
        if let Some(at_most) = at_most {
            expect(
                tail.len() as u64 <= at_most,
                format!(
                    "{name}: expected at most {at_most} bytes retained, got {}",
                    tail.len()
                ),
            );
        }
    }
    if let Some(files) = &case.files {
        let published: BTreeMap<String, String> = report
            .outputs
            .iter()
            .map(|file| {
                let text = std::fs::read(out_dir.join(&file.path))
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .unwrap_or_else(|e| format!("<unreadable: {e}>"));
                (file.path.clone(), text)
            })
            .collect();
        expect(
            &published == files,
            format!("published files: expected {files:?}, got {published:?}"),
        );
    }
    if let (Some(expected), Some(actual)) = (&case.state_after, state_after) {
        expect(
            expected == actual,
            format!("state after: expected {expected:?}, got {actual:?}"),
        );
    }
    failures
}

/// Whether `text` names `number` as a number of its own (`:3:`, `line 3`), not inside another.
fn names_number(text: &str, number: u32) -> bool {
    let digits = number.to_string();
    text.match_indices(&digits).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + digits.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "none".to_string(), |v| cut(&v.to_string()).to_string())
}

/// At most 300 bytes of `text`, for a failure's line.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::names_number;

    #[test]
    fn a_line_number_is_found_only_as_a_whole_number() {
        assert!(names_number("script.lua:3: unexpected symbol", 3));
        assert!(names_number("SyntaxError at line 3", 3));
        assert!(!names_number("script.js:13:2", 3));
        assert!(!names_number("", 3));
    }
}
