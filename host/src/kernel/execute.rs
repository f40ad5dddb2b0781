//! One execution, step by step through the lifecycle of SPEC §4.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::report::{ErrorReport, Metrics, RunReport};
use super::sandbox::{self, SandboxSpec};
use super::verdict::{self, GuestOutcome, Verdict};
use super::{
    ExecutionRequest, ExecutionState, Kernel, Lifecycle, MAX_SOURCE_BYTES, validate_session,
};
use crate::engines::bindings::{RunRequest, ScriptEnginePre};
use crate::engines::{EngineEntry, ExecState, sha256_hex};
use crate::error::{Error, ErrorCode, Result};
use crate::files::{self, InputRecord, JobDir, Provenance, PublishError, PublishedFile, Staged};
use crate::journal::{Closing, ExecutionRecord, JournalInput, Owner, Step};
use crate::output::{Event, EventSink, TaskLog};

/// A fresh execution id: time-ordered, then random.
pub fn new_execution_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(millis);
    hasher.write_u32(std::process::id());
    format!("{millis:012x}{:08x}", hasher.finish() as u32)
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Moves the lifecycle on. The kernel only asks for transitions the diagram allows; a bug here
/// must not take an execution's report down with it, so it is checked in debug builds only.
fn advance(life: &mut Lifecycle, to: ExecutionState) {
    let moved = life.advance(to);
    debug_assert!(moved.is_ok(), "{moved:?}");
}

/// Checks the returned JSON again on the host side: its size first, then that it parses.
fn accept_result(text: &str, max_bytes: u64) -> Result<Value, Verdict> {
    if text.len() as u64 > max_bytes {
        return Err(Verdict::failed(
            ErrorCode::BudgetExceeded,
            format!(
                "the result is {} bytes, over the budget of {max_bytes} bytes",
                text.len()
            ),
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        Verdict::failed(
            ErrorCode::ProtocolViolation,
            format!("the engine returned a result that is not JSON: {e}"),
        )
    })
}

fn choose_engine<'k>(kernel: &'k Kernel, request: &ExecutionRequest) -> Result<&'k EngineEntry> {
    match &request.engine {
        Some(id) => kernel.registry.by_id(id),
        None => kernel
            .registry
            .for_file(std::path::Path::new(&request.filename), &request.source),
    }
}

fn validate(request: &ExecutionRequest) -> Result<()> {
    request.limits.validate()?;
    validate_session(&request.session)?;
    if request.source.len() > MAX_SOURCE_BYTES {
        return Err(Error::invalid_input(format!(
            "the script is {} bytes, over the {MAX_SOURCE_BYTES} bytes accepted",
            request.source.len()
        )));
    }
    if let Some(out) = &request.out_dir {
        files::check_destination(out)?;
    }
    Ok(())
}

/// Where `/output` goes: the caller's folder, or `forge-out/<id>` when the script wrote
/// something and no folder was named.
fn publication_target(request: &ExecutionRequest, job: &JobDir, id: &str) -> Option<PathBuf> {
    if let Some(out) = &request.out_dir {
        return Some(out.clone());
    }
    let wrote_something = std::fs::read_dir(job.output()).is_ok_and(|mut d| d.next().is_some());
    wrote_something.then(|| PathBuf::from("forge-out").join(id))
}

fn stage(
    facts: &Facts<'_>,
    inputs: &[InputRecord],
    job: &JobDir,
    target: &std::path::Path,
    verdict: &Verdict,
) -> Result<Staged, PublishError> {
    let error = verdict.error.as_ref().map(|(code, message)| ErrorReport {
        code: *code,
        message: message.clone(),
        stack: None,
    });
    files::stage(
        &job.output(),
        target,
        &facts.request.limits.publish_limits(),
        facts.id,
        |outputs| {
            let record = Provenance {
                execution_id: facts.id,
                forge_host_version: env!("CARGO_PKG_VERSION"),
                engine: &facts.entry.description.id,
                engine_sha256: &facts.entry.sha256,
                script: &facts.request.filename,
                script_sha256: facts.script_sha256,
                inputs,
                limits: &facts.request.limits,
                started_at: facts.started_at,
                wall_ms: millis(facts.started.elapsed()),
                status: verdict.status.as_str(),
                error: error.as_ref(),
                outputs,
            };
            serde_json::to_value(record).unwrap_or(Value::Null)
        },
    )
}

