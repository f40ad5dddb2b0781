//! Preparing a validated run: its log, the packages it mounts, the engine, the job folder with
//! the inputs, the tape, the state snapshot and the store. This phase owns one journal step: a
//! run that fails here gets its one record, already terminal, saying why.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::Kernel;
use super::facts::Facts;
use super::lifecycle::Lifecycle;
use super::sandbox::{self, SandboxSpec};
use super::taped;
use crate::engines::bindings::{RunRequest, ScriptEnginePre};
use crate::engines::{EngineEntry, ExecState, Runtime};
use crate::error::{Error, Result};
use crate::files::{self, InputRecord, JobDir};
use crate::journal::{ExecutionRecord, ExecutionState, JournalInput, JournalPackage, Owner};
use crate::output::TaskLog;
use crate::packages;
use crate::tape::Deck;
use crate::tools::Subscription;

use super::ExecutionRequest;

/// A request that passed validation: its id, the engine that runs it, and its stored script.
pub(super) struct Validated<'k> {
    pub request: ExecutionRequest,
    pub id: String,
    pub entry: &'k EngineEntry,
    pub script_sha256: String,
    pub started: Instant,
}

/// A run ready to start: what it knows, its record (not yet written) and its guest.
pub(super) struct Prepared<'k> {
    pub facts: Facts<'k>,
    pub record: ExecutionRecord,
    pub guest: Guest,
    /// While held, what tool servers print goes to the run's log too.
    pub server_lines: Subscription,
}

/// Everything the guest needs to start.
pub(super) struct Guest {
    pub pre: ScriptEnginePre<ExecState>,
    /// The instance slot, held until the store is dropped (in settling).
    pub slot: Option<tokio::sync::OwnedSemaphorePermit>,
    pub job: JobDir,
    pub inputs: Vec<InputRecord>,
    pub store: wasmtime::Store<ExecState>,
    pub observers: sandbox::Observers,
    pub run_request: RunRequest,
    /// Records the run's nondeterministic inputs, or plays them.
    pub deck: Deck,
}

/// Preparing: everything the guest needs. On failure the run's record is written, failed, and
/// the error returned (with the journal's own failure, if that write failed too).
pub(super) async fn prepare<'k>(
    kernel: &'k Kernel,
    valid: Validated<'k>,
    life: &mut Lifecycle,
) -> Result<Prepared<'k>> {
    life.advance(ExecutionState::Preparing)?;
    let Validated {
        request,
        id,
        entry,
        script_sha256,
        started,
    } = valid;
    let options = request.options();
    let log = TaskLog::new(kernel.data_dir.log_path(&id), options.limits.max_log_bytes);
    let server_lines = kernel.tools.server_logs().subscribe({
        let log = log.clone();
        Arc::new(move |line: &[u8]| log.append(line))
    });
    let mounts = package_mounts(kernel, entry, &request);
    let packages: Vec<JournalPackage> = match &mounts {
        Ok(Some(mounts)) => mounts.packages.iter().map(|p| p.record.clone()).collect(),
        _ => Vec::new(),
    };
    let events = log.tee(request.hooks().events.clone());
    let facts = Facts {
        id,
        entry,
        request,
        script_sha256,
        packages,
        started_at: life.began_at().to_string(),
        started,
        events,
    };
    let mut record = new_record(&facts, life, kernel.state.location());
    let guest = match mounts {
        Ok(mounts) => guest(kernel, &facts, mounts).await,
        Err(error) => Err(error),
    };
    match guest {
        Ok(guest) => Ok(Prepared {
            facts,
            record,
            guest,
            server_lines,
        }),
        Err(error) => {
            life.advance(ExecutionState::Failed)?;
            record.status = life.state();
            record.steps = life.steps().to_vec();
            record.error_code = Some(error.code);
            record.error_message = Some(error.message.clone());
            record.ended_at = Some(crate::primitives::now_utc());
            Err(journaled_failure(kernel, &record, error))
        }
    }
}

/// Writes the record of a run that never ran; both are said if that fails too: the run's own
/// failure, and that the journal lacks it.
fn journaled_failure(kernel: &Kernel, record: &ExecutionRecord, error: Error) -> Error {
    match kernel.journal.create(record) {
        Ok(()) => error,
        Err(unjournaled) => Error::new(
            error.code,
            format!(
                "{}; and its journal record could not be written: {}",
                error.message,
                crate::error::chain_text(&unjournaled)
            ),
        ),
    }
}

