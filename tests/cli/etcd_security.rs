//! Session state on an etcd that keeps strangers out (issue 26 §3): TLS on its client port,
//! client certificates required, and etcd's own users. `run` commits and reads state with the
//! right credentials, fails clearly with wrong ones, a token that expired is renewed, and the
//! password is in no output, journal or report.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output};

use serde_json::Value;

use crate::certs::{KeyPair, TestCa};
use crate::cluster_security::assert_no_secret;
use crate::peers::{EtcdConfig, EtcdServer};
use crate::util::Sandbox;

const USER: &str = "alice";
const PASSWORD: &str = "etcd-s3cr3t:pw";
const ROOT_PASSWORD: &str = "root-s3cr3t";
/// The key prefix of the tests' locations, and the one the user may read and write.
const PREFIX: &str = "secure";

/// `etcdctl ARGS` against `etcd`; with `tls`, trusting its CA and showing `root`'s client
/// certificate (etcdctl speaks gRPC, where etcd takes the certificate's common name as the
/// user; on plain HTTP no user is needed before `auth enable`, and none is used after it).
fn etcdctl(etcd: &EtcdServer, tls: Option<(&TestCa, &KeyPair)>, args: &[&str]) {
    let mut command = Command::new("etcdctl");
    command.arg("--endpoints").arg(etcd.client_url());
    if let Some((ca, root)) = tls {
        command
            .arg("--cacert")
            .arg(&ca.cert)
            .arg("--cert")
            .arg(&root.cert)
            .arg("--key")
            .arg(&root.key);
    }
    // etcdctl reads ETCDCTL_* variables as flags.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("ETCDCTL_") {
            command.env_remove(name);
        }
    }
    let output = command
        .args(args)
        .output()
        .expect("etcdctl is a test peer `cargo xtask test` installs (etcd-client)");
    assert!(
        output.status.success(),
        "etcdctl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Gives `etcd` a root, the user `alice` with readwrite on [`PREFIX`], and turns
/// authentication on.
fn add_users(etcd: &EtcdServer, tls: Option<(&TestCa, &KeyPair)>) {
    let root = format!("--new-user-password={ROOT_PASSWORD}");
    let user = format!("--new-user-password={PASSWORD}");
    let prefix = format!("{PREFIX}/");
    let steps: [&[&str]; 7] = [
        &["user", "add", "root", &root, "--interactive=false"],
        &["user", "grant-role", "root", "root"],
        &["user", "add", USER, &user, "--interactive=false"],
        &["role", "add", "forge"],
        &[
            "role",
            "grant-permission",
            "forge",
            "--prefix=true",
            "readwrite",
            &prefix,
        ],
        &["user", "grant-role", USER, "forge"],
        &["auth", "enable"],
    ];
    for step in steps {
        etcdctl(etcd, tls, step);
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `forge-host ARGS` in `sandbox` with `env`.
fn forge_env(sandbox: &Sandbox, args: &[&OsStr], env: &[(&str, &str)]) -> Output {
    let mut command = sandbox.command(args);
    command.envs(env.iter().copied());
    command.output().expect("forge-host")
}

#[test]
fn etcd_with_tls_client_certificates_and_a_user_keeps_state_and_refuses_wrong_credentials() {
    let ca = TestCa::new("forge-etcd-ca");
    let root = ca.client("root");
    let etcd = EtcdServer::start_with(EtcdConfig {
        tls: Some(ca.member("etcd")),
        client_ca: Some(ca.cert.clone()),
        token_ttl: None,
    });
    add_users(&etcd, Some((&ca, &root)));
    let client = ca.anonymous_client("forge-host");
    let location = format!("etcd://{}/{PREFIX}", etcd.client_url());
    let (ca_arg, cert_arg, key_arg) = (
        ca.cert.display().to_string(),
        client.cert.display().to_string(),
        client.key.display().to_string(),
    );
    let flags = |extra: &[&'static str]| -> Vec<String> {
        let mut all: Vec<String> = [
            "--state",
            &location,
            "--etcd-ca",
            &ca_arg,
            "--etcd-cert",
            &cert_arg,
            "--etcd-key",
            &key_arg,
            "--session",
            "s",
        ]
        .map(String::from)
        .to_vec();
        all.extend(extra.iter().map(|s| s.to_string()));
        all
    };
    let sandbox = Sandbox::new();
    let bump = "const n = (state.get('n') ?? 0) + 1; state.set('n', n); return n;";
    let script = sandbox.script("bump.js", bump);
    let run = |extra: &[&'static str], env: &[(&str, &str)]| {
        let mut args: Vec<String> =
            vec!["run".into(), script.display().to_string(), "--json".into()];
        args.extend(flags(extra));
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        forge_env(&sandbox, &args, env)
    };
    let password = [("FORGE_HOST_ETCD_PASSWORD", PASSWORD)];
    let first = run(&["--etcd-user", USER], &password);
    let report: Value = serde_json::from_slice(&first.stdout).expect("report");
    assert_eq!(report["value"], 1, "{}", text(&first));
    let id = report["id"].as_str().expect("id").to_string();
    // The password from a file, the user from the environment.
    let password_file = sandbox.dir.path().join("etcd-password");
    std::fs::write(&password_file, format!("{PASSWORD}\n")).expect("write");
    let file_arg = password_file.display().to_string();
    let mut get: Vec<String> = ["state", "get", "n"].map(String::from).to_vec();
    get.extend(flags(&[]));
    get.extend(["--etcd-password-file".to_string(), file_arg]);
    let get: Vec<&OsStr> = get.iter().map(OsStr::new).collect();
    let read = forge_env(&sandbox, &get, &[("FORGE_HOST_ETCD_USER", USER)]);
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "1",
        "{}",
        text(&read)
    );
    // The journal keeps where, with the user and without the password; `rerun` goes back there
    // with the credentials of the environment.
    let shown = sandbox.forge(&["journal", "show", &id, "--json"]);
    let record: Value = serde_json::from_str(&shown.stdout()).expect("json");
    assert_eq!(
        record["state_store"],
        format!("etcd://{USER}@https://{}/{PREFIX}", etcd.address)
    );
    let rerun = forge_env(
        &sandbox,
        &["rerun", &id, "--json"].map(OsStr::new),
        &[
            ("FORGE_HOST_ETCD_PASSWORD", PASSWORD),
            ("FORGE_HOST_ETCD_CA", ca_arg.as_str()),
            ("FORGE_HOST_ETCD_CERT", cert_arg.as_str()),
            ("FORGE_HOST_ETCD_KEY", key_arg.as_str()),
        ],
    );
    let again: Value = serde_json::from_slice(&rerun.stdout).expect("report");
    assert_eq!(again["value"], 2, "{}", text(&rerun));

    // A wrong password: refused by etcd, said so, nothing committed.
    let wrong = run(
        &["--etcd-user", USER],
        &[("FORGE_HOST_ETCD_PASSWORD", "not-it")],
    );
    let failed: Value = serde_json::from_slice(&wrong.stdout).expect("report");
    assert_eq!(failed["error"]["code"], "INVALID_INPUT", "{failed:#}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused user `alice`'s password"),
        "{message}"
    );
    // No user: etcd wants one.
    let anonymous = run(&[], &[]);
    let failed: Value = serde_json::from_slice(&anonymous.stdout).expect("report");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("has authentication on and wants a user"),
        "{failed:#}"
    );
    // A user without a password is a usage error, before etcd is asked.
    let lone = run(&["--etcd-user", USER], &[]);
    assert_eq!(lone.status.code(), Some(2), "{}", text(&lone));
    // No client certificate: the member refuses the connection.
    let mut args: Vec<String> = vec!["run".into(), script.display().to_string(), "--json".into()];
    args.extend(
        [
            "--state",
            &location,
            "--etcd-ca",
            &ca_arg,
            "--etcd-user",
            USER,
        ]
        .map(String::from),
    );
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let no_cert = forge_env(&sandbox, &args, &password);
    let failed: Value = serde_json::from_slice(&no_cert.stdout).expect("report");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("etcd is unreachable"),
        "{failed:#}"
    );
    // Plain HTTP to a TLS member with TLS files given: refused as a mistake.
    let http = format!("etcd://{}/{PREFIX}", etcd.address);
    let args = ["state", "list", "--state", &http, "--etcd-ca", &ca_arg].map(OsStr::new);
    let mistaken = forge_env(&sandbox, &args, &[]);
    assert_eq!(mistaken.status.code(), Some(2), "{}", text(&mistaken));
    assert!(
        text(&mistaken).contains("write https://"),
        "{}",
        text(&mistaken)
    );
    // A client certificate with a common name: etcd 3.4's gateway refuses it, and forge-host
    // says why.
    let named = ca.client("named");
    let (named_cert, named_key) = (
        named.cert.display().to_string(),
        named.key.display().to_string(),
    );
    let args = [
        "state",
        "list",
        "--state",
        &location,
        "--etcd-ca",
        &ca_arg,
        "--etcd-cert",
        &named_cert,
        "--etcd-key",
        &named_key,
        "--etcd-user",
        USER,
    ]
    .map(OsStr::new);
    let refused = forge_env(&sandbox, &args, &password);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("without a common name"),
        "{}",
        text(&refused)
    );

    let mut everything = String::new();
    for output in [
        &first,
        &read,
        &shown.output,
        &rerun,
        &wrong,
        &anonymous,
        &lone,
        &no_cert,
        &refused,
    ] {
        everything.push_str(&text(output));
    }
    for args in [vec!["journal", "list", "--json"], vec!["logs", &id]] {
        everything.push_str(&sandbox.forge(&args).stdout());
    }
    assert_no_secret(&[PASSWORD], &everything, &[&sandbox.data_dir()]);
}

