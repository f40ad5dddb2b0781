//! The transports: stdio, and Streamable HTTP on exactly the address given, behind a bearer
//! token (and TLS off loopback), within the door's limits ([`DoorLimits`]) and a request rate.
//! Each bounds one message: a line on stdio, a request body over HTTP.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::ForgeMcp;
use super::door::{self, DoorLimits};
use super::http_auth::{BearerToken, require_token};
use super::in_flight::InFlight;
use super::request_rate::{RequestRate, within_rate};
use super::tls::TlsFiles;
use crate::error::{Error, ErrorCode};
use crate::json_lines::{BoundedLines, Oversized, WrittenLines};

/// The method of the request the server reads in place of a message over its bound; it is
/// answered with an error, so that the client's call fails at once.
pub(super) const OVERSIZED_METHOD: &str = "forge-host/message-too-large";

/// Serves MCP on stdin and stdout until the client closes them. A line longer than
/// `max_message_bytes` is never held whole: the server reads an [`OVERSIZED_METHOD`] request
/// under its id instead, and answers it with an error.
pub async fn serve_stdio(server: ForgeMcp, max_message_bytes: usize) -> Result<(), Error> {
    let (read, write) = rmcp::transport::stdio_pipes();
    let stand_in = |oversized: &Oversized<'_>| {
        let Some(id) = oversized.id() else {
            eprintln!(
                "forge-host mcp: dropped a message of {} bytes or more, over {}; it named no id to answer",
                oversized.size, oversized.max
            );
            return None;
        };
        let request = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": OVERSIZED_METHOD,
            "params": {"size": oversized.size, "max_bytes": oversized.max},
        });
        Some(format!("{request}\n").into_bytes())
    };
    let (counting, waiting, answered) =
        (server.in_flight(), server.in_flight(), server.in_flight());
    answered.hold_until_written();
    let write = WrittenLines::new(write, Box::new(move |id| answered.written(id)));
    let read = BoundedLines::new(read, max_message_bytes, Box::new(stand_in))
        .on_line(Box::new(move |line: &[u8]| counting.read_line(line)))
        .pause_while(Box::new(move |cx: &std::task::Context<'_>| {
            waiting.full(cx)
        }));
    let transport = AsyncRwTransport::new(read, write)
        // Never reached: the bounded reader has cut every line to the bound already.
        .with_max_line_length(max_message_bytes.saturating_add(1));
    let running = server
        .serve(transport)
        .await
        .map_err(|e| Error::from_source(ErrorCode::InvalidInput, e))?;
    running
        .waiting()
        .await
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
    Ok(())
}

/// Who may use the HTTP server.
#[derive(Debug, Clone)]
pub enum HttpAuth {
    /// Requests must carry `Authorization: Bearer TOKEN`.
    Bearer(BearerToken),
    /// Anyone who reaches the port (`--no-auth`, loopback only).
    Open,
}

/// How the HTTP server listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where: exactly this address (port 0 picks a free one).
    pub address: SocketAddr,
    /// Who may use it.
    pub auth: HttpAuth,
    /// TLS, which an address that is not loopback needs.
    pub tls: Option<TlsFiles>,
    /// Host names clients may reach it by, besides loopback's and the address bound (the
    /// Host-header check against DNS rebinding refuses others).
    pub allowed_hosts: Vec<String>,
    /// The largest request body, one MCP message.
    pub max_message_bytes: usize,
    /// What a connection may hold: timeouts and caps.
    pub limits: DoorLimits,
    /// Requests a second the token may make (after a burst of two seconds' worth); `None` for
    /// no bound.
    pub max_requests_per_second: Option<u32>,
}

