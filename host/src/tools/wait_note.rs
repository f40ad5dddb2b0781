//! What the guest says it waits for while it sleeps in `wait-for` (a timer of JavaScript's
//! event loop), shared with the kernel: a deadline drops the store mid-wait, and the `TIMEOUT`
//! message then names what was still pending.

use std::sync::{Arc, Mutex};

use crate::primitives::truncate_at;

/// Longest note kept, in bytes.
const MAX_NOTE_BYTES: usize = 1024;

/// What the guest is waiting for, while it waits.
#[derive(Clone, Default)]
pub struct WaitNote(Arc<Mutex<Option<String>>>);

impl WaitNote {
    /// What the guest was waiting for when it last stopped in a wait that has not returned.
    pub fn current(&self) -> Option<String> {
        self.0.lock().ok().and_then(|note| note.clone())
    }

    pub(super) fn set(&self, note: &str) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(truncate_at(note, MAX_NOTE_BYTES).to_string());
        }
    }

    pub(super) fn clear(&self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = None;
        }
    }
}
