//! `forge-host packages` (issue 13) against a loopback package index this test serves itself
//! (pip's simple API over plain HTTP on 127.0.0.1, wheels built here), and once against the
//! machine's own pip configuration (PyPI). pip runs from the venv `cargo xtask` builds.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::util::{NO_ARGS, Sandbox, args, repo};

/// How the index serves one file.
#[derive(Clone)]
struct Served {
    project: String,
    bytes: Vec<u8>,
    /// The sha256 the index page advertises (the real one unless a test lies).
    advertised: String,
    /// Close the connection after half the body.
    cut: bool,
}

/// pip's simple API on 127.0.0.1, serving what `files` holds at the moment of each request.
struct Index {
    port: u16,
    files: Arc<Mutex<BTreeMap<String, Served>>>,
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Index {
    fn start() -> Self {
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
    fn wheel(
        &self,
        name: &str,
        version: &str,
        requires: &[&str],
        modules: &[(&str, &str)],
    ) -> String {
        self.wheel_tagged(name, version, "py3-none-any", requires, modules)
    }

    fn wheel_tagged(
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

    fn change(&self, file_name: &str, change: impl FnOnce(&mut Served)) {
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
fn pip_command() -> String {
    let python = repo().join("target/python-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask build`",
        python.display()
    );
    format!("{} -m pip", python.display())
}

/// `forge-host ARGS` with pip reading only the loopback index (no config files, no cache).
fn forge_with_index(sandbox: &Sandbox, index: &Index, args: &[&str]) -> Output {
    command_with_index(sandbox, index, args)
        .output()
        .expect("run forge-host")
}

fn command_with_index(sandbox: &Sandbox, index: &Index, args: &[&str]) -> Command {
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

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(output)))
}

/// The sha256 folders of the data directory's package store.
fn stored(sandbox: &Sandbox) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(sandbox.data_dir().join("packages"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.len() == 64)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn lock_text(sandbox: &Sandbox) -> Option<String> {
    std::fs::read_to_string(sandbox.data_dir().join("pyodide-lock.json")).ok()
}

/// alpha 1.0 needs beta, which needs gamma; delta stands alone.
fn chain(index: &Index) -> BTreeMap<&'static str, String> {
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

const USES_ALPHA: &str = "import forge, os, sys\nimport alpha\n\
ro = False\ntry:\n    open('/packages/alpha/x', 'w')\nexcept OSError:\n    ro = True\n\
forge.result({'answer': alpha.answer(), 'delta': os.path.exists('/packages/delta'), 'read_only': ro,\n\
              'from': alpha.__file__})\n";

#[test]
fn a_run_mounts_exactly_the_locked_packages_its_imports_need() {
    let index = Index::start();
    let shas = chain(&index);
    let sandbox = Sandbox::new();
    let added = forge_with_index(
        &sandbox,
        &index,
        &["packages", "add", "alpha==1.0", "delta", "--json"],
    );
    assert!(added.status.success(), "{}", text(&added));
    let added = json_of(&added);
    let locked: BTreeMap<String, String> = added["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_string(),
                p["sha256"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expected: BTreeMap<String, String> = shas
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    assert_eq!(
        locked, expected,
        "every file pinned by the sha256 of what the index served"
    );
    assert_eq!(
        stored(&sandbox),
        expected
            .values()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    let lock: Value = serde_json::from_str(&lock_text(&sandbox).expect("lock")).expect("json");
    assert_eq!(lock["info"]["python"], "3.14");
    assert_eq!(
        lock["packages"]["alpha"]["depends"],
        serde_json::json!(["beta"]),
        "extras are not dependencies"
    );
    assert_eq!(
        lock["packages"]["gamma"]["imports"],
        serde_json::json!(["gamma"])
    );

    let report = sandbox.run_py(USES_ALPHA, NO_ARGS).assert_succeeded();
    assert_eq!(report["value"]["answer"], 42);
    assert_eq!(
        report["value"]["delta"], false,
        "only what the imports need is mounted"
    );
    assert_eq!(report["value"]["read_only"], true);
    let id = report["id"].as_str().expect("id").to_string();
    let journal = sandbox.forge(&args!["journal", "show", &id, "--json"]);
    let record: Value = serde_json::from_str(&journal.stdout()).expect("journal json");
    let mounted: Vec<(String, String)> = record["packages"]
        .as_array()
        .unwrap_or_else(|| panic!("no packages in {record:#}"))
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().into(),
                p["sha256"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        mounted,
        [
            ("gamma", &shas["gamma"]),
            ("beta", &shas["beta"]),
            ("alpha", &shas["alpha"])
        ]
        .map(|(n, s)| (n.to_string(), s.clone()))
    );

    // provenance.json names them too.
    let out = sandbox.data_dir().join("published");
    let script = sandbox.script("publish.py", "import forge, alpha\nopen('/output/a.txt', 'w').write(str(alpha.answer()))\nforge.result(1)\n");
    let run = sandbox.forge(&args!["run", &script, "--out", &out, "--json"]);
    run.assert_succeeded();
    let provenance: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("provenance.json")).expect("provenance"),
    )
    .expect("json");
    assert_eq!(provenance["packages"][2]["name"], "alpha");
    assert_eq!(provenance["packages"][2]["version"], "1.0");
    assert_eq!(provenance["packages"][2]["sha256"], shas["alpha"].as_str());

    // Offline: in a network namespace with no network, pip cannot reach the index, and runs
    // and reruns still work.
    let offline = |args: &[&str]| -> Output {
        let command = command_with_index(&sandbox, &index, &[]);
        let program = command.get_program().to_owned();
        let mut unshared = Command::new("unshare");
        unshared.arg("-n").arg(program).args(args);
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => unshared.env(key, value),
                None => unshared.env_remove(key),
            };
        }
        unshared.current_dir(sandbox.data_dir().parent().expect("sandbox"));
        unshared.output().expect("unshare -n (needs root)")
    };
    let no_network = offline(&["packages", "add", "delta==1.0"]);
    assert!(
        !no_network.status.success(),
        "pip reached the index inside unshare -n: {}",
        text(&no_network)
    );
    let script = sandbox.script("offline.py", USES_ALPHA);
    let run = offline(&["run", script.to_str().expect("utf-8"), "--json"]);
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(json_of(&run)["value"]["answer"], 42);
    let rerun = offline(&["rerun", &id, "--json"]);
    assert!(rerun.status.success(), "{}", text(&rerun));
    assert_eq!(json_of(&rerun)["value"]["answer"], 42);
}

#[test]
fn a_bad_download_leaves_the_store_and_the_lock_as_they_were() {
    let index = Index::start();
    let sandbox = Sandbox::new();
    index.wheel("good", "1.0", &[], &[("good.py", "X = 1\n")]);
    let ok = forge_with_index(&sandbox, &index, &["packages", "add", "good"]);
    assert!(ok.status.success(), "{}", text(&ok));
    let lock_before = lock_text(&sandbox).expect("lock");
    let store_before = stored(&sandbox);

    // The index advertises a sha256 the file does not have.
    index.wheel("liar", "1.0", &[], &[("liar.py", "")]);
    index.change("liar-1.0-py3-none-any.whl", |s| {
        s.advertised = "0".repeat(64)
    });
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "liar"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("PACKAGE_UNAVAILABLE"),
        "{}",
        text(&refused)
    );
    assert!(
        text(&refused).to_lowercase().contains("hash"),
        "{}",
        text(&refused)
    );

    // The download is cut in the middle.
    index.wheel(
        "cut",
        "1.0",
        &[],
        &[("cut.py", &"# padding\n".repeat(5000))],
    );
    index.change("cut-1.0-py3-none-any.whl", |s| s.cut = true);
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "cut"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("PACKAGE_UNAVAILABLE"),
        "{}",
        text(&refused)
    );

    // Only a native wheel.
    index.wheel_tagged(
        "native",
        "1.0",
        "cp314-cp314-manylinux_2_17_x86_64",
        &[],
        &[("native.py", "")],
    );
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "native"]);
    assert!(!refused.status.success());
    assert!(text(&refused).contains("native code"), "{}", text(&refused));

    // A dependency with only a native wheel: refused, naming who needs it.
    index.wheel(
        "needs-native",
        "1.0",
        &["native"],
        &[("needs_native.py", "")],
    );
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "needs-native"]);
    let said = text(&refused);
    assert!(
        said.contains("native") && said.contains("needed by"),
        "{said}"
    );

    // The index now serves other bytes for the locked version.
    index.wheel(
        "good",
        "1.0",
        &[],
        &[("good.py", "X = 2  # not what was locked\n")],
    );
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "good==1.0"]);
    let said = text(&refused);
    assert!(
        !refused.status.success() && said.contains("the lock pins"),
        "{said}"
    );

    // numpy is built into a profile: said before pip runs.
    let refused = forge_with_index(&sandbox, &index, &["packages", "add", "numpy"]);
    assert!(
        text(&refused)
            .contains("built into python-science; run `cargo xtask build --profile science`"),
        "{}",
        text(&refused)
    );

    assert_eq!(
        lock_text(&sandbox).as_deref(),
        Some(lock_before.as_str()),
        "the lock is unchanged"
    );
    assert_eq!(stored(&sandbox), store_before, "nothing new in the store");
    let staging = sandbox.data_dir().join("packages/.staging");
    let left = std::fs::read_dir(&staging).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "nothing half-written in {}", staging.display());
}

