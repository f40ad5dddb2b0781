//! The HTTP door's connections: its own accept loop over hyper's HTTP/1.1, so that what a
//! client may hold is bounded. A connection must send a request head within the header timeout
//! of connecting (its TLS handshake included) or of its first byte, and its body within the body
//! timeout; between requests it may idle for the idle timeout; a client that reads nothing of a
//! response for the send timeout (a stalled event stream) is cut. Open connections are capped in
//! all and per client address; past a cap, or past the cap on connections waiting for a request,
//! a connection that serves no request is closed to make room: the oldest of those that never
//! sent a whole request, else the oldest idle keep-alive. A flood of half-open sockets thus only
//! ever displaces itself, a client that sends its request is served, and its keep-alive
//! connection outlives the flood.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::door_io::{Activity, BodyTimedOut, Busy, SendStalled, TimedBody, Watched};
use super::door_registry::Registry;
use super::tls::PeerAddr;

/// What one HTTP door lets a client hold. `Default` is what `forge-host mcp --http` starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoorLimits {
    /// From connecting (or from the first byte of a later request) to a whole request head.
    pub header_timeout: Duration,
    /// From a request's head to the last byte of its body.
    pub body_timeout: Duration,
    /// How long a connection may wait for its next request after a response.
    pub idle_timeout: Duration,
    /// How long a client may read nothing of a response (a stream of events included) before
    /// its connection is cut; what is unsent then is dropped.
    pub send_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections open at once from one client address.
    pub max_per_client: usize,
    /// Connections open at once that are not serving a request (waiting for a head, idle).
    pub max_pending: usize,
}

impl Default for DoorLimits {
    fn default() -> Self {
        DoorLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            send_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_per_client: 256,
            max_pending: 256,
        }
    }
}

/// The door's open connections and the counts it logs.
struct Connections {
    limits: DoorLimits,
    registry: Mutex<Registry>,
    evicted: AtomicU64,
    refused: AtomicU64,
}

/// A connection's place in the registry; it gives it up when dropped.
struct Ticket {
    id: u64,
    activity: Arc<Activity>,
    connections: Arc<Connections>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Ok(mut registry) = self.connections.registry.lock() {
            registry.remove(self.id);
        }
    }
}

