//! Keeping on while a service the host depends on is away (NATS, etcd: a restart, a
//! partition): a request that must not be lost is tried again with a growing pause until the
//! patience (`--nats-patience`, `--etcd-patience`) runs out.

use std::time::Duration;

use tokio::time::Instant;

/// How long forge-host keeps trying while NATS or etcd is away, unless told otherwise: long
/// enough for a server to restart.
pub const DEFAULT_PATIENCE: Duration = Duration::from_secs(60);

/// The first pause before trying again, doubled each time up to [`LAST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
/// The longest pause between tries.
const LAST_RETRY: Duration = Duration::from_secs(4);

/// Pauses between tries, growing, until a deadline.
#[derive(Debug)]
pub struct Backoff {
    deadline: Instant,
    pause: Duration,
}

impl Backoff {
    /// Tries for `patience` from now.
    pub fn new(patience: Duration) -> Self {
        Backoff {
            deadline: Instant::now() + patience,
            pause: FIRST_RETRY,
        }
    }

    /// Waits before the next try; `false` (at once) when the patience has run out.
    pub async fn wait(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        tokio::time::sleep(self.pause.min(self.deadline - now)).await;
        self.pause = (self.pause * 2).min(LAST_RETRY);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pauses_grow_to_the_last_and_stop_at_the_deadline() {
        let began = Instant::now();
        let mut backoff = Backoff::new(Duration::from_secs(10));
        let mut pauses = Vec::new();
        let mut before = Instant::now();
        while backoff.wait().await {
            pauses.push(before.elapsed().as_millis());
            before = Instant::now();
        }
        assert_eq!(pauses, [250, 500, 1000, 2000, 4000, 2250]);
        assert_eq!(began.elapsed(), Duration::from_secs(10));
    }
}
