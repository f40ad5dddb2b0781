//! Bytecode of locked packages (issue 28 §4): compiled once when a package is added, inside
//! the Python engine, pinned in the lock beside the wheel and mounted in its place; a changed
//! one refused and quarantined like a wheel; a lock written before it still works, and
//! `packages compile` gives it its bytecode.

use serde_json::Value;

use crate::packages::{json_of, lock_text, text};
use crate::pip_index::{Index, chain, forge_with_index, sha256};
use crate::util::{NO_ARGS, Sandbox, args};

/// The sha256 of every package's bytecode in `lock`, which has `count` packages.
pub(crate) fn pinned(lock: &Value, count: usize) -> Vec<String> {
    let pinned: Vec<String> = lock["packages"]
        .as_object()
        .expect("packages")
        .values()
        .filter_map(|p| p["bytecode"]["sha256"].as_str().map(String::from))
        .collect();
    assert_eq!(
        pinned.len(),
        count,
        "each package has its bytecode: {lock:#}"
    );
    pinned
}

/// Where `alpha` was imported from, and the file its code names.
const ALPHA_FROM: &str = "import forge, alpha\n\
forge.result({'file': alpha.__file__, 'code': alpha.answer.__code__.co_filename, 'answer': alpha.answer()})\n";

#[test]
fn packages_import_from_bytecode_compiled_once_and_a_changed_one_is_refused() {
    let index = Index::start();
    let _shas = chain(&index);
    let sandbox = Sandbox::new();
    let added = forge_with_index(&sandbox, &index, &["packages", "add", "alpha", "--json"]);
    assert!(added.status.success(), "{}", text(&added));
    let added = json_of(&added);
    for package in added["packages"].as_array().expect("packages") {
        assert_eq!(package["bytecode"]["cache_tag"], "cpython-314", "{package}");
        assert_eq!(
            package["bytecode"]["sha256"].as_str().map(str::len),
            Some(64)
        );
    }
    let zip_name = "alpha-1.0-py3-none-any.pyc.zip";
    let mount = format!("/packages/alpha/{zip_name}");
    let report = sandbox.run_py(ALPHA_FROM, NO_ARGS).assert_succeeded();
    assert_eq!(report["value"]["answer"], 42);
    assert_eq!(
        report["value"]["file"],
        format!("{mount}/alpha/__init__.pyc"),
        "loaded from its bytecode"
    );
    assert_eq!(
        report["value"]["code"],
        format!("{mount}/alpha/__init__.py"),
        "its tracebacks name the source beside it"
    );

    // A changed bytecode file stops the run, saying both hashes; verify quarantines it, and
    // `packages compile` makes it again.
    let lock: Value = serde_json::from_str(&lock_text(&sandbox).expect("lock")).expect("json");
    let pinned = lock["packages"]["alpha"]["bytecode"]["sha256"]
        .as_str()
        .expect("pinned")
        .to_string();
    let zip = sandbox
        .data_dir()
        .join("packages")
        .join(&pinned)
        .join(zip_name);
    let mut bytes = std::fs::read(&zip).expect("stored bytecode");
    bytes.push(b'!');
    std::fs::write(&zip, &bytes).expect("tamper");
    let run = sandbox.run_py(ALPHA_FROM, NO_ARGS);
    assert_eq!(run.error_code(), "PACKAGE_UNAVAILABLE", "{}", run.stderr());
    let message = run.report()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("bytecode"), "{message}");
    assert!(
        message.contains(&pinned) && message.contains(&sha256(&bytes)),
        "{message}"
    );
    let verify = sandbox.forge(&args!["packages", "verify"]);
    assert_eq!(verify.code(), 1, "{}", verify.stdout());
    assert!(!zip.exists(), "moved to quarantine");
    let compiled = sandbox.forge(&args!["packages", "compile", "--json"]);
    assert_eq!(compiled.code(), 0, "{}", compiled.stderr());
    let compiled: Value = serde_json::from_str(&compiled.stdout()).expect("json");
    assert_eq!(compiled["compiled"][0]["name"], "alpha", "{compiled:#}");
    let again = sandbox.run_py(ALPHA_FROM, NO_ARGS).assert_succeeded();
    assert_eq!(
        again["value"]["file"],
        format!("{mount}/alpha/__init__.pyc")
    );

    // A lock written before bytecode was kept still works, from source, until it is compiled.
    let mut old: Value = serde_json::from_str(&lock_text(&sandbox).expect("lock")).expect("json");
    for package in old["packages"]
        .as_object_mut()
        .expect("packages")
        .values_mut()
    {
        package.as_object_mut().expect("package").remove("bytecode");
    }
    let lock_path = sandbox.data_dir().join("pyodide-lock.json");
    std::fs::write(&lock_path, old.to_string()).expect("old lock");
    let from_source = sandbox.run_py(ALPHA_FROM, NO_ARGS).assert_succeeded();
    assert_eq!(
        from_source["value"]["file"],
        "/packages/alpha/alpha-1.0-py3-none-any.whl/alpha/__init__.py"
    );
    let compiled = sandbox.forge(&args!["packages", "compile"]);
    assert_eq!(compiled.code(), 0, "{}", compiled.stderr());
    assert!(
        compiled.stderr().contains("compiled alpha"),
        "{}",
        compiled.stderr()
    );
    let compiled = sandbox.forge(&args!["packages", "compile"]);
    assert!(
        compiled.stdout().contains("has its bytecode"),
        "{}",
        compiled.stdout()
    );
    let after = sandbox.run_py(ALPHA_FROM, NO_ARGS).assert_succeeded();
    assert_eq!(
        after["value"]["file"],
        format!("{mount}/alpha/__init__.pyc")
    );
}
