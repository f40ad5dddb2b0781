//! One execution, step by step through its lifecycle: validate, prepare, run under
//! the deadline, then [`settle`](super::settle) how it ended, and close its journal record.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures::{FutureExt, TryFutureExt};

use super::facts::{Facts, advance};
use super::report::RunReport;
use super::sandbox::{self, SandboxSpec};
use super::settle;
use super::taped;
use super::{ExecutionRequest, Kernel, Lifecycle, check_script_size, validate_session};
use crate::engines::bindings::{RunRequest, ScriptEnginePre};
use crate::engines::{EngineEntry, ExecState, Runtime};
use crate::error::{Error, Result};
use crate::files::{self, InputRecord, JobDir};
use crate::journal::{
    Closing, ExecutionRecord, ExecutionState, JournalInput, JournalPackage, Owner, Step,
};
use crate::output::{Event, TaskLog};
use crate::packages;
use crate::primitives::{now_utc, sha256_hex};
use crate::tape::Deck;
use crate::tools::RecordDurable;

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
    check_script_size(request.source.len() as u64, request.limits.max_script_bytes)?;
    if let Some(out) = &request.out_dir {
        files::check_destination(out)?;
    }
    Ok(())
}

/// The journal record of a new execution, already through validation and into preparing.
fn new_record(facts: &Facts<'_>, state_store: Option<String>) -> ExecutionRecord {
    let request = facts.request;
    ExecutionRecord {
        id: facts.id.to_string(),
        session: request.session.clone(),
        engine: facts.entry.description.id.clone(),
        engine_sha256: facts.entry.sha256.clone(),
        script: request.filename.clone(),
        script_sha256: facts.script_sha256.to_string(),
        inputs: Vec::new(),
        packages: facts.packages.to_vec(),
        package_lock: request
            .package_lock
            .as_ref()
            .map(|p| p.display().to_string()),
        limits: serde_json::to_value(&request.limits).unwrap_or_default(),
        policy: request.policy.clone(),
        status: ExecutionState::Preparing,
        steps: vec![
            Step {
                state: ExecutionState::Validating,
                at: facts.started_at.to_string(),
            },
            Step {
                state: ExecutionState::Preparing,
                at: now_utc(),
            },
        ],
        error_code: None,
        error_message: None,
        reason: None,
        started_at: facts.started_at.to_string(),
        ended_at: None,
        metrics: None,
        out_dir: None,
        outputs: Vec::new(),
        owner: Owner::current(),
        replay_of: request
            .replay
            .as_ref()
            .filter(|r| r.is_replay())
            .map(|r| r.of.clone()),
        pending: None,
        resumes: request
            .replay
            .as_ref()
            .filter(|r| !r.is_replay())
            .map(|r| r.of.clone()),
        resumed_by: None,
        tool_sources: request.tool_sources.clone(),
        state_store,
    }
}

/// Moves `record` to `state`, now.
fn step(record: &mut ExecutionRecord, state: ExecutionState) {
    record.status = state;
    record.steps.push(Step {
        state,
        at: now_utc(),
    });
}

