//! `forge-host worker`: pulls run requests from one queue, at most `max_runs` at a time (the
//! rest wait in the stream), runs each exactly as `run` does on its own kernel and journal, and
//! answers on the request's reply subject. See the module docs of [`super`] for who owns a run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::{self, AckKind};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use tokio::sync::Semaphore;

use super::bounds::{REQUEST_OVERHEAD, check_declared_sizes, request_bound};
use super::journal_feed::JournalFeed;
use super::names::{self, REPLY_HEADER};
use super::ownership::{Ownership, mark_effects, store_outcome, take_ownership};
use super::transfer::{fetch_inputs, script_source, upload_published};
use super::wire::{FileRef, MAX_INLINE_BYTES, Reply, RunMessage, RunRecord, StoredOutcome};
use super::{Cluster, QueueOptions, nats};
use crate::error::{Error, ErrorCode};
use crate::kernel::{CancelHandle, ExecutionRequest, Kernel, RunReport};
use crate::limits::{GaveUp, Limits, patiently};
use crate::output::Event;
use crate::permissions::Policy;

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Its name in run records, replies and journal subjects.
    pub name: String,
    /// The queue it serves.
    pub queue: String,
    /// Runs at once.
    pub max_runs: usize,
    /// Its limits: what a request asks is lowered to them.
    pub ceilings: Limits,
    /// Its tool policy: a request runs with what both it and this allow.
    pub policy: Policy,
    /// The queue's settings, when this worker is the first to create it.
    pub queue_options: QueueOptions,
}

/// How long one pull waits for a request before asking again (and looking at shutdown).
const PULL_WAIT: Duration = Duration::from_secs(5);

/// How long a worker waits before pulling again after a pull failed.
const RETRY_PULL_AFTER: Duration = Duration::from_secs(1);

/// Serves requests until `shutdown` resolves; runs in flight then finish and are answered.
pub async fn serve(
    cluster: Cluster,
    kernel: Arc<Kernel>,
    options: WorkerOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    let consumer = cluster
        .consumer(&options.queue, &options.queue_options)
        .await?;
    let ack_wait = consumer.cached_info().config.ack_wait;
    let slots = Arc::new(Semaphore::new(options.max_runs.max(1)));
    let options = Arc::new(options);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut running = tokio::task::JoinSet::new();
    loop {
        // A request is taken only when a slot is free: the others wait in the stream.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.map_err(|e| nats("worker slots", cluster.url(), e))?,
            () = &mut shutdown => break,
        };
        let pulled = tokio::select! {
            pulled = consumer.batch().max_messages(1).expires(PULL_WAIT).messages() => pulled,
            () = &mut shutdown => break,
        };
        let mut batch = match pulled {
            Ok(batch) => batch,
            // NATS is away (it reconnects by itself): try again in a while.
            Err(error) => {
                log(&options, &format!("pulling a request: {error}"));
                tokio::select! {
                    () = tokio::time::sleep(RETRY_PULL_AFTER) => continue,
                    () = &mut shutdown => break,
                }
            }
        };
        let message = tokio::select! {
            message = batch.next() => message,
            () = &mut shutdown => break,
        };
        let Some(message) = message else { continue };
        let message = match message {
            Ok(message) => message,
            // A pull that timed out or a heartbeat the server missed: pull again.
            Err(_) => continue,
        };
        let (cluster, kernel, options) = (cluster.clone(), kernel.clone(), options.clone());
        running.spawn(async move {
            let _slot = slot;
            handle(&cluster, &kernel, &options, message, ack_wait).await;
        });
        // Reap what has finished, so the set stays small.
        while running.try_join_next().is_some() {}
    }
    while running.join_next().await.is_some() {}
    Ok(())
}

/// Logs what a worker could not do with a request; the request stays for redelivery.
pub(super) fn log(options: &WorkerOptions, what: &str) {
    eprintln!("forge-host worker {}: {what}", options.name);
}

