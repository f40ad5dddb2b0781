//! Real servers the distributed tests run against, on loopback, with data in temporary folders:
//! etcd and NATS with JetStream (Debian's `etcd-server` and `nats-server`, installed by `cargo
//! xtask test`). Each is ready when it says so on stderr; nothing is retried on a timer.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The longest a server may take to say it is ready.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// Where Debian installs etcd.
const ETCD: &str = "/usr/bin/etcd";

/// One etcd member, killed when dropped.
pub struct EtcdServer {
    child: Child,
    /// `127.0.0.1:PORT` of its client port.
    pub address: String,
    data: PathBuf,
    _dir: tempfile::TempDir,
}

/// A loopback port nothing listens on now (etcd's JSON gateway needs a concrete client port).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

impl EtcdServer {
    /// Starts one on a free loopback port.
    pub fn start() -> Self {
        assert!(
            std::path::Path::new(ETCD).exists(),
            "{ETCD} is missing: `cargo xtask test` installs Debian's etcd-server"
        );
        // Under /dev/shm when it exists: etcd fsyncs every write, and the tests need no disk.
        let dir = tempfile::Builder::new()
            .prefix("forge-etcd-")
            .tempdir_in(if std::path::Path::new("/dev/shm").is_dir() {
                "/dev/shm"
            } else {
                "/tmp"
            })
            .expect("tempdir");
        let data = dir.path().join("data");
        let (child, address) = Self::spawn(&data, free_port());
        EtcdServer {
            child,
            address,
            data,
            _dir: dir,
        }
    }

    /// `etcd://ADDRESS/PREFIX`.
    pub fn url(&self, prefix: &str) -> String {
        format!("etcd://{}/{prefix}", self.address)
    }

    fn spawn(data: &std::path::Path, port: u16) -> (Child, String) {
        let client = format!("http://127.0.0.1:{port}");
        let mut command = Command::new(ETCD);
        // etcd reads ETCD_* variables as flags.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("ETCD_") {
                command.env_remove(name);
            }
        }
        command
            .args(["--name", "forge-test", "--data-dir"])
            .arg(data)
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                "http://127.0.0.1:0",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:0",
                "--initial-cluster",
                "forge-test=http://127.0.0.1:0",
                "--logger",
                "zap",
                "--log-outputs",
                "stderr",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start etcd");
        let stderr = child.stderr.take().expect("stderr");
        let (ready, said) = mpsc::channel();
        // Reads every line, so the pipe never fills; says once when clients are served.
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("serving client traffic insecurely") {
                    let _ = ready.send(Ok(()));
                }
                if lines.len() < 200 {
                    lines.push(line);
                }
            }
            let _ = ready.send(Err(lines.join("\n")));
        });
        match said.recv_timeout(READY_WITHIN) {
            Ok(Ok(())) => (child, format!("127.0.0.1:{port}")),
            Ok(Err(log)) => panic!("etcd ended before it served clients:\n{log}"),
            Err(_) => {
                let _ = child.kill();
                panic!("etcd did not serve clients within {READY_WITHIN:?}")
            }
        }
    }

    /// Kills it (`kill -9`), keeping its data.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port and data.
    pub fn restart(&mut self) {
        let port = self
            .address
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse().ok())
            .expect("port");
        let (child, _) = Self::spawn(&self.data, port);
        self.child = child;
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Where Debian installs nats-server.
const NATS_SERVER: &str = "/usr/sbin/nats-server";

/// One `nats-server -js`, killed when dropped.
pub struct NatsServer {
    child: Child,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
    _dir: tempfile::TempDir,
}

impl NatsServer {
    /// Starts one with JetStream on a port it picks itself.
    pub fn start() -> Self {
        assert!(
            std::path::Path::new(NATS_SERVER).exists(),
            "{NATS_SERVER} is missing: `cargo xtask test` installs Debian's nats-server"
        );
        let dir = tempfile::Builder::new()
            .prefix("forge-nats-")
            .tempdir()
            .expect("tempdir");
        let mut child = Command::new(NATS_SERVER)
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nats-server");
        let stderr = child.stderr.take().expect("stderr");
        let (ready, said) = mpsc::channel();
        std::thread::spawn(move || {
            let mut url = None;
            let mut lines = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("Listening for client connections on ") {
                    let address = line[at + "Listening for client connections on ".len()..].trim();
                    url = Some(format!("nats://{address}"));
                }
                if line.contains("Server is ready")
                    && let Some(url) = url.take()
                {
                    let _ = ready.send(Ok(url));
                }
                if lines.len() < 200 {
                    lines.push(line);
                }
            }
            let _ = ready.send(Err(lines.join("\n")));
        });
        match said.recv_timeout(READY_WITHIN) {
            Ok(Ok(url)) => NatsServer {
                child,
                url,
                _dir: dir,
            },
            Ok(Err(log)) => panic!("nats-server ended before it was ready:\n{log}"),
            Err(_) => {
                let _ = child.kill();
                panic!("nats-server was not ready within {READY_WITHIN:?}")
            }
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