/// The journal record of a new execution, already through validation and into preparing.
fn new_record(
    id: &str,
    request: &ExecutionRequest,
    entry: &EngineEntry,
    script_sha256: &str,
    started_at: &str,
) -> ExecutionRecord {
    let now = files::utc_timestamp(SystemTime::now());
    ExecutionRecord {
        id: id.to_string(),
        session: request.session.clone(),
        engine: entry.description.id.clone(),
        engine_sha256: entry.sha256.clone(),
        script: request.filename.clone(),
        script_sha256: script_sha256.to_string(),
        inputs: Vec::new(),
        limits: serde_json::to_value(&request.limits).unwrap_or(Value::Null),
        policy: request.policy,
        status: ExecutionState::Preparing,
        steps: vec![
            Step {
                state: ExecutionState::Validating,
                at: started_at.to_string(),
            },
            Step {
                state: ExecutionState::Preparing,
                at: now,
            },
        ],
        error_code: None,
        error_message: None,
        reason: None,
        started_at: started_at.to_string(),
        ended_at: None,
        metrics: None,
        out_dir: None,
        outputs: Vec::new(),
        owner: Owner::current(),
    }
}

pub async fn run(kernel: &Kernel, request: ExecutionRequest) -> Result<RunReport> {
    let started = Instant::now();
    let started_at = files::utc_timestamp(SystemTime::now());
    let id = new_execution_id();
    let mut life = Lifecycle::default();
    validate(&request)?;
    let entry = choose_engine(kernel, &request)?;
    let script_sha256 = sha256_hex(request.source.as_bytes());
    kernel
        .data_dir
        .store_script(&script_sha256, &request.source)?;

    advance(&mut life, ExecutionState::Preparing);
    let log = TaskLog::new(kernel.data_dir.log_path(&id), request.limits.max_log_bytes);
    let facts = Facts {
        id: &id,
        entry,
        request: &request,
        script_sha256: &script_sha256,
        started_at: &started_at,
        started,
        events: log.tee(request.events.clone()),
    };
    let mut record = new_record(&id, &request, entry, &script_sha256, &started_at);
    let prepared = match prepare(kernel, &facts).await {
        Ok(prepared) => prepared,
        Err(error) => {
            // It never ran: one record, already terminal, says why.
            record.status = ExecutionState::Failed;
            record.steps.push(Step {
                state: ExecutionState::Failed,
                at: files::utc_timestamp(SystemTime::now()),
            });
            record.error_code = Some(error.code);
            record.error_message = Some(error.message.clone());
            record.ended_at = Some(files::utc_timestamp(SystemTime::now()));
            let _ = kernel.journal.create(&record);
            return Err(error);
        }
    };

    // The first durable step: from here on a crash leaves a record that reconciliation closes.
    advance(&mut life, ExecutionState::Running);
    record.status = ExecutionState::Running;
    record.steps.push(Step {
        state: ExecutionState::Running,
        at: files::utc_timestamp(SystemTime::now()),
    });
    record.inputs = prepared
        .inputs
        .iter()
        .map(|i| JournalInput {
            name: i.name.clone(),
            size: i.size,
            sha256: i.sha256.clone(),
            source: i.source.display().to_string(),
        })
        .collect();
    kernel.journal.create(&record)?;
    (facts.events)(Event::Started { id: id.clone() });
    let (report, job) = finish(kernel, &facts, prepared, &mut life).await;
    kernel.journal.close(
        &id,
        Closing {
            status: report.status,
            error: report.error.as_ref().map(|e| (e.code, e.message.clone())),
            metrics: Some(report.metrics.clone()),
            calls: report.calls.clone(),
            out_dir: report.out_dir.clone(),
            outputs: report.outputs.clone(),
            passed: passed_through(&life, report.status),
        },
    )?;
    kernel.release_job(job);
    Ok(report)
}