/// Handles one delivered request, from ownership to ack.
async fn handle(
    cluster: &Cluster,
    kernel: &Kernel,
    options: &WorkerOptions,
    message: jetstream::Message,
    ack_wait: Duration,
) {
    let reply_to = message
        .headers
        .as_ref()
        .and_then(|headers| headers.get(REPLY_HEADER))
        .map(|value| value.as_str().to_string());
    // Not parsed when larger than any request within this worker's limits may be.
    let bound = request_bound(&options.ceilings);
    let parsed = if message.payload.len() as u64 > bound {
        Err(Error::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the request is {} bytes, over the {bound} bytes a request to this worker may be (--max-script {} and {} for the rest)",
                message.payload.len(),
                crate::limits::format_size(options.ceilings.max_script_bytes),
                crate::limits::format_size(REQUEST_OVERHEAD),
            ),
        ))
    } else {
        serde_json::from_slice::<RunMessage>(&message.payload)
            .map_err(|e| Error::invalid_input(format!("the request does not parse: {e}")))
    };
    let request = match parsed {
        Ok(request) => request,
        Err(error) => {
            log(options, &format!("refusing a request: {}", error.message));
            refuse(cluster, options, reply_to.as_deref(), &error).await;
            let _ = message.ack_with(AckKind::Term).await;
            return;
        }
    };
    if let Err(error) = names::validate_run_id(&request.id) {
        log(options, &format!("dropping a request: {}", error.message));
        let _ = message.ack_with(AckKind::Term).await;
        return;
    }
    // Listening before taking the run: a submitter that finds the run taken cancels it here.
    let cancels = match cluster
        .client
        .subscribe(names::cancel_subject(&request.id))
        .await
    {
        Ok(cancels) => cancels,
        Err(error) => {
            log(
                options,
                &format!("listening for cancels of {}: {error}", request.id),
            );
            return;
        }
    };
    let Some(owned) = take_ownership(cluster, &options.name, &request, &|what: &str| {
        log(options, what)
    })
    .await
    else {
        return;
    };
    let (outcome, stored) = match owned {
        Ownership::Answered(outcome) => {
            log(
                options,
                &format!(
                    "run {} has its outcome already: answering with it, not running it again",
                    request.id
                ),
            );
            (outcome, true)
        }
        Ownership::Run(revision, taken) => {
            // Keep the request ours while it runs: JetStream hears from us every third of its
            // ack wait.
            let heartbeat = {
                let message = message.clone();
                tokio::spawn(async move {
                    let mut tick =
                        tokio::time::interval((ack_wait / 3).max(Duration::from_millis(100)));
                    tick.tick().await;
                    // On through an outage: a worker that stopped saying so once NATS is back
                    // would see its run delivered again while it still runs.
                    loop {
                        tick.tick().await;
                        let _ = message.ack_with(AckKind::Progress).await;
                    }
                })
            };
            let cancel = CancelHandle::new();
            let on_cancel = {
                let (cancel, mut cancels) = (cancel.clone(), cancels);
                tokio::spawn(async move {
                    if cancels.next().await.is_some() {
                        cancel.cancel();
                    }
                })
            };
            let ended = run(
                cluster,
                kernel,
                options,
                &request,
                reply_to.clone(),
                (revision, taken),
                cancel,
            )
            .await;
            heartbeat.abort();
            on_cancel.abort();
            ended
        }
    };
    if stored {
        // The crash tests' point between the stored outcome and the reply and ack.
        crate::primitives::fault_point("after-storing-the-outcome");
    }
    let reply = Reply::Ended {
        outcome,
        worker: options.name.clone(),
    };
    if let Some(reply_to) = &reply_to
        && let Ok(bytes) = serde_json::to_vec(&reply)
    {
        let _ = cluster
            .client
            .publish(reply_to.clone(), Bytes::from(bytes))
            .await;
        let _ = cluster.client.flush().await;
    }
    // Acked once the outcome is stored: a redelivery now gets the stored answer. One that is
    // not stored is left to its redelivery, which finds what the record says.
    if !stored {
        return;
    }
    let acked = patiently(
        cluster.patience(),
        || message.double_ack(),
        |_| true,
        |_| {},
    )
    .await;
    if let Err(GaveUp::OutOfPatience(error) | GaveUp::Refused(error)) = acked {
        log(options, &format!("acking request {}: {error}", request.id));
    }
}

