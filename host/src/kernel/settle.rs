//! How a run that started ends: collect what the guest left, settle what becomes durable, and
//! report. The one rule of settling, in [`settle`]: state is committed only if the outputs can
//! be published, and the outputs appear only once state is committed.

use std::path::{Path, PathBuf};

use serde_json::Value;
use wasmtime::Store;

use super::Kernel;
use super::Lifecycle;
use super::facts::{Facts, millis};
use super::report::RunReport;
use super::sandbox::Observers;
use super::verdict::{self, GuestOutcome, HostDecision, Verdict};
use crate::engines::ExecState;
use crate::error::{ErrorCode, ErrorReport, chain_text};
use crate::files::{self, InputRecord, JobDir, OutputLimits, Provenance, PublishError, Staged};
use crate::journal::{ExecutionState, Metrics, PendingApproval, PublishedFile};
use crate::limits::Limits;

/// What the guest left when it finished or was stopped.
pub(super) struct Collected {
    verdict: Verdict,
    /// The store, when the guest finished (a stop drops it).
    store: Option<Store<ExecState>>,
    value: Option<Value>,
    fuel_consumed: Option<u64>,
}

impl Collected {
    /// For a run that paused at a call needing approval: lets the calls still in flight finish
    /// (until `deadline`), so that their answers are on the tape for the resume, and returns
    /// the pending call.
    pub(super) async fn after_pause(
        &mut self,
        deadline: tokio::time::Instant,
    ) -> Option<PendingApproval> {
        if self.verdict.status != ExecutionState::Paused {
            return None;
        }
        let tools = &mut self.store.as_mut()?.data_mut().tools;
        let _ = tokio::time::timeout_at(deadline, tools.drain_after_pause()).await;
        tools.pending().cloned()
    }

    /// Whether settling may change anything outside the run: commit state, or publish to
    /// `target` (see [`publication_target`]).
    pub(super) fn would_change_the_world(&self, target: Option<&Path>) -> bool {
        let changes_state = self
            .store
            .as_ref()
            .is_some_and(|store| !store.data().state().changes().is_empty());
        changes_state || target.is_some()
    }
}

/// What became durable, and how the run ended.
pub(super) struct Settled {
    pub verdict: Verdict,
    value: Option<Value>,
    fuel_consumed: Option<u64>,
    out_dir: Option<String>,
    outputs: Vec<PublishedFile>,
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
    crate::json::parse(text).map_err(|e| {
        if e.is_script_error() {
            Verdict::failed(
                ErrorCode::ScriptRuntime,
                format!("the result cannot be returned: {e}"),
            )
        } else {
            Verdict::failed(
                ErrorCode::ProtocolViolation,
                format!("the engine returned a result that is not JSON: {e}"),
            )
        }
    })
}

/// Decides the verdict from the host's stop or the guest's outcome, and takes its result.
pub(super) fn collect(
    finished: Result<(GuestOutcome, Store<ExecState>), HostDecision>,
    limits: &Limits,
    observers: &Observers,
) -> Collected {
    let refusals = verdict::Refusals {
        memory: observers.memory.denied(),
        disk: observers.disk.denied(),
        host_disk: observers.disk.host_full(),
    };
    let (outcome, store) = match finished {
        Err(stop) => {
            let mut verdict = verdict::decide(Some(stop), None, refusals);
            if stop == HostDecision::Deadline {
                verdict::add_pending(&mut verdict, observers.waiting.current());
            }
            return Collected {
                verdict,
                store: None,
                value: None,
                fuel_consumed: None,
            };
        }
        Ok(finished) => finished,
    };
    let fuel_consumed = limits
        .fuel
        .and_then(|fuel| store.get_fuel().ok().map(|left| fuel.saturating_sub(left)));
    let returned = match &outcome {
        GuestOutcome::Returned(text) => text.clone(),
        _ => None,
    };
    let mut verdict = verdict::decide(None, Some(outcome), refusals);
    verdict::add_last_words(&mut verdict, &observers.stderr.contents());
    let mut value = None;
    if verdict.succeeded()
        && let Some(text) = returned
    {
        match accept_result(&text, limits.max_result_bytes) {
            Ok(accepted) => value = Some(accepted),
            Err(failed) => verdict = failed,
        }
    }
    Collected {
        verdict,
        store: Some(store),
        value,
        fuel_consumed,
    }
}