#[test]
fn an_expired_etcd_token_is_renewed_and_the_commit_after_it_goes_through() {
    // Simple tokens that live one second unused: the run's token expires between its snapshot
    // and its commit.
    let etcd = EtcdServer::start_with(EtcdConfig {
        token_ttl: Some(1),
        ..EtcdConfig::default()
    });
    add_users(&etcd, None);
    let sandbox = Sandbox::new();
    let workspace = tempfile::tempdir().expect("workspace");
    // The script waits, after its snapshot, until the test lets it commit.
    let script = sandbox.script(
        "late.js",
        "const n = (state.get('n') ?? 0) + 1;\n\
         progress('armed');\n\
         for (;;) {\n\
           try { await tools.workspace.read({path: 'go'}); break; }\n\
           catch (e) { await tools.sleep({ms: 50}); }\n\
         }\n\
         state.set('n', n);\n\
         return n;",
    );
    let location = format!("etcd://{USER}@{}/{PREFIX}", etcd.address);
    let issued = etcd.log().mark();
    let mut child = sandbox
        .command(&[
            "run".as_ref(),
            script.as_os_str(),
            "--json".as_ref(),
            "--session".as_ref(),
            "s".as_ref(),
            "--workspace".as_ref(),
            workspace.path().as_os_str(),
            "--state".as_ref(),
            location.as_ref(),
        ])
        .env("FORGE_HOST_ETCD_PASSWORD", PASSWORD)
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    assert!(
        lines.any(|line| line.is_ok_and(|l| l.contains("armed"))),
        "the run never reported progress"
    );
    std::thread::spawn(move || for _ in lines {});
    // etcd says when it drops the token the run was given (and has not used since its
    // snapshot): no guessing how long that takes.
    etcd.log().wait_for(
        issued,
        &["deleted a simple token", "\"user-name\":\"alice\""],
    );
    let expired = etcd.log().mark();
    std::fs::write(workspace.path().join("go"), "").expect("write");
    let output = child.wait_with_output().expect("wait");
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], 1);
    assert!(
        etcd.log().has(expired, &["invalid auth token"]),
        "the commit first showed the expired token, then a new one"
    );
    let read = forge_env(
        &sandbox,
        &["state", "get", "n", "--session", "s", "--state", &location].map(OsStr::new),
        &[("FORGE_HOST_ETCD_PASSWORD", PASSWORD)],
    );
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "1",
        "{}",
        text(&read)
    );
    assert_no_secret(
        &[PASSWORD],
        &format!("{}{}", text(&output), text(&read)),
        &[&sandbox.data_dir()],
    );
}
