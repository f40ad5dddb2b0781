//! An authenticated, encrypted cluster (issue 26 §3), and a worker that holds no more of a
//! request than its limits allow (§4): nats-servers started here with TLS and users, with a
//! token, and in operator mode with a `.creds` user; workers and `submit` work with the right
//! credentials, fail clearly with wrong ones, and no password, token or seed is in any output,
//! journal, report or task log. Plain text to an address that is not loopback is refused without
//! `--insecure`, checked in a network namespace of its own (`unshare -n`), where nothing could
//! leave this machine even if it were not refused.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::certs::{KeyPair, TestCa};
use crate::peers::NatsServer;
use crate::util::Sandbox;
use crate::workers::Worker;

/// `forge-host ARGS` in `sandbox` with `env`.
fn forge_env(sandbox: &Sandbox, args: &[&OsStr], env: &[(&str, &str)]) -> Output {
    let mut command = sandbox.command(args);
    command.envs(env.iter().copied()).stdin(Stdio::null());
    let child = command.spawn().expect("run forge-host");
    crate::util::finish_within(child, crate::util::FORGE_LIMIT, "forge-host")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Panics if any of `secrets` is in `haystack`, or in a file under any of `dirs` (the
/// journal's database, task logs, reports, blobs: every byte).
pub fn assert_no_secret(secrets: &[&str], haystack: &str, dirs: &[&Path]) {
    for secret in secrets {
        assert!(
            !haystack.contains(secret),
            "a secret is in the output:\n{haystack}"
        );
    }
    let mut pending: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("list").flatten() {
                pending.push(entry.path());
            }
        } else if let Ok(bytes) = std::fs::read(&path) {
            for secret in secrets {
                let found = bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes());
                assert!(!found, "a secret is in {}", path.display());
            }
        }
    }
}

/// `nats-server` config lines for TLS with `server`'s certificate; `verify`: clients must show
/// one `ca` signed.
fn tls_config(ca: &TestCa, server: &KeyPair, verify: bool) -> String {
    format!(
        "tls {{\n  cert_file: {:?}\n  key_file: {:?}\n  ca_file: {:?}\n  verify: {verify}\n}}\n",
        server.cert.display().to_string(),
        server.key.display().to_string(),
        ca.cert.display().to_string(),
    )
}

/// The password of the TLS tests, and how it is written in a URL.
const PASSWORD: &str = "pa@ss:w0rd/42";
const PASSWORD_IN_URL: &str = "pa%40ss%3Aw0rd%2F42";

