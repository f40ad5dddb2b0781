//! What tool sources print on their own (an MCP server's stderr), routed to the task logs of the
//! executions running at the time. A server outlives each execution, so its lines cannot be
//! handed to one log up front: each execution subscribes while it runs. Lines printed while no
//! execution runs (a server's start-up banner, before the first run) are kept, up to
//! [`MAX_BACKLOG_BYTES`], for the next execution to subscribe.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Receives one line, newline included.
pub type LineSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// Bytes of lines kept while nobody listens.
pub const MAX_BACKLOG_BYTES: usize = 64 << 10;

#[derive(Default)]
struct Subscribers {
    next: u64,
    sinks: BTreeMap<u64, LineSink>,
    backlog: Vec<u8>,
}

/// The hub every tool source publishes its lines to; clones share it.
#[derive(Clone, Default)]
pub struct ServerLogs {
    inner: Arc<Mutex<Subscribers>>,
}

/// Unsubscribes when dropped.
pub struct Subscription {
    hub: ServerLogs,
    key: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Ok(mut subscribers) = self.hub.inner.lock() {
            subscribers.sinks.remove(&self.key);
        }
    }
}

impl ServerLogs {
    /// `sink` receives every line published until the subscription is dropped.
    pub fn subscribe(&self, sink: LineSink) -> Subscription {
        let key = match self.inner.lock() {
            Ok(mut subscribers) => {
                let key = subscribers.next;
                subscribers.next += 1;
                let backlog = std::mem::take(&mut subscribers.backlog);
                if !backlog.is_empty() {
                    sink(&backlog);
                }
                subscribers.sinks.insert(key, sink);
                key
            }
            Err(_) => u64::MAX,
        };
        Subscription {
            hub: self.clone(),
            key,
        }
    }

    /// Passes `line` to every subscriber.
    pub fn publish(&self, line: &[u8]) {
        let sinks: Vec<LineSink> = match self.inner.lock() {
            Ok(mut subscribers) if subscribers.sinks.is_empty() => {
                if subscribers.backlog.len() + line.len() <= MAX_BACKLOG_BYTES {
                    subscribers.backlog.extend_from_slice(line);
                }
                return;
            }
            Ok(subscribers) => subscribers.sinks.values().cloned().collect(),
            Err(_) => return,
        };
        for sink in sinks {
            sink(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_reach_subscribers_until_they_unsubscribe_and_wait_for_the_next_one() {
        let hub = ServerLogs::default();
        let seen = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = {
            let seen = seen.clone();
            Arc::new(move |line: &[u8]| seen.lock().expect("lock").extend_from_slice(line))
        };
        hub.publish(b"before\n");
        let subscription = hub.subscribe(sink);
        hub.publish(b"during\n");
        drop(subscription);
        hub.publish(b"after\n");
        assert_eq!(&*seen.lock().expect("lock"), b"before\nduring\n");
        let later = Arc::new(Mutex::new(Vec::<u8>::new()));
        let _again = hub.subscribe({
            let later = later.clone();
            Arc::new(move |line: &[u8]| later.lock().expect("lock").extend_from_slice(line))
        });
        assert_eq!(&*later.lock().expect("lock"), b"after\n");
    }
}