#[test]
fn a_changed_store_file_stops_the_run_and_verify_quarantines_it() {
    let index = Index::start();
    let shas = chain(&index);
    let sandbox = Sandbox::new();
    assert!(
        forge_with_index(&sandbox, &index, &["packages", "add", "alpha"])
            .status
            .success()
    );
    let wheel = sandbox
        .data_dir()
        .join("packages")
        .join(&shas["gamma"])
        .join("gamma-1.0-py3-none-any.whl");
    sandbox.run_py(USES_ALPHA, NO_ARGS).assert_succeeded();
    let mut bytes = std::fs::read(&wheel).expect("stored wheel");
    bytes.push(b'!');
    std::fs::write(&wheel, &bytes).expect("tamper");

    let run = sandbox.run_py(USES_ALPHA, NO_ARGS);
    assert_eq!(run.error_code(), "PACKAGE_UNAVAILABLE", "{}", run.stderr());
    let message = run.report()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains(wheel.to_str().expect("utf-8")),
        "{message}"
    );
    assert!(
        message.contains(&shas["gamma"]) && message.contains(&sha256(&bytes)),
        "{message}"
    );
    assert_eq!(run.report()["status"], "failed");

    let verify = sandbox.forge(&args!["packages", "verify"]);
    assert_eq!(verify.code(), 1, "{}", verify.stdout());
    assert!(verify.stdout().contains("MISMATCH"), "{}", verify.stdout());
    assert!(!wheel.exists(), "moved to quarantine");
    let run = sandbox.run_py(USES_ALPHA, NO_ARGS);
    let message = run.report()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("forge-host packages add gamma==1.0"),
        "{message}"
    );
    assert!(
        forge_with_index(&sandbox, &index, &["packages", "add", "gamma==1.0"])
            .status
            .success()
    );
    sandbox.run_py(USES_ALPHA, NO_ARGS).assert_succeeded();
    assert_eq!(sandbox.forge(&args!["packages", "verify"]).code(), 0);
}