#[test]
fn nats_with_tls_and_users_serves_the_right_password_and_refuses_wrong_ones() {
    let ca = TestCa::new("forge-nats-ca");
    let server = ca.server("nats");
    let client = ca.client("alice");
    let nats = NatsServer::start_with(&format!(
        "{}authorization {{ users = [ {{ user: alice, password: {PASSWORD:?} }} ] }}\n",
        tls_config(&ca, &server, true)
    ));
    let url = format!("tls://alice:{PASSWORD_IN_URL}@{}", nats.address);
    let tls: Vec<OsString> = vec![
        "--nats-ca".into(),
        ca.cert.clone().into(),
        "--nats-cert".into(),
        client.cert.clone().into(),
        "--nats-key".into(),
        client.key.clone().into(),
    ];
    let tls: Vec<&OsStr> = tls.iter().map(OsString::as_os_str).collect();
    // The worker takes its URL (with the password) from the environment.
    let mut worker_args = vec![OsStr::new("--name"), OsStr::new("tls-worker")];
    worker_args.extend(&tls);
    let worker = Worker::with_env(&worker_args, &[("FORGE_HOST_NATS", url.as_str())]);
    assert!(
        worker
            .stderr()
            .contains(&format!("of tls://alice:***@{}", nats.address)),
        "{}",
        worker.stderr()
    );
    // `submit` takes it from the command line (what `ps` would show: discouraged, still redacted).
    let sandbox = Sandbox::new();
    let mut args: Vec<&OsStr> = [
        "submit",
        "-e",
        "return 6 * 7",
        "--lang",
        "js",
        "--json",
        "--nats",
    ]
    .map(OsStr::new)
    .to_vec();
    args.push(OsStr::new(&url));
    args.extend(&tls);
    let ran = forge_env(&sandbox, &args, &[]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    let report: Value = serde_json::from_slice(&ran.stdout).expect("report");
    assert_eq!(report["value"], 42, "{report:#}");
    let id = report["id"].as_str().expect("id").to_string();
    let mut everything = text(&ran);

    // A wrong password: refused, said so, exit 2, and neither password is shown.
    let wrong = format!("tls://alice:not-{PASSWORD_IN_URL}@{}", nats.address);
    let mut args: Vec<&OsStr> = ["submit", "-e", "return 1", "--lang", "js", "--json"]
        .map(OsStr::new)
        .to_vec();
    args.extend(&tls);
    let refused = forge_env(&sandbox, &args, &[("FORGE_HOST_NATS", wrong.as_str())]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("refused the credentials (a user and password)"),
        "{}",
        text(&refused)
    );
    everything.push_str(&text(&refused));

    // No client certificate for a server that verifies clients, and no CA for its certificate.
    let only_ca: Vec<&OsStr> = tls[..2].to_vec();
    let no_ca: Vec<&OsStr> = tls[2..].to_vec();
    for missing in [only_ca, no_ca] {
        let mut args: Vec<&OsStr> = ["journal", "list", "--json", "--nats"]
            .map(OsStr::new)
            .to_vec();
        args.extend(missing);
        let failed = forge_env(&sandbox, &args, &[("FORGE_HOST_NATS", url.as_str())]);
        assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));
        assert!(
            text(&failed).contains("the TLS handshake with NATS"),
            "{}",
            text(&failed)
        );
        everything.push_str(&text(&failed));
    }

    // The merged journal, read with a bare --nats (the URL from the environment).
    let mut args: Vec<&OsStr> = ["journal", "list", "--json", "--nats"]
        .map(OsStr::new)
        .to_vec();
    args.extend(&tls);
    let listed = forge_env(&sandbox, &args, &[("FORGE_HOST_NATS", url.as_str())]);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed));
    let merged: Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert!(
        merged
            .as_array()
            .is_some_and(|records| records.iter().any(|r| r["id"] == id.as_str())),
        "{merged:#}"
    );
    everything.push_str(&text(&listed));
    // The worker's own journal, report and task log.
    for args in [
        vec!["journal", "show", &id, "--json"],
        vec!["journal", "list", "--json"],
        vec!["logs", &id],
    ] {
        let shown = worker.sandbox.forge(&args);
        everything.push_str(&shown.stdout());
        everything.push_str(&shown.stderr());
    }
    everything.push_str(&worker.stderr());
    assert_no_secret(
        &[PASSWORD, PASSWORD_IN_URL],
        &everything,
        &[&worker.sandbox.data_dir(), &sandbox.data_dir()],
    );
}

