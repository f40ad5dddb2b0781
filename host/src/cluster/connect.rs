//! Where and how forge-host reaches NATS: the server's URL, the credentials it shows (a user and
//! password or a token from the URL, or a `.creds` file's user JWT and NKey seed), and TLS (a
//! `tls://` URL, a CA to trust, a client certificate for mutual TLS).
//!
//! async-nats is never given the URL as it was typed: the user, password or token are taken
//! out of it (percent-decoded) and passed as options, so that no error of async-nats quotes
//! them, and everything forge-host shows is [`NatsTarget`]'s `Display`, which redacts them
//! (`nats://alice:***@host:4222`).
//!
//! Plain text only on loopback: a target without TLS whose host is not a loopback address is
//! refused when it is made, before any socket is opened or name looked up, unless it was made
//! with [`NatsOptions::insecure`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, ErrorCode};
use crate::limits::{DEFAULT_PATIENCE, GaveUp, format_duration, patiently};
use crate::primitives::{Secret, is_loopback_host, percent_decode};

/// NATS's client port, when a URL names none.
pub const DEFAULT_PORT: u16 = 4222;

/// How a target is reached, besides its URL: what the command line's `--nats-*` flags give.
#[derive(Debug, Clone, Default)]
pub struct NatsOptions {
    /// A `.creds` file: a user JWT and its NKey seed (`--nats-creds`).
    pub creds: Option<PathBuf>,
    /// PEM certificates of the authorities that sign the server's certificate (`--nats-ca`);
    /// the system's roots otherwise. Giving one turns TLS on.
    pub ca: Option<PathBuf>,
    /// A client certificate (PEM) for mutual TLS (`--nats-cert`); needs `key`.
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM) (`--nats-key`); needs `cert`.
    pub key: Option<PathBuf>,
    /// Allow plain text to a host that is not loopback (`--insecure`).
    pub insecure: bool,
    /// How long to keep trying while the server is away (restarting, or cut off) before
    /// saying it is unreachable (`--nats-patience`); [`DEFAULT_PATIENCE`] when `None`.
    pub patience: Option<Duration>,
}

/// The credentials a connection shows.
#[derive(Debug, Clone)]
pub enum NatsAuth {
    /// None: the server lets anyone in.
    None,
    /// A user and password (`nats://USER:PASSWORD@HOST`).
    UserPassword {
        /// The user.
        user: String,
        /// The password.
        password: Secret,
    },
    /// A token (`nats://TOKEN@HOST`).
    Token(Secret),
    /// A `.creds` file's contents: a user JWT and the NKey seed that signs the server's nonce.
    Creds {
        /// The file it was read from.
        path: PathBuf,
        /// Its text.
        contents: Secret,
    },
}

