//! Where the state lives and how it is reached: `etcd://[USER[:PASSWORD]@]ENDPOINT[,ENDPOINT...][/PREFIX]`,
//! each ENDPOINT `[http://|https://]HOST:PORT` (plain HTTP when no scheme is written), with TLS
//! files and etcd's own authentication beside it ([`EtcdAccess`]).
//!
//! A location's text ([`EtcdLocation`]'s `Display`: what the journal keeps as a run's
//! `state_store` and every message shows) has the user but never the password. Plain text
//! to an endpoint that is not loopback is refused before anything is contacted, unless
//! [`EtcdAccess::insecure`] allows it.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::ErrorCode;
use crate::primitives::{Secret, is_loopback_host, percent_decode};

/// The prefix of a location that names none.
pub const DEFAULT_PREFIX: &str = "forge-host";

/// One etcd member's client URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Whether it is reached with TLS (`https://`).
    pub tls: bool,
    /// `HOST:PORT` (`[v6]:PORT` for an IPv6 address).
    pub address: String,
}

impl Endpoint {
    /// `http://HOST:PORT` or `https://HOST:PORT`.
    pub fn url(&self) -> String {
        format!(
            "{}://{}",
            if self.tls { "https" } else { "http" },
            self.address
        )
    }

    /// Its host, as written.
    pub fn host(&self) -> &str {
        self.address
            .rsplit_once(':')
            .map_or(self.address.as_str(), |(host, _)| host)
    }
}

/// As a location writes it: `HOST:PORT` for plain HTTP, `https://HOST:PORT` for TLS.
impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tls {
            write!(f, "https://{}", self.address)
        } else {
            f.write_str(&self.address)
        }
    }
}

/// Where the state lives: `etcd://[USER[:PASSWORD]@]ENDPOINT[,ENDPOINT...][/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdLocation {
    /// Each member, tried in order.
    pub endpoints: Vec<Endpoint>,
    /// The key prefix everything is kept under.
    pub prefix: String,
    /// The etcd user it authenticates as, if any.
    pub user: Option<String>,
    /// The password written in the location (never shown; better given apart from it).
    pub password: Option<Secret>,
}

/// How the store reaches etcd, besides its location: what `--etcd-*` flags give.
#[derive(Debug, Clone, Default)]
pub struct EtcdAccess {
    /// PEM certificates of the authorities that sign the members' certificates (`--etcd-ca`);
    /// the system's roots otherwise.
    pub ca: Option<PathBuf>,
    /// A client certificate (PEM) for mutual TLS (`--etcd-cert`); needs `key`.
    pub cert: Option<PathBuf>,
    /// Its private key (PEM) (`--etcd-key`); needs `cert`.
    pub key: Option<PathBuf>,
    /// The user to authenticate as (`--etcd-user`), instead of the location's.
    pub user: Option<String>,
    /// Its password (`--etcd-password-file`, `FORGE_HOST_ETCD_PASSWORD`), instead of the
    /// location's.
    pub password: Option<Secret>,
    /// Allow plain HTTP to an endpoint that is not loopback (`--insecure`).
    pub insecure: bool,
    /// How long to keep trying while no member answers (restarting, or cut off) before saying
    /// etcd is unreachable (`--etcd-patience`); [`crate::limits::DEFAULT_PATIENCE`] when
    /// `None`.
    pub patience: Option<Duration>,
}