/// Answers a request that cannot be taken (too big, or not a request) with `error`, when it
/// says where answers go; it has no run record to keep the answer.
async fn refuse(cluster: &Cluster, options: &WorkerOptions, reply_to: Option<&str>, error: &Error) {
    let Some(reply_to) = reply_to else { return };
    let reply = Reply::Ended {
        outcome: StoredOutcome::refused(error),
        worker: options.name.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&reply) {
        let _ = cluster
            .client
            .publish(reply_to.to_string(), Bytes::from(bytes))
            .await;
        let _ = cluster.client.flush().await;
    }
}

/// Runs `request` and stores its outcome in the run's record; whether it was stored.
async fn run(
    cluster: &Cluster,
    kernel: &Kernel,
    options: &WorkerOptions,
    request: &RunMessage,
    reply_to: Option<String>,
    (revision, taken): (u64, RunRecord),
    cancel: CancelHandle,
) -> (StoredOutcome, bool) {
    // The record as this worker took it; `mark_effects` and the outcome update it in turn.
    let feed = JournalFeed::new(
        cluster,
        kernel.journal().clone(),
        &options.name,
        &request.id,
        taken.attempt,
    );
    let record = Arc::new(Mutex::new((revision, taken)));
    let attempt = Attempt {
        reply_to,
        record: record.clone(),
        feed: feed.clone(),
        cancel,
    };
    let prepared = prepare(cluster, kernel, options, request, attempt);
    let ended = async {
        let (execution, folder) = prepared.await?;
        let report = kernel.run(execution).await?;
        feed.ended(&report.id).await;
        let files = upload_published(cluster, &folder.path().join("out")).await?;
        Ok::<_, Error>((report, files))
    }
    .await;
    let outcome = match ended {
        Ok((report, files)) => stored_report(cluster, report, files).await,
        Err(error) => StoredOutcome::refused(&error),
    };
    let id = request.id.as_str();
    let away = |why: &str| log(options, &format!("storing the outcome of {id}: {why}"));
    let patiently = (cluster.patience(), &away as &(dyn Fn(&str) + Sync));
    let stored = store_outcome(&cluster.owners, id, &record, &outcome, patiently).await;
    if let Err(error) = &stored {
        log(options, &format!("storing the outcome of {id}: {error}"));
    }
    (outcome, stored.is_ok())
}

/// A report as the run's record and its reply carry it: inline when small, otherwise in the
/// object store (a NATS message has a size limit; a run's result may be far larger).
async fn stored_report(cluster: &Cluster, report: RunReport, files: Vec<FileRef>) -> StoredOutcome {
    let bytes = match serde_json::to_vec(&report) {
        Ok(bytes) => bytes,
        Err(e) => {
            return StoredOutcome::refused(&Error::new(
                ErrorCode::IsolateFailure,
                format!("encoding the report of run {}: {e}", report.id),
            ));
        }
    };
    if bytes.len() <= MAX_INLINE_BYTES {
        return StoredOutcome::Report {
            inline: Some(Box::new(report)),
            sha256: None,
            files,
        };
    }
    match cluster.put_blob(&bytes).await {
        Ok(sha256) => StoredOutcome::Report {
            inline: None,
            sha256: Some(sha256),
            files,
        },
        Err(error) => StoredOutcome::refused(&Error::new(
            error.code,
            format!(
                "run {} ended, but its report could not be stored: {}",
                report.id, error.message
            ),
        )),
    }
}

/// What one attempt at a request brings to its execution.
struct Attempt {
    /// Where its replies go: that it was taken, and progress when the request asks for it.
    reply_to: Option<String>,
    /// The run's record as this attempt holds it, marked before the first effect.
    record: Arc<Mutex<(u64, RunRecord)>>,
    /// Its journal records' way to the journal stream.
    feed: JournalFeed,
    /// Fired when the submitter cancels.
    cancel: CancelHandle,
}

