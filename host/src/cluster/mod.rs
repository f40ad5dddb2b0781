//! forge-host past one machine (issue 16): workers that pull run requests from a NATS JetStream
//! work queue, and the front doors that submit them (`submit`, and later `mcp --nats`).
//!
//! What lives on NATS, created by whichever process comes first:
//! - the stream `FORGE_RUNS` (work-queue retention: a message leaves once acked), one subject per
//!   queue (`forge.run.<queue>`), and one durable pull consumer per queue that all of its workers
//!   share. It refuses new messages when full (`--max-queued`), so requests wait there and never
//!   in a process's memory;
//! - the object store `forge_blobs`: scripts, inputs and reports, by sha256;
//! - the key-value bucket `forge_runs`: one record per submitted run, saying which attempt owns
//!   it, whether that attempt may have changed anything outside itself, and where its report is;
//! - the stream `FORGE_JOURNAL`: the latest journal record of every attempt at a run, `running`
//!   while it runs; the worker that answers a run after a dead attempt closes that attempt's
//!   record as `interrupted`.
//!
//! Blobs, run records and journal records expire `--retention` (a week by default) after they
//! were written; the queue's requests stay until a worker acks them.
//!
//! Delivery is at least once; effects are at most once. A worker acks a request only once its
//! report is stored; a worker that dies leaves it unacked, and JetStream redelivers it after
//! `ack_wait`. The next worker reads the run's record: a run whose attempt never reached its
//! first effect (a `write`/`process`/`external` call, a state commit, a publication) is run
//! again; one that may have had effects is reported `ISOLATE_FAILURE` (`interrupted`) instead.

mod bounds;
pub mod connect;
mod error;
mod journal_feed;
mod names;
mod ownership;
mod patience;
pub mod submit;
mod transfer;
pub mod wire;
pub mod worker;

use std::time::Duration;

use async_nats::jetstream::{self, consumer, kv, object_store, stream};

pub use connect::{NatsAuth, NatsError, NatsOptions, NatsTarget};
pub use error::ClusterError;
pub use names::{DEFAULT_QUEUE, validate_queue};
pub use wire::JournalEntry;

use crate::error::{Error, ErrorCode};
use wire::{RunRecord, StoredOutcome};

/// How the queue is set up when this process is the first to create it.
#[derive(Debug, Clone)]
pub struct QueueOptions {
    /// Most requests waiting in one queue's stream; more are refused.
    pub max_queued: i64,
    /// How long a delivered request may go without an ack or a sign of progress before it is
    /// delivered again (a worker in good health signals progress every third of it).
    pub ack_wait: Duration,
    /// How long blobs, run records and journal records are kept: each expires this long after
    /// it was written (a blob a new submission uses again is written again once it is half
    /// that old).
    pub retention: Duration,
}

/// The longest one read of the journal stream waits for its next message (a loopback server
/// answers in well under a millisecond).
const JOURNAL_FETCH_WAIT: Duration = Duration::from_secs(3);

/// How long the run queue remembers a request's id: a request published again with the same id
/// within it is kept once.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// [`QueueOptions::retention`]'s default: a week.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions {
            max_queued: 10_000,
            ack_wait: Duration::from_secs(30),
            retention: DEFAULT_RETENTION,
        }
    }
}

/// A connection to the NATS server, with the streams, bucket and store forge-host uses.
#[derive(Clone)]
pub struct Cluster {
    client: async_nats::Client,
    jetstream: jetstream::Context,
    runs: stream::Stream,
    blobs: object_store::ObjectStore,
    owners: kv::Store,
    journal: stream::Stream,
    /// The blob store's retention, as the store has it.
    blob_retention: Duration,
    /// The server's URL as it is shown: no password or token in it.
    url: String,
    /// How long to keep trying while the server is away.
    patience: Duration,
}

/// An error of NATS, as forge-host reports it.
fn nats(what: &str, url: &str, error: impl std::error::Error + Send + Sync + 'static) -> Error {
    ClusterError::nats(what, url, error).into()
}

