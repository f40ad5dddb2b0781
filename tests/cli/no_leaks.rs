//! Pre-initialised engines (issue 12): every run starts from the same snapshot (QuickJS's
//! `wizer-initialize`, componentize-py's pre-imported runtime), in a warm process that keeps one
//! compiled component for all its runs. Nothing one run does may be seen by the next: globals,
//! built-ins, engine-internal objects, uncommitted state, the random generator, `/work`.

use std::collections::HashSet;

use forge_host::{DataDir, ExecutionRequest, Kernel, RunReport};
use serde_json::{Value, json};

/// One warm process's worth of runs, all through the same kernel.
struct Warm {
    runtime: tokio::runtime::Runtime,
    kernel: Kernel,
    _dir: tempfile::TempDir,
}

impl Warm {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let runtime = tokio::runtime::Runtime::new().expect("tokio");
        let kernel = runtime
            .block_on(
                Kernel::builder(DataDir::new(dir.path().join("data")))
                    .engine_dirs(vec![crate::util::engines_dir()])
                    .build(),
            )
            .expect("a kernel");
        Warm {
            runtime,
            kernel,
            _dir: dir,
        }
    }

    fn run(&self, filename: &str, source: &str) -> RunReport {
        self.runtime
            .block_on(self.kernel.run(ExecutionRequest::new(source, filename)))
            .expect("the run is reported")
    }

    /// The value of a run that must succeed.
    fn value(&self, filename: &str, source: &str) -> Value {
        let report = self.run(filename, source);
        assert!(report.succeeded(), "{source}\n{:?}", report.error);
        report.value.unwrap_or(Value::Null)
    }
}

const JS_POLLUTE: &str = r#"
globalThis.leak = 1;
var leakedVar = 2;
Array.prototype.leak = 3;
Object.prototype.leak = 4;
Math.random = () => 0.5;
JSON.stringify = () => '"poisoned"';
try { tools.leak = 5; } catch (e) {}
state.set("uncommitted", 1);
throw new Error("fail, so that the state change is not committed");
"#;

const JS_INSPECT: &str = r#"
return {
  global: typeof globalThis.leak,
  variable: typeof leakedVar,
  array: typeof [].leak,
  object: ({}).leak === undefined,
  tools: typeof tools.leak,
  state: state.get("uncommitted") === undefined,
  random: Math.random(),
  native: String(Math.random).includes("native code"),
  json: JSON.parse(JSON.stringify({ a: 1 })).a,
  clock: performance.now() >= 0,
};
"#;

#[test]
fn a_javascript_run_sees_nothing_of_the_runs_before_it() {
    let warm = Warm::new();
    let mut randoms = HashSet::new();
    for _ in 0..5 {
        let polluted = warm.run("pollute.js", JS_POLLUTE);
        assert!(!polluted.succeeded());
        let seen = warm.value("inspect.js", JS_INSPECT);
        let random = seen["random"].as_f64().expect("a number");
        assert!((0.0..1.0).contains(&random) && random != 0.5);
        randoms.insert(random.to_bits());
        assert_eq!(
            seen,
            json!({"global": "undefined", "variable": "undefined", "array": "undefined",
                   "object": true, "tools": "undefined", "state": true, "random": random,
                   "native": true, "json": 1, "clock": true}),
        );
    }
    assert_eq!(randoms.len(), 5, "each run draws its own random sequence");
}

const PY_POLLUTE: &str = r#"
import builtins, json, os, random, sys, forge
builtins.leak = 1
json.leak = 2
sys.modules["leaked_module"] = json
os.environ["LEAK"] = "1"
random.seed(7)
open("/work/leak.txt", "w").write("left behind")
forge.state.set("uncommitted", 1)
raise RuntimeError("fail, so that the state change is not committed")
"#;

const PY_INSPECT: &str = r#"
import builtins, json, os, random, sys, forge
forge.result({
    "builtin": hasattr(builtins, "leak"),
    "module": hasattr(json, "leak"),
    "modules": "leaked_module" in sys.modules,
    "environ": "LEAK" in os.environ,
    "work": os.listdir("/work"),
    "state": forge.state.get("uncommitted"),
    "random": random.random(),
})
"#;

#[test]
fn a_python_run_sees_nothing_of_the_runs_before_it() {
    let warm = Warm::new();
    let seeded_with_7 = {
        // What `random.random()` gives after `random.seed(7)`, so that a leaked seed shows.
        let script = "import random, forge\nrandom.seed(7)\nforge.result(random.random())\n";
        warm.value("seed.py", script).as_f64().expect("a number")
    };
    let mut randoms = HashSet::new();
    for _ in 0..3 {
        let polluted = warm.run("pollute.py", PY_POLLUTE);
        assert!(!polluted.succeeded());
        let seen = warm.value("inspect.py", PY_INSPECT);
        let random = seen["random"].as_f64().expect("a number");
        assert_ne!(random, seeded_with_7);
        randoms.insert(random.to_bits());
        assert_eq!(
            seen,
            json!({"builtin": false, "module": false, "modules": false, "environ": false,
                   "work": [], "state": null, "random": random}),
        );
    }
    assert_eq!(randoms.len(), 3, "each run draws its own random sequence");
}
