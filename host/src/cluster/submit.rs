//! Submitting a run to the workers of a queue and waiting for its report: the inputs (and a
//! script over [`MAX_INLINE_BYTES`]) go to the object store, the request to the queue, and the
//! answer comes on a subject of the submitter's own (subscribed before the request is
//! published, so nothing is missed), with a report over that size in the object store too.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use async_nats::jetstream;
use async_nats::jetstream::context::PublishErrorKind;
use bytes::Bytes;
use futures::StreamExt;

use super::names::{self, REPLY_HEADER};
use super::wire::{FileRef, MAX_INLINE_BYTES, Reply, RunMessage, RunRecord, StoredOutcome};
use super::{Cluster, ClusterError, nats};
use crate::error::{Error, ErrorCode};
use crate::files::{self, PublishError};
use crate::kernel::{ExecutionRequest, RunReport, Runner};
use crate::limits::{GaveUp, patiently};
use crate::output::{Event, EventSink};

/// The longest a submission is tried again while NATS is away, whatever the patience: well
/// inside the queue's duplicate window ([`super::DUPLICATE_WINDOW`]), so that every try is known
/// to the queue as the same request.
const ENQUEUE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(100);

/// Hears that worker `worker` took a run, with the limits it lowered to its own (`--FLAG VALUE`).
pub type TakenSink = std::sync::Arc<dyn Fn(&str, &[String]) + Send + Sync>;

/// A run to submit: the request a local run would take, and the queue it goes to.
pub struct Submission {
    /// The run. Its script, limits, policy, session, inputs (inside its `inputs_root`, if
    /// any), record mode and `out_dir` travel; its events receive the workers' progress. What
    /// only a local run can have is refused: a recording to replay or resume, an asker.
    pub request: ExecutionRequest,
    /// The queue.
    pub queue: String,
    /// Hears which worker took the run, and the limits it lowered to its own (`--FLAG VALUE`).
    pub on_taken: Option<TakenSink>,
}

