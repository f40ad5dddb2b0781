//! One execution, in four phases, each with the journal step it owns: [`validate`] the request
//! (nothing is journaled for a request refused here), [`prepare`](super::prepare) its guest (a
//! failure there is journaled as the run's one, terminal, record), [`start`] it (its `running`
//! record is queued and the guest may begin), and [`settle`] how it ended (the record is closed).
//! The run's [`Lifecycle`] is the one keeper of its steps: the record is made from it, and the
//! close names the states it passed through.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures::{FutureExt, TryFutureExt};

use super::facts::Facts;
use super::prepare::{self, Guest, Prepared, Validated};
use super::report::RunReport;
use super::sandbox;
use super::settle;
use super::taped;
use super::{ExecutionRequest, Kernel, Lifecycle, Script, check_script_size, validate_session};
use crate::engines::EngineEntry;
use crate::error::{Error, ErrorCode, Result};
use crate::files::{self, JobDir};
use crate::journal::{Closing, ExecutionState};
use crate::output::Event;
use crate::primitives::sha256_hex;
use crate::tools::{RecordDurable, Subscription};

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

/// Runs `request` through its phases.
pub async fn run(kernel: &Kernel, request: ExecutionRequest) -> Result<RunReport> {
    let mut life = Lifecycle::default();
    let valid = validate(kernel, request)?;
    let prepared = prepare::prepare(kernel, valid, &mut life).await?;
    let started = start(kernel, prepared, &mut life)?;
    settle(kernel, started, &mut life).await
}

/// Validating: checks the request, chooses its engine and stores its script.
fn validate(kernel: &Kernel, request: ExecutionRequest) -> Result<Validated<'_>> {
    let started = Instant::now();
    let (script, options) = (request.script(), request.options());
    options.limits.validate()?;
    validate_session(&options.session)?;
    check_script_size(script.source.len() as u64, options.limits.max_script_bytes)?;
    if let Some(out) = &options.out_dir {
        files::check_destination(out)?;
    }
    let entry = choose_engine(kernel, script)?;
    let script_sha256 = sha256_hex(script.source.as_bytes());
    kernel
        .data_dir
        .store_script(&script_sha256, &script.source)?;
    let id = options.id.clone().unwrap_or_else(new_execution_id);
    Ok(Validated {
        request,
        id,
        entry,
        script_sha256,
        started,
    })
}

fn choose_engine<'k>(kernel: &'k Kernel, script: &Script) -> Result<&'k EngineEntry> {
    match &script.engine {
        Some(id) => kernel.registry.by_id(id),
        None => kernel
            .registry
            .for_file(std::path::Path::new(&script.filename), &script.source),
    }
}

/// A run whose guest may begin, with its `running` record queued.
struct Started<'k> {
    facts: Facts<'k>,
    guest: Guest,
    /// Resolves once the record is durable and the caller's [`BeforeEffects`] hook agreed.
    ///
    /// [`BeforeEffects`]: super::BeforeEffects
    record_durable: RecordDurable,
    /// Sends [`Event::Started`] once the record is durable.
    announced: tokio::task::JoinHandle<()>,
    _server_lines: Subscription,
}

/// Running: the first durable step. From here on a crash leaves a record that reconciliation
/// closes. It is queued now, and the guest starts at once. The journal holds the record briefly,
/// so that a short run's goes in with its close (one fsync per run); anything that changes the
/// world outside (a tool call with a write, process or external effect, a state commit, a
/// publication) first has it committed and waits until it is durable.
fn start<'k>(kernel: &Kernel, prepared: Prepared<'k>, life: &mut Lifecycle) -> Result<Started<'k>> {
    let Prepared {
        facts,
        mut record,
        mut guest,
        server_lines,
    } = prepared;
    life.advance(ExecutionState::Running)?;
    record.status = life.state();
    record.steps = life.steps().to_vec();
    record.inputs = guest.inputs.iter().map(prepare::journal_input).collect();
    let created = kernel
        .journal
        .create_grouped(record)
        .map_err(|error| {
            let code = crate::error::code_of(error.code(), &error);
            (code, Arc::<str>::from(crate::error::chain_text(&error)))
        })
        .boxed()
        .shared();
    let record_durable: RecordDurable = {
        let journal = kernel.journal.clone();
        let created = created.clone();
        let before_effects = facts.request.hooks().before_effects.clone();
        async move {
            journal.flush_grouped();
            created.await?;
            match before_effects {
                Some(hook) => hook().await.map_err(|refused| {
                    (
                        ErrorCode::IsolateFailure,
                        Arc::<str>::from(refused.to_string()),
                    )
                }),
                None => Ok(()),
            }
        }
        .boxed()
        .shared()
    };
    // `Started` means journaled: it is sent once the record is durable, however that came about.
    let announced = {
        let events = facts.events.clone();
        let id = facts.id.clone();
        tokio::spawn(async move {
            if created.await.is_ok() {
                events(Event::Started { id });
            }
        })
    };
    guest
        .store
        .data_mut()
        .tools
        .hold_effects_until(record_durable.clone());
    Ok(Started {
        facts,
        guest,
        record_durable,
        announced,
        _server_lines: server_lines,
    })
}

