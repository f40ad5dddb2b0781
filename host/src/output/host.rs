//! The `output` import: `text()` values (bounded) and progress, both streamed as events.

use serde_json::Value;
use wasmtime::component::HasData;

use super::{Event, OutputState};
use crate::engines::bindings::{output, types};
use crate::error::{ErrorCode, HostStop};

/// `HasData` marker: the import sees only the execution's [`OutputState`].
pub(crate) struct OutputData;

impl HasData for OutputData {
    type Data<'a> = &'a mut OutputState;
}

/// Longest progress message kept, in bytes.
const MAX_PROGRESS_MESSAGE_BYTES: usize = 4096;

impl output::Host for OutputState {
    async fn text(&mut self, value: String) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        let bytes = value.len() as u64;
        if bytes > self.text_budget {
            return Ok(Err(over_budget(bytes, self.text_budget)));
        }
        let parsed: Value = serde_json::from_str(&value)
            .map_err(|e| HostStop::ProtocolViolation(format!("a text() value is not JSON: {e}")))?;
        if let Err(used) = self.texts.push(parsed.clone(), bytes, self.text_budget) {
            return Ok(Err(over_budget(used + bytes, self.text_budget)));
        }
        if let Some(sink) = &self.events {
            sink(Event::Text(parsed));
        }
        Ok(Ok(()))
    }

    async fn progress(
        &mut self,
        message: String,
        completed: Option<f64>,
        total: Option<f64>,
    ) -> wasmtime::Result<()> {
        if let Some(sink) = &self.events {
            let mut message = message;
            if message.len() > MAX_PROGRESS_MESSAGE_BYTES {
                let mut end = MAX_PROGRESS_MESSAGE_BYTES;
                while !message.is_char_boundary(end) {
                    end -= 1;
                }
                message.truncate(end);
            }
            let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
            sink(Event::Progress {
                message,
                completed: finite(completed),
                total: finite(total),
            });
        }
        Ok(())
    }
}

fn over_budget(bytes: u64, budget: u64) -> types::ErrorInfo {
    types::ErrorInfo {
        code: ErrorCode::BudgetExceeded.as_str().to_string(),
        message: format!("text() output would be {bytes} bytes, over the budget of {budget} bytes"),
    }
}