/// Puts `submission` in its queue; [`Queued::report`] waits for the report. `Err` when it was
/// not queued: the queue is full, or NATS refused it.
pub async fn enqueue(cluster: &Cluster, submission: Submission) -> Result<Queued, Error> {
    let Submission {
        request,
        queue,
        on_taken,
    } = submission;
    names::validate_queue(&queue)?;
    if request.lineage().replay.is_some() {
        return Err(Error::invalid_input(
            "a run of a worker pool cannot be resumed here: resume it where it ran",
        ));
    }
    let (script, options, hooks, _) = request.into_parts();
    crate::kernel::validate_session(&options.session)?;
    options.limits.validate()?;
    // Refused before anything is uploaded, as `run` refuses it before anything runs.
    crate::kernel::check_script_size(script.source.len() as u64, options.limits.max_script_bytes)?;
    // Refused before anything runs, as `run` refuses it: files there would be replaced.
    if let Some(out) = &options.out_dir {
        files::check_destination(out)?;
    }
    // The inputs are opened (inside the submitter's roots, if any) and their total checked
    // before any is read or uploaded, as `run` checks it.
    let opened = files::open_inputs(&options.inputs, options.inputs_root.as_ref(), "inputs")?;
    let walked = files::walk_within(&opened, options.limits.max_input_bytes)?;
    let script_text = (script.source.len() <= MAX_INLINE_BYTES).then(|| script.source.clone());
    let script_sha256 = match script_text {
        Some(_) => crate::primitives::sha256_hex(script.source.as_bytes()),
        None => cluster.put_blob(script.source.as_bytes()).await?,
    };
    let mut inputs = Vec::new();
    for (input, entries) in &walked {
        for entry in entries.iter().filter(|entry| !entry.folder) {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut input.open_file(entry)?, &mut bytes).map_err(|e| {
                Error::invalid_input(format!("cannot read input {}: {e}", entry.name))
            })?;
            let sha256 = cluster.put_blob(&bytes).await?;
            inputs.push(FileRef {
                path: entry.name.clone(),
                sha256,
                size: bytes.len() as u64,
            });
        }
    }
    let id = format!("s{}", crate::kernel::new_execution_id());
    let message = RunMessage {
        id: id.clone(),
        script: FileRef {
            path: script.filename.clone(),
            sha256: script_sha256,
            size: script.source.len() as u64,
        },
        script_text,
        engine: script.engine.clone(),
        limits: options.limits.clone(),
        policy: options.policy.clone(),
        session: options.session.clone(),
        inputs,
        progress: hooks.events.is_some(),
        record: options.record,
    };
    let payload = serde_json::to_vec(&message).map_err(|source| ClusterError::Encode {
        what: "the request",
        source,
    })?;
    let inbox = cluster.client.new_inbox();
    let replies = cluster
        .client
        .subscribe(inbox.clone())
        .await
        .map_err(|e| nats("subscribing to the reply subject", cluster.url(), e))?;
    // Tried again with the same message id while NATS is away: the queue keeps one request
    // per id within its duplicate window, so a try whose answer was lost is not queued twice.
    let patience = cluster.patience().min(ENQUEUE_PATIENCE);
    let queued = patiently(
        patience,
        || {
            let publish = jetstream::message::PublishMessage::build()
                .payload(Bytes::from(payload.clone()))
                .header(REPLY_HEADER, inbox.as_str())
                .message_id(&id);
            let subject = names::run_subject(&queue);
            async move {
                cluster
                    .jetstream
                    .send_publish(subject, publish)
                    .await?
                    .await
            }
        },
        |error| {
            matches!(
                error.kind(),
                PublishErrorKind::TimedOut
                    | PublishErrorKind::BrokenPipe
                    | PublishErrorKind::StreamNotFound
            )
        },
        |error| {
            eprintln!(
                "forge-host: NATS at {} did not take run {id} ({error}); trying again for up to {} (--nats-patience)",
                cluster.url(),
                crate::limits::format_duration(patience)
            );
        },
    )
    .await;
    match queued {
        Ok(_) => {}
        Err(GaveUp::Refused(error)) => return Err(refused_by_queue(cluster, &queue, error)),
        Err(GaveUp::OutOfPatience(error)) => {
            let last = nats("submitting the run", cluster.url(), error);
            return Err(cluster.unreachable_for(patience, "submitting the run", &last));
        }
    }
    Ok(Queued {
        id,
        replies,
        events: hooks.events,
        on_taken,
        out_dir: options.out_dir,
        cluster: cluster.clone(),
    })
}

/// The workers of one queue, as a [`Runner`]: a request runs there and reports as it would
/// here. Its cancel hook cancels it before any worker took it (the report is then the
/// `CANCELLED` error) or on its worker.
#[derive(Clone)]
pub struct QueueRunner {
    /// The NATS connection.
    pub cluster: Cluster,
    /// The queue.
    pub queue: String,
}

impl std::fmt::Debug for QueueRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "QueueRunner({} queue {})",
            self.cluster.url(),
            self.queue
        )
    }
}

impl Runner for QueueRunner {
    fn run(&self, request: ExecutionRequest) -> BoxFuture<'_, Result<RunReport, Error>> {
        Box::pin(async move {
            let cancel = request.hooks().cancel.clone().unwrap_or_default();
            let submission = Submission {
                request,
                queue: self.queue.clone(),
                on_taken: None,
            };
            let queued = enqueue(&self.cluster, submission).await?;
            let canceller = queued.canceller();
            let waiting = queued.report();
            tokio::pin!(waiting);
            tokio::select! {
                report = &mut waiting => report,
                () = cancel.cancelled() => match canceller.cancel().await? {
                    Some(never_ran) => Err(never_ran),
                    None => waiting.await,
                },
            }
        })
    }
}

/// Cancels a queued run from its submitter's side.
#[derive(Clone)]
pub struct Canceller {
    id: String,
    cluster: Cluster,
}

