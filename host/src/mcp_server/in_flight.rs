//! How many tool calls the server holds at once, whatever their state (read, waiting for a
//! slot, running, answering). The SDK spawns a task for every request it reads, and another for
//! every answer it writes, so a client that writes 100,000 calls at once, or does not read its
//! answers, would otherwise make the server hold 100,000 of them: on stdio a call is counted as
//! its line is read until its answer is written out, and the server reads no further while the
//! count is at its bound (the client's writes wait in the pipe); over HTTP a request past the
//! bound is answered 503 before its body is read.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

/// Calls held beyond those running and waiting (`max_runs` + `max_queued`): enough that a
/// flood reaches the queue's bound and is refused there, with a clear error, before reading
/// pauses.
pub const SLACK: usize = 64;

/// The count of calls held, and who waits for it to fall.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    max: usize,
    /// The reader, waiting for the count to fall.
    waiting: Mutex<Option<Waker>>,
    /// Ids (as JSON) of calls counted as their line was read, not yet claimed by their handler.
    read: Mutex<HashSet<String>>,
    /// Whether a call is held until its answer is written ([`InFlight::hold_until_written`]).
    until_written: AtomicBool,
    /// Ids of calls whose handler ended and whose answer is not written yet.
    answering: Mutex<HashSet<String>>,
    /// Ids of running calls the client cancelled: the SDK drops their answers.
    cancelled: Mutex<HashSet<String>>,
}

/// One held call; dropping it lets the next one in, or (on stdio) waits for its answer.
pub struct Held {
    in_flight: Arc<InFlight>,
    key: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let in_flight = &self.in_flight;
        let dropped = in_flight
            .cancelled
            .lock()
            .is_ok_and(|mut cancelled| cancelled.remove(&self.key));
        if in_flight.until_written.load(Ordering::SeqCst)
            && !dropped
            && let Ok(mut answering) = in_flight.answering.lock()
        {
            answering.insert(std::mem::take(&mut self.key));
            return;
        }
        in_flight.release();
    }
}

/// The parts of a JSON-RPC message that say whether it is a tool call.
#[derive(serde::Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    id: Option<serde_json::Value>,
}

/// The call a cancellation names.
#[derive(serde::Deserialize)]
struct Cancelled {
    params: CancelledParams,
}

#[derive(serde::Deserialize)]
struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: serde_json::Value,
}

