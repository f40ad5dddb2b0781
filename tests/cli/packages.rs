//! `forge-host packages` (issue 13) against a loopback package index the tests serve themselves
//! (`pip_index.rs`: pip's simple API on 127.0.0.1, wheels built here), and once against the
//! machine's own pip configuration (PyPI). pip runs from the venv `cargo xtask` builds.

use std::collections::BTreeMap;
use std::process::{Command, Output};

use serde_json::Value;

use crate::pip_index::{Index, chain, command_with_index, forge_with_index, pip_command, sha256};
use crate::util::{NO_ARGS, Sandbox, args};

pub(crate) fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

pub(crate) fn json_of(output: &Output) -> Value {
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

pub(crate) fn lock_text(sandbox: &Sandbox) -> Option<String> {
    std::fs::read_to_string(sandbox.data_dir().join("pyodide-lock.json")).ok()
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
    let lock: Value = serde_json::from_str(&lock_text(&sandbox).expect("lock")).expect("json");
    // The store holds each wheel and its bytecode, compiled when it was added: nothing else.
    let mut files: Vec<String> = expected.values().cloned().collect();
    files.extend(crate::bytecode::pinned(&lock, expected.len()));
    files.sort();
    assert_eq!(stored(&sandbox), files);
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