pub async fn run(kernel: &Kernel, request: ExecutionRequest) -> Result<RunReport> {
    let started = Instant::now();
    let started_at = now_utc();
    let id = request.id.clone().unwrap_or_else(new_execution_id);
    let mut life = Lifecycle::default();
    validate(&request)?;
    let entry = choose_engine(kernel, &request)?;
    let script_sha256 = sha256_hex(request.source.as_bytes());
    kernel
        .data_dir
        .store_script(&script_sha256, &request.source)?;

    advance(&mut life, ExecutionState::Preparing);
    let log = TaskLog::new(kernel.data_dir.log_path(&id), request.limits.max_log_bytes);
    // What tool servers print while this execution runs goes to its log too.
    let _server_lines = kernel.tools.server_logs().subscribe({
        let log = log.clone();
        Arc::new(move |line: &[u8]| log.append(line))
    });
    let mounts = package_mounts(kernel, entry, &request);
    let packages: Vec<JournalPackage> = match &mounts {
        Ok(Some(mounts)) => mounts.packages.iter().map(|p| p.record.clone()).collect(),
        _ => Vec::new(),
    };
    let facts = Facts {
        id: &id,
        entry,
        request: &request,
        script_sha256: &script_sha256,
        packages: &packages,
        started_at: &started_at,
        started,
        events: log.tee(request.events.clone()),
    };
    let mut record = new_record(&facts, kernel.state.location());
    let prepared = match mounts {
        Ok(mounts) => prepare(kernel, &facts, mounts).await,
        Err(error) => Err(error),
    };
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            // It never ran: one record, already terminal, says why.
            step(&mut record, ExecutionState::Failed);
            record.error_code = Some(error.code);
            record.error_message = Some(error.message.clone());
            record.ended_at = Some(now_utc());
            if let Err(unjournaled) = kernel.journal.create(&record) {
                // Both are said: the run's own failure, and that the journal lacks it.
                return Err(Error::new(
                    error.code,
                    format!(
                        "{}; and its journal record could not be written: {}",
                        error.message,
                        crate::error::chain_text(&unjournaled)
                    ),
                ));
            }
            return Err(error);
        }
    };

    // The first durable step: from here on a crash leaves a record that reconciliation closes.
    // It is queued now, and the guest starts at once. The journal holds the record briefly, so
    // that a short run's goes in with its close (one fsync per run); anything that changes the
    // world outside (a tool call with a write, process or external effect, a state commit, a
    // publication) first has it committed and waits until it is durable.
    advance(&mut life, ExecutionState::Running);
    step(&mut record, ExecutionState::Running);
    record.inputs = prepared.inputs.iter().map(journal_input).collect();
    let created = kernel
        .journal
        .create_grouped(record)
        .map_err(|error| Arc::<str>::from(crate::error::chain_text(&error)))
        .boxed()
        .shared();
    let record_durable: RecordDurable = {
        let journal = kernel.journal.clone();
        let created = created.clone();
        let before_effects = request.before_effects.clone();
        async move {
            journal.flush_grouped();
            created.await?;
            match before_effects {
                Some(hook) => hook()
                    .await
                    .map_err(|refused| Arc::<str>::from(refused.to_string())),
                None => Ok(()),
            }
        }
        .boxed()
        .shared()
    };
    // `Started` means journaled: it is sent once the record is durable, however that came about.
    let started = {
        let events = facts.events.clone();
        let id = id.clone();
        tokio::spawn(async move {
            if created.await.is_ok() {
                events(Event::Started { id });
            }
        })
    };
    let mut prepared = prepared;
    prepared
        .store
        .data_mut()
        .tools
        .hold_effects_until(record_durable.clone());
    let deck = prepared.deck.clone();
    let (report, job) = finish(kernel, &facts, prepared, &mut life, record_durable).await;
    let mut report = match report {
        Ok(report) => report,
        Err(error) => {
            kernel.jobs.give_back(job);
            return Err(error);
        }
    };
    let tape = taped::finish(&deck, &report);
    report.not_replayable = tape.as_ref().and_then(|t| t.not_replayable.clone());
    kernel
        .journal
        .close_grouped(
            &id,
            Closing {
                status: report.status,
                error: report.error.as_ref().map(|e| (e.code, e.message.clone())),
                metrics: Some(report.metrics.clone()),
                calls: report.calls.clone(),
                out_dir: report.out_dir.clone(),
                outputs: report.outputs.clone(),
                passed: passed_through(&life, report.status),
                tape,
                pending: report.pending.clone(),
            },
        )
        .await?;
    // The record is durable by now (at the latest with the close), so `Started` is being sent;
    // it goes out before the report.
    let _ = started.await;
    kernel.jobs.give_back(job);
    Ok(report)
}