/// The journal record of a new execution, with the steps it has taken so far.
fn new_record(facts: &Facts<'_>, life: &Lifecycle, state_store: Option<String>) -> ExecutionRecord {
    let options = facts.request.options();
    let lineage = facts.request.lineage();
    ExecutionRecord {
        id: facts.id.clone(),
        session: options.session.clone(),
        engine: facts.entry.description.id.clone(),
        engine_sha256: facts.entry.sha256.clone(),
        script: facts.request.script().filename.clone(),
        script_sha256: facts.script_sha256.clone(),
        inputs: Vec::new(),
        packages: facts.packages.clone(),
        package_lock: options
            .package_lock
            .as_ref()
            .map(|p| p.display().to_string()),
        limits: serde_json::to_value(&options.limits).unwrap_or_default(),
        policy: options.policy.clone(),
        status: life.state(),
        steps: life.steps().to_vec(),
        error_code: None,
        error_message: None,
        reason: None,
        started_at: facts.started_at.clone(),
        ended_at: None,
        metrics: None,
        out_dir: None,
        outputs: Vec::new(),
        owner: Owner::current(),
        replay_of: lineage
            .replay
            .as_ref()
            .filter(|r| r.is_replay())
            .map(|r| r.of.clone()),
        pending: None,
        resumes: lineage
            .replay
            .as_ref()
            .filter(|r| !r.is_replay())
            .map(|r| r.of.clone()),
        resumed_by: None,
        tool_sources: options.tool_sources.clone(),
        state_store,
    }
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
    let imports = crate::engines::python_imports::python_imports(&request.script().source);
    let lock = request.options().package_lock.as_deref();
    let mounts = packages::resolve(&kernel.data_dir, lock, &imports)?;
    if let Some(then) = &request.lineage().expected_packages {
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

/// Loads the engine, the job folders with the inputs, the state snapshot, and the store.
async fn guest(
    kernel: &Kernel,
    facts: &Facts<'_>,
    mounts: Option<packages::Mounts>,
) -> Result<Guest> {
    let request = &facts.request;
    let options = request.options();
    let limits = &options.limits;
    let (pre, _) = kernel
        .registry
        .load(facts.entry, limits.fuel.is_some())
        .await?;
    // In a pooled process, at most INSTANCE_SLOTS instances at once; the rest wait here.
    let slot = Runtime::get(limits.fuel.is_some())?.instance_slot().await;
    let opened = files::open_inputs(&options.inputs, options.inputs_root.as_ref(), "inputs")?;
    let job = kernel.jobs.take(&facts.id, options.keep_job)?;
    let inputs = job.copy_inputs(&opened, limits.max_input_bytes)?;
    if let Some(expected) = &request.lineage().expected_inputs {
        check_inputs(expected, &inputs)?;
    }
    let taped = taped::prepare(kernel, request)?;
    let library = match &facts.entry.library {
        Some(library) => Some((kernel.registry.library_tree(library)?, library)),
        None => None,
    };
    let mut mount_points = files::JOB_MOUNTS.to_vec();
    mount_points.extend(library.as_ref().map(|(_, library)| library.mount.as_str()));
    if mounts.is_some() {
        mount_points.push(crate::packages::MOUNT_POINT);
    }
    let root = files::root_folder(&kernel.data_dir.root().join("roots"), &mount_points)?;
    let (store, observers) = sandbox::build_store(
        &pre,
        SandboxSpec {
            limits,
            policy: options.policy.clone(),
            asker: request.hooks().asker.clone(),
            tools: taped.tools,
            snapshot: taped.snapshot,
            job: &job,
            packages: mounts.as_ref(),
            library: library
                .as_ref()
                .map(|(tree, library)| (tree.as_path(), library.mount.as_str())),
            root: &root,
            events: Some(facts.events.clone()),
            deck: taped.deck.clone(),
            insecure_seed: taped.insecure_seed,
            approval: request
                .lineage()
                .replay
                .as_ref()
                .and_then(|r| r.resume.clone()),
        },
    )?;
    let script = request.script();
    let run_request = sandbox::run_request(&script.source, &script.filename, limits, &inputs);
    Ok(Guest {
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

/// How the journal keeps an input.
pub(super) fn journal_input(input: &InputRecord) -> JournalInput {
    JournalInput {
        name: input.name.clone(),
        size: input.size,
        sha256: input.sha256.clone(),
        source: input.source.display().to_string(),
    }
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