/// The states between the last durable step (`running`) and the terminal one.
fn passed_through(life: &Lifecycle, terminal: ExecutionState) -> Vec<ExecutionState> {
    life.history()
        .iter()
        .copied()
        .skip_while(|s| *s != ExecutionState::Running)
        .skip(1)
        .filter(|s| *s != terminal)
        .collect()
}

/// What a run knows about itself from the start.
struct Facts<'a> {
    id: &'a str,
    entry: &'a EngineEntry,
    request: &'a ExecutionRequest,
    script_sha256: &'a str,
    started_at: &'a str,
    started: Instant,
    events: EventSink,
}

/// Everything an execution needs before its guest starts.
struct Prepared {
    pre: ScriptEnginePre<ExecState>,
    job: JobDir,
    inputs: Vec<InputRecord>,
    store: wasmtime::Store<ExecState>,
    observers: sandbox::Observers,
    run_request: RunRequest,
}

/// Loads the engine, the job folders with the inputs, the state snapshot, and the store.
async fn prepare(kernel: &Kernel, facts: &Facts<'_>) -> Result<Prepared> {
    let request = facts.request;
    let limits = &request.limits;
    let (pre, _) = kernel
        .registry
        .load(facts.entry, limits.fuel.is_some())
        .await?;
    let job = kernel.job(facts.id, request.keep_job)?;
    let inputs = job.copy_inputs(&request.inputs)?;
    if let Some(expected) = &request.expected_inputs {
        check_inputs(expected, &inputs)?;
    }
    let snapshot = kernel
        .state
        .snapshot(&request.session)
        .map_err(|e| Error::new(e.code(), e.to_string()))?;
    let (store, observers) = sandbox::build_store(
        &pre,
        SandboxSpec {
            limits,
            policy: request.policy,
            tools: kernel.tools.clone(),
            snapshot,
            job: &job,
            events: Some(facts.events.clone()),
        },
    )?;
    let run_request = sandbox::run_request(&request.source, &request.filename, limits, &inputs);
    Ok(Prepared {
        pre,
        job,
        inputs,
        store,
        observers,
        run_request,
    })
}

