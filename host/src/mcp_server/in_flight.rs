//! How many tool calls the server holds at once, whatever their state (read, waiting for a
//! slot, running, answering). The SDK spawns a task for every request it reads, so a client
//! that writes 100,000 calls at once would otherwise make the server hold 100,000 of them: on
//! stdio a call is counted as its line is read, and the server reads no further while the count
//! is at its bound (the client's writes wait in the pipe); over HTTP a request past the bound is
//! answered 503 before its body is read.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
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
}

/// One held call; dropping it lets the next one in.
pub struct Held(Arc<InFlight>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::SeqCst);
        if let Some(waker) = self.0.waiting.lock().ok().and_then(|mut w| w.take()) {
            waker.wake();
        }
    }
}

/// The parts of a JSON-RPC message that say whether it is a tool call.
#[derive(serde::Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    id: Option<serde_json::Value>,
}

impl InFlight {
    /// A count whose bound is `max`.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(InFlight {
            max: max.max(1),
            ..Default::default()
        })
    }

    /// Counts in the call a line holds, if it is one (`tools/call` with an id), as it is read.
    pub fn read_line(&self, line: &[u8]) {
        let Ok(Peek {
            method: Some(method),
            id: Some(id),
        }) = serde_json::from_slice::<Peek<'_>>(line)
        else {
            return;
        };
        if method == "tools/call"
            && let Ok(mut read) = self.read.lock()
            && read.insert(id.to_string())
        {
            self.count.fetch_add(1, Ordering::SeqCst);
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
        Held(self.clone())
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
}