#[test]
fn rerun_refuses_when_a_package_changed() {
    let index = Index::start();
    chain(&index);
    let sandbox = Sandbox::new();
    let lock = sandbox.data_dir().join("project/pyodide-lock.json");
    let lock_arg = lock.to_str().expect("utf-8");
    assert!(
        forge_with_index(
            &sandbox,
            &index,
            &["packages", "add", "alpha", "--lock", lock_arg]
        )
        .status
        .success()
    );
    assert!(lock.exists(), "--lock names the file written");
    assert!(
        lock_text(&sandbox).is_none(),
        "the data directory's lock is left alone"
    );
    // Without --lock the data directory's (empty) lock is used, and the import is missing.
    let missing = sandbox.run_py(USES_ALPHA, NO_ARGS);
    assert_eq!(missing.error_code(), "PACKAGE_UNAVAILABLE");
    let message = missing.report()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("forge-host packages add alpha"),
        "{message}"
    );

    let report = sandbox
        .run_py(USES_ALPHA, &args!["--lock", &lock])
        .assert_succeeded();
    let id = report["id"].as_str().expect("id").to_string();
    assert_eq!(
        sandbox.forge(&args!["rerun", &id, "--json"]).report()["value"]["answer"],
        42
    );

    index.wheel(
        "gamma",
        "2.0",
        &[],
        &[("gamma.py", "def times(x, n):\n    return x * n * 10\n")],
    );
    let upgraded = forge_with_index(
        &sandbox,
        &index,
        &["packages", "add", "gamma==2.0", "--lock", lock_arg],
    );
    assert!(upgraded.status.success(), "{}", text(&upgraded));
    let rerun = sandbox.forge(&args!["rerun", &id, "--json"]);
    assert_eq!(rerun.code(), 2, "{}", rerun.stderr());
    assert!(
        rerun
            .stderr()
            .contains("package `gamma` changed since the first run"),
        "{}",
        rerun.stderr()
    );
    // A new run takes the new version.
    let report = sandbox
        .run_py(USES_ALPHA, &args!["--lock", &lock])
        .assert_succeeded();
    assert_eq!(report["value"]["answer"], 420);
}

