//! The runs an MCP server has in flight (cancelled at shutdown, or when their request is
//! dropped), and a script's progress passed on to the client.

use std::sync::Arc;

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RoleServer;

use crate::kernel::CancelHandle;
use crate::output::Event;

/// The cancel handles of the runs in flight.
#[derive(Default)]
pub(super) struct LiveRuns {
    next: std::sync::atomic::AtomicU64,
    handles: std::sync::Mutex<std::collections::HashMap<u64, CancelHandle>>,
}

/// A run registered in [`LiveRuns`]; unregistered when finished or dropped, and cancelled when
/// dropped before it finished (the request handler was dropped).
pub(super) struct LiveRun<'a> {
    runs: &'a LiveRuns,
    key: u64,
    finished: bool,
}

impl LiveRuns {
    pub(super) fn register(&self, cancel: CancelHandle) -> LiveRun<'_> {
        let key = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut handles) = self.handles.lock() {
            handles.insert(key, cancel);
        }
        LiveRun {
            runs: self,
            key,
            finished: false,
        }
    }

    pub(super) fn cancel_all(&self) {
        if let Ok(handles) = self.handles.lock() {
            handles.values().for_each(CancelHandle::cancel);
        }
    }
}

impl LiveRun<'_> {
    pub(super) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for LiveRun<'_> {
    fn drop(&mut self) {
        let handle = self
            .runs
            .handles
            .lock()
            .ok()
            .and_then(|mut handles| handles.remove(&self.key));
        if let (false, Some(handle)) = (self.finished, handle) {
            handle.cancel();
        }
    }
}

/// Progress reports waiting for a client that reads slowly; past it the newest are dropped
/// (progress is a hint, and a later report says more), so a script that reports in a loop to a
/// client that stopped reading holds this much and no more.
const PROGRESS_BACKLOG: usize = 64;

/// Passes a script's `progress()` to the client as `notifications/progress`, in order; reports a
/// slow client has no room for are dropped ([`PROGRESS_BACKLOG`]).
pub(super) fn progress_sink(
    token: rmcp::model::ProgressToken,
    peer: rmcp::service::Peer<RoleServer>,
) -> crate::output::EventSink {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Event>(PROGRESS_BACKLOG);
    tokio::spawn(async move {
        let mut sent = 0.0_f64;
        while let Some(event) = receiver.recv().await {
            let Event::Progress {
                message,
                completed,
                total,
            } = event
            else {
                continue;
            };
            // MCP wants progress to grow: a value that does not is replaced by one more.
            sent = match completed {
                Some(done) if done > sent => done,
                _ => sent + 1.0,
            };
            let mut param =
                ProgressNotificationParam::new(token.clone(), sent).with_message(message);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    });
    Arc::new(move |event: Event| {
        if matches!(event, Event::Progress { .. }) {
            let _ = sender.try_send(event);
        }
    })
}