impl HttpOptions {
    /// Refuses what would expose the server: no token, or no TLS, off loopback.
    pub fn check(&self) -> Result<(), Error> {
        if self.address.ip().is_loopback() {
            return Ok(());
        }
        if matches!(self.auth, HttpAuth::Open) {
            return Err(Error::invalid_input(format!(
                "--no-auth is only for a loopback address (127.0.0.1, [::1]), not {}: anyone \
who reaches it could run scripts with this server's tools",
                self.address
            )));
        }
        if self.tls.is_none() {
            return Err(Error::invalid_input(format!(
                "--http {} is not a loopback address: serving it needs TLS (--tls-cert FILE \
--tls-key FILE), or the bearer token and every script would cross the network in clear",
                self.address
            )));
        }
        Ok(())
    }

    /// `https` with TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }
}

/// Serves MCP over Streamable HTTP at `http(s)://ADDRESS/mcp` until `shutdown` resolves.
/// `ready` is told the address bound (port 0 picks a free one) before any request is taken;
/// an `Err` from it stops the server there.
pub async fn serve_http(
    server: ForgeMcp,
    options: HttpOptions,
    ready: impl FnOnce(SocketAddr) -> Result<(), Error>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    options.check()?;
    let acceptor = options.tls.as_ref().map(TlsFiles::acceptor).transpose()?;
    let address = options.address;
    let listener = listen(address)
        .map_err(|e| Error::invalid_input(format!("--http {address}: cannot listen there: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
    // DNS-rebinding protection: only the names of loopback, the address bound, and the names
    // the caller allowed.
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    hosts.push(bound.ip().to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_max_request_body_bytes(options.max_message_bytes);
    let in_flight = server.in_flight();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = axum::Router::new().route_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(in_flight, within_bound),
    );
    // Inside the token check: a request without the token never spends the token's budget.
    if let Some(per_second) = options.max_requests_per_second {
        router = router.layer(axum::middleware::from_fn_with_state(
            RequestRate::new(per_second),
            within_rate,
        ));
    }
    if let HttpAuth::Bearer(token) = &options.auth {
        router = router.layer(axum::middleware::from_fn_with_state(
            token.clone(),
            require_token,
        ));
    }
    ready(bound)?;
    door::serve(listener, acceptor, router, options.limits, shutdown).await;
    Ok(())
}

/// Answers a request 503 (before its body is read) while the server holds as many calls as it
/// may.
async fn within_bound(
    axum::extract::State(in_flight): axum::extract::State<Arc<InFlight>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if request.method() == axum::http::Method::POST && in_flight.at_bound() {
        let mut response = (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "the server holds as many calls as it may (--max-runs and --max-queued); try again",
        )
            .into_response();
        response.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from_static("1"),
        );
        return response;
    }
    next.run(request).await
}

/// Connections the kernel may hold for the door before it accepts them (the kernel caps it at
/// `net.core.somaxconn`). Larger than tokio's 1,024, so that a flood of connections fills it
/// less often: a client whose connection finds it full waits for the kernel to try again.
const LISTEN_BACKLOG: u32 = 65_535;

/// A listener on `address` with [`LISTEN_BACKLOG`].
fn listen(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(address: &str, auth: HttpAuth, tls: bool) -> HttpOptions {
        HttpOptions {
            address: address.parse().expect("address"),
            auth,
            tls: tls.then(|| TlsFiles {
                cert: "c.pem".into(),
                key: "k.pem".into(),
            }),
            allowed_hosts: Vec::new(),
            max_message_bytes: 1 << 20,
            limits: DoorLimits::default(),
            max_requests_per_second: None,
        }
    }

    #[test]
    fn off_loopback_a_server_needs_a_token_and_tls() {
        let token = || HttpAuth::Bearer(BearerToken::generate().expect("token"));
        assert!(
            options("127.0.0.1:0", HttpAuth::Open, false)
                .check()
                .is_ok()
        );
        assert!(options("[::1]:0", token(), false).check().is_ok());
        let open = options("0.0.0.0:8808", HttpAuth::Open, true).check();
        assert!(open.expect_err("open").message.contains("--no-auth"));
        let clear = options("10.0.0.5:8808", token(), false).check();
        assert!(clear.expect_err("clear").message.contains("--tls-cert"));
        assert!(options("10.0.0.5:8808", token(), true).check().is_ok());
    }
}