#[test]
fn two_adds_at_once_both_land_and_remove_keeps_the_lock_whole() {
    let index = Index::start();
    chain(&index);
    let sandbox = Sandbox::new();
    let first = command_with_index(&sandbox, &index, &["packages", "add", "alpha"])
        .spawn()
        .expect("spawn");
    let second = command_with_index(&sandbox, &index, &["packages", "add", "delta"])
        .spawn()
        .expect("spawn");
    for child in [first, second] {
        let output = child.wait_with_output().expect("wait");
        assert!(output.status.success(), "{}", text(&output));
    }
    let list = sandbox.forge(&args!["packages", "list", "--json"]);
    let names: Vec<String> =
        serde_json::from_str::<Value>(&list.stdout()).expect("json")["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| p["name"].as_str().unwrap_or_default().to_string())
            .collect();
    assert_eq!(names, ["alpha", "beta", "delta", "gamma"]);

    let refused = sandbox.forge(&args!["packages", "remove", "gamma"]);
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
    assert!(
        refused.stderr().contains("needed by beta"),
        "{}",
        refused.stderr()
    );
    let removed = sandbox.forge(&args!["packages", "remove", "delta"]);
    assert_eq!(removed.code(), 0, "{}", removed.stderr());
    assert!(
        !sandbox
            .forge(&args!["packages", "list"])
            .stdout()
            .contains("delta")
    );
    let unknown = sandbox.forge(&args!["packages", "remove", "nothing-here"]);
    assert_eq!(unknown.code(), 1);
}

#[test]
fn import_lock_brings_in_the_pure_python_entries_of_a_pyodide_lock() {
    let index = Index::start();
    let shas = chain(&index);
    let sandbox = Sandbox::new();
    let pyodide_lock = serde_json::json!({
        "info": {"arch": "wasm32", "platform": "emscripten_5_0_3", "version": "0.29.0", "python": "3.14.2"},
        "packages": {
            "gamma": {"name": "gamma", "version": "1.0", "file_name": "gamma-1.0-py3-none-any.whl",
                      "install_dir": "site", "sha256": shas["gamma"], "package_type": "package",
                      "imports": ["gamma"], "depends": []},
            "beta": {"name": "beta", "version": "1.0", "file_name": "beta-1.0-py3-none-any.whl",
                     "install_dir": "site", "sha256": "1".repeat(64), "package_type": "package",
                     "imports": ["beta"], "depends": ["gamma", "numpy"]},
            "native": {"name": "native", "version": "1.0",
                       "file_name": "native-1.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
                       "install_dir": "site", "sha256": "2".repeat(64), "package_type": "package",
                       "imports": ["native"], "depends": []},
            "libfoo": {"name": "libfoo", "version": "1.0", "file_name": "libfoo-1.0.zip",
                       "install_dir": "dynlib", "sha256": "3".repeat(64), "package_type": "shared_library",
                       "imports": [], "depends": []}
        }
    });
    let path = sandbox.script("pyodide-lock.json", &pyodide_lock.to_string());
    let imported = forge_with_index(
        &sandbox,
        &index,
        &[
            "packages",
            "import-lock",
            path.to_str().expect("utf-8"),
            "--json",
        ],
    );
    assert!(imported.status.success(), "{}", text(&imported));
    let imported = json_of(&imported);
    let by_name = |name: &str| -> Value {
        imported["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing from {imported:#}"))
    };
    assert_eq!(by_name("gamma")["sha256"], shas["gamma"].as_str());
    assert_eq!(
        by_name("gamma")["pyodide_sha256"],
        Value::Null,
        "the same file"
    );
    assert_eq!(by_name("beta")["sha256"], shas["beta"].as_str());
    assert_eq!(
        by_name("beta")["pyodide_sha256"],
        "1".repeat(64),
        "Pyodide's rebuild is recorded"
    );
    assert_eq!(by_name("beta")["depends"], serde_json::json!(["gamma"]));
    let skipped: Vec<&str> = imported["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        skipped.contains(&"native") && skipped.contains(&"libfoo"),
        "{skipped:?}"
    );
    let notes = imported["notes"].to_string();
    assert!(
        notes.contains("rebuild") && notes.contains("numpy"),
        "{notes}"
    );
    let report = sandbox
        .run_py("import forge, beta\nforge.result(beta.twice(5))\n", NO_ARGS)
        .assert_succeeded();
    assert_eq!(report["value"], 10);
}

