//! TLS for the Streamable HTTP server (`--tls-cert FILE --tls-key FILE`, rustls with ring). Each
//! connection shakes hands in its own task, within the door's header timeout (`door`). Also the
//! peer address every request is logged with.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::Error;

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