/// The execution request of a queued one: its script and inputs fetched into a folder of
/// its own, its limits and policy within the worker's, progress sent back, and the run's
/// record marked before its first effect.
async fn prepare(
    cluster: &Cluster,
    kernel: &Kernel,
    options: &WorkerOptions,
    request: &RunMessage,
    attempt: Attempt,
) -> Result<(ExecutionRequest, tempfile::TempDir), Error> {
    let Attempt {
        reply_to,
        record,
        feed,
        cancel,
    } = attempt;
    crate::kernel::validate_session(&request.session)?;
    let (limits, lowered) = request.limits.within(&options.ceilings);
    check_declared_sizes(request, &limits)?;
    let source = script_source(cluster, request).await?;
    let (folder, tops) = fetch_inputs(cluster, kernel, request).await?;
    if let Some(subject) = &reply_to {
        send_taken(cluster, options, subject, &limits, &lowered).await;
    }
    let events = progress_sink(cluster, feed, reply_to.filter(|_| request.progress));
    let before_effects = effects_hook(cluster, options, &request.id, record);
    let execution = ExecutionRequest::builder(source, request.script.path.clone())
        .engine(request.engine.clone())
        .limits(limits)
        .policy(request.policy.within(&options.policy))
        .session(request.session.clone())
        .inputs(tops)
        .record(request.record)
        // Published into the run's folder, then sent to the submitter through the object store.
        .out_dir(folder.path().join("out"))
        .events(Some(events))
        .cancel(Some(cancel))
        .before_effects(Some(before_effects))
        .build();
    Ok((execution, folder))
}

/// Tells the submitter which worker took the run, and which of its limits this worker lowered.
async fn send_taken(
    cluster: &Cluster,
    options: &WorkerOptions,
    subject: &str,
    limits: &Limits,
    lowered: &[&'static str],
) {
    let taken = Reply::Taken {
        worker: options.name.clone(),
        lowered: limits
            .describe()
            .into_iter()
            .filter(|(flag, _)| lowered.contains(flag))
            .map(|(flag, value)| format!("--{flag} {value}"))
            .collect(),
    };
    if let Ok(bytes) = serde_json::to_vec(&taken) {
        let _ = cluster
            .client
            .publish(subject.to_string(), Bytes::from(bytes))
            .await;
    }
}

/// What the run's events do: its start goes to the journal stream, and progress, when the
/// request asks for it, to `progress_to`.
fn progress_sink(
    cluster: &Cluster,
    feed: JournalFeed,
    progress_to: Option<String>,
) -> crate::output::EventSink {
    let client = cluster.client.clone();
    Arc::new(move |event: Event| match event {
        Event::Started { id } => feed.started(&id),
        Event::Progress {
            message,
            completed,
            total,
        } => {
            let reply = Reply::Progress {
                message,
                completed,
                total,
            };
            if let (Some(subject), Ok(bytes)) = (&progress_to, serde_json::to_vec(&reply)) {
                let (client, subject) = (client.clone(), subject.clone());
                tokio::spawn(async move {
                    let _ = client.publish(subject, Bytes::from(bytes)).await;
                });
            }
        }
        _ => {}
    })
}

/// The hook that marks the run's record before its first effect.
fn effects_hook(
    cluster: &Cluster,
    options: &WorkerOptions,
    id: &str,
    record: Arc<Mutex<(u64, RunRecord)>>,
) -> crate::kernel::BeforeEffects {
    let owners = cluster.owners.clone();
    let id = id.to_string();
    let patience = cluster.patience();
    let worker = options.name.clone();
    Arc::new(move || {
        let (owners, id, record) = (owners.clone(), id.clone(), record.clone());
        let worker = worker.clone();
        async move {
            let away = |why: &str| {
                eprintln!("forge-host worker {worker}: marking {id} before its first effect: {why}")
            };
            mark_effects(&owners, &id, &record, patience, &away)
                .await
                .map_err(crate::kernel::EffectsRefused::new)
        }
        .boxed()
    })
}