/// The real thing, through the machine's own pip configuration (PyPI here): the packages an
/// analyst reaches for next, each imported and used, and `pd.read_excel` of an `.xlsx` input
/// in python-science with openpyxl mounted.
#[test]
fn real_packages_from_the_machines_pip_configuration() {
    let sandbox = Sandbox::new();
    let add = sandbox
        .command(&[
            "packages",
            "add",
            "tabulate==0.9.0",
            "openpyxl",
            "jinja2",
            "networkx",
            "--json",
        ])
        .env("FORGE_HOST_PIP", pip_command())
        .output()
        .expect("run forge-host");
    assert!(add.status.success(), "{}", text(&add));
    let names: Vec<String> = json_of(&add)["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            p["name"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
                .replace('_', "-")
        })
        .collect();
    for name in [
        "tabulate",
        "openpyxl",
        "et-xmlfile",
        "jinja2",
        "markupsafe",
        "networkx",
    ] {
        assert!(
            names.contains(&name.to_string()),
            "{name} missing from {names:?}"
        );
    }

    let script = "import forge\nfrom tabulate import tabulate\nimport jinja2, markupsafe\nimport networkx as nx\n\
import openpyxl\n\
wb = openpyxl.Workbook()\nwb.active.append(['region', 'sales'])\nwb.active.append(['north', 12])\nwb.active.append(['south', 30])\n\
wb.save('/output/sales.xlsx')\n\
g = nx.Graph([(1, 2), (2, 3)])\n\
forge.result({'table': tabulate([['a', 1]], headers=['k', 'v']),\n\
  'html': jinja2.Template('<p>{{ x }}</p>').render(x=markupsafe.Markup('<b>') + '<i>'),\n\
  'path': nx.shortest_path(g, 1, 3)})\n";
    let out = sandbox.data_dir().join("xlsx");
    let report = sandbox
        .run_py(script, &args!["--out", &out])
        .assert_succeeded();
    assert_eq!(report["value"]["table"], "k      v\n---  ---\na      1");
    assert_eq!(report["value"]["html"], "<p><b>&lt;i&gt;</p>");
    assert_eq!(report["value"]["path"], serde_json::json!([1, 2, 3]));

    let science = "import forge\nimport pandas as pd\nimport openpyxl\n\
df = pd.read_excel('/input/sales.xlsx')\nforge.result({'total': int(df['sales'].sum()), 'engine': 'ok'})\n";
    let report = sandbox
        .run_py(science, &args!["--input", &out.join("sales.xlsx")])
        .assert_succeeded();
    assert_eq!(report["engine"], "python-science");
    assert_eq!(report["value"]["total"], 42);
}
