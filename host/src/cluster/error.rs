//! What goes wrong on the way to and from NATS, and in a worker's own folders: each keeps the
//! step it was taking, where (the URL, the path) and the error it came from.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};

/// A cluster failure; it becomes an [`Error`] with its code, keeping itself as the source.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A NATS operation failed.
    #[error("NATS at {url}: {step}")]
    Nats {
        /// What it was doing: `storing a blob`, `the run queue`, ...
        step: String,
        /// The server, as it may be shown (no password).
        url: String,
        /// The client's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A file or folder of the run's own could not be made, read or written.
    #[error("{step} {}", path.display())]
    Local {
        /// `cannot write`, ...
        step: &'static str,
        /// Which.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A message could not be encoded.
    #[error("encoding {what}")]
    Encode {
        /// `the request`, ...
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

impl ClusterError {
    /// A failed NATS operation.
    pub(super) fn nats(
        step: &str,
        url: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ClusterError::Nats {
            step: step.to_string(),
            url: url.to_string(),
            source: Box::new(source),
        }
    }

    /// A failed file operation of a worker or submitter on `path`.
    pub(super) fn local(step: &'static str, path: &Path, source: std::io::Error) -> Self {
        ClusterError::Local {
            step,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<ClusterError> for Error {
    fn from(error: ClusterError) -> Self {
        Error::from_source(ErrorCode::IsolateFailure, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_step_and_where_and_the_source_is_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error: Error = ClusterError::nats("the run queue", "nats://127.0.0.1:4222", io).into();
        assert_eq!(error.code, ErrorCode::IsolateFailure);
        assert_eq!(
            error.message,
            "NATS at nats://127.0.0.1:4222: the run queue: refused"
        );
        let kept = std::error::Error::source(&error).expect("source");
        assert!(kept.downcast_ref::<ClusterError>().is_some());
        let local: Error = ClusterError::local(
            "cannot write",
            Path::new("/tmp/x"),
            std::io::Error::other("disk full"),
        )
        .into();
        assert_eq!(local.message, "cannot write /tmp/x: disk full");
    }
}
