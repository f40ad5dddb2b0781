//! `forge-host status` and `forge-host engines`.

use serde_json::Value;

use crate::util::{Sandbox, args};

#[test]
fn status_lists_every_engine_with_its_hash_and_a_probe_run() {
    let sandbox = Sandbox::new();
    let run = sandbox.forge(&["status", "--json"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let status: Value = serde_json::from_str(&run.stdout()).expect("json");
    let engines = status["engines"].as_array().expect("engines");
    for id in ["javascript-quickjs", "python-cpython"] {
        let engine = engines
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {status:#}"));
        assert_eq!(engine["sha256"].as_str().map(str::len), Some(64));
        assert_eq!(engine["probe"]["ok"], true, "{engine:#}");
        assert!(engine["probe"]["boot_ms"].as_f64().unwrap_or(-1.0) >= 0.0);
    }
    let journal = sandbox.forge(&["journal", "list", "--json"]);
    assert_eq!(
        journal.stdout().trim(),
        "[]",
        "probes are not journaled with real runs"
    );
}

#[test]
fn engines_add_refuses_what_is_not_an_engine() {
    let sandbox = Sandbox::new();
    let garbage = sandbox.script("garbage.wasm", "not wasm at all");
    let add = sandbox.forge(&args!["engines", "add", &garbage]);
    assert_eq!(add.code(), 2);
    assert!(
        add.stderr().starts_with("error ENGINE_UNAVAILABLE"),
        "{}",
        add.stderr()
    );
    let quickjs = crate::util::engine_path("javascript-quickjs");
    let again = sandbox.forge(&args!["engines", "add", &quickjs]);
    assert_eq!(again.code(), 0, "{}", again.stderr());
    let lock =
        std::fs::read_to_string(sandbox.data_dir().join("engines/engines.lock")).expect("lock");
    assert!(lock.contains("javascript-quickjs"), "{lock}");
    let listed = sandbox.forge(&["engines", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed.stdout()).expect("json");
    assert!(listed["engines"].as_array().is_some_and(|e| e.len() >= 2));
}

#[test]
fn engines_add_refuses_a_component_that_uses_the_gc_proposal() {
    // Exceptions are on for guests (issue 41), which builds wasmtime with GC support; the GC
    // proposal itself stays off.
    let sandbox = Sandbox::new();
    let engines = || {
        let listed = sandbox.forge(&["engines", "list", "--json"]);
        let listed: Value = serde_json::from_str(&listed.stdout()).expect("json");
        listed["engines"].clone()
    };
    let before = engines();
    let component = wat::parse_str(
        r#"(component (core module
            (type $point (struct (field i32)))
            (func (export "make") (result anyref)
              (struct.new $point (i32.const 1)))))"#,
    )
    .expect("wat");
    let path = sandbox.data_dir().with_file_name("gc.wasm");
    std::fs::write(&path, component).expect("write");
    let add = sandbox.forge(&args!["engines", "add", &path]);
    assert_eq!(add.code(), 2, "{}", add.stderr());
    assert!(
        add.stderr().starts_with("error ENGINE_UNAVAILABLE")
            && add.stderr().contains("does not compile")
            && add.stderr().to_lowercase().contains("gc"),
        "{}",
        add.stderr()
    );
    assert_eq!(engines(), before, "nothing was registered");
}

#[test]
fn a_first_run_with_fuel_on_a_fresh_cache_describes_the_engine() {
    // The component is compiled and described by the fuel-metered runtime: describe() must get
    // fuel of its own, or it traps before the script starts.
    let sandbox = Sandbox::new();
    let cache = sandbox.data_dir().with_file_name("fresh-cache");
    let script = sandbox.script("one.js", "return 1");
    let output = sandbox
        .command(&args!["run", &script, "--json", "--fuel", "100000000"])
        .env("FORGE_HOST_CACHE_DIR", &cache)
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(report["value"], 1);
}