fn failed_by(error: &(dyn std::error::Error + 'static), code: ErrorCode) -> Verdict {
    Verdict::failed(crate::error::code_of(code, error), chain_text(error))
}

/// Settles what becomes durable. A run that succeeded stages its publication (validated and
/// copied beside its destination), then commits its state, then moves the publication into
/// place: a failure at any step fails the run, and what was staged is dropped. A run that
/// failed commits nothing, and publishes only with `--publish-on-error`. `target` is where it
/// publishes ([`publication_target`]).
pub(super) fn settle(
    kernel: &Kernel,
    facts: &Facts<'_>,
    job: &JobDir,
    inputs: &[InputRecord],
    collected: Collected,
    target: Option<PathBuf>,
    life: &mut Lifecycle,
) -> crate::error::Result<Settled> {
    let Collected {
        mut verdict,
        store,
        value,
        fuel_consumed,
    } = collected;
    let mut staged = None;
    if verdict.succeeded() {
        life.advance(ExecutionState::Committing)?;
        let at = Publication {
            job,
            inputs,
            target: target.as_deref(),
        };
        // A replay commits nothing: it only shows what the recorded run did.
        if !facts.request.lineage().is_replay() {
            match commit_state(kernel, facts, &at, store.as_ref(), &verdict) {
                Ok(ready) => staged = ready,
                Err(failed) => verdict = failed,
            }
        }
    }
    drop(store);
    // A paused run publishes nothing: it has not ended, only stopped to ask.
    if !verdict.succeeded()
        && verdict.status != ExecutionState::Paused
        && facts.request.options().publish_on_error
    {
        // The run failed either way; a rejected partial publication does not change why.
        staged = target
            .as_deref()
            .and_then(|target| stage(facts, inputs, job, target, &verdict).ok());
    }
    if staged.is_some() {
        crate::primitives::fault_point("during-publication");
    }
    let (out_dir, outputs) = match staged.map(Staged::commit) {
        Some(Ok(files)) => (target.map(|t| t.display().to_string()), files),
        Some(Err(error)) => {
            if verdict.succeeded() {
                verdict = failed_by(&error, error.code());
            }
            (None, Vec::new())
        }
        None => (None, Vec::new()),
    };
    Ok(Settled {
        value: value.filter(|_| verdict.succeeded()),
        verdict,
        fuel_consumed,
        out_dir,
        outputs,
    })
}

/// For a run that succeeded: stages its publication, then commits its state. `Err` fails the
/// run; the staged publication is then dropped, so nothing of it appears.
fn commit_state(
    kernel: &Kernel,
    facts: &Facts<'_>,
    at: &Publication<'_>,
    store: Option<&Store<ExecState>>,
    verdict: &Verdict,
) -> Result<Option<Staged>, Verdict> {
    let staged = match at.target {
        Some(target) => Some(
            stage(facts, at.inputs, at.job, target, verdict)
                .map_err(|error| failed_by(&error, error.code()))?,
        ),
        None => None,
    };
    if let Some(view) = store.map(|s| s.data().state())
        && !view.changes().is_empty()
    {
        kernel
            .state
            .commit_for(&facts.id, &facts.request.options().session, &view.commit())
            .map_err(|error| failed_by(&error, error.code()))?;
        crate::primitives::fault_point("after-state-commit");
    }
    Ok(staged)
}

/// What a publication is made of.
struct Publication<'a> {
    job: &'a JobDir,
    inputs: &'a [InputRecord],
    target: Option<&'a Path>,
}

/// Where `/output` goes: the caller's folder, or `<out_root>/<id>` (`forge-out/<id>` by
/// default) when the script wrote something and no folder was named; nowhere for a replay.
pub(super) fn publication_target(
    request: &super::ExecutionRequest,
    job: &JobDir,
    id: &str,
) -> Option<PathBuf> {
    if request.lineage().is_replay() {
        return None;
    }
    if let Some(out) = &request.options().out_dir {
        return Some(out.clone());
    }
    let wrote_something = std::fs::read_dir(job.output()).is_ok_and(|mut d| d.next().is_some());
    wrote_something.then(|| {
        let root = request.options().out_root.clone();
        root.unwrap_or_else(|| PathBuf::from("forge-out")).join(id)
    })
}

fn stage(
    facts: &Facts<'_>,
    inputs: &[InputRecord],
    job: &JobDir,
    target: &Path,
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
        &OutputLimits::from(&facts.request.options().limits),
        &facts.id,
        |outputs| {
            let record = Provenance {
                execution_id: &facts.id,
                forge_host_version: env!("CARGO_PKG_VERSION"),
                engine: &facts.entry.description.id,
                engine_sha256: &facts.entry.sha256,
                script: &facts.request.script().filename,
                script_sha256: &facts.script_sha256,
                inputs,
                packages: &facts.packages,
                limits: &facts.request.options().limits,
                started_at: &facts.started_at,
                wall_ms: millis(facts.started.elapsed()),
                status: verdict.status.as_str(),
                error: error.as_ref(),
                outputs,
            };
            serde_json::to_value(record).unwrap_or(Value::Null)
        },
    )
}

/// The report of a settled run.
pub(super) fn report(
    facts: &Facts<'_>,
    settled: Settled,
    observers: &Observers,
    inputs: Vec<InputRecord>,
    job: &JobDir,
) -> RunReport {
    let calls = observers.calls.snapshot();
    let Settled {
        verdict,
        value,
        fuel_consumed,
        out_dir,
        outputs,
    } = settled;
    RunReport {
        id: facts.id.clone(),
        engine: facts.entry.description.id.clone(),
        engine_sha256: facts.entry.sha256.clone(),
        script_sha256: facts.script_sha256.clone(),
        status: verdict.status,
        session: facts.request.options().session.clone(),
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
        started_at: facts.started_at.clone(),
        calls,
        not_replayable: None,
        pending: None,
    }
}