/// Why a NATS target could not be made or reached. Its text never holds a password, token or
/// seed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NatsError {
    /// The URL does not parse (the URL is not quoted: it may hold a password).
    #[error("the NATS URL is not nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT] or tls://...: {why}")]
    BadUrl {
        /// What is wrong with it.
        why: String,
    },
    /// Two ways to show credentials at once.
    #[error(
        "{url}: give credentials one way: a user and password or a token in the URL, or --nats-creds"
    )]
    TwoCredentials {
        /// The redacted URL.
        url: String,
    },
    /// A client certificate without its key, or a key without its certificate.
    #[error("mutual TLS needs both --nats-cert and --nats-key")]
    HalfClientCertificate,
    /// A file named by an option cannot be read, or is not what it should be.
    #[error("{what} {}", path.display())]
    File {
        /// Which option's file (`--nats-creds`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Plain text to a host that is not loopback, without `--insecure`.
    #[error(
        "{url} is not a loopback address, and NATS without TLS would carry scripts, inputs, reports and credentials in clear: use tls:// (with --nats-ca), or give --insecure to connect anyway"
    )]
    Plaintext {
        /// The redacted URL.
        url: String,
    },
    /// The server refused the credentials shown.
    #[error(
        "NATS at {url} refused the credentials ({shown}): check the user and password, the token or --nats-creds"
    )]
    Refused {
        /// The redacted URL.
        url: String,
        /// Which credentials were shown.
        shown: &'static str,
        /// What async-nats said.
        #[source]
        source: async_nats::ConnectError,
    },
    /// The TLS handshake failed.
    #[error(
        "the TLS handshake with NATS at {url} failed (--nats-ca must name the authority that signed the server's certificate; a server that verifies clients needs --nats-cert and --nats-key)"
    )]
    Tls {
        /// The redacted URL.
        url: String,
        /// What async-nats said.
        #[source]
        source: async_nats::ConnectError,
    },
    /// The server could not be reached for as long as forge-host waits.
    #[error("cannot connect to NATS at {url}: it has not answered for {} (--nats-patience)", format_duration(*patience))]
    Unreachable {
        /// The redacted URL.
        url: String,
        /// How long it was tried.
        patience: Duration,
        /// What async-nats said last.
        #[source]
        source: async_nats::ConnectError,
    },
    /// Any other failure to connect.
    #[error("cannot connect to NATS at {url}")]
    Connect {
        /// The redacted URL.
        url: String,
        /// What async-nats said.
        #[source]
        source: async_nats::ConnectError,
    },
}

impl NatsError {
    /// The code a command reports it with: bad usage and refused credentials are
    /// `INVALID_INPUT` (exit 2); a server that cannot be reached is `ISOLATE_FAILURE`.
    pub fn code(&self) -> ErrorCode {
        match self {
            NatsError::BadUrl { .. }
            | NatsError::TwoCredentials { .. }
            | NatsError::HalfClientCertificate
            | NatsError::File { .. }
            | NatsError::Plaintext { .. }
            | NatsError::Refused { .. } => ErrorCode::InvalidInput,
            NatsError::Tls { .. } | NatsError::Connect { .. } => ErrorCode::IsolateFailure,
            NatsError::Unreachable { .. } => ErrorCode::ClusterUnreachable,
        }
    }
}

impl From<NatsError> for Error {
    fn from(error: NatsError) -> Self {
        Error::from_source(error.code(), error)
    }
}

/// A NATS server and how to reach it. Made only when it may be reached: a plain-text target
/// off loopback is refused by [`NatsTarget::new`] unless its options say `insecure`.
#[derive(Debug, Clone)]
pub struct NatsTarget {
    /// `nats://HOST:PORT` or `tls://HOST:PORT`, with no credentials in it.
    url: String,
    host: String,
    auth: NatsAuth,
    tls: bool,
    options: NatsOptions,
}

