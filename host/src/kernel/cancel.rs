//! Cancellation of a running execution by its caller (Ctrl-C, an MCP client, an embedder).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A clonable handle that cancels an execution; the kernel watches it while the guest runs.
#[derive(Debug, Clone, Default)]
pub struct CancelHandle {
    inner: Arc<(AtomicBool, Notify)>,
}

impl CancelHandle {
    /// A handle that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the execution (idempotent).
    pub fn cancel(&self) {
        self.inner.0.store(true, Ordering::SeqCst);
        self.inner.1.notify_waiters();
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst)
    }

    /// Resolves once cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.1.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}
