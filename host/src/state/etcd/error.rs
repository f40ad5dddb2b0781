//! Why a request to etcd failed: the gateway's requests and the parsing of its answers both
//! say it with this one type.

use crate::error::ErrorCode;

/// Why a request to etcd failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EtcdError {
    /// No endpoint answered.
    #[error("etcd is unreachable at {endpoints}")]
    Unreachable {
        /// The endpoints tried.
        endpoints: String,
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
    /// Refused credentials are the caller's to fix (`INVALID_INPUT`); the rest is
    /// `ISOLATE_FAILURE`.
    pub fn code(&self) -> ErrorCode {
        match self {
            EtcdError::AuthFailed { .. }
            | EtcdError::Unauthenticated { .. }
            | EtcdError::Denied { .. }
            | EtcdError::NamedClientCertificate { .. } => ErrorCode::InvalidInput,
            _ => ErrorCode::IsolateFailure,
        }
    }
}