fn journal_input(input: &InputRecord) -> JournalInput {
    JournalInput {
        name: input.name.clone(),
        size: input.size,
        sha256: input.sha256.clone(),
        source: input.source.display().to_string(),
    }
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

/// The locked packages a Python script mounts (none for other languages), checked against what
/// the first run mounted when this is a rerun.
fn package_mounts(
    kernel: &Kernel,
    entry: &EngineEntry,
    request: &ExecutionRequest,
) -> Result<Option<packages::Mounts>> {
    // Before its first load the entry knows only what its lock says: the extensions.
    let python = entry.description.language == "python"
        || entry.description.extensions.iter().any(|e| e == ".py");
    if !python {
        return Ok(None);
    }
    let imports = crate::engines::python_imports::python_imports(&request.source);
    let mounts = packages::resolve(&kernel.data_dir, request.package_lock.as_deref(), &imports)?;
    if let Some(then) = &request.expected_packages {
        let now: Vec<JournalPackage> = mounts
            .iter()
            .flat_map(|m| m.packages.iter().map(|p| p.record.clone()))
            .collect();
        if let Some(change) = packages::changed_since(then, &now) {
            return Err(Error::invalid_input(change));
        }
    }
    Ok(mounts)
}

/// Everything an execution needs before its guest starts.
struct Prepared {
    pre: ScriptEnginePre<ExecState>,
    /// The instance slot, held until the store is dropped (in settling).
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
    job: JobDir,
    inputs: Vec<InputRecord>,
    store: wasmtime::Store<ExecState>,
    observers: sandbox::Observers,
    run_request: RunRequest,
    /// Records the run's nondeterministic inputs, or plays them.
    deck: Deck,
}

/// Loads the engine, the job folders with the inputs, the state snapshot, and the store.
async fn prepare(
    kernel: &Kernel,
    facts: &Facts<'_>,
    mounts: Option<packages::Mounts>,
) -> Result<Prepared> {
    let request = facts.request;
    let limits = &request.limits;
    let (pre, _) = kernel
        .registry
        .load(facts.entry, limits.fuel.is_some())
        .await?;
    // In a pooled process, at most INSTANCE_SLOTS instances at once; the rest wait here.
    let slot = Runtime::get(limits.fuel.is_some())?.instance_slot().await;
    let opened = files::open_inputs(&request.inputs, request.inputs_root.as_ref(), "inputs")?;
    let job = kernel.jobs.take(facts.id, request.keep_job)?;
    let inputs = job.copy_inputs(&opened, request.limits.max_input_bytes)?;
    if let Some(expected) = &request.expected_inputs {
        check_inputs(expected, &inputs)?;
    }
    let taped = taped::prepare(kernel, request)?;
    let (store, observers) = sandbox::build_store(
        &pre,
        SandboxSpec {
            limits,
            policy: request.policy.clone(),
            asker: request.asker.clone(),
            tools: taped.tools,
            snapshot: taped.snapshot,
            job: &job,
            packages: mounts.as_ref(),
            events: Some(facts.events.clone()),
            deck: taped.deck.clone(),
            insecure_seed: taped.insecure_seed,
            approval: request.replay.as_ref().and_then(|r| r.resume.clone()),
        },
    )?;
    let run_request = sandbox::run_request(&request.source, &request.filename, limits, &inputs);
    Ok(Prepared {
        pre,
        slot,
        job,
        inputs,
        store,
        observers,
        run_request,
        deck: taped.deck,
    })
}

/// Runs the guest under its deadline and cancellation, then settles how it ended, once its
/// `running` record is durable (`Err` if it could not be written).
async fn finish(
    kernel: &Kernel,
    facts: &Facts<'_>,
    prepared: Prepared,
    life: &mut Lifecycle,
    record_durable: RecordDurable,
) -> (Result<RunReport>, JobDir) {
    let Prepared {
        pre,
        slot: _slot,
        job,
        inputs,
        store,
        observers,
        run_request,
        deck: _,
    } = prepared;
    let request = facts.request;
    let deadline = tokio::time::Instant::now() + request.limits.timeout;
    let cancel = request.cancel.clone().unwrap_or_default();
    let finished = sandbox::race(pre, store, run_request, deadline, cancel).await;
    advance(life, ExecutionState::Collecting);
    let mut collected = settle::collect(finished, &request.limits, &observers);
    let pending = collected.after_pause(deadline).await;
    // State and publication change the world outside: not before the record is durable.
    let target = settle::publication_target(request, &job, facts.id);
    if collected.would_change_the_world(target.as_deref())
        && let Err(why) = record_durable.await
    {
        let error = Error::new(
            crate::error::ErrorCode::IsolateFailure,
            format!("the execution's journal record could not be written: {why}"),
        );
        return (Err(error), job);
    }
    let settled = settle::settle(kernel, facts, &job, &inputs, collected, target, life);
    advance(life, settled.verdict.status);
    let mut report = settle::report(facts, settled, &observers, inputs, &job);
    report.pending = pending;
    (Ok(report), job)
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

/// The paths the caller passed for a first run's inputs, each once: a file inside a folder
/// input was copied as `folder/sub/file`, so its folder is the source's ancestor as deep as the
/// name.
pub(super) fn input_sources(inputs: &[JournalInput]) -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = Vec::new();
    for input in inputs {
        let mut path = PathBuf::from(&input.source);
        for _ in 1..input.name.split('/').count() {
            path.pop();
        }
        if !sources.contains(&path) {
            sources.push(path);
        }
    }
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(source: &str, name: &str) -> JournalInput {
        JournalInput {
            name: name.into(),
            size: 1,
            sha256: String::new(),
            source: source.into(),
        }
    }

    #[test]
    fn a_file_in_a_folder_input_leads_back_to_the_folder() {
        let sources = input_sources(&[
            input("/data/sales.csv", "sales.csv"),
            input("/d/set/sub/b.txt", "set/sub/b.txt"),
            input("/d/set/a.txt", "set/a.txt"),
        ]);
        assert_eq!(
            sources,
            [PathBuf::from("/data/sales.csv"), PathBuf::from("/d/set")]
        );
    }
}