impl Cluster {
    /// Connects to `target` and makes sure the streams, the bucket and the object store exist.
    pub async fn connect(target: &NatsTarget, options: &QueueOptions) -> Result<Self, Error> {
        let client = target.connect().await?;
        let shown = target.to_string();
        let url = shown.as_str();
        let jetstream = jetstream::new(client.clone());
        let runs = jetstream
            .get_or_create_stream(stream::Config {
                name: names::RUNS_STREAM.into(),
                subjects: vec![format!("{}.*", names::RUN_SUBJECT)],
                retention: stream::RetentionPolicy::WorkQueue,
                discard: stream::DiscardPolicy::New,
                max_messages: options.max_queued,
                duplicate_window: DUPLICATE_WINDOW,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| nats("the run queue", url, e))?;
        let journal = jetstream
            .get_or_create_stream(stream::Config {
                name: names::JOURNAL_STREAM.into(),
                subjects: vec![format!("{}.>", names::JOURNAL_SUBJECT)],
                max_messages_per_subject: 1,
                max_age: options.retention,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| nats("the journal stream", url, e))?;
        let blobs = match jetstream.get_object_store(names::BLOBS).await {
            Ok(store) => store,
            Err(_) => jetstream
                .create_object_store(object_store::Config {
                    bucket: names::BLOBS.into(),
                    max_age: options.retention,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(|e| nats("the blob store", url, e))?,
        };
        // The store may have been made by another process, with its own retention.
        let blob_retention = match jetstream.get_stream(format!("OBJ_{}", names::BLOBS)).await {
            Ok(mut stream) => stream
                .info()
                .await
                .map(|info| info.config.max_age)
                .unwrap_or(options.retention),
            Err(_) => options.retention,
        };
        // The bucket's stream is made here as async-nats's `create_key_value` would make it: that
        // call first reads the account's limits in a form servers before 2.10 do not send.
        jetstream
            .get_or_create_stream(stream::Config {
                name: format!("KV_{}", names::OWNERS),
                subjects: vec![format!("$KV.{}.>", names::OWNERS)],
                max_messages_per_subject: 1,
                max_message_size: -1,
                allow_rollup: true,
                deny_delete: true,
                allow_direct: true,
                max_age: options.retention,
                discard: stream::DiscardPolicy::New,
                num_replicas: 1,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| nats("the run records", url, e))?;
        let owners: kv::Store = jetstream
            .get_key_value(names::OWNERS)
            .await
            .map_err(|e| nats("the run records", url, e))?;
        Ok(Cluster {
            client,
            jetstream,
            runs,
            blobs,
            owners,
            journal,
            blob_retention,
            url: shown,
            patience: target.patience(),
        })
    }

    /// The shared consumer of `queue`'s requests, created on first use.
    async fn consumer(
        &self,
        queue: &str,
        options: &QueueOptions,
    ) -> Result<consumer::Consumer<consumer::pull::Config>, Error> {
        let name = names::consumer(queue);
        self.runs
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: names::run_subject(queue),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: options.ack_wait,
                    max_deliver: -1,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| nats(&format!("the consumer of queue `{queue}`"), &self.url, e))
    }

    /// Stores `bytes` in the object store under their sha256; a second store of the same bytes
    /// does nothing.
    async fn put_blob(&self, bytes: &[u8]) -> Result<String, Error> {
        let sha256 = crate::primitives::sha256_hex(bytes);
        let name = names::blob(&sha256);
        if let Ok(info) = self.blobs.info(&name).await
            && !self.half_expired(info.modified.map(|at| at.unix_timestamp()))
        {
            return Ok(sha256);
        }
        let mut reader = bytes;
        self.blobs
            .put(name.as_str(), &mut reader)
            .await
            .map_err(|e| nats("storing a blob", &self.url, e))?;
        Ok(sha256)
    }

    /// Whether a blob written at `written` (Unix seconds) is past half its retention, so that a
    /// submission that uses it again writes it again rather than have it expire while queued.
    fn half_expired(&self, written: Option<i64>) -> bool {
        if self.blob_retention.is_zero() {
            return false;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let age = written.map_or(u64::MAX, |at| {
            now.saturating_sub(u64::try_from(at).unwrap_or(0))
        });
        age.saturating_mul(2) >= self.blob_retention.as_secs()
    }

    /// The bytes stored under `sha256`, checked.
    async fn get_blob(&self, sha256: &str) -> Result<Vec<u8>, Error> {
        self.get_blob_sized(sha256, None).await
    }

    /// The bytes stored under `sha256`, checked; with `size`, refused unless the store holds
    /// exactly that many, and never more than that is read (a request's declared sizes bound
    /// what a worker holds).
    async fn get_blob_sized(&self, sha256: &str, size: Option<u64>) -> Result<Vec<u8>, Error> {
        use tokio::io::AsyncReadExt;
        let object = self
            .blobs
            .get(names::blob(sha256))
            .await
            .map_err(|e| nats(&format!("blob {sha256}"), &self.url, e))?;
        let stored = object.info().size as u64;
        if let Some(size) = size
            && stored != size
        {
            return Err(Error::invalid_input(format!(
                "blob {sha256} holds {stored} bytes, not the {size} its request declares"
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(stored.min(1 << 20)).unwrap_or(0));
        object
            .take(size.map_or(u64::MAX, |size| size.saturating_add(1)))
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| nats(&format!("reading blob {sha256}"), &self.url, e))?;
        let actual = crate::primitives::sha256_hex(&bytes);
        if actual != sha256 {
            return Err(Error::new(
                ErrorCode::IsolateFailure,
                format!("blob {sha256} read back as sha256 {actual}"),
            ));
        }
        Ok(bytes)
    }

    /// The latest journal record of every attempt at a queued run, with the worker that ran
    /// it, newest first.
    pub async fn journal(&self) -> Result<Vec<JournalEntry>, Error> {
        use futures::StreamExt;
        let reader = self
            .journal
            .create_consumer(consumer::pull::Config {
                deliver_policy: consumer::DeliverPolicy::LastPerSubject,
                filter_subject: format!("{}.>", names::JOURNAL_SUBJECT),
                ack_policy: consumer::AckPolicy::None,
                inactive_threshold: Duration::from_secs(30),
                ..Default::default()
            })
            .await
            .map_err(|e| nats("reading the journal stream", &self.url, e))?;
        let mut entries = Vec::new();
        loop {
            let mut batch = reader
                .fetch()
                .max_messages(1000)
                .messages()
                .await
                .map_err(|e| nats("reading the journal stream", &self.url, e))?;
            let mut got = 0;
            // Each message waited for on a timer of our own: a server may count a message that
            // expired meanwhile as still pending and hold the no-wait pull for it, answering
            // nothing, and a no-wait pull has no expiry of its own (an `expires` would make
            // every read wait that long).
            while let Ok(Some(Ok(message))) =
                tokio::time::timeout(JOURNAL_FETCH_WAIT, batch.next()).await
            {
                got += 1;
                if let Ok(entry) = serde_json::from_slice::<JournalEntry>(&message.payload) {
                    entries.push(entry);
                }
            }
            if got == 0 {
                break;
            }
        }
        entries.sort_by(|a, b| b.record.started_at.cmp(&a.record.started_at));
        Ok(entries)
    }

    /// The URL it is connected to, as it may be shown (a password or token in it is `***`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How long to keep trying while the server is away (`--nats-patience`).
    pub fn patience(&self) -> Duration {
        self.patience
    }

    /// The outcome stored in run `id`'s record and the worker that stored it; `None` while the
    /// run has none (queued, or running).
    async fn stored_outcome(&self, id: &str) -> Result<Option<(StoredOutcome, String)>, Error> {
        let entry = self
            .owners
            .entry(id)
            .await
            .map_err(|e| nats("reading the run's record", &self.url, e))?;
        let record = entry
            .filter(|e| e.operation == kv::Operation::Put)
            .and_then(|e| serde_json::from_slice::<RunRecord>(&e.value).ok());
        Ok(record.and_then(|r| r.outcome.map(|outcome| (outcome, r.worker))))
    }

    /// The error past [`Cluster::patience`]: NATS has not answered for that long.
    fn unreachable(&self, waiting_for: &str, last: &Error) -> Error {
        self.unreachable_for(self.patience, waiting_for, last)
    }

    /// The error past `patience`: NATS has not answered for that long.
    fn unreachable_for(&self, patience: Duration, waiting_for: &str, last: &Error) -> Error {
        Error::new(
            ErrorCode::ClusterUnreachable,
            format!(
                "NATS at {} has not answered for {} (--nats-patience) while {waiting_for}: {}",
                self.url,
                crate::limits::format_duration(patience),
                crate::error::chain_text(last)
            ),
        )
    }
}
