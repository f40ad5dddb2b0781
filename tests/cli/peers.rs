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
    config: EtcdConfig,
    /// Every line it has written to stderr.
    log: Log,
    _dir: tempfile::TempDir,
}

/// How a test etcd serves clients: plain HTTP by default.
#[derive(Clone, Default)]
pub struct EtcdConfig {
    /// TLS on the client port with this certificate (which etcd's JSON gateway also shows
    /// when it connects to the member itself: give it client use too, `TestCa::member`).
    pub tls: Option<crate::certs::KeyPair>,
    /// Clients must show a certificate this authority signed (`--client-cert-auth`).
    pub client_ca: Option<PathBuf>,
    /// `--auth-token-ttl`: seconds an unused simple token lives.
    pub token_ttl: Option<u32>,
}

/// The lines a server wrote to stderr, as they come.
#[derive(Clone, Default)]
pub struct Log(std::sync::Arc<(std::sync::Mutex<Vec<String>>, std::sync::Condvar)>);

impl Log {
    fn push(&self, line: String) {
        let (lines, more) = &*self.0;
        if let Ok(mut lines) = lines.lock() {
            lines.push(line);
        }
        more.notify_all();
    }

    /// How many lines there are so far: a mark to wait for later ones from.
    pub fn mark(&self) -> usize {
        self.0.0.lock().map(|lines| lines.len()).unwrap_or(0)
    }

    /// Waits (within a minute) for a line after `mark` that holds every one of `needles`, and
    /// returns its number.
    pub fn wait_for(&self, mark: usize, needles: &[&str]) -> usize {
        let (lines, more) = &*self.0;
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut lines = lines.lock().expect("log");
        loop {
            if let Some(at) = lines
                .iter()
                .enumerate()
                .skip(mark)
                .find(|(_, line)| needles.iter().all(|n| line.contains(n)))
                .map(|(at, _)| at)
            {
                return at;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                !left.is_zero(),
                "no line with {needles:?} after line {mark}:\n{}",
                lines.join("\n")
            );
            lines = more.wait_timeout(lines, left).expect("log").0;
        }
    }

    /// Whether a line after `mark` holds every one of `needles`.
    pub fn has(&self, mark: usize, needles: &[&str]) -> bool {
        self.0
            .0
            .lock()
            .map(|lines| {
                lines
                    .iter()
                    .skip(mark)
                    .any(|line| needles.iter().all(|n| line.contains(n)))
            })
            .unwrap_or(false)
    }
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
        Self::start_with(EtcdConfig::default())
    }

    /// Starts one on a free loopback port, serving clients as `config` says.
    pub fn start_with(config: EtcdConfig) -> Self {
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
        let log = Log::default();
        let (child, address) = Self::spawn(&data, free_port(), &config, &log);
        EtcdServer {
            child,
            address,
            data,
            config,
            log,
            _dir: dir,
        }
    }

    /// What it has written to stderr.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Its client URL: `http://ADDRESS` or `https://ADDRESS`.
    pub fn client_url(&self) -> String {
        let scheme = if self.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.address)
    }

    /// `etcd://ADDRESS/PREFIX`.
    pub fn url(&self, prefix: &str) -> String {
        format!("etcd://{}/{prefix}", self.address)
    }

    fn spawn(data: &std::path::Path, port: u16, config: &EtcdConfig, log: &Log) -> (Child, String) {
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let client = format!("{scheme}://127.0.0.1:{port}");
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
        if let Some(tls) = &config.tls {
            command
                .arg("--cert-file")
                .arg(&tls.cert)
                .arg("--key-file")
                .arg(&tls.key);
        }
        if let Some(ca) = &config.client_ca {
            command
                .arg("--client-cert-auth")
                .arg("--trusted-ca-file")
                .arg(ca);
        }
        if let Some(ttl) = config.token_ttl {
            command.args([
                "--auth-token",
                "simple",
                "--auth-token-ttl",
                &ttl.to_string(),
            ]);
        }
        let mut child = command.spawn().expect("start etcd");
        let stderr = child.stderr.take().expect("stderr");
        let (ready, said) = mpsc::channel();
        let serving = if config.tls.is_some() {
            "serving client traffic securely"
        } else {
            "serving client traffic insecurely"
        };
        let log = log.clone();
        // Reads every line, so the pipe never fills; says once when clients are served.
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(serving) {
                    let _ = ready.send(Ok(()));
                }
                if lines.len() < 200 {
                    lines.push(line.clone());
                }
                log.push(line);
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
        let (child, _) = Self::spawn(&self.data, port, &self.config, &self.log);
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
    /// `127.0.0.1:PORT`.
    pub address: String,
    dir: tempfile::TempDir,
}