/// Collecting, committing and the end: runs the guest under its deadline and cancellation,
/// settles what becomes durable, and closes the record.
async fn settle(kernel: &Kernel, started: Started<'_>, life: &mut Lifecycle) -> Result<RunReport> {
    let Started {
        facts,
        guest,
        record_durable,
        announced,
        _server_lines,
    } = started;
    let deck = guest.deck.clone();
    let (report, job) = finish(kernel, &facts, guest, life, record_durable).await;
    let mut report = match report {
        Ok(report) => report,
        Err(error) => {
            kernel.jobs.give_back(job);
            close_failed(kernel, &facts.id, life, &error).await;
            return Err(error);
        }
    };
    let tape = taped::finish(&deck, &report);
    report.not_replayable = tape.as_ref().and_then(|t| t.not_replayable.clone());
    // What the run left in its folder goes before the close is written: a run that filled the
    // host's disk must not keep its own record from being closed.
    kernel.jobs.give_back(job);
    kernel
        .journal
        .close_grouped(
            &facts.id,
            Closing {
                status: report.status,
                error: report.error.as_ref().map(|e| (e.code, e.message.clone())),
                metrics: Some(report.metrics.clone()),
                calls: report.calls.clone(),
                out_dir: report.out_dir.clone(),
                outputs: report.outputs.clone(),
                passed: life.passed_since(ExecutionState::Running),
                tape,
                pending: report.pending.clone(),
            },
        )
        .await
        .map_err(|error| {
            let code = crate::error::code_of(error.code(), &error);
            Error::new(
                code,
                format!(
                    "execution {} ended as `{}`, but its journal record could not be closed: {}; \
what it committed stands, and the record is closed once there is room (or as interrupted, \
if this process ends first)",
                    facts.id,
                    report.status.as_str(),
                    crate::error::chain_text(&error)
                ),
            )
        })?;
    // The record is durable by now (at the latest with the close), so `Started` is being sent;
    // it goes out before the report.
    let _ = announced.await;
    Ok(report)
}

/// Closes as failed, with `error`, a record the run ended without settling: one that was
/// written, and then a [`BeforeEffects`](super::BeforeEffects) hook refused the run's effects
/// (a worker whose NATS stayed away), so that it does not stay `running` until the next process
/// reconciles it. A record that was never written has nothing to close.
async fn close_failed(kernel: &Kernel, id: &str, life: &Lifecycle, error: &Error) {
    let closing = Closing {
        status: ExecutionState::Failed,
        error: Some((error.code, error.message.clone())),
        metrics: None,
        calls: Vec::new(),
        out_dir: None,
        outputs: Vec::new(),
        passed: life.passed_since(ExecutionState::Running),
        tape: None,
        pending: None,
    };
    let _ = kernel.journal.close_grouped(id, closing).await;
}

/// Runs the guest, then settles how it ended, once its `running` record is durable (`Err` if
/// it could not be written). The job folder comes back either way, for the kernel to recycle.
async fn finish(
    kernel: &Kernel,
    facts: &Facts<'_>,
    guest: Guest,
    life: &mut Lifecycle,
    record_durable: RecordDurable,
) -> (Result<RunReport>, JobDir) {
    let Guest {
        pre,
        slot: _slot,
        job,
        inputs,
        store,
        observers,
        run_request,
        deck: _,
    } = guest;
    let options = facts.request.options();
    let deadline = tokio::time::Instant::now() + options.limits.timeout;
    let cancel = facts.request.hooks().cancel.clone().unwrap_or_default();
    let finished = sandbox::race(pre, store, run_request, deadline, cancel).await;
    if let Err(invalid) = life.advance(ExecutionState::Collecting) {
        return (Err(invalid.into()), job);
    }
    let mut collected = settle::collect(finished, &options.limits, &observers);
    let pending = collected.after_pause(deadline).await;
    // State and publication change the world outside: not before the record is durable.
    let target = settle::publication_target(&facts.request, &job, &facts.id);
    if collected.would_change_the_world(target.as_deref())
        && let Err((code, why)) = record_durable.await
    {
        let error = Error::new(
            code,
            format!("the execution's journal record could not be written: {why}"),
        );
        return (Err(error), job);
    }
    let settled = match settle::settle(kernel, facts, &job, &inputs, collected, target, life) {
        Ok(settled) => settled,
        Err(error) => return (Err(error), job),
    };
    if let Err(invalid) = life.advance(settled.verdict.status) {
        return (Err(invalid.into()), job);
    }
    let mut report = settle::report(facts, settled, &observers, inputs, &job);
    report.pending = pending;
    (Ok(report), job)
}