impl NatsTarget {
    /// `url` (`nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT]`, `tls://...`, or a bare
    /// `HOST[:PORT]`) reached with `options`; its files are read now.
    pub fn new(url: &str, options: NatsOptions) -> Result<Self, NatsError> {
        let bad = |why: &str| NatsError::BadUrl { why: why.into() };
        let text = url.trim();
        let with_scheme = if text.contains("://") {
            text.to_string()
        } else {
            format!("nats://{text}")
        };
        let mut parsed = url::Url::parse(&with_scheme).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "nats" | "tls") {
            return Err(bad(&format!(
                "the scheme is `{}`, not nats or tls",
                parsed.scheme()
            )));
        }
        let host = match parsed.host_str() {
            Some(host) if !host.is_empty() => host.to_string(),
            _ => return Err(bad("it names no host")),
        };
        if !matches!(parsed.path(), "" | "/") || parsed.query().is_some() {
            return Err(bad("it has a path or query after HOST:PORT"));
        }
        let user = percent_decode(parsed.username()).ok_or_else(|| bad("the user is not UTF-8"))?;
        let password = parsed
            .password()
            .map(|p| percent_decode(p).ok_or_else(|| bad("the password is not UTF-8")))
            .transpose()?;
        let mut auth = match (user.is_empty(), password) {
            (true, None) => NatsAuth::None,
            (true, Some(_)) => return Err(bad("it has a password but no user")),
            (false, None) => NatsAuth::Token(Secret::new(user)),
            (false, Some(password)) => NatsAuth::UserPassword {
                user,
                password: Secret::new(password),
            },
        };
        // async-nats gets the URL without them; failures there cannot quote them.
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        let port = parsed.port().unwrap_or(DEFAULT_PORT);
        let bare = format!(
            "{}://{}:{port}",
            parsed.scheme(),
            parsed.host_str().unwrap_or(&host)
        );
        let tls = parsed.scheme() == "tls" || options.ca.is_some() || options.cert.is_some();
        let mut target = NatsTarget {
            url: bare,
            host,
            auth: NatsAuth::None,
            tls,
            options: options.clone(),
        };
        if let Some(path) = &options.creds {
            if !matches!(auth, NatsAuth::None) {
                target.auth = auth;
                return Err(NatsError::TwoCredentials {
                    url: target.to_string(),
                });
            }
            let contents = read(path, "cannot read --nats-creds")?;
            // Parsed now, so that a bad file is a usage error before anything connects.
            async_nats::ConnectOptions::new()
                .credentials(&contents)
                .map_err(|source| NatsError::File {
                    what: "--nats-creds is not a NATS credentials file (a user JWT and NKey seed):",
                    path: path.clone(),
                    source,
                })?;
            auth = NatsAuth::Creds {
                path: path.clone(),
                contents: Secret::new(contents),
            };
        }
        target.auth = auth;
        match (&options.cert, &options.key) {
            (Some(cert), Some(key)) => {
                read(cert, "cannot read --nats-cert")?;
                read(key, "cannot read --nats-key")?;
            }
            (None, None) => {}
            _ => return Err(NatsError::HalfClientCertificate),
        }
        if let Some(ca) = &options.ca {
            read(ca, "cannot read --nats-ca")?;
        }
        if !target.tls && !target.is_loopback() && !options.insecure {
            return Err(NatsError::Plaintext {
                url: target.to_string(),
            });
        }
        Ok(target)
    }

    /// Whether the connection is encrypted (a `tls://` URL, or a CA or client certificate given).
    pub fn uses_tls(&self) -> bool {
        self.tls
    }

    /// Whether the host is a loopback address (by its text alone: nothing is looked up).
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }

    /// The credentials it shows.
    pub fn auth(&self) -> &NatsAuth {
        &self.auth
    }

    /// What a person must be told before connecting: plain text to a host that is not loopback
    /// (allowed by `insecure`) exposes everything that travels; `None` when nothing is exposed.
    pub fn exposure_warning(&self) -> Option<String> {
        if self.tls || self.is_loopback() {
            return None;
        }
        let credentials = match self.auth {
            NatsAuth::None => "",
            NatsAuth::UserPassword { .. } => ", and the password",
            NatsAuth::Token(_) => ", and the token",
            // The seed never travels: it signs the server's nonce.
            NatsAuth::Creds { .. } => ", and the user JWT",
        };
        Some(format!(
            "warning: --insecure: NATS at {self} is not loopback and not TLS; scripts, inputs, reports, run records and journal records travel in clear{credentials}, readable and changeable by anyone on the path"
        ))
    }

    /// How long to keep trying while the server is away ([`NatsOptions::patience`]).
    pub fn patience(&self) -> Duration {
        self.options.patience.unwrap_or(DEFAULT_PATIENCE)
    }

    /// Connects, with forge-host's timeouts; while the server cannot be reached (down, or
    /// restarting), tries again with a growing pause up to the patience, saying so once on
    /// standard error. A refusal (credentials, TLS) is not tried again.
    pub async fn connect(&self) -> Result<async_nats::Client, NatsError> {
        let away = |error: &NatsError| {
            matches!(error, NatsError::Connect { source, .. } if matches!(
                source.kind(),
                async_nats::ConnectErrorKind::Io | async_nats::ConnectErrorKind::TimedOut
            ))
        };
        let waiting = |error: &NatsError| {
            if let NatsError::Connect { url, source } = error {
                eprintln!(
                    "forge-host: cannot connect to NATS at {url} ({source}); trying again for up to {} (--nats-patience)",
                    format_duration(self.patience())
                );
            }
        };
        match patiently(self.patience(), || self.connect_once(), away, waiting).await {
            Ok(client) => Ok(client),
            Err(GaveUp::OutOfPatience(NatsError::Connect { url, source })) => {
                Err(NatsError::Unreachable {
                    url,
                    patience: self.patience(),
                    source,
                })
            }
            Err(GaveUp::Refused(error) | GaveUp::OutOfPatience(error)) => Err(error),
        }
    }

    /// One try of [`NatsTarget::connect`].
    async fn connect_once(&self) -> Result<async_nats::Client, NatsError> {
        let mut options = async_nats::ConnectOptions::new()
            .name("forge-host")
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(Duration::from_secs(10)));
        let shown = match &self.auth {
            NatsAuth::None => "none",
            NatsAuth::UserPassword { user, password } => {
                options = options.user_and_password(user.clone(), password.expose().to_string());
                "a user and password"
            }
            NatsAuth::Token(token) => {
                options = options.token(token.expose().to_string());
                "a token"
            }
            NatsAuth::Creds { path, contents } => {
                options =
                    options
                        .credentials(contents.expose())
                        .map_err(|source| NatsError::File {
                            what: "--nats-creds is not a NATS credentials file:",
                            path: path.clone(),
                            source,
                        })?;
                "--nats-creds"
            }
        };
        if self.tls {
            // Discovered servers of a cluster are reached with TLS too.
            options = options.require_tls(true);
            if let Some(ca) = &self.options.ca {
                options = options.add_root_certificates(ca.clone());
            }
            if let (Some(cert), Some(key)) = (&self.options.cert, &self.options.key) {
                options = options.add_client_certificate(cert.clone(), key.clone());
            }
        }
        crate::primitives::install_crypto_provider();
        options.connect(self.url.as_str()).await.map_err(|source| {
            let url = self.to_string();
            match source.kind() {
                async_nats::ConnectErrorKind::AuthorizationViolation
                | async_nats::ConnectErrorKind::Authentication => {
                    NatsError::Refused { url, shown, source }
                }
                async_nats::ConnectErrorKind::Tls => NatsError::Tls { url, source },
                _ if failed_in_tls(&source) => NatsError::Tls { url, source },
                _ => NatsError::Connect { url, source },
            }
        })
    }
}