impl Connections {
    fn new(limits: DoorLimits) -> Arc<Self> {
        Arc::new(Connections {
            limits,
            registry: Mutex::new(Registry::default()),
            evicted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    /// Makes room for a connection from `client` and registers it, or refuses it when every
    /// connection in its way is serving a request.
    fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Ticket> {
        let limits = self.limits;
        let Ok(mut registry) = self.registry.lock() else {
            return None;
        };
        let mut evicted = 0;
        if registry.open_from(client) >= limits.max_per_client {
            if !registry.evict_oldest_waiting(Some(client)) {
                drop(registry);
                self.count(&self.refused, "refused", client);
                return None;
            }
            evicted += 1;
        }
        if registry.len() >= limits.max_connections {
            if !registry.evict_oldest_waiting(None) {
                drop(registry);
                self.count(&self.refused, "refused", client);
                return None;
            }
            evicted += 1;
        }
        if registry.waiting() >= limits.max_pending && registry.evict_oldest_waiting(None) {
            evicted += 1;
        }
        let activity = Activity::new(
            limits.header_timeout,
            limits.idle_timeout,
            self.tell_registry(registry.next_id()),
        );
        let id = registry.insert(client, activity.clone());
        drop(registry);
        for _ in 0..evicted {
            self.count(&self.evicted, "closed to make room", client);
        }
        Some(Ticket {
            id,
            activity,
            connections: self.clone(),
        })
    }

    /// What connection `id`'s activity calls when it begins or ends serving requests. It holds
    /// the door weakly: the registry holds the activity.
    fn tell_registry(self: &Arc<Self>, id: u64) -> impl Fn(bool) + Send + Sync + 'static {
        let door = Arc::downgrade(self);
        move |busy| {
            if let Some(door) = door.upgrade()
                && let Ok(mut registry) = door.registry.lock()
            {
                registry.set_busy(id, busy);
            }
        }
    }

    /// Counts a closed or refused connection, and says so for the first and every 1,000th, so
    /// that a flood does not flood the log.
    fn count(&self, counter: &AtomicU64, what: &str, client: IpAddr) {
        let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
        if n == 1 || n.is_multiple_of(1000) {
            eprintln!(
                "forge-host mcp: {n} waiting connection(s) {what} so far (the latest for {client}); \
the door holds {} in all, {} per client, {} waiting (--max-connections, \
--max-connections-per-client, --max-pending-connections)",
                self.limits.max_connections, self.limits.max_per_client, self.limits.max_pending
            );
        }
    }
}

/// Serves `router` on `listener` (over TLS with `acceptor`) within `limits` until `shutdown`
/// resolves; then stops accepting, lets each connection finish its request, and returns once all
/// have closed.
pub(super) async fn serve(
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    router: axum::Router,
    limits: DoorLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let connections = Connections::new(limits);
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // Reap the tasks of closed connections, so the set holds only open ones.
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, usually: wait a moment rather than spin.
                eprintln!("forge-host mcp: accepting a connection failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(ticket) = connections.admit(peer.ip()) else {
            continue;
        };
        let connection = Connection {
            ticket,
            peer,
            router: router.clone(),
            limits,
            stopping: stopping.clone(),
        };
        let acceptor = acceptor.clone();
        tasks.spawn(async move {
            match acceptor {
                None => connection.serve(stream).await,
                Some(acceptor) => connection.serve_tls(stream, acceptor).await,
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    while tasks.join_next().await.is_some() {}
}

/// One accepted connection.
struct Connection {
    ticket: Ticket,
    peer: SocketAddr,
    router: axum::Router,
    limits: DoorLimits,
    stopping: tokio::sync::watch::Receiver<bool>,
}

impl Connection {
    async fn serve_tls(self, stream: TcpStream, acceptor: TlsAcceptor) {
        let activity = self.ticket.activity.clone();
        let watched = Watched::new(stream, activity.clone(), self.limits.send_timeout);
        let handshake = acceptor.accept(watched);
        let tls = tokio::select! {
            tls = handshake => tls,
            () = activity.expired_or_evicted() => {
                eprintln!(
                    "forge-host mcp: {} did not finish its TLS handshake within {:?}",
                    self.peer, self.limits.header_timeout
                );
                return;
            }
        };
        match tls {
            Ok(tls) => self.drive(tls).await,
            Err(error) => eprintln!(
                "forge-host mcp: TLS handshake with {} failed: {error}",
                self.peer
            ),
        }
    }

    async fn serve(self, stream: TcpStream) {
        let watched = Watched::new(
            stream,
            self.ticket.activity.clone(),
            self.limits.send_timeout,
        );
        self.drive(watched).await;
    }

    /// Serves HTTP/1.1 on `io` until the client closes, a timeout passes, the registry closes
    /// it to make room, or the server stops (then after the request in hand).
    async fn drive<I>(mut self, io: I)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let activity = self.ticket.activity.clone();
        let (peer, router, body_timeout) =
            (self.peer, self.router.clone(), self.limits.body_timeout);
        let busy_on = activity.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = Busy::begin(busy_on.clone());
            let (parts, body) = request.into_parts();
            let (body, timed_out) = TimedBody::new(body, body_timeout);
            let mut request = hyper::Request::from_parts(parts, axum::body::Body::new(body));
            request.extensions_mut().insert(ConnectInfo(PeerAddr(peer)));
            let router = router.clone();
            async move {
                let mut response = router.oneshot(request).await?;
                if timed_out.load(Ordering::Acquire) {
                    // The reader of the body saw an error it may have called the server's.
                    response = body_timed_out(peer, body_timeout);
                }
                Ok::<_, Infallible>(response.map(|body| busy.hold_until_sent(body)))
            }
        });
        // hyper's own header timer would also run between requests (10 s of idling would end a
        // keep-alive connection): the activity's deadlines stand in for it.
        let connection = hyper::server::conn::http1::Builder::new()
            .header_read_timeout(None)
            .keep_alive(true)
            .serve_connection(TokioIo::new(io), service);
        tokio::pin!(connection);
        let mut shutting_down = false;
        loop {
            let changed = activity.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if activity.is_evicted() {
                return;
            }
            let deadline = activity.deadline();
            if deadline.is_some_and(|deadline| deadline <= Instant::now()) {
                return;
            }
            let far = Instant::now() + Duration::from_secs(86_400);
            tokio::select! {
                _ = connection.as_mut() => {
                    if activity.was_stalled() {
                        eprintln!(
                            "forge-host mcp: {}: {}; its connection is closed",
                            self.peer,
                            SendStalled(self.limits.send_timeout)
                        );
                    }
                    return;
                }
                () = &mut changed => {}
                () = tokio::time::sleep_until(deadline.unwrap_or(far)) => {}
                _ = self.stopping.changed(), if !shutting_down => {
                    shutting_down = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// The answer to a request whose body did not arrive in time: 408, and the connection closes.
fn body_timed_out(peer: SocketAddr, within: Duration) -> axum::response::Response {
    use axum::response::IntoResponse;
    let said = BodyTimedOut(within).to_string();
    eprintln!("forge-host mcp: {peer}: {said}");
    let mut response = (axum::http::StatusCode::REQUEST_TIMEOUT, said).into_response();
    response.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_connections: usize, max_per_client: usize, max_pending: usize) -> DoorLimits {
        DoorLimits {
            max_connections,
            max_per_client,
            max_pending,
            ..DoorLimits::default()
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn past_a_cap_the_oldest_waiting_connection_makes_room() {
        let connections = Connections::new(limits(3, 3, 3));
        let first = connections.admit(ip(1)).expect("first");
        let second = connections.admit(ip(2)).expect("second");
        let third = connections.admit(ip(3)).expect("third");
        let _busy = Busy::begin(first.activity.clone());
        let fourth = connections.admit(ip(4)).expect("fourth");
        // The first serves a request: the second, the oldest waiting, made room.
        assert!(!first.activity.is_evicted());
        assert!(second.activity.is_evicted());
        assert!(!third.activity.is_evicted());
        assert!(!fourth.activity.is_evicted());
        assert_eq!(connections.registry.lock().expect("lock").len(), 3);
    }

    #[test]
    fn a_keep_alive_that_served_outlives_sockets_that_never_did() {
        let connections = Connections::new(limits(3, 3, 3));
        let client = connections.admit(ip(1)).expect("client");
        // It served a request and idles now, the oldest connection of all.
        drop(Busy::begin(client.activity.clone()));
        let first = connections.admit(ip(2)).expect("first");
        let _second = connections.admit(ip(3)).expect("second");
        let _third = connections.admit(ip(4)).expect("third");
        assert!(!client.activity.is_evicted());
        assert!(first.activity.is_evicted());
    }

    #[test]
    fn a_client_at_its_cap_displaces_only_its_own_connections() {
        let connections = Connections::new(limits(10, 2, 10));
        let other = connections.admit(ip(9)).expect("other");
        let a = connections.admit(ip(1)).expect("a");
        let b = connections.admit(ip(1)).expect("b");
        let c = connections.admit(ip(1)).expect("c");
        assert!(!other.activity.is_evicted());
        assert!(a.activity.is_evicted());
        assert!(!b.activity.is_evicted() && !c.activity.is_evicted());
        // Both of its connections serving requests: the next is refused.
        let (_b, _c) = (
            Busy::begin(b.activity.clone()),
            Busy::begin(c.activity.clone()),
        );
        assert!(connections.admit(ip(1)).is_none());
        assert!(connections.admit(ip(2)).is_some());
    }

    #[test]
    fn waiting_connections_are_capped_apart_from_busy_ones() {
        let connections = Connections::new(limits(10, 10, 2));
        let a = connections.admit(ip(1)).expect("a");
        let _busy = Busy::begin(a.activity.clone());
        let b = connections.admit(ip(2)).expect("b");
        let c = connections.admit(ip(3)).expect("c");
        let d = connections.admit(ip(4)).expect("d");
        assert!(!a.activity.is_evicted());
        assert!(b.activity.is_evicted());
        assert!(!c.activity.is_evicted() && !d.activity.is_evicted());
    }

    #[test]
    fn a_dropped_ticket_frees_its_place() {
        let connections = Connections::new(limits(1, 1, 1));
        let first = connections.admit(ip(1)).expect("first");
        let _busy = Busy::begin(first.activity.clone());
        assert!(connections.admit(ip(1)).is_none());
        drop(_busy);
        drop(first);
        let again = connections.admit(ip(1)).expect("room again");
        let registry = connections.registry.lock().expect("lock");
        assert_eq!(registry.open_from(ip(1)), 1);
        drop(registry);
        drop(again);
        assert_eq!(connections.registry.lock().expect("lock").len(), 0);
    }
}
