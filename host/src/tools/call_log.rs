//! The record of an execution's nested calls, shared between the dispatcher, which writes it,
//! and the kernel, which reads it after any stop (a timeout or a cancellation drops the store).

use std::sync::{Arc, Mutex};

use crate::journal::CallRecord;

/// The record of an execution's calls, shared between the dispatcher and the kernel.
#[derive(Clone, Default)]
pub struct CallLog(Arc<Mutex<Vec<CallRecord>>>);

impl CallLog {
    /// Every call begun so far.
    pub fn snapshot(&self) -> Vec<CallRecord> {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub(super) fn len(&self) -> usize {
        self.0.lock().map(|r| r.len()).unwrap_or(usize::MAX)
    }

    pub(super) fn push(&self, record: CallRecord) {
        if let Ok(mut records) = self.0.lock() {
            records.push(record);
        }
    }

    pub(super) fn update(&self, position: u64, change: impl FnOnce(&mut CallRecord)) {
        let index = usize::try_from(position)
            .ok()
            .and_then(|p| p.checked_sub(1));
        if let (Ok(mut records), Some(index)) = (self.0.lock(), index)
            && let Some(record) = records.get_mut(index)
        {
            change(record);
        }
    }
}
