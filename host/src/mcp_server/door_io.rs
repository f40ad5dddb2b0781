//! What the HTTP door watches on each connection: whether it is serving a request and since when
//! it has waited ([`Activity`]), the bytes it reads and whether the client reads what it is sent
//! ([`Watched`]), a request body's deadline ([`TimedBody`]) and a response's hold on the
//! connection until it is sent ([`Busy`]).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

/// What a connection is doing.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request head (`head`: since connecting or since its first byte) or idle
    /// between requests, since `since`.
    Waiting { since: Instant, head: bool },
    /// Serving this many requests (a response not yet sent counts).
    Busy(usize),
}

/// Told, while the phase is locked, that a connection began serving (`true`) or has no request
/// left: the door's registry keeps its counts by it.
type OnBusy = Box<dyn Fn(bool) + Send + Sync>;

/// A connection's phase and the deadline that follows from it; the connection's task waits on
/// [`Activity::changed`] and re-reads the deadline.
pub(super) struct Activity {
    phase: Mutex<Phase>,
    evicted: AtomicBool,
    on_busy: OnBusy,
    /// The client stopped reading and the connection was cut ([`SendStalled`]).
    stalled: AtomicBool,
    changed: Notify,
    header_timeout: Duration,
    idle_timeout: Duration,
}

impl std::fmt::Debug for Activity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activity")
            .field("phase", &self.phase)
            .field("evicted", &self.evicted)
            .field("stalled", &self.stalled)
            .finish_non_exhaustive()
    }
}

impl Activity {
    /// A connection just accepted: it owes a request head within `header_timeout`. `on_busy`
    /// hears each change between serving a request and not.
    pub(super) fn new(
        header_timeout: Duration,
        idle_timeout: Duration,
        on_busy: impl Fn(bool) + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Activity {
            phase: Mutex::new(Phase::Waiting {
                since: Instant::now(),
                head: true,
            }),
            evicted: AtomicBool::new(false),
            on_busy: Box::new(on_busy),
            stalled: AtomicBool::new(false),
            changed: Notify::new(),
            header_timeout,
            idle_timeout,
        })
    }

    fn update(&self, change: impl FnOnce(&mut Phase)) {
        if let Ok(mut phase) = self.phase.lock() {
            let was_busy = matches!(*phase, Phase::Busy(_));
            change(&mut phase);
            let busy = matches!(*phase, Phase::Busy(_));
            if busy != was_busy {
                // Under the lock, so that the registry hears the changes in their order.
                (self.on_busy)(busy);
            }
        }
        self.changed.notify_waiters();
    }

    /// Bytes came in: an idle connection has begun a request head.
    fn heard(&self) {
        let idle = matches!(
            self.phase.lock().map(|phase| *phase),
            Ok(Phase::Waiting { head: false, .. })
        );
        if idle {
            self.update(|phase| {
                *phase = Phase::Waiting {
                    since: Instant::now(),
                    head: true,
                }
            });
        }
    }

    /// Whether it serves no request now.
    #[cfg(test)]
    fn is_waiting(&self) -> bool {
        matches!(
            self.phase.lock().map(|phase| *phase),
            Ok(Phase::Waiting { .. })
        )
    }

    /// When it is to be closed, if it goes on waiting; `None` while it serves a request.
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self.phase.lock().map(|phase| *phase) {
            Ok(Phase::Waiting { since, head: true }) => Some(since + self.header_timeout),
            Ok(Phase::Waiting { since, head: false }) => Some(since + self.idle_timeout),
            _ => None,
        }
    }

    /// Closes it (the registry made room with it).
    pub(super) fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Whether the registry closed it.
    pub(super) fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Acquire)
    }

    /// Whether the connection was cut because its client read none of what it was sent in time.
    pub(super) fn was_stalled(&self) -> bool {
        self.stalled.load(Ordering::Acquire)
    }

    /// Resolves at the next change of phase or eviction (enable it before reading the phase).
    pub(super) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// Resolves when it is evicted or its deadline passes.
    pub(super) async fn expired_or_evicted(&self) {
        loop {
            let changed = self.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_evicted() {
                return;
            }
            match self.deadline() {
                Some(deadline) if deadline <= Instant::now() => return,
                Some(deadline) => tokio::select! {
                    () = &mut changed => {}
                    () = tokio::time::sleep_until(deadline) => {}
                },
                None => changed.await,
            }
        }
    }
}

/// A request in progress on a connection, from its head until its response is sent (or
/// dropped); while one is, the connection has no deadline and is never closed to make room.
#[derive(Debug)]
pub(super) struct Busy {
    activity: Arc<Activity>,
}

impl Busy {
    /// Marks `activity` busy until the returned value is dropped.
    pub(super) fn begin(activity: Arc<Activity>) -> Self {
        activity.update(|phase| {
            *phase = match *phase {
                Phase::Busy(n) => Phase::Busy(n + 1),
                Phase::Waiting { .. } => Phase::Busy(1),
            }
        });
        Busy { activity }
    }

    /// A response body that keeps the connection busy until its last frame is sent.
    pub(super) fn hold_until_sent(self, body: axum::body::Body) -> HeldBody {
        HeldBody { body, _busy: self }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.activity.update(|phase| {
            *phase = match *phase {
                Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
                _ => Phase::Waiting {
                    since: Instant::now(),
                    head: false,
                },
            }
        });
    }
}