/// Runs the guest, decides the verdict, commits state and publishes outputs.
async fn finish(
    kernel: &Kernel,
    facts: &Facts<'_>,
    prepared: Prepared,
    life: &mut Lifecycle,
) -> (RunReport, JobDir) {
    let Prepared {
        pre,
        job,
        inputs,
        store,
        observers,
        run_request,
    } = prepared;
    let request = facts.request;
    let limits = &request.limits;
    let id = facts.id;
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let cancel = request.cancel.clone().unwrap_or_default();
    let finished = sandbox::race(pre, store, run_request, deadline, cancel).await;

    advance(life, ExecutionState::Collecting);
    let memory_denied = observers.memory.denied();
    let mut fuel_consumed = None;
    let mut value = None;
    let (mut verdict, store) = match finished {
        Err(stop) => (verdict::decide(Some(stop), None, memory_denied), None),
        Ok((outcome, store)) => {
            if let Some(fuel) = limits.fuel {
                fuel_consumed = store.get_fuel().ok().map(|left| fuel.saturating_sub(left));
            }
            let returned = match &outcome {
                GuestOutcome::Returned(text) => text.clone(),
                _ => None,
            };
            let mut verdict = verdict::decide(None, Some(outcome), memory_denied);
            verdict::add_last_words(&mut verdict, &observers.stderr.contents());
            if verdict.status == ExecutionState::Succeeded
                && let Some(text) = returned
            {
                match accept_result(&text, limits.max_result_bytes) {
                    Ok(accepted) => value = Some(accepted),
                    Err(failed) => verdict = failed,
                }
            }
            (verdict, Some(store))
        }
    };

    let target = publication_target(request, &job, id);
    let mut staged = None;
    if verdict.status == ExecutionState::Succeeded {
        advance(life, ExecutionState::Committing);
        // Validate and stage the publication first: state is committed only when the outputs
        // can be published, and the outputs appear only once state is committed.
        if let Some(target) = &target {
            match stage(facts, &inputs, &job, target, &verdict) {
                Ok(ready) => staged = Some(ready),
                Err(error) => verdict = Verdict::failed(error.code(), error.to_string()),
            }
        }
        if verdict.status == ExecutionState::Succeeded
            && let Some(view) = store.as_ref().map(|s| s.data().state())
            && !view.changes().is_empty()
            && let Err(error) = kernel.state.commit(
                &request.session,
                view.base(),
                view.changes(),
                limits.max_state_bytes,
            )
        {
            verdict = Verdict::failed(error.code(), error.to_string());
            staged = None;
        }
    }
    if verdict.status != ExecutionState::Succeeded {
        value = None;
        if request.publish_on_error
            && staged.is_none()
            && let Some(target) = &target
        {
            // The run failed either way; a rejected partial publication does not change why.
            staged = stage(facts, &inputs, &job, target, &verdict).ok();
        }
    }
    let mut outputs: Vec<PublishedFile> = Vec::new();
    let mut out_dir = None;
    if let Some(ready) = staged {
        match ready.commit() {
            Ok(files) => {
                outputs = files;
                out_dir = target.as_ref().map(|t| t.display().to_string());
            }
            Err(error) if verdict.status == ExecutionState::Succeeded => {
                verdict = Verdict::failed(error.code(), error.to_string());
            }
            Err(_) => {}
        }
    }
    advance(life, verdict.status);
    drop(store);

    let calls = observers.calls.snapshot();
    let report = RunReport {
        id: id.to_string(),
        engine: facts.entry.description.id.clone(),
        engine_sha256: facts.entry.sha256.clone(),
        script_sha256: facts.script_sha256.to_string(),
        status: verdict.status,
        session: request.session.clone(),
        value,
        error: verdict.error.map(|(code, message)| ErrorReport {
            code,
            message,
            stack: verdict.stack,
        }),
        stdout: observers.stdout.contents(),
        stderr: observers.stderr.contents(),
        text: observers.texts.values(),
        inputs,
        out_dir,
        outputs,
        job_dir: job.kept().then(|| job.root().display().to_string()),
        metrics: Metrics {
            wall_ms: millis(facts.started.elapsed()),
            fuel_consumed,
            memory_peak_bytes: observers.memory.peak_bytes(),
            tool_calls: u32::try_from(calls.len()).unwrap_or(u32::MAX),
            stdout_bytes: observers.stdout.total_bytes(),
            stderr_bytes: observers.stderr.total_bytes(),
        },
        started_at: facts.started_at.to_string(),
        calls,
    };
    (report, job)
}

/// Refuses a rerun whose inputs no longer hash to what the first run copied.
fn check_inputs(expected: &[(String, String)], copied: &[InputRecord]) -> Result<()> {
    for (name, sha256) in expected {
        match copied.iter().find(|c| c.name == *name) {
            Some(input) if input.sha256 == *sha256 => {}
            Some(input) => {
                return Err(Error::invalid_input(format!(
                    "input `{name}` changed since the first run (sha256 {} now, {sha256} then)",
                    input.sha256
                )));
            }
            None => {
                return Err(Error::invalid_input(format!(
                    "input `{name}` of the first run is gone"
                )));
            }
        }
    }
    if let Some(extra) = copied
        .iter()
        .find(|c| !expected.iter().any(|(name, _)| *name == c.name))
    {
        return Err(Error::invalid_input(format!(
            "input `{}` was not part of the first run",
            extra.name
        )));
    }
    Ok(())
}
