//! The two etcd v3 calls session state needs, `Range` and `Txn`, through etcd's JSON gateway:
//! the same gRPC messages, posted as JSON to `/v3/kv/range` and `/v3/kv/txn` on the client port
//! (bytes as base64, 64-bit integers as strings). It needs no code generated from etcd's protos,
//! and the HTTP client is the one the MCP client already uses.
//!
//! Over HTTPS it trusts `--etcd-ca` (or the system's roots) and shows `--etcd-cert` to a member
//! that verifies clients. With a user and password, it exchanges them for a token
//! (`/v3/auth/authenticate`), sends the token with every request, and when etcd says the token
//! is no longer valid (expired, or the user's password was changed) it authenticates again once
//! and repeats the request.
//!
//! While no member answers (a restart, a partition), or the member that does says it cannot
//! serve now (HTTP 429, 503, 504: no leader, a timeout), a request is tried again with a growing
//! pause for up to the patience (`--etcd-patience`). A transaction can be tried again this way
//! after its answer was lost: the caller compares what makes a landed first try fail the second.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::answers::{RangeAnswer, TxnAnswer, decode, parse};
use super::error::EtcdError;
use super::location::{EtcdAccess, EtcdConfigError, EtcdLocation};
use crate::limits::{Backoff, DEFAULT_PATIENCE, format_duration};
use crate::primitives::Secret;

/// How much of a refusal in plain text a message quotes.
const MAX_QUOTED: usize = 300;

/// How long one request to etcd may take before it counts as unreachable.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One key as a range returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
    /// The store revision that last changed it.
    pub mod_revision: u64,
}

/// What a range returned, all at one store revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// The store revision the range was read at.
    pub revision: u64,
    /// The keys, in order.
    pub kvs: Vec<KeyValue>,
}

/// A write of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Put `value` at `key`.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Delete `key`.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
}

/// A comparison a transaction makes before it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compare {
    /// `key`'s mod revision is `revision` (0: the key does not exist).
    Unchanged {
        /// The key.
        key: Vec<u8>,
        /// Its expected mod revision.
        revision: u64,
    },
    /// No key from `key` up to `end` (exclusive) was changed after `revision`.
    NoneChangedAfter {
        /// The first key of the range.
        key: Vec<u8>,
        /// The first key after it.
        end: Vec<u8>,
        /// The revision nothing in the range may be newer than.
        revision: u64,
    },
}

impl Compare {
    fn to_json(&self) -> Value {
        match self {
            Compare::Unchanged { key, revision } => json!({
                "key": BASE64.encode(key),
                "target": "MOD",
                "result": "EQUAL",
                "mod_revision": revision.to_string(),
            }),
            Compare::NoneChangedAfter { key, end, revision } => json!({
                "key": BASE64.encode(key),
                "range_end": BASE64.encode(end),
                "target": "MOD",
                "result": "LESS",
                "mod_revision": revision.saturating_add(1).to_string(),
            }),
        }
    }
}

/// What a transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnOutcome {
    /// Whether every comparison held (and the writes were made).
    pub succeeded: bool,
    /// The store revision after it.
    pub revision: u64,
}

/// A client of etcd's JSON gateway.
#[derive(Debug, Clone)]
pub struct Gateway {
    http: reqwest::Client,
    /// `http://HOST:PORT` or `https://HOST:PORT`, tried in order.
    endpoints: Vec<String>,
    /// The user and password, and the token they were last exchanged for.
    auth: Option<Arc<Credentials>>,
    /// How long a request is tried again while etcd cannot answer.
    patience: Duration,
}

/// A user's password and the token etcd gave for it.
#[derive(Debug)]
struct Credentials {
    user: String,
    password: Secret,
    token: Mutex<Option<Secret>>,
}