/// Why a location or its access options are refused. Its text never holds a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EtcdConfigError {
    /// The location does not parse (it is not quoted: it may hold a password).
    #[error(
        "the state location is not etcd://[USER[:PASSWORD]@]ENDPOINT[,ENDPOINT...][/PREFIX] with ENDPOINT [http://|https://]HOST:PORT: {why}"
    )]
    BadLocation {
        /// What is wrong with it.
        why: String,
    },
    /// Plain HTTP to an endpoint that is not loopback, without `--insecure`.
    #[error(
        "etcd endpoint {endpoint} is not a loopback address, and plain HTTP would carry session state and credentials in clear: write https://{endpoint} (with --etcd-ca), or give --insecure to connect anyway"
    )]
    Plaintext {
        /// The endpoint.
        endpoint: String,
    },
    /// TLS files given for an endpoint without TLS.
    #[error(
        "--etcd-ca, --etcd-cert and --etcd-key are for https:// endpoints, and {endpoint} is plain HTTP: write https://{endpoint}"
    )]
    TlsOverHttp {
        /// The endpoint.
        endpoint: String,
    },
    /// A client certificate without its key, or a key without its certificate.
    #[error("mutual TLS with etcd needs both --etcd-cert and --etcd-key")]
    HalfClientCertificate,
    /// A password without a user to go with it.
    #[error("an etcd password needs a user (--etcd-user, or USER@ in the location)")]
    PasswordWithoutUser,
    /// A user without a password.
    #[error(
        "etcd user `{user}` needs a password: --etcd-password-file FILE or FORGE_HOST_ETCD_PASSWORD"
    )]
    UserWithoutPassword {
        /// The user.
        user: String,
    },
    /// A file named by an option cannot be read, or is not PEM of the right kind.
    #[error("{what} {}: {why}", path.display())]
    File {
        /// Which option's file.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The store's own thread could not start.
    #[error("the etcd client's thread")]
    Thread(#[source] std::io::Error),
}

impl EtcdConfigError {
    /// `INVALID_INPUT` for the caller's mistakes, `ISOLATE_FAILURE` for a thread that would not
    /// start.
    pub fn code(&self) -> ErrorCode {
        match self {
            EtcdConfigError::Thread(_) => ErrorCode::IsolateFailure,
            _ => ErrorCode::InvalidInput,
        }
    }
}

impl EtcdLocation {
    /// Parses `etcd://[USER[:PASSWORD]@]ENDPOINT[,ENDPOINT...][/PREFIX]` (user and password
    /// percent-encoded).
    pub fn parse(text: &str) -> Result<Self, EtcdConfigError> {
        let bad = |why: String| EtcdConfigError::BadLocation { why };
        let rest = text
            .trim()
            .strip_prefix("etcd://")
            .ok_or_else(|| bad("it does not start with etcd://".into()))?;
        // USER[:PASSWORD]@ ends at the last `@` before the first `/` (of a scheme or the prefix).
        let head = rest.find('/').map_or(rest, |at| &rest[..at]);
        let (user, password, mut rest) = match head.rfind('@') {
            Some(at) => {
                let (user, password) = match rest[..at].split_once(':') {
                    Some((user, password)) => (user, Some(password)),
                    None => (&rest[..at], None),
                };
                let user =
                    percent_decode(user).ok_or_else(|| bad("the user is not UTF-8".into()))?;
                let password = password
                    .map(|p| {
                        percent_decode(p).ok_or_else(|| bad("the password is not UTF-8".into()))
                    })
                    .transpose()?;
                if user.is_empty() {
                    return Err(bad("it has an `@` but no user before it".into()));
                }
                (Some(user), password.map(Secret::new), &rest[at + 1..])
            }
            None => (None, None, rest),
        };
        let mut endpoints = Vec::new();
        let prefix = loop {
            let (tls, after) = if let Some(after) = rest.strip_prefix("https://") {
                (true, after)
            } else if let Some(after) = rest.strip_prefix("http://") {
                (false, after)
            } else {
                (false, rest)
            };
            let end = after.find([',', '/']).unwrap_or(after.len());
            let address = after[..end].trim();
            let port = address.rsplit_once(':');
            match port {
                Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {}
                _ if address.is_empty() => {
                    return Err(bad("it names no etcd member (etcd://HOST:PORT)".into()));
                }
                _ => {
                    return Err(bad(format!(
                        "`{address}` is not HOST:PORT (etcd's client port, 2379 by default)"
                    )));
                }
            }
            endpoints.push(Endpoint {
                tls,
                address: address.to_string(),
            });
            match after[end..].chars().next() {
                Some(',') => rest = &after[end + 1..],
                Some(_) => break after[end + 1..].trim_matches('/').to_string(),
                None => break String::new(),
            }
        };
        Ok(EtcdLocation {
            endpoints,
            prefix: if prefix.is_empty() {
                DEFAULT_PREFIX.to_string()
            } else {
                prefix
            },
            user,
            password,
        })
    }

    /// This location as `access` reaches it: its user and password are the flags' when they
    /// give them; refused when plain HTTP would leave loopback without `access.insecure`, or
    /// when the options do not fit together. Nothing is contacted.
    pub fn with_access(mut self, access: &EtcdAccess) -> Result<Self, EtcdConfigError> {
        if access.user.is_some() {
            self.user.clone_from(&access.user);
        }
        if access.password.is_some() {
            self.password.clone_from(&access.password);
        }
        match (&self.user, &self.password) {
            (None, Some(_)) => return Err(EtcdConfigError::PasswordWithoutUser),
            (Some(user), None) => {
                return Err(EtcdConfigError::UserWithoutPassword { user: user.clone() });
            }
            _ => {}
        }
        if access.cert.is_some() != access.key.is_some() {
            return Err(EtcdConfigError::HalfClientCertificate);
        }
        let tls_files = access.ca.is_some() || access.cert.is_some();
        for endpoint in &self.endpoints {
            if endpoint.tls {
                continue;
            }
            if tls_files {
                return Err(EtcdConfigError::TlsOverHttp {
                    endpoint: endpoint.address.clone(),
                });
            }
            if !is_loopback_host(endpoint.host()) && !access.insecure {
                return Err(EtcdConfigError::Plaintext {
                    endpoint: endpoint.address.clone(),
                });
            }
        }
        Ok(self)
    }

    /// What a person must be told before it is used: the endpoints reached with plain HTTP
    /// off loopback (allowed by `--insecure`), and what travels to them in clear.
    pub fn exposure_warning(&self) -> Option<String> {
        let exposed: Vec<&str> = self
            .endpoints
            .iter()
            .filter(|e| !e.tls && !is_loopback_host(e.host()))
            .map(|e| e.address.as_str())
            .collect();
        if exposed.is_empty() {
            return None;
        }
        let password = if self.password.is_some() {
            ", and the etcd password and token"
        } else {
            ""
        };
        Some(format!(
            "warning: --insecure: etcd at {} is not loopback and not TLS; session state (every value scripts read and write) travels in clear{password}, readable and changeable by anyone on the path",
            exposed.join(", ")
        ))
    }
}

/// `etcd://[USER@]ENDPOINT[,...]/PREFIX`: never the password.
impl std::fmt::Display for EtcdLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("etcd://")?;
        if let Some(user) = &self.user {
            let encoded = percent_encoding::utf8_percent_encode(user, USERINFO);
            write!(f, "{encoded}@")?;
        }
        let endpoints: Vec<String> = self.endpoints.iter().map(Endpoint::to_string).collect();
        write!(f, "{}/{}", endpoints.join(","), self.prefix)
    }
}

