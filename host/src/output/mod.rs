//! Output of an execution besides its result: stdout and stderr (captured, of which a bounded
//! tail is retained), `text()` values and progress. Everything is also streamed, as it happens,
//! to an optional [`EventSink`] (the CLI prints it live).

mod log;
mod tail;

use std::sync::{Arc, Mutex};

use serde_json::Value;

pub use log::TaskLog;

use crate::error::{ErrorCode, HostStop};
use crate::primitives::truncate_at;
pub use tail::TailPipe;

/// Something an execution emitted while running.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The execution is journaled under this id: its `running` record is durable. Output of the
    /// run may come before it (the record is committed while the guest runs).
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

/// Longest progress message kept, in bytes.
const MAX_PROGRESS_MESSAGE_BYTES: usize = 4096;

/// A `text()` value refused; the script sees its code and may go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextRefused {
    /// Over the output budget: `BUDGET_EXCEEDED`.
    #[error("text() output would be {bytes} bytes, over the budget of {budget} bytes")]
    OverBudget {
        /// Bytes all text values would take.
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// Not a value the boundary takes (too deep, a lone surrogate): `INVALID_INPUT`.
    #[error("the text() value cannot be kept: {0}")]
    Invalid(String),
}

impl TextRefused {
    /// The code the script sees.
    pub fn code(&self) -> ErrorCode {
        match self {
            TextRefused::OverBudget { .. } => ErrorCode::BudgetExceeded,
            TextRefused::Invalid(_) => ErrorCode::InvalidInput,
        }
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

impl OutputState {
    /// Keeps one `text()` value (JSON text) and streams it. A value over the budget is the
    /// script's to handle; text that is not JSON breaks the contract and stops the run.
    pub fn text(&mut self, value: &str) -> Result<Result<(), TextRefused>, HostStop> {
        let bytes = value.len() as u64;
        let budget = self.text_budget;
        // The size check comes first: never parse what is over budget anyway.
        if bytes > budget {
            return Ok(Err(TextRefused::OverBudget { bytes, budget }));
        }
        let parsed: Value = match crate::json::parse(value) {
            Ok(parsed) => parsed,
            Err(e) if e.is_script_error() => return Ok(Err(TextRefused::Invalid(e.to_string()))),
            Err(e) => {
                return Err(HostStop::ProtocolViolation(format!(
                    "a text() value is not JSON: {e}"
                )));
            }
        };
        if let Err(used) = self.texts.push(parsed.clone(), bytes, budget) {
            return Ok(Err(TextRefused::OverBudget {
                bytes: used + bytes,
                budget,
            }));
        }
        if let Some(sink) = &self.events {
            sink(Event::Text(parsed));
        }
        Ok(Ok(()))
    }

    /// Streams a progress report; counts that are not finite are dropped.
    pub fn progress(&mut self, message: &str, completed: Option<f64>, total: Option<f64>) {
        let Some(sink) = &self.events else {
            return;
        };
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        sink(Event::Progress {
            message: truncate_at(message, MAX_PROGRESS_MESSAGE_BYTES).to_string(),
            completed: finite(completed),
            total: finite(total),
        });
    }
}
