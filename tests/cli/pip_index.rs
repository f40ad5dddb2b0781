//! A pip index on 127.0.0.1 for the package tests: pip's simple API over plain HTTP, serving
//! wheels the tests build themselves, and `forge-host` commands whose pip reads only it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::util::{Sandbox, repo};

/// How the index serves one file.
#[derive(Clone)]
pub(crate) struct Served {
    pub(crate) project: String,
    pub(crate) bytes: Vec<u8>,
    /// The sha256 the index page advertises (the real one unless a test lies).
    pub(crate) advertised: String,
    /// Close the connection after half the body.
    pub(crate) cut: bool,
}

/// pip's simple API on 127.0.0.1, serving what `files` holds at the moment of each request.
pub(crate) struct Index {
    pub(crate) port: u16,
    pub(crate) files: Arc<Mutex<BTreeMap<String, Served>>>,
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Index {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let files: Arc<Mutex<BTreeMap<String, Served>>> = Arc::default();
        let shared = files.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let files = shared.clone();
                std::thread::spawn(move || serve(stream, &files));
            }
        });
        Index { port, files }
    }

    /// Serves a pure wheel of `name` `version` that requires `requires` and holds `modules`.
    pub(crate) fn wheel(
        &self,
        name: &str,
        version: &str,
        requires: &[&str],
        modules: &[(&str, &str)],
    ) -> String {
        self.wheel_tagged(name, version, "py3-none-any", requires, modules)
    }

    pub(crate) fn wheel_tagged(
        &self,
        name: &str,
        version: &str,
        tag: &str,
        requires: &[&str],
        modules: &[(&str, &str)],
    ) -> String {
        let file_name = format!("{}-{version}-{tag}.whl", name.replace('-', "_"));
        let bytes = build_wheel(name, version, tag, requires, modules);
        let sha = sha256(&bytes);
        self.files.lock().expect("lock").insert(
            file_name.clone(),
            Served {
                project: name.to_string(),
                bytes,
                advertised: sha.clone(),
                cut: false,
            },
        );
        sha
    }

    pub(crate) fn change(&self, file_name: &str, change: impl FnOnce(&mut Served)) {
        let mut files = self.files.lock().expect("lock");
        change(files.get_mut(file_name).expect("served"));
    }
}

fn serve(stream: TcpStream, files: &Mutex<BTreeMap<String, Served>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
    let files = files.lock().expect("lock").clone();
    let mut stream = stream;
    let respond = |stream: &mut TcpStream, status: &str, kind: &str, body: &[u8], cut: bool| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(if cut { &body[..body.len() / 2] } else { body });
        let _ = stream.flush();
    };
    let not_found = |stream: &mut TcpStream| {
        respond(stream, "404 Not Found", "text/plain", b"not found", false)
    };
    if let Some(project) = path.strip_prefix("/simple/") {
        let project = project.trim_end_matches('/');
        let links: String = files
            .iter()
            .filter(|(_, s)| normalize(&s.project) == normalize(project))
            .map(|(f, s)| {
                format!(
                    "<a href=\"/files/{f}#sha256={}\">{f}</a><br>\n",
                    s.advertised
                )
            })
            .collect();
        if links.is_empty() {
            not_found(&mut stream);
        } else {
            let page = format!("<!DOCTYPE html><html><body>\n{links}</body></html>\n");
            respond(&mut stream, "200 OK", "text/html", page.as_bytes(), false);
        }
    } else if let Some(file) = path.strip_prefix("/files/") {
        match files.get(file) {
            Some(served) => respond(
                &mut stream,
                "200 OK",
                "application/octet-stream",
                &served.bytes,
                served.cut,
            ),
            None => not_found(&mut stream),
        }
    } else {
        not_found(&mut stream);
    }
}

fn normalize(name: &str) -> String {
    name.to_lowercase().replace(['_', '.'], "-")
}

fn build_wheel(
    name: &str,
    version: &str,
    tag: &str,
    requires: &[&str],
    modules: &[(&str, &str)],
) -> Vec<u8> {
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    for requirement in requires {
        metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    let dist_info = format!("{}-{version}.dist-info", name.replace('-', "_"));
    let wheel_file = format!(
        "Wheel-Version: 1.0\nGenerator: forge-host-tests\nRoot-Is-Purelib: {}\nTag: {tag}\n",
        tag.ends_with("-any")
    );
    let mut members: Vec<(String, String)> = modules
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
    members.push((format!("{dist_info}/METADATA"), metadata));
    members.push((format!("{dist_info}/WHEEL"), wheel_file));
    let record: String = members
        .iter()
        .map(|(path, _)| format!("{path},,\n"))
        .collect();
    members.push((
        format!("{dist_info}/RECORD"),
        record + &format!("{dist_info}/RECORD,,\n"),
    ));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, text) in &members {
        zip.start_file(
            path.as_str(),
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated),
        )
        .expect("member");
        zip.write_all(text.as_bytes()).expect("write");
    }
    zip.finish().expect("finish").into_inner()
}

/// The pip `cargo xtask` installs (its venv), for `FORGE_HOST_PIP`.
pub(crate) fn pip_command() -> String {
    let python = repo().join("target/python-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask build`",
        python.display()
    );
    format!("{} -m pip", python.display())
}

/// `forge-host ARGS` with pip reading only the loopback index (no config files, no cache).
pub(crate) fn forge_with_index(sandbox: &Sandbox, index: &Index, args: &[&str]) -> Output {
    command_with_index(sandbox, index, args)
        .output()
        .expect("run forge-host")
}

pub(crate) fn command_with_index(sandbox: &Sandbox, index: &Index, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("PIP_") {
            command.env_remove(key);
        }
    }
    command
        .env("FORGE_HOST_PIP", pip_command())
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env(
            "PIP_INDEX_URL",
            format!("http://127.0.0.1:{}/simple/", index.port),
        )
        .env("PIP_NO_CACHE_DIR", "1")
        .env("PIP_RETRIES", "0")
        .env("PIP_TIMEOUT", "10");
    command
}

/// alpha 1.0 needs beta, which needs gamma; delta stands alone.
pub(crate) fn chain(index: &Index) -> BTreeMap<&'static str, String> {
    let mut shas = BTreeMap::new();
    shas.insert(
        "alpha",
        index.wheel(
            "alpha",
            "1.0",
            &["beta>=1.0", "pytest; extra == \"test\""],
            &[(
                "alpha/__init__.py",
                "from beta import twice\ndef answer():\n    return twice(21)\n",
            )],
        ),
    );
    shas.insert(
        "beta",
        index.wheel(
            "beta",
            "1.0",
            &["gamma"],
            &[(
                "beta/__init__.py",
                "import gamma\ndef twice(x):\n    return gamma.times(x, 2)\n",
            )],
        ),
    );
    shas.insert(
        "gamma",
        index.wheel(
            "gamma",
            "1.0",
            &[],
            &[("gamma.py", "def times(x, n):\n    return x * n\n")],
        ),
    );
    shas.insert(
        "delta",
        index.wheel("delta", "1.0", &[], &[("delta/__init__.py", "X = 1\n")]),
    );
    shas
}