impl Canceller {
    /// Cancels the run. One no worker has taken yet never runs: its record is written answered
    /// `CANCELLED`, and `Ok(Some(error))` is what its submitter reports. One a worker runs is
    /// cancelled there as Ctrl-C cancels a local run, and its report (`cancelled`) still comes
    /// to [`Queued::report`]: `Ok(None)`.
    pub async fn cancel(&self) -> Result<Option<Error>, Error> {
        let never_ran = RunRecord {
            attempt: 0,
            worker: String::new(),
            started_at: crate::primitives::now_utc(),
            effects: false,
            outcome: Some(StoredOutcome::refused(&Error::new(
                ErrorCode::Cancelled,
                NEVER_RAN,
            ))),
        };
        if self
            .cluster
            .owners
            .create(
                self.id.as_str(),
                super::ownership::record_bytes(&never_ran).map_err(Error::from)?,
            )
            .await
            .is_ok()
        {
            return Ok(Some(Error::new(ErrorCode::Cancelled, NEVER_RAN)));
        }
        // A worker holds the record, and listens for this since before it took it; the key is
        // for a worker that takes over if that one died.
        self.cluster
            .owners
            .put(names::cancel_key(&self.id), Bytes::new())
            .await
            .map_err(|e| nats("cancelling the run", self.cluster.url(), e))?;
        self.cluster
            .client
            .publish(names::cancel_subject(&self.id), Bytes::new())
            .await
            .map_err(|e| nats("cancelling the run", self.cluster.url(), e))?;
        self.cluster
            .client
            .flush()
            .await
            .map_err(|e| nats("cancelling the run", self.cluster.url(), e))?;
        Ok(None)
    }
}

/// How often a submitter waiting for a report reads the run's record, in case the reply was
/// lost while NATS was away.
const OUTCOME_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// What a run cancelled before any worker took it says.
const NEVER_RAN: &str = "cancelled by its submitter while queued; it never ran";

/// A request in the queue, waiting for its report.
pub struct Queued {
    /// The submission's id.
    pub id: String,
    replies: async_nats::Subscriber,
    events: Option<EventSink>,
    on_taken: Option<TakenSink>,
    out_dir: Option<PathBuf>,
    cluster: Cluster,
}

impl Queued {
    /// What cancels it, while [`Queued::report`] waits.
    pub fn canceller(&self) -> Canceller {
        Canceller {
            id: self.id.clone(),
            cluster: self.cluster.clone(),
        }
    }

    /// Waits for the report, passing progress on as it comes. `Err` when a worker refused it,
    /// or NATS did not answer for longer than its patience.
    ///
    /// Replies travel on plain NATS, which keeps nothing for a subscriber that is away: one
    /// sent while the server restarted is lost. So the run's record, where its worker keeps the
    /// outcome, is read too, every [`OUTCOME_CHECK_EVERY`].
    pub async fn report(mut self) -> Result<RunReport, Error> {
        let mut check = tokio::time::interval(OUTCOME_CHECK_EVERY);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        check.tick().await;
        let mut answered_at = tokio::time::Instant::now();
        loop {
            let message = tokio::select! {
                message = self.replies.next() => message,
                _ = check.tick() => {
                    match self.cluster.stored_outcome(&self.id).await {
                        Ok(Some((outcome, worker))) => return self.ended(outcome, &worker).await,
                        Ok(None) => answered_at = tokio::time::Instant::now(),
                        Err(error) if answered_at.elapsed() > self.cluster.patience() => {
                            let waiting_for = format!(
                                "waiting for run {} (it may still end on its worker: `forge-host \
            journal list --nats` shows it once NATS is back)",
                                self.id
                            );
                            return Err(self.cluster.unreachable(&waiting_for, &error));
                        }
                        Err(_) => {}
                    }
                    continue;
                }
            };
            let Some(message) = message else { break };
            answered_at = tokio::time::Instant::now();
            let Ok(reply) = serde_json::from_slice::<Reply>(&message.payload) else {
                continue;
            };
            match reply {
                Reply::Taken { worker, lowered } => {
                    if let Some(on_taken) = &self.on_taken {
                        on_taken(&worker, &lowered);
                    }
                }
                Reply::Progress {
                    message,
                    completed,
                    total,
                } => {
                    if let Some(events) = &self.events {
                        events(Event::Progress {
                            message,
                            completed,
                            total,
                        });
                    }
                }
                Reply::Ended { outcome, worker } => return self.ended(outcome, &worker).await,
            }
        }
        Err(Error::new(
            ErrorCode::IsolateFailure,
            format!(
                "the connection to NATS at {} ended before the run's report came",
                self.cluster.url()
            ),
        ))
    }
}

