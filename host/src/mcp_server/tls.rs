//! TLS for the Streamable HTTP server (`--tls-cert FILE --tls-key FILE`, rustls with ring): a
//! listener whose handshakes run beside each other, each within a deadline, so that a client
//! that connects and says nothing holds up no one else. Also the peer address every request is
//! logged with.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::error::Error;

/// Longest a client may take to finish its TLS handshake.
const HANDSHAKE_WITHIN: Duration = Duration::from_secs(10);
/// Handshakes in progress at once; more connections wait in the kernel's accept queue.
const MAX_HANDSHAKES: usize = 256;

/// The certificate (chain) and private key the server presents, as PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl TlsFiles {
    /// The rustls configuration of these files, offering HTTP/1.1.
    pub fn acceptor(&self) -> Result<TlsAcceptor, Error> {
        let bad = |file: &Path, what: &str, e: &dyn std::fmt::Display| {
            Error::invalid_input(format!("{what} {}: {e}", file.display()))
        };
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| bad(&self.cert, "--tls-cert", &e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&self.cert, "--tls-cert", &e))?;
        if chain.is_empty() {
            return Err(bad(&self.cert, "--tls-cert", &"holds no certificate"));
        }
        let key =
            PrivateKeyDer::from_pem_file(&self.key).map_err(|e| bad(&self.key, "--tls-key", &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(&self.cert, "--tls-cert", &e))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| bad(&self.key, "--tls-key (does it match --tls-cert?)", &e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// The address of the client a request came from.
#[derive(Debug, Clone, Copy)]
pub struct PeerAddr(pub SocketAddr);

impl Connected<IncomingStream<'_, TcpListener>> for PeerAddr {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        PeerAddr(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for PeerAddr {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        PeerAddr(*stream.remote_addr())
    }
}

/// Connections whose TLS handshake is done.
pub struct TlsListener {
    local: SocketAddr,
    done: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    /// Accepts on `tcp` and shakes hands with `acceptor`, in a task of its own.
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let (send, done) = tokio::sync::mpsc::channel(64);
        let handshakes = Arc::new(tokio::sync::Semaphore::new(MAX_HANDSHAKES));
        tokio::spawn(async move {
            loop {
                let Ok(permit) = handshakes.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of descriptors, usually: wait a moment rather than spin.
                        eprintln!("forge-host mcp: accepting a connection failed: {error}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let (acceptor, to_server) = (acceptor.clone(), send.clone());
                tokio::spawn(async move {
                    let _permit = permit;
                    match tokio::time::timeout(HANDSHAKE_WITHIN, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = to_server.send((tls, peer)).await;
                        }
                        Ok(Err(error)) => {
                            eprintln!("forge-host mcp: TLS handshake with {peer} failed: {error}");
                        }
                        Err(_) => eprintln!(
                            "forge-host mcp: {peer} did not finish its TLS handshake within {HANDSHAKE_WITHIN:?}"
                        ),
                    }
                });
                if send.is_closed() {
                    return;
                }
            }
        });
        Ok(TlsListener { local, done })
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.done.recv().await {
            Some(accepted) => accepted,
            // The accepting task ended (the runtime is shutting down): accept nothing more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
