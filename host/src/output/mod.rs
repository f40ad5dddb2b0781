//! Output of an execution besides its result: stdout and stderr (captured, of which a bounded
//! tail is retained), `text()` values and progress. Everything is also streamed, as it happens,
//! to an optional [`EventSink`] (the CLI prints it live).

mod host;
mod log;
mod tail;

use std::sync::{Arc, Mutex};

use serde_json::Value;

pub(crate) use host::OutputData;
pub use log::TaskLog;
pub use tail::TailPipe;

/// Something an execution emitted while running.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The execution is journaled under this id and about to be prepared.
    Started {
        /// Execution id.
        id: String,
    },
    /// Bytes written to stdout.
    Stdout(bytes::Bytes),
    /// Bytes written to stderr.
    Stderr(bytes::Bytes),
    /// A value passed to `text()`.
    Text(Value),
    /// A progress report.
    Progress {
        /// What is happening.
        message: String,
        /// Units done so far.
        completed: Option<f64>,
        /// Units in all.
        total: Option<f64>,
    },
}

/// Receives events as they happen. It runs on the execution's task: keep it quick.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// The `text()` values of an execution, shared with the kernel so that they survive a stop.
#[derive(Clone, Default)]
pub struct Texts {
    inner: Arc<Mutex<(Vec<Value>, u64)>>,
}

impl Texts {
    /// The values so far.
    pub fn values(&self) -> Vec<Value> {
        self.inner.lock().map(|g| g.0.clone()).unwrap_or_default()
    }

    fn push(&self, value: Value, bytes: u64, budget: u64) -> Result<(), u64> {
        let mut guard = self.inner.lock().map_err(|_| budget)?;
        if guard.1 + bytes > budget {
            return Err(guard.1);
        }
        guard.1 += bytes;
        guard.0.push(value);
        Ok(())
    }
}

/// What the `output` import writes to.
pub struct OutputState {
    texts: Texts,
    text_budget: u64,
    events: Option<EventSink>,
}

impl OutputState {
    /// Output with `text()` values bounded by `text_budget` bytes in all.
    pub fn new(texts: Texts, text_budget: u64, events: Option<EventSink>) -> Self {
        OutputState {
            texts,
            text_budget,
            events,
        }
    }
}