impl Gateway {
    /// A client of the members of `location`, reached as `access` says (its TLS files are read
    /// now); the user and password are the location's.
    pub fn new(location: &EtcdLocation, access: &EtcdAccess) -> Result<Self, EtcdConfigError> {
        crate::primitives::install_crypto_provider();
        let mut builder = reqwest::Client::builder().timeout(REQUEST_TIMEOUT);
        if let Some(ca) = &access.ca {
            let pem = read_pem(ca, "--etcd-ca")?;
            let roots =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| EtcdConfigError::File {
                    what: "--etcd-ca",
                    path: ca.clone(),
                    why: format!("not PEM certificates: {e}"),
                })?;
            builder = builder.tls_certs_only(roots);
        }
        if let (Some(cert), Some(key)) = (&access.cert, &access.key) {
            let mut pem = read_pem(cert, "--etcd-cert")?;
            pem.push(b'\n');
            pem.extend(read_pem(key, "--etcd-key")?);
            let identity =
                reqwest::Identity::from_pem(&pem).map_err(|e| EtcdConfigError::File {
                    what: "--etcd-cert and --etcd-key",
                    path: cert.clone(),
                    why: format!("not a PEM certificate and private key: {e}"),
                })?;
            builder = builder.identity(identity);
        }
        let http = builder.build().map_err(|e| EtcdConfigError::File {
            what: "the TLS settings of",
            path: access
                .ca
                .clone()
                .or(access.cert.clone())
                .unwrap_or_default(),
            why: e.to_string(),
        })?;
        let auth = match (&location.user, &location.password) {
            (Some(user), Some(password)) => Some(Arc::new(Credentials {
                user: user.clone(),
                password: password.clone(),
                token: Mutex::new(None),
            })),
            _ => None,
        };
        Ok(Gateway {
            http,
            endpoints: location.endpoints.iter().map(|e| e.url()).collect(),
            auth,
            patience: access.patience.unwrap_or(DEFAULT_PATIENCE),
        })
    }

    /// The keys from `key` up to `range_end` (exclusive), or `key` alone; at `revision`, or the
    /// latest.
    pub async fn range(
        &self,
        key: &[u8],
        range_end: Option<&[u8]>,
        revision: Option<u64>,
    ) -> Result<Range, EtcdError> {
        let mut body = json!({"key": BASE64.encode(key)});
        if let Some(end) = range_end {
            body["range_end"] = json!(BASE64.encode(end));
        }
        if let Some(revision) = revision {
            body["revision"] = json!(revision.to_string());
        }
        let (endpoint, answer) = self.post("/v3/kv/range", &body).await?;
        let answer: RangeAnswer = parse(&endpoint, answer)?;
        let kvs = answer
            .kvs
            .into_iter()
            .map(|kv| {
                Ok(KeyValue {
                    key: decode(&endpoint, &kv.key)?,
                    value: decode(&endpoint, &kv.value)?,
                    mod_revision: kv.mod_revision.get(&endpoint)?,
                })
            })
            .collect::<Result<_, EtcdError>>()?;
        Ok(Range {
            revision: answer.header.revision.get(&endpoint)?,
            kvs,
        })
    }

    /// One transaction: if every comparison of `compares` holds, make `writes`; otherwise
    /// nothing. Tried again when its answer was lost, it may find that its first try landed:
    /// `compares` must then fail, and the caller tell the two apart.
    pub async fn txn(
        &self,
        compares: &[Compare],
        writes: &[Write],
    ) -> Result<TxnOutcome, EtcdError> {
        let compare: Vec<Value> = compares.iter().map(Compare::to_json).collect();
        let success: Vec<Value> = writes
            .iter()
            .map(|write| match write {
                Write::Put { key, value } => json!({"request_put": {
                    "key": BASE64.encode(key),
                    "value": BASE64.encode(value),
                }}),
                Write::Delete { key } => {
                    json!({"request_delete_range": {"key": BASE64.encode(key)}})
                }
            })
            .collect();
        let body = json!({"compare": compare, "success": success});
        let (endpoint, answer) = self.post("/v3/kv/txn", &body).await?;
        let answer: TxnAnswer = parse(&endpoint, answer)?;
        Ok(TxnOutcome {
            succeeded: answer.succeeded,
            revision: answer.header.revision.get(&endpoint)?,
        })
    }

    /// Posts `body` as [`Gateway::post_once`] does, trying again while etcd cannot answer, up to
    /// the patience; the first failed try is told on standard error.
    async fn post(&self, path: &str, body: &Value) -> Result<(String, Value), EtcdError> {
        let mut backoff = Backoff::new(self.patience);
        let mut told = self.patience.is_zero();
        loop {
            let error = match self.post_once(path, body).await {
                Err(error) if error.is_transient() => error,
                answered => return answered,
            };
            if !std::mem::replace(&mut told, true) {
                eprintln!(
                    "forge-host: {}; trying again for up to {} (--etcd-patience)",
                    crate::error::chain_text(&error),
                    format_duration(self.patience)
                );
            }
            if !backoff.wait().await {
                return Err(error.after(self.patience));
            }
        }
    }

    /// Posts `body` to the first endpoint that answers, with a token when the gateway has a
    /// user: one it has, or a new one; a token etcd no longer takes is renewed once.
    async fn post_once(&self, path: &str, body: &Value) -> Result<(String, Value), EtcdError> {
        let Some(auth) = &self.auth else {
            return self.post_as(path, body, None).await;
        };
        let held = auth.token.lock().ok().and_then(|token| token.clone());
        let token = match held {
            Some(token) => token,
            None => self.authenticate(auth).await?,
        };
        match self.post_as(path, body, Some(&token)).await {
            Err(EtcdError::Refused { message, .. }) if token_expired(&message) => {
                let token = self.authenticate(auth).await?;
                self.post_as(path, body, Some(&token)).await
            }
            answered => answered,
        }
    }

    /// A new token for `auth`'s user, kept for the requests after.
    async fn authenticate(&self, auth: &Credentials) -> Result<Secret, EtcdError> {
        let body = json!({"name": auth.user, "password": auth.password.expose()});
        let answered = self.post_as("/v3/auth/authenticate", &body, None).await;
        let (endpoint, answer) = match answered {
            Ok(answered) => answered,
            Err(EtcdError::Refused {
                endpoint, message, ..
            }) if message.contains("authentication failed") => {
                return Err(EtcdError::AuthFailed {
                    endpoint,
                    user: auth.user.clone(),
                    message,
                });
            }
            Err(other) => return Err(other),
        };
        let token = answer["token"]
            .as_str()
            .filter(|token| !token.is_empty())
            .map(Secret::new)
            .ok_or_else(|| EtcdError::Malformed {
                endpoint,
                detail: "authenticate answered no token (is authentication on?)".into(),
            })?;
        if let Ok(mut held) = auth.token.lock() {
            *held = Some(token.clone());
        }
        Ok(token)
    }

    /// Posts `body` to the first endpoint that answers, with `token` if any.
    async fn post_as(
        &self,
        path: &str,
        body: &Value,
        token: Option<&Secret>,
    ) -> Result<(String, Value), EtcdError> {
        let mut last = None;
        for endpoint in &self.endpoints {
            let mut request = self
                .http
                .post(format!("{endpoint}{path}"))
                .header("content-type", "application/json")
                .body(body.to_string());
            if let Some(token) = token {
                request = request.header("authorization", token.expose());
            }
            let response = match request.send().await {
                Ok(response) => response,
                Err(error) => {
                    last = Some(error);
                    continue;
                }
            };
            let status = response.status();
            let bytes = match response.bytes().await {
                Ok(bytes) => bytes,
                Err(error) => {
                    last = Some(error);
                    continue;
                }
            };
            let parsed = serde_json::from_slice::<Value>(&bytes);
            if !status.is_success() {
                // The gateway answers some refusals in plain text, not JSON.
                let message = match &parsed {
                    Ok(answer) => answer["message"]
                        .as_str()
                        .or_else(|| answer["error"].as_str())
                        .unwrap_or("no message")
                        .to_string(),
                    Err(_) => crate::primitives::truncate_at(
                        String::from_utf8_lossy(&bytes).trim(),
                        MAX_QUOTED,
                    )
                    .to_string(),
                };
                if token.is_none() && wants_credentials(&message) {
                    return Err(EtcdError::Unauthenticated {
                        endpoint: endpoint.clone(),
                        message,
                    });
                }
                if message.contains("permission denied") {
                    return Err(EtcdError::Denied {
                        endpoint: endpoint.clone(),
                        message,
                    });
                }
                if message.contains("CommonName of client") {
                    return Err(EtcdError::NamedClientCertificate {
                        endpoint: endpoint.clone(),
                        message,
                    });
                }
                return Err(EtcdError::Refused {
                    endpoint: endpoint.clone(),
                    status: status.as_u16(),
                    message,
                });
            }
            let answer = parsed.map_err(|error| EtcdError::Malformed {
                endpoint: endpoint.clone(),
                detail: error.to_string(),
            })?;
            return Ok((endpoint.clone(), answer));
        }
        match last {
            Some(source) => Err(EtcdError::Unreachable {
                endpoints: self.endpoints.join(", "),
                waited: None,
                source,
            }),
            None => Err(EtcdError::Malformed {
                endpoint: String::new(),
                detail: "no endpoint to ask".into(),
            }),
        }
    }
}

/// Whether etcd's `message` says the token it was sent is no longer good: expired (or
/// revoked by a password change), or older than a change to etcd's users and roles.
fn token_expired(message: &str) -> bool {
    message.contains("invalid auth token") || message.contains("auth store is old")
}

/// Whether etcd's `message` says a request without a token needs one.
fn wants_credentials(message: &str) -> bool {
    message.contains("user name is empty") || message.contains("invalid auth token")
}

/// The bytes of a PEM file, or why not.
fn read_pem(path: &std::path::Path, what: &'static str) -> Result<Vec<u8>, EtcdConfigError> {
    std::fs::read(path).map_err(|e| EtcdConfigError::File {
        what,
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}