impl NatsServer {
    /// Starts one with JetStream on a port it picks itself.
    pub fn start() -> Self {
        Self::launch(|dir| Self::plain_args(dir, "-1"))
    }

    /// The arguments of a plain server on `port` keeping its store in `dir`.
    fn plain_args(dir: &std::path::Path, port: &str) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = ["-js", "-a", "127.0.0.1", "-p", port, "-sd"]
            .map(Into::into)
            .to_vec();
        args.push(dir.as_os_str().to_owned());
        args
    }

    /// Kills it (`kill -9`), keeping its store.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a server [`NatsServer::start`] made again, on the same port and store, as after
    /// a crash or an upgrade.
    pub fn restart(&mut self) {
        let port = self.address.rsplit_once(':').expect("a port").1.to_string();
        let args = Self::plain_args(self.dir.path(), &port);
        let (child, address) = Self::spawn(&args);
        assert_eq!(address, self.address, "the same port");
        self.child = child;
    }

    /// Starts one with JetStream on a loopback port it picks itself and `config` (the text of
    /// a nats-server configuration file: TLS, users, an operator) besides.
    pub fn start_with(config: &str) -> Self {
        Self::launch(|dir| {
            let file = dir.join("nats.conf");
            let store = dir.join("jetstream");
            std::fs::write(
                &file,
                format!(
                    "listen: 127.0.0.1:-1\njetstream {{ store_dir: {:?} }}\n{config}\n",
                    store.display().to_string()
                ),
            )
            .expect("write nats.conf");
            vec!["-c".into(), file.into_os_string()]
        })
    }

    fn launch(args: impl FnOnce(&std::path::Path) -> Vec<std::ffi::OsString>) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("forge-nats-")
            .tempdir()
            .expect("tempdir");
        let (child, address) = Self::spawn(&args(dir.path()));
        NatsServer {
            child,
            url: format!("nats://{address}"),
            address,
            dir,
        }
    }

    /// Starts nats-server with `args` and waits until it is ready; the child and the address
    /// it listens on.
    fn spawn(args: &[std::ffi::OsString]) -> (Child, String) {
        assert!(
            std::path::Path::new(NATS_SERVER).exists(),
            "{NATS_SERVER} is missing: `cargo xtask test` installs Debian's nats-server"
        );
        let mut child = Command::new(NATS_SERVER)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nats-server");
        let stderr = child.stderr.take().expect("stderr");
        let (ready, said) = mpsc::channel();
        std::thread::spawn(move || {
            let mut address = None;
            let mut lines = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("Listening for client connections on ") {
                    let found = line[at + "Listening for client connections on ".len()..].trim();
                    address = Some(found.to_string());
                }
                if line.contains("Server is ready")
                    && let Some(address) = address.take()
                {
                    let _ = ready.send(Ok(address));
                }
                if lines.len() < 200 {
                    lines.push(line);
                }
            }
            let _ = ready.send(Err(lines.join("\n")));
        });
        match said.recv_timeout(READY_WITHIN) {
            Ok(Ok(address)) => (child, address),
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