impl Queued {
    /// The report of a run that ended, fetched from the object store when it was too big to
    /// travel inline, with its published files written out; `Err` when it was refused.
    async fn ended(&self, outcome: StoredOutcome, worker: &str) -> Result<RunReport, Error> {
        let (report, files) = match outcome {
            StoredOutcome::Report {
                inline: Some(report),
                files,
                ..
            } => (*report, files),
            StoredOutcome::Report {
                inline: None,
                sha256: Some(sha256),
                files,
            } => {
                let bytes = self.cluster.get_blob(&sha256).await?;
                let report = serde_json::from_slice::<RunReport>(&bytes).map_err(|e| {
                    Error::new(
                        ErrorCode::IsolateFailure,
                        format!("the report worker `{worker}` stored does not parse: {e}"),
                    )
                })?;
                (report, files)
            }
            StoredOutcome::Report { .. } => {
                return Err(Error::new(
                    ErrorCode::IsolateFailure,
                    format!("worker `{worker}` answered with no report"),
                ));
            }
            StoredOutcome::Refused { code, message } => {
                return Err(Error::new(code, format!("{message} (worker `{worker}`)")));
            }
        };
        self.fetch_outputs(report, &files).await
    }

    /// Writes the files the worker published where this submission publishes, and points the
    /// report there (as `run` would have published them).
    async fn fetch_outputs(
        &self,
        mut report: RunReport,
        files: &[FileRef],
    ) -> Result<RunReport, Error> {
        let dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None if !report.outputs.is_empty() => PathBuf::from("forge-out").join(&report.id),
            None => {
                report.out_dir = None;
                return Ok(report);
            }
        };
        if !files.is_empty() {
            // Written whole or not at all, as a local run publishes: into a staging folder
            // beside `dir`, renamed into place once every file is there.
            let not_published = |e: PublishError| Error::from_source(e.code(), e);
            let staged = files::stage_empty(&dir, &report.id).map_err(not_published)?;
            for file in files {
                let relative = Path::new(&file.path);
                if !relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                {
                    continue;
                }
                let bytes = self.cluster.get_blob(&file.sha256).await?;
                let path = staged.folder().join(relative);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        Error::new(
                            ErrorCode::PublicationRejected,
                            format!("{}: {e}", parent.display()),
                        )
                    })?;
                }
                std::fs::write(&path, bytes).map_err(|e| {
                    Error::new(
                        ErrorCode::PublicationRejected,
                        format!("{}: {e}", path.display()),
                    )
                })?;
            }
            staged.commit().map_err(not_published)?;
        }
        report.out_dir = Some(dir.display().to_string());
        Ok(report)
    }
}

/// Why the queue refused a request: full (its `--max-queued` waiting), or another reason.
fn refused_by_queue(
    cluster: &Cluster,
    queue: &str,
    error: async_nats::jetstream::context::PublishError,
) -> Error {
    let code = std::error::Error::source(&error)
        .and_then(|source| source.downcast_ref::<jetstream::Error>())
        .map(jetstream::Error::error_code);
    if code == Some(jetstream::ErrorCode::STREAM_STORE_FAILED) {
        return Error::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the queue `{queue}` is full: as many runs wait as it holds (--max-queued); nothing was submitted, try again once workers have taken some"
            ),
        );
    }
    nats("submitting the run", cluster.url(), error)
}
