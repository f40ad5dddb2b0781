//! Why a request to etcd failed: the gateway's requests and the parsing of its answers both
//! say it with this one type.

use std::time::Duration;

use crate::error::ErrorCode;
use crate::limits::format_duration;

/// Why a request to etcd failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EtcdError {
    /// No endpoint answered.
    #[error("etcd is unreachable at {endpoints}{}", waited.map(|w| format!(
        " (no answer for {}, --etcd-patience)", format_duration(w))).unwrap_or_default())]
    Unreachable {
        /// The endpoints tried.
        endpoints: String,
        /// How long it was tried, when it was tried more than once.
        waited: Option<Duration>,
        /// The last failure.
        #[source]
        source: reqwest::Error,
    },
    /// etcd answered with an error.
    #[error("etcd at {endpoint} refused the request (HTTP {status}): {message}")]
    Refused {
        /// The endpoint.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// etcd's message.
        message: String,
    },
    /// etcd refused the user and password.
    #[error(
        "etcd at {endpoint} refused user `{user}`'s password (authentication failed): check --etcd-user and the password"
    )]
    AuthFailed {
        /// The endpoint.
        endpoint: String,
        /// The user.
        user: String,
        /// etcd's message.
        message: String,
    },
    /// etcd has authentication on, and the request had no credentials it takes.
    #[error(
        "etcd at {endpoint} has authentication on and wants a user ({message}): give --etcd-user, with --etcd-password-file or FORGE_HOST_ETCD_PASSWORD"
    )]
    Unauthenticated {
        /// The endpoint.
        endpoint: String,
        /// etcd's message.
        message: String,
    },
    /// The user may not do what was asked.
    #[error(
        "etcd at {endpoint} refused: {message} (the user needs readwrite permission on the location's prefix)"
    )]
    Denied {
        /// The endpoint.
        endpoint: String,
        /// etcd's message.
        message: String,
    },
    /// etcd (3.4 and later) refuses a gateway request whose client certificate has a common
    /// name while it verifies clients: the gateway could not pass that name on as the user.
    #[error(
        "etcd at {endpoint} refused the client certificate: {message} (etcd's JSON gateway, which forge-host uses, takes no user from a certificate: give --etcd-cert a certificate without a common name, and the user as --etcd-user with its password)"
    )]
    NamedClientCertificate {
        /// The endpoint.
        endpoint: String,
        /// etcd's message.
        message: String,
    },
    /// The answer is not a v3 response.
    #[error("etcd at {endpoint} answered something that is not a v3 response: {detail}")]
    Malformed {
        /// The endpoint.
        endpoint: String,
        /// What was wrong.
        detail: String,
    },
}

impl EtcdError {
    /// Refused credentials are the caller's to fix (`INVALID_INPUT`); no answer within the
    /// patience is `CLUSTER_UNREACHABLE`; the rest is `ISOLATE_FAILURE`.
    pub fn code(&self) -> ErrorCode {
        match self {
            EtcdError::AuthFailed { .. }
            | EtcdError::Unauthenticated { .. }
            | EtcdError::Denied { .. }
            | EtcdError::NamedClientCertificate { .. } => ErrorCode::InvalidInput,
            EtcdError::Unreachable { .. } => ErrorCode::ClusterUnreachable,
            _ => ErrorCode::IsolateFailure,
        }
    }

    /// Whether trying again later may succeed: no member answered, or the one that did cannot
    /// serve now (429 too many requests, 503 unavailable: no leader, 504: a timeout).
    pub(super) fn is_transient(&self) -> bool {
        match self {
            EtcdError::Unreachable { source, .. } => connection_lost(source),
            EtcdError::Refused { status, .. } => matches!(status, 429 | 503 | 504),
            _ => false,
        }
    }

    /// This error as the last of tries that went on for `patience`.
    pub(super) fn after(self, patience: Duration) -> Self {
        match self {
            EtcdError::Unreachable {
                endpoints, source, ..
            } => EtcdError::Unreachable {
                endpoints,
                waited: Some(patience),
                source,
            },
            other => other,
        }
    }
}

/// Whether `error` is the network's, not a refusal: a timeout, a connection refused, reset or
/// cut off (the first I/O error in its chain says), or an answer that broke off without one.
/// A TLS handshake that failed (a certificate refused) is an I/O error of another kind: trying
/// again would not help.
fn connection_lost(error: &reqwest::Error) -> bool {
    use std::io::ErrorKind::*;
    if error.is_timeout() {
        return true;
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ConnectionRefused
                    | ConnectionReset
                    | ConnectionAborted
                    | NotConnected
                    | BrokenPipe
                    | UnexpectedEof
                    | TimedOut
                    | HostUnreachable
                    | NetworkUnreachable
                    | NetworkDown
                    | AddrNotAvailable
            );
        }
        source = cause.source();
    }
    !error.is_connect()
}
