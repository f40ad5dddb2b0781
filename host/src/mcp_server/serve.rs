//! The transports: stdio, and Streamable HTTP on exactly the address given.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::ForgeMcp;
use crate::error::{Error, ErrorCode};

/// Largest request body read over HTTP (a script plus its arguments).
const MAX_REQUEST_BYTES: usize = 32 << 20;

/// Serves MCP on stdin and stdout until the client closes them.
pub async fn serve_stdio(server: ForgeMcp) -> Result<(), Error> {
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| Error::from_source(ErrorCode::InvalidInput, e))?;
    running
        .waiting()
        .await
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
    Ok(())
}

/// Serves MCP over Streamable HTTP at `http://ADDRESS/mcp` until `shutdown` resolves. `ready`
/// is told the address bound (port 0 picks a free one).
pub async fn serve_http(
    server: ForgeMcp,
    address: SocketAddr,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| Error::invalid_input(format!("--http {address}: cannot listen there: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
    // DNS-rebinding protection: only the names of loopback, plus the address bound.
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    hosts.push(bound.ip().to_string());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_max_request_body_bytes(MAX_REQUEST_BYTES);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().route_service("/mcp", service);
    ready(bound);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))
}
