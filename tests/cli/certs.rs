//! Certificates a test makes for itself with Debian's `openssl` (installed by `cargo xtask
//! test`): a certificate authority, server certificates for loopback, and client certificates
//! for mutual TLS. Nothing is fetched, and every key is new for each test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A certificate and its private key, as PEM files.
#[derive(Clone)]
pub struct KeyPair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The names a server certificate is good for: loopback only.
const LOOPBACK_NAMES: &str = "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost";

/// A throwaway certificate authority in a folder of its own, removed when dropped.
pub struct TestCa {
    dir: tempfile::TempDir,
    /// The authority's own certificate (what a client trusts).
    pub cert: PathBuf,
    key: PathBuf,
}

fn openssl(args: &[&str], at: &Path) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(at)
        .output()
        .expect("openssl is a test peer `cargo xtask test` installs");
    assert!(
        output.status.success(),
        "openssl {args:?}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

impl TestCa {
    /// A new authority, named `name`.
    pub fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("forge-ca-")
            .tempdir()
            .expect("tempdir");
        let (cert, key) = (dir.path().join("ca.pem"), dir.path().join("ca.key"));
        openssl(
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN={name}"),
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
            dir.path(),
        );
        TestCa { dir, cert, key }
    }

    /// A server certificate for `127.0.0.1`, `::1` and `localhost`, signed by this authority.
    pub fn server(&self, name: &str) -> KeyPair {
        self.issue(name, &format!("/CN={name}"), "serverAuth", LOOPBACK_NAMES)
    }

    /// A certificate for an etcd member on loopback: a server's that is a client's too, since
    /// etcd's JSON gateway shows it when it connects to its own member (a member that verifies
    /// clients refuses it otherwise).
    pub fn member(&self, name: &str) -> KeyPair {
        self.issue(
            name,
            &format!("/CN={name}"),
            "serverAuth,clientAuth",
            LOOPBACK_NAMES,
        )
    }

    /// A client certificate whose common name is `user` (etcd takes it as the user name).
    #[allow(dead_code, reason = "for the cluster's mutual-TLS tests")]
    pub fn client(&self, user: &str) -> KeyPair {
        self.issue(user, &format!("/CN={user}"), "clientAuth", "")
    }

    /// A client certificate with no common name (subject `O=label`): etcd 3.4's JSON gateway
    /// refuses one with a common name when the member verifies clients, since it could not pass
    /// the name on as the user.
    pub fn anonymous_client(&self, label: &str) -> KeyPair {
        self.issue(label, &format!("/O={label}"), "clientAuth", "")
    }

    fn issue(&self, name: &str, subject: &str, usage: &str, alt_names: &str) -> KeyPair {
        let at = self.dir.path();
        let extensions = format!(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n\
extendedKeyUsage={usage}\n{alt_names}\n"
        );
        let ext = format!("{name}.ext");
        std::fs::write(at.join(&ext), extensions).expect("write");
        let (key, csr, cert) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
        );
        openssl(
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-subj",
                subject,
                "-keyout",
                &key,
                "-out",
                &csr,
            ],
            at,
        );
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &self.cert.display().to_string(),
                "-CAkey",
                &self.key.display().to_string(),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &ext,
                "-out",
                &cert,
            ],
            at,
        );
        KeyPair {
            cert: at.join(cert),
            key: at.join(key),
        }
    }
}