impl InFlight {
    /// A count whose bound is `max`.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(InFlight {
            max: max.max(1),
            ..Default::default()
        })
    }

    /// Holds each call until its answer is written ([`InFlight::written`] hears it), not only
    /// until its handler ends: for a transport that tells when a message is out (stdio).
    pub fn hold_until_written(&self) {
        self.until_written.store(true, Ordering::SeqCst);
    }

    /// Counts in the call a line holds, if it is one (`tools/call` with an id), as it is read;
    /// and forgets a call the client cancels (`notifications/cancelled`), whose answer the SDK
    /// drops instead of writing.
    pub fn read_line(&self, line: &[u8]) {
        let Ok(Peek {
            method: Some(method),
            id,
        }) = serde_json::from_slice::<Peek<'_>>(line)
        else {
            return;
        };
        match (method.as_ref(), id) {
            ("tools/call", Some(id)) => {
                if let Ok(mut read) = self.read.lock()
                    && read.insert(id.to_string())
                {
                    self.count.fetch_add(1, Ordering::SeqCst);
                }
            }
            ("notifications/cancelled", None) => {
                let Ok(cancelled) = serde_json::from_slice::<Cancelled>(line) else {
                    return;
                };
                let key = cancelled.params.request_id.to_string();
                let answered = self
                    .answering
                    .lock()
                    .is_ok_and(|mut answering| answering.remove(&key));
                if answered {
                    self.release();
                } else if let Ok(mut cancelled) = self.cancelled.lock() {
                    cancelled.insert(key);
                }
            }
            _ => {}
        }
    }

    /// Hears that the message with `id` was written out: the call it answers lets the next one
    /// in, whether its handler ran or the SDK answered it without one (bad params, say).
    pub fn written(&self, id: Option<serde_json::Value>) {
        let Some(id) = id else { return };
        let key = id.to_string();
        let answered = self
            .answering
            .lock()
            .is_ok_and(|mut answering| answering.remove(&key))
            || self.read.lock().is_ok_and(|mut read| read.remove(&key));
        if answered {
            self.release();
        }
    }

    fn release(&self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
        if let Some(waker) = self.waiting.lock().ok().and_then(|mut w| w.take()) {
            waker.wake();
        }
    }

    /// The hold of call `id` while its handler runs: the one taken when its line was read, or a
    /// new one (over HTTP, where nothing is counted as it is read).
    pub fn claim(self: &Arc<Self>, id: &impl serde::Serialize) -> Held {
        let key = serde_json::to_string(id).unwrap_or_default();
        let counted = self.read.lock().is_ok_and(|mut read| read.remove(&key));
        if !counted {
            self.count.fetch_add(1, Ordering::SeqCst);
        }
        Held {
            in_flight: self.clone(),
            key,
        }
    }

    /// Whether the count is at its bound (an HTTP request is then refused before its body is
    /// read).
    pub fn at_bound(&self) -> bool {
        self.count.load(Ordering::SeqCst) >= self.max
    }

    /// Whether reading must wait: the count is at its bound; `cx` is woken when it falls.
    pub fn full(&self, cx: &Context<'_>) -> bool {
        if !self.at_bound() {
            return false;
        }
        if let Ok(mut waiting) = self.waiting.lock() {
            *waiting = Some(cx.waker().clone());
        }
        // A call may have ended between the check and the registration.
        self.at_bound()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_count_from_their_line_until_their_handler_ends() {
        let in_flight = InFlight::new(2);
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        in_flight.read_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        in_flight.read_line(br#"{"params":{},"method":"tools/call","id":"b","jsonrpc":"2.0"}"#);
        assert!(in_flight.at_bound(), "two calls read");
        let waker = futures::task::noop_waker();
        assert!(in_flight.full(&Context::from_waker(&waker)));
        let first = in_flight.claim(&serde_json::json!(1));
        assert!(in_flight.at_bound(), "claiming counts nothing twice");
        drop(first);
        assert!(!in_flight.at_bound());
        let other = in_flight.claim(&serde_json::json!("over-http"));
        assert!(in_flight.at_bound());
        drop(other);
        drop(in_flight.claim(&serde_json::json!("b")));
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn on_stdio_a_call_is_held_until_its_answer_is_written_or_cancelled() {
        let in_flight = InFlight::new(2);
        in_flight.hold_until_written();
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#);
        drop(in_flight.claim(&serde_json::json!(1)));
        assert!(in_flight.at_bound(), "answered, not written yet");
        in_flight.written(Some(serde_json::json!(7)));
        in_flight.written(None);
        assert!(in_flight.at_bound(), "another message was written");
        in_flight.written(Some(serde_json::json!(1)));
        assert!(!in_flight.at_bound());
        in_flight.written(Some(serde_json::json!(1)));
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 1, "once only");
        // A call the SDK answered without a handler.
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":7}"#);
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 2);
        in_flight.written(Some(serde_json::json!(9)));
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 1);
        // A call cancelled while it runs: the SDK drops its answer, so its end lets one in.
        let running = in_flight.claim(&serde_json::json!(2));
        in_flight.read_line(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
        );
        drop(running);
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 0);
        // One cancelled after its handler ended.
        in_flight.read_line(br#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{}}"#);
        drop(in_flight.claim(&serde_json::json!("c")));
        in_flight.read_line(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}"#,
        );
        assert_eq!(in_flight.count.load(Ordering::SeqCst), 0);
    }
}