/// A response body and the [`Busy`] it holds.
pub(super) struct HeldBody {
    body: axum::body::Body,
    _busy: Busy,
}

impl Body for HeldBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that did not arrive whole within the body timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?} of its head (--body-timeout)")]
pub(super) struct BodyTimedOut(pub(super) Duration);

/// A request body that fails with [`BodyTimedOut`] once its deadline passes, and raises its flag,
/// so that the answer can be 408 whatever the reader of the body made of the error.
pub(super) struct TimedBody {
    body: hyper::body::Incoming,
    deadline: Pin<Box<Sleep>>,
    within: Duration,
    timed_out: Arc<AtomicBool>,
}

impl TimedBody {
    /// `body`, due whole within `within` from now, and the flag it raises if it is not.
    pub(super) fn new(body: hyper::body::Incoming, within: Duration) -> (Self, Arc<AtomicBool>) {
        let timed_out = Arc::new(AtomicBool::new(false));
        let body = TimedBody {
            body,
            deadline: Box::pin(tokio::time::sleep(within)),
            within,
            timed_out: timed_out.clone(),
        };
        (body, timed_out)
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            self.timed_out.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut(self.within)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A client that read none of what it was sent for the send timeout: a stalled stream of
/// Server-Sent Events, usually. The door holds what the socket and hyper buffer, no more.
#[derive(Debug, thiserror::Error)]
#[error("the client read nothing of the response for {0:?} (--send-timeout)")]
pub(super) struct SendStalled(pub(super) Duration);

/// A connection's stream, telling its [`Activity`] when bytes come in, and failing a write that
/// waits on the client for longer than `send_timeout` with [`SendStalled`].
pub(super) struct Watched<S> {
    stream: S,
    activity: Arc<Activity>,
    send_timeout: Duration,
    /// Since the first write the client's window refused, until one goes through.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> Watched<S> {
    pub(super) fn new(stream: S, activity: Arc<Activity>, send_timeout: Duration) -> Self {
        Watched {
            stream,
            activity,
            send_timeout,
            stalled: None,
        }
    }

    /// Passes on what a write or flush gave, unless it has waited on the client too long.
    fn within_send_timeout<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let within = self.send_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(within)));
        if stalled.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.stalled = None;
        self.activity.stalled.store(true, Ordering::Release);
        Poll::Ready(Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            SendStalled(within),
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.heard();
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.within_send_timeout(cx, written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.stream).poll_flush(cx);
        self.within_send_timeout(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.within_send_timeout(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn deadlines_follow_the_phase() {
        let (head, idle) = (Duration::from_secs(10), Duration::from_secs(60));
        let activity = Activity::new(head, idle, |_| {});
        let start = Instant::now();
        assert_eq!(activity.deadline(), Some(start + head));
        let busy = Busy::begin(activity.clone());
        assert_eq!(activity.deadline(), None);
        assert!(!activity.is_waiting());
        tokio::time::advance(Duration::from_secs(100)).await;
        drop(busy);
        let done = Instant::now();
        assert_eq!(activity.deadline(), Some(done + idle));
        tokio::time::advance(Duration::from_secs(5)).await;
        activity.heard();
        assert_eq!(
            activity.deadline(),
            Some(done + Duration::from_secs(5) + head)
        );
        // A second byte of the same head does not move the deadline.
        tokio::time::advance(Duration::from_secs(1)).await;
        activity.heard();
        assert_eq!(
            activity.deadline(),
            Some(done + Duration::from_secs(5) + head)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_the_client_does_not_read_fails_after_the_send_timeout() {
        let activity = Activity::new(Duration::from_secs(10), Duration::from_secs(60), |_| {});
        // A pipe of 16 bytes whose other end never reads.
        let (near, _far) = tokio::io::duplex(16);
        let mut watched = Watched::new(near, activity.clone(), Duration::from_secs(5));
        let start = Instant::now();
        let mut sent = 0;
        let error = loop {
            match tokio::io::AsyncWriteExt::write(&mut watched, b"data: progress\n\n").await {
                Ok(n) => sent += n,
                Err(error) => break error,
            }
        };
        assert_eq!(sent, 16);
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert!(error.get_ref().is_some_and(|e| e.is::<SendStalled>()));
        assert_eq!(Instant::now(), start + Duration::from_secs(5));
        assert!(activity.was_stalled());
    }

    #[tokio::test(start_paused = true)]
    async fn expiry_and_eviction_end_the_wait() {
        let activity = Activity::new(Duration::from_secs(10), Duration::from_secs(60), |_| {});
        let start = Instant::now();
        activity.expired_or_evicted().await;
        assert_eq!(Instant::now(), start + Duration::from_secs(10));
        let activity = Activity::new(Duration::from_secs(10), Duration::from_secs(60), |_| {});
        let waiter = {
            let activity = activity.clone();
            tokio::spawn(async move { activity.expired_or_evicted().await })
        };
        tokio::task::yield_now().await;
        activity.evict();
        waiter.await.expect("ended");
        assert!(activity.is_evicted());
    }
}
