//! Who may use the Streamable HTTP server: every request carries `Authorization: Bearer TOKEN`,
//! compared in constant time. Without it any process of any user on the machine could run
//! scripts with the server's tools, workspace and gate. A refused request gets 401 with a
//! `WWW-Authenticate: Bearer` header, as MCP's authorization section asks of a protected
//! server, and is logged without the token.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::tls::PeerAddr;
use crate::error::{Error, ErrorCode};

/// Bytes of a generated token (hex-encoded: 64 characters).
const TOKEN_BYTES: usize = 32;

/// A secret that lets a client in. Its `Debug` never shows it.
#[derive(Clone)]
pub struct BearerToken {
    secret: Arc<str>,
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(***)")
    }
}

impl BearerToken {
    /// A new token from the operating system's random source.
    pub fn generate() -> Result<Self, Error> {
        let mut bytes = [0u8; TOKEN_BYTES];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).map_err(
            |_| {
                Error::new(
                    ErrorCode::IsolateFailure,
                    "the operating system gave no random bytes for the bearer token",
                )
            },
        )?;
        Ok(BearerToken {
            secret: hex::encode(bytes).into(),
        })
    }

    /// The token in `file` (`--token-file`), without surrounding white space.
    pub fn from_file(file: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::invalid_input(format!(
                "--token-file {}: cannot read it: {e}",
                file.display()
            ))
        })?;
        let secret = text.trim();
        if secret.is_empty() {
            return Err(Error::invalid_input(format!(
                "--token-file {}: the file is empty",
                file.display()
            )));
        }
        if secret.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::invalid_input(format!(
                "--token-file {}: a token is one line without spaces",
                file.display()
            )));
        }
        Ok(BearerToken {
            secret: secret.into(),
        })
    }

    /// Writes the token to `file`, readable by its owner only (its folder too), so that a
    /// client's config can read it.
    pub fn write_to(&self, file: &Path) -> Result<(), Error> {
        let failed = |e: std::io::Error| {
            Error::from_source(
                ErrorCode::IsolateFailure,
                crate::files::FileError::new("cannot write the bearer token to", file, e),
            )
        };
        if let Some(folder) = file.parent() {
            std::fs::create_dir_all(folder).map_err(failed)?;
            let owner_only =
                <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
            std::fs::set_permissions(folder, owner_only).map_err(failed)?;
        }
        let folder = file.parent().unwrap_or(Path::new("."));
        // A temporary file is created owner-only (0600) and renamed into place whole.
        let mut staged = tempfile::NamedTempFile::new_in(folder).map_err(failed)?;
        staged
            .write_all(format!("{}\n", self.secret).as_bytes())
            .map_err(failed)?;
        staged.persist(file).map_err(|e| failed(e.error))?;
        Ok(())
    }

    /// Whether `offered` is this token, in time that does not depend on where they differ.
    fn matches(&self, offered: &str) -> bool {
        let (a, b) = (
            Sha256::digest(self.secret.as_bytes()),
            Sha256::digest(offered.as_bytes()),
        );
        a.iter()
            .zip(b.iter())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
    }
}

/// Where a generated token is written: one file per port, so that servers sharing a data
/// directory do not overwrite each other's.
pub fn token_path(data_dir: &Path, port: u16) -> PathBuf {
    data_dir.join("mcp-http").join(format!("{port}.token"))
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Missing,
    Wrong,
}

fn check(token: &BearerToken, request: &Request) -> Result<(), Refusal> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or(Refusal::Missing)?;
    let text = value.to_str().map_err(|_| Refusal::Wrong)?;
    let (scheme, offered) = text.split_once(' ').ok_or(Refusal::Wrong)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Refusal::Wrong);
    }
    if token.matches(offered.trim()) {
        Ok(())
    } else {
        Err(Refusal::Wrong)
    }
}

/// The axum middleware: lets a request with the token through, answers any other with 401.
pub async fn require_token(
    State(token): State<BearerToken>,
    ConnectInfo(peer): ConnectInfo<PeerAddr>,
    request: Request,
    next: Next,
) -> Response {
    match check(&token, &request) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            let (challenge, said) = match refusal {
                Refusal::Missing => (
                    r#"Bearer realm="forge-host""#,
                    "no bearer token (send Authorization: Bearer TOKEN)",
                ),
                Refusal::Wrong => (
                    r#"Bearer realm="forge-host", error="invalid_token""#,
                    "a wrong bearer token",
                ),
            };
            eprintln!(
                "forge-host mcp: refused a request from {} to {}: {said}",
                peer.0,
                request.uri().path()
            );
            let mut response = (StatusCode::UNAUTHORIZED, said).into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(authorization: Option<&str>) -> Request {
        let mut builder = axum::http::Request::builder().uri("/mcp");
        if let Some(value) = authorization {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        builder.body(axum::body::Body::empty()).expect("request")
    }

    #[test]
    fn only_the_token_lets_a_request_in() {
        let token = BearerToken::generate().expect("token");
        let right = format!("Bearer {}", token.secret);
        assert_eq!(check(&token, &request(Some(&right))), Ok(()));
        let lower = format!("bearer {}", token.secret);
        assert_eq!(check(&token, &request(Some(&lower))), Ok(()));
        assert_eq!(check(&token, &request(None)), Err(Refusal::Missing));
        let other = BearerToken::generate().expect("token");
        let wrong = format!("Bearer {}", other.secret);
        assert_eq!(check(&token, &request(Some(&wrong))), Err(Refusal::Wrong));
        let basic = format!("Basic {}", token.secret);
        assert_eq!(check(&token, &request(Some(&basic))), Err(Refusal::Wrong));
        assert_eq!(check(&token, &request(Some("Bearer"))), Err(Refusal::Wrong));
        assert!(!format!("{token:?}").contains(&*token.secret));
    }

    #[test]
    fn a_written_token_is_owner_only_and_reads_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = token_path(dir.path(), 8808);
        let token = BearerToken::generate().expect("token");
        token.write_to(&path).expect("written");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(path.parent().expect("folder")).expect("meta");
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
        let back = BearerToken::from_file(&path).expect("read back");
        assert!(back.matches(&token.secret));
        std::fs::write(&path, "  \n").expect("write");
        assert!(BearerToken::from_file(&path).is_err());
    }
}
