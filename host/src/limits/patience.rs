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

    /// Whether the patience has run out.
    pub fn is_over(&self) -> bool {
        Instant::now() >= self.deadline
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

/// How a request tried with [`patiently`] failed.
#[derive(Debug)]
pub enum GaveUp<E> {
    /// It failed in a way trying again cannot mend.
    Refused(E),
    /// It kept failing until the patience ran out: the last failure.
    OutOfPatience(E),
}

/// Tries `attempt` until it succeeds, fails in a way `transient` says trying again cannot mend,
/// or `patience` runs out, with a growing pause between tries. `waiting` hears the first
/// failure that will be tried again, once, so that a person is told why nothing happens.
/// (`attempt` makes a future rather than being an async closure: the futures of those are not
/// yet known to be `Send` when they hold references.)
pub async fn patiently<T, E, F: Future<Output = Result<T, E>>>(
    patience: Duration,
    mut attempt: impl FnMut() -> F,
    transient: impl Fn(&E) -> bool,
    waiting: impl FnOnce(&E),
) -> Result<T, GaveUp<E>> {
    let mut backoff = Backoff::new(patience);
    let mut waiting = Some(waiting);
    loop {
        let error = match attempt().await {
            Ok(done) => return Ok(done),
            Err(error) if transient(&error) => error,
            Err(error) => return Err(GaveUp::Refused(error)),
        };
        if backoff.is_over() {
            return Err(GaveUp::OutOfPatience(error));
        }
        if let Some(tell) = waiting.take() {
            tell(&error);
        }
        backoff.wait().await;
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

    #[tokio::test(start_paused = true)]
    async fn patiently_tries_again_what_may_mend_and_tells_once() {
        let mut tries = 0;
        let mut told = Vec::new();
        let done: Result<u32, GaveUp<&str>> = patiently(
            Duration::from_secs(60),
            || {
                tries += 1;
                let now = tries;
                async move { if now < 4 { Err("away") } else { Ok(now) } }
            },
            |error| *error == "away",
            |error| told.push(error.to_string()),
        )
        .await;
        assert_eq!(done.ok(), Some(4));
        assert_eq!(told, ["away"]);

        let refused = patiently(
            Duration::from_secs(60),
            || async { Err::<(), _>("refused") },
            |error| *error == "away",
            |_| panic!("a refusal is not waited on"),
        )
        .await;
        assert!(matches!(refused, Err(GaveUp::Refused("refused"))));

        let began = Instant::now();
        let out = patiently(
            Duration::from_secs(3),
            || async { Err::<(), _>("away") },
            |_| true,
            |_| {},
        )
        .await;
        assert!(matches!(out, Err(GaveUp::OutOfPatience("away"))));
        assert!(began.elapsed() >= Duration::from_secs(3));

        let mut told = false;
        let impatient = patiently(
            Duration::ZERO,
            || async { Err::<(), _>("away") },
            |_| true,
            |_| {
                told = true;
            },
        )
        .await;
        assert!(matches!(impatient, Err(GaveUp::OutOfPatience("away"))) && !told);
    }
}