/// The URL with its user shown and its password or token as `***`.
impl std::fmt::Display for NatsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (scheme, rest) = self.url.split_once("://").unwrap_or(("nats", &self.url));
        match &self.auth {
            NatsAuth::UserPassword { user, .. } => write!(f, "{scheme}://{user}:***@{rest}"),
            NatsAuth::Token(_) => write!(f, "{scheme}://***@{rest}"),
            NatsAuth::None | NatsAuth::Creds { .. } => write!(f, "{scheme}://{rest}"),
        }
    }
}

/// Whether the failure was TLS's (a certificate not trusted or refused): async-nats reports
/// those as I/O errors that wrap rustls's.
fn failed_in_tls(error: &async_nats::ConnectError) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(cause) = next {
        let wrapped = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .is_some_and(|inner| inner.is::<rustls::Error>());
        if wrapped || cause.is::<rustls::Error>() {
            return true;
        }
        next = cause.source();
    }
    false
}

/// The text of `path`, or why not.
fn read(path: &Path, what: &'static str) -> Result<String, NatsError> {
    std::fs::read_to_string(path).map_err(|source| NatsError::File {
        what,
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Result<NatsTarget, NatsError> {
        NatsTarget::new(url, NatsOptions::default())
    }

    #[test]
    fn credentials_leave_the_url_and_its_text_shows_none() {
        let with_password = target("nats://alice:p%40ss:w@127.0.0.1:4333").expect("parse");
        assert_eq!(with_password.url, "nats://127.0.0.1:4333");
        assert_eq!(with_password.to_string(), "nats://alice:***@127.0.0.1:4333");
        match with_password.auth() {
            NatsAuth::UserPassword { user, password } => {
                assert_eq!((user.as_str(), password.expose()), ("alice", "p@ss:w"));
            }
            other => panic!("{other:?}"),
        }
        assert!(!format!("{with_password:?}").contains("p@ss"));
        let token = target("tls://s3cr3t@localhost").expect("parse");
        assert_eq!(token.to_string(), "tls://***@localhost:4222");
        assert!(token.uses_tls());
        assert_eq!(
            target("127.0.0.1").expect("bare").url,
            "nats://127.0.0.1:4222"
        );
        for bad in [
            "http://h:1",
            "nats://:pw@h:1",
            "nats://h:1/x",
            "nats://h:99999",
        ] {
            let error = target(bad).expect_err(bad);
            assert!(!error.to_string().contains("pw"), "{error}");
        }
    }

    #[test]
    fn plain_text_off_loopback_is_refused_unless_insecure_and_then_warned() {
        let error = target("nats://u:secret@10.1.2.3:4222").expect_err("refused");
        assert_eq!(error.code(), ErrorCode::InvalidInput);
        let text = error.to_string();
        assert!(
            text.contains("--insecure") && !text.contains("secret"),
            "{text}"
        );
        assert!(
            target("nats://nats.example.com").is_err(),
            "a name is not looked up"
        );
        assert!(target("tls://10.1.2.3:4222").is_ok());
        assert!(
            target("nats://[::1]:4222")
                .expect("v6")
                .exposure_warning()
                .is_none()
        );
        let allowed = NatsTarget::new(
            "nats://u:secret@10.1.2.3:4222",
            NatsOptions {
                insecure: true,
                ..NatsOptions::default()
            },
        )
        .expect("insecure");
        let warning = allowed.exposure_warning().expect("warned");
        assert!(
            warning.contains("in clear") && !warning.contains("secret"),
            "{warning}"
        );
    }

    #[test]
    fn bad_option_combinations_are_usage_errors() {
        let half = NatsTarget::new(
            "tls://127.0.0.1",
            NatsOptions {
                cert: Some("c.pem".into()),
                ..NatsOptions::default()
            },
        );
        assert!(matches!(half, Err(NatsError::HalfClientCertificate)));
        let missing = NatsTarget::new(
            "nats://127.0.0.1",
            NatsOptions {
                creds: Some("/nonexistent/user.creds".into()),
                ..NatsOptions::default()
            },
        )
        .expect_err("unreadable");
        assert_eq!(missing.code(), ErrorCode::InvalidInput);
        let dir = tempfile::tempdir().expect("tempdir");
        let creds = dir.path().join("user.creds");
        std::fs::write(&creds, "not a creds file").expect("write");
        let both = NatsTarget::new(
            "nats://tok@127.0.0.1",
            NatsOptions {
                creds: Some(creds.clone()),
                ..NatsOptions::default()
            },
        );
        assert!(matches!(both, Err(NatsError::TwoCredentials { .. })));
        let garbled = NatsTarget::new(
            "nats://127.0.0.1",
            NatsOptions {
                creds: Some(creds),
                ..NatsOptions::default()
            },
        );
        assert!(
            matches!(garbled, Err(NatsError::File { .. })),
            "{garbled:?}"
        );
    }
}