/// What a user name escapes in a location's text.
const USERINFO: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b'@')
    .add(b':')
    .add(b'/')
    .add(b',')
    .add(b'%')
    .add(b' ');

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_with_a_default_prefix_and_bad_ones_are_refused() {
        let location = EtcdLocation::parse("etcd://127.0.0.1:2379").expect("parse");
        assert_eq!(location.endpoints[0].url(), "http://127.0.0.1:2379");
        assert_eq!(location.prefix, DEFAULT_PREFIX);
        let location = EtcdLocation::parse("etcd://a:1,b:2/team/x/").expect("parse");
        assert_eq!(location.endpoints.len(), 2);
        assert_eq!(location.prefix, "team/x");
        assert_eq!(location.to_string(), "etcd://a:1,b:2/team/x");
        for bad in [
            "http://a:1",
            "etcd://",
            "etcd://host",
            "etcd://host:port/x",
            "etcd://@h:1",
        ] {
            assert!(EtcdLocation::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_password_is_read_and_never_shown() {
        let text = "etcd://al%40ce:p%40ss@w@https://127.0.0.1:2379,https://[::1]:2380/team";
        let location = EtcdLocation::parse(text).expect("parse");
        assert_eq!(location.user.as_deref(), Some("al@ce"));
        assert_eq!(
            location.password.as_ref().map(Secret::expose),
            Some("p@ss@w")
        );
        assert_eq!(location.endpoints[1].host(), "[::1]");
        let shown = location.to_string();
        assert_eq!(
            shown,
            "etcd://al%40ce@https://127.0.0.1:2379,https://[::1]:2380/team"
        );
        assert!(!format!("{location:?}").contains("p@ss"));
        let reparsed = EtcdLocation::parse(&shown).expect("its own text parses");
        assert_eq!(reparsed.user, location.user);
        assert_eq!(reparsed.endpoints, location.endpoints);
        let error = EtcdLocation::parse("etcd://u:secret@h:x").expect_err("bad port");
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    #[test]
    fn plain_http_off_loopback_is_refused_unless_insecure() {
        let off = EtcdLocation::parse("etcd://10.1.2.3:2379").expect("parse");
        let refused = off.clone().with_access(&EtcdAccess::default());
        assert!(matches!(refused, Err(EtcdConfigError::Plaintext { .. })));
        assert!(
            EtcdLocation::parse("etcd://etcd.example.com:2379")
                .expect("parse")
                .with_access(&EtcdAccess::default())
                .is_err(),
            "a name is not looked up"
        );
        let insecure = EtcdAccess {
            insecure: true,
            ..EtcdAccess::default()
        };
        let allowed = off.with_access(&insecure).expect("insecure");
        assert!(
            allowed
                .exposure_warning()
                .expect("warned")
                .contains("10.1.2.3")
        );
        let tls = EtcdLocation::parse("etcd://https://10.1.2.3:2379").expect("parse");
        assert!(tls.with_access(&EtcdAccess::default()).is_ok());
        let local = EtcdLocation::parse("etcd://localhost:2379").expect("parse");
        assert!(local.exposure_warning().is_none());
        let ca_over_http = EtcdAccess {
            ca: Some("ca.pem".into()),
            ..EtcdAccess::default()
        };
        assert!(matches!(
            local.clone().with_access(&ca_over_http),
            Err(EtcdConfigError::TlsOverHttp { .. })
        ));
        let lone_user = EtcdAccess {
            user: Some("bob".into()),
            ..EtcdAccess::default()
        };
        assert!(matches!(
            local.with_access(&lone_user),
            Err(EtcdConfigError::UserWithoutPassword { .. })
        ));
    }
}