#[test]
fn a_token_in_the_url_lets_workers_and_submit_in_and_a_wrong_one_is_refused() {
    let token = "t0k3n-for-forge";
    let nats = NatsServer::start_with(&format!("authorization {{ token: {token:?} }}\n"));
    let url = format!("nats://{token}@{}", nats.address);
    let worker = Worker::with_env(&[], &[("FORGE_HOST_NATS", url.as_str())]);
    assert!(
        worker
            .stderr()
            .contains(&format!("of nats://***@{}", nats.address))
    );
    let sandbox = Sandbox::new();
    let args = ["submit", "-e", "return 'in'", "--lang", "js", "--json"].map(OsStr::new);
    let ran = forge_env(&sandbox, &args, &[("FORGE_HOST_NATS", url.as_str())]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    let wrong = format!("nats://not-{token}@{}", nats.address);
    let refused = forge_env(&sandbox, &args, &[("FORGE_HOST_NATS", wrong.as_str())]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("refused the credentials (a token)"));
    let everything = format!("{}{}{}", text(&ran), text(&refused), worker.stderr());
    assert_no_secret(
        &[token],
        &everything,
        &[&worker.sandbox.data_dir(), &sandbox.data_dir()],
    );
}

/// A NATS JWT: `claims` (with `nats`) issued by `issuer` about `subject`, signed by it.
fn jwt(issuer: &nkeys::KeyPair, subject: &str, name: &str, nats: Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(r#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let claims = json!({
        "jti": format!("{subject}-{now}"),
        "iat": now,
        "iss": issuer.public_key(),
        "sub": subject,
        "name": name,
        "nats": nats,
    });
    let body = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signed = format!("{header}.{body}");
    let signature = issuer.sign(signed.as_bytes()).expect("sign");
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// A `.creds` file's text: `user`'s JWT, issued by `account`, and its seed.
fn creds(account: &nkeys::KeyPair, user: &nkeys::KeyPair) -> String {
    let user_jwt = jwt(
        account,
        &user.public_key(),
        "forge-user",
        json!({"type": "user", "version": 2, "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1}),
    );
    format!(
        "-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n\
************************* IMPORTANT *************************\n\
NKEY Seed printed below can be used to sign and prove identity.\n\n\
-----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n",
        user.seed().expect("seed")
    )
}

#[test]
fn nats_with_a_creds_account_serves_workers_and_submit_and_the_seed_shows_nowhere() {
    let operator = nkeys::KeyPair::new_operator();
    let account = nkeys::KeyPair::new_account();
    let user = nkeys::KeyPair::new_user();
    let operator_jwt = jwt(
        &operator,
        &operator.public_key(),
        "forge-operator",
        json!({"type": "operator", "version": 2}),
    );
    // JetStream is on for the account only when its JWT grants storage.
    let account_jwt = jwt(
        &operator,
        &account.public_key(),
        "forge-account",
        json!({"type": "account", "version": 2, "limits": {
            "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
            "wildcards": true, "conn": -1, "leaf": -1,
            "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1,
        }}),
    );
    // nats-server 2.9 starts JetStream in operator mode only with a system account.
    let system = nkeys::KeyPair::new_account();
    let system_jwt = jwt(
        &operator,
        &system.public_key(),
        "SYS",
        json!({"type": "account", "version": 2, "limits": {
            "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
            "wildcards": true, "conn": -1, "leaf": -1,
        }}),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let operator_file = dir.path().join("operator.jwt");
    std::fs::write(&operator_file, &operator_jwt).expect("write");
    let nats = NatsServer::start_with(&format!(
        "operator: {:?}\nsystem_account: {system}\nresolver: MEMORY\n\
resolver_preload: {{\n  {account}: {account_jwt:?}\n  {system}: {system_jwt:?}\n}}\n",
        operator_file.display().to_string(),
        system = system.public_key(),
        account = account.public_key(),
    ));
    let creds_file = dir.path().join("forge.creds");
    std::fs::write(&creds_file, creds(&account, &user)).expect("write");
    let seed = user.seed().expect("seed");
    let creds_arg = creds_file.display().to_string();
    let worker = Worker::with_env(
        &["--nats", &nats.url, "--nats-creds", &creds_arg].map(OsStr::new),
        &[],
    );
    let sandbox = Sandbox::new();
    let ran = forge_env(
        &sandbox,
        &["submit", "-e", "return 'signed'", "--lang", "js", "--json"].map(OsStr::new),
        &[
            ("FORGE_HOST_NATS", nats.url.as_str()),
            ("FORGE_HOST_NATS_CREDS", creds_arg.as_str()),
        ],
    );
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    let report: Value = serde_json::from_slice(&ran.stdout).expect("report");
    assert_eq!(report["value"], "signed");
    // A user of an account this server does not know is refused.
    let stranger = dir.path().join("stranger.creds");
    std::fs::write(
        &stranger,
        creds(&nkeys::KeyPair::new_account(), &nkeys::KeyPair::new_user()),
    )
    .expect("write");
    let stranger_arg = stranger.display().to_string();
    let refused = forge_env(
        &sandbox,
        &[
            "submit",
            "-e",
            "return 1",
            "--lang",
            "js",
            "--nats",
            &nats.url,
            "--nats-creds",
            &stranger_arg,
        ]
        .map(OsStr::new),
        &[],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("refused the credentials (--nats-creds)"));
    // A file that is not a .creds file is a usage error before anything connects.
    let garbled = dir.path().join("garbled.creds");
    std::fs::write(&garbled, "not a creds file").expect("write");
    let garbled_arg = garbled.display().to_string();
    let bad = forge_env(
        &sandbox,
        &[
            "journal",
            "list",
            "--nats",
            &nats.url,
            "--nats-creds",
            &garbled_arg,
        ]
        .map(OsStr::new),
        &[],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains("is not a NATS credentials file"),
        "{}",
        text(&bad)
    );
    let id = report["id"].as_str().expect("id");
    let shown = worker.sandbox.forge(&["journal", "show", id, "--json"]);
    let everything = format!(
        "{}{}{}{}{}",
        text(&ran),
        text(&refused),
        text(&bad),
        shown.stdout(),
        worker.stderr()
    );
    assert_no_secret(
        &[&seed],
        &everything,
        &[&worker.sandbox.data_dir(), &sandbox.data_dir()],
    );
}

/// `forge-host ARGS` in a network namespace of its own (no interface but a down loopback), so
/// that nothing it tries can reach another machine.
fn isolated(sandbox: &Sandbox, args: &[&str]) -> Output {
    let namespace = |flags: &str| {
        Command::new("unshare")
            .args([flags, "true"])
            .status()
            .is_ok_and(|s| s.success())
    };
    // As root `-n` alone; otherwise a user namespace makes it possible.
    let flags = if namespace("-n") {
        "-n"
    } else if namespace("-rn") {
        "-rn"
    } else {
        panic!("`unshare -n` (util-linux) cannot make a network namespace here")
    };
    Command::new("unshare")
        .arg(flags)
        .arg(env!("CARGO_BIN_EXE_forge-host"))
        .args(args)
        .arg("--data-dir")
        .arg(sandbox.data_dir())
        .current_dir(sandbox.dir.path())
        .env_remove("FORGE_HOST_NATS")
        .env_remove("FORGE_HOST_STATE")
        .stdin(Stdio::null())
        .output()
        .expect("unshare")
}

#[test]
fn plain_text_off_loopback_is_refused_without_insecure_before_anything_is_sent() {
    let sandbox = Sandbox::new();
    let nats = "nats://forge:hunter2@10.1.2.3:4222";
    let etcd = "etcd://forge:hunter2@10.1.2.3:2379/x";
    let commands: [&[&str]; 6] = [
        &["worker", "--nats", nats],
        &["submit", "-e", "return 1", "--lang", "js", "--nats", nats],
        &["journal", "list", "--nats", nats],
        &["mcp", "--nats", nats],
        &["run", "-e", "return 1", "--lang", "js", "--state", etcd],
        &["state", "list", "--state", etcd],
    ];
    for command in commands {
        let refused = isolated(&sandbox, command);
        let said = text(&refused);
        assert_eq!(refused.status.code(), Some(2), "{command:?}: {said}");
        assert!(
            said.contains("not a loopback address") && said.contains("--insecure"),
            "{command:?}: {said}"
        );
        assert!(!said.contains("hunter2"), "{command:?}: {said}");
    }
    // A name is not looked up: it counts as not loopback.
    let named = isolated(
        &sandbox,
        &["journal", "list", "--nats", "nats://nats.example.com"],
    );
    assert_eq!(named.status.code(), Some(2), "{}", text(&named));
    // With --insecure the warning says what is exposed; then there is no network to reach.
    let worker = isolated(
        &sandbox,
        &[
            "worker",
            "--nats",
            nats,
            "--insecure",
            "--nats-patience",
            "1s",
        ],
    );
    let said = text(&worker);
    assert!(
        said.contains("warning: --insecure") && said.contains("travel in clear, and the password"),
        "{said}"
    );
    assert_eq!(worker.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot connect to NATS at nats://forge:***@10.1.2.3:4222"),
        "{said}"
    );
    let run = isolated(
        &sandbox,
        &[
            "run",
            "-e",
            "return 1",
            "--lang",
            "js",
            "--json",
            "--state",
            etcd,
            "--insecure",
            "--etcd-patience",
            "1s",
        ],
    );
    let said = text(&run);
    assert!(
        said.contains("warning: --insecure: etcd at 10.1.2.3:2379"),
        "{said}"
    );
    assert!(said.contains("etcd is unreachable"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
}

#[test]
fn a_worker_refuses_what_is_over_its_limits_and_answers_instead_of_dropping_it() {
    // Room for a message larger than the worker's bound (1 MiB above its --max-script).
    let nats = NatsServer::start_with("max_payload: 8MB\n");
    let _worker = Worker::with_env(
        &[
            "--nats",
            &nats.url,
            "--max-script",
            "1KiB",
            "--max-input",
            "1KiB",
        ]
        .map(OsStr::new),
        &[],
    );
    let sandbox = Sandbox::new();
    let submit = |extra: &[&str], code: &str| {
        let mut args = vec![
            "submit", "-e", code, "--lang", "js", "--json", "--nats", &nats.url,
        ];
        args.extend(extra);
        sandbox.forge(&args)
    };
    let big = format!("// {}\nreturn 1;", "x".repeat(2048));
    let refused = submit(&[], &big);
    assert_eq!(
        refused.error_code(),
        "BUDGET_EXCEEDED",
        "{}",
        refused.stdout()
    );
    assert!(
        refused.stdout().contains("--max-script"),
        "{}",
        refused.stdout()
    );
    let input = sandbox.dir.path().join("big.txt");
    std::fs::write(&input, "y".repeat(4096)).expect("write");
    let input_arg = input.display().to_string();
    let refused = submit(&["--input", &input_arg], "return 1;");
    assert_eq!(
        refused.error_code(),
        "INVALID_INPUT",
        "{}",
        refused.stdout()
    );
    assert!(
        refused.stdout().contains("--max-input"),
        "{}",
        refused.stdout()
    );
    // A message larger than any request within the worker's limits is not parsed, but answered.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let answer: Value = runtime.block_on(async {
        use futures::StreamExt;
        let client = async_nats::connect(nats.url.as_str())
            .await
            .expect("connect");
        let inbox = client.new_inbox();
        let mut replies = client.subscribe(inbox.clone()).await.expect("subscribe");
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Forge-Reply", inbox.as_str());
        let payload = vec![b' '; (1 << 20) + 2048];
        client
            .publish_with_headers("forge.run.default", headers, payload.into())
            .await
            .expect("publish");
        client.flush().await.expect("flush");
        let reply = tokio::time::timeout(std::time::Duration::from_secs(60), replies.next())
            .await
            .expect("answered within a minute")
            .expect("a reply");
        serde_json::from_slice(&reply.payload).expect("json")
    });
    assert_eq!(answer["kind"], "ended", "{answer:#}");
    assert_eq!(answer["outcome"]["code"], "BUDGET_EXCEEDED", "{answer:#}");
    // The worker still serves.
    let fine = submit(&[], "return 'still here';");
    assert_eq!(fine.assert_succeeded()["value"], "still here");
}
