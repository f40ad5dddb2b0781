//! `forge-host run`: output, exit codes, limits, state and concurrency, seen from outside.

use std::ffi::OsString;

use serde_json::json;

use crate::util::{NO_ARGS, Sandbox, args, repo};

#[test]
fn prints_the_result_as_json_and_exits_0() {
    let sandbox = Sandbox::new();
    let script = sandbox.script("sum.js", "console.log('working'); return { sum: 1 + 2 };");
    let run = sandbox.forge(&args!["run", &script]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let last = run.stdout().lines().last().unwrap_or_default().to_string();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&last).expect("json"),
        json!({"sum": 3})
    );
    assert!(run.stdout().contains("working"));
}

#[test]
fn a_failure_prints_its_code_on_stderr_and_exits_1() {
    let sandbox = Sandbox::new();
    let script = sandbox.script("bad.js", "throw new RangeError('out of range');");
    let run = sandbox.forge(&args!["run", &script]);
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr()
            .contains("error SCRIPT_RUNTIME: RangeError: out of range"),
        "{}",
        run.stderr()
    );
}

#[test]
fn json_output_has_the_contract_shape() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "console.log('out'); console.error('err'); text('hello'); text({ n: 1 });\n\
         progress('half', 1, 2); await tools.call('echo', {}); return [1, 'two'];",
        NO_ARGS,
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.assert_succeeded();
    assert_eq!(report["engine"], "javascript-quickjs");
    assert_eq!(report["value"], json!([1, "two"]));
    assert!(report.get("error").is_none());
    assert_eq!(report["stdout"], "out\n");
    assert_eq!(report["stderr"], "err\n");
    assert_eq!(report["text"], json!(["hello", {"n": 1}]));
    assert_eq!(report["metrics"]["tool_calls"], 1);
    assert!(report["metrics"]["wall_ms"].is_u64());
    assert!(report["metrics"]["memory_peak_bytes"].as_u64().unwrap_or(0) > 0);
    assert!(
        report["metrics"].get("fuel_consumed").is_none(),
        "fuel is off by default"
    );
    assert!(report["id"].as_str().is_some_and(|id| !id.is_empty()));
    // Progress goes to stderr as JSON lines, never into the one stdout object.
    assert!(run.stderr().contains(r#""progress""#), "{}", run.stderr());
}

#[test]
fn fuel_consumed_is_reported_when_fuel_is_on() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "let s = 0; for (let i = 0; i < 1000; i++) s += i; return s;",
        &["--fuel", "100000000"],
    );
    let report = run.report();
    assert_eq!(report["value"], 499500);
    let used = report["metrics"]["fuel_consumed"]
        .as_u64()
        .expect("fuel_consumed");
    assert!(used > 0 && used < 100_000_000);
}

#[test]
fn bad_usage_and_invalid_input_exit_2_with_one_line() {
    let sandbox = Sandbox::new();
    let js = sandbox.script("ok.js", "return 1;");
    let unknown = sandbox.script("notes.txt", "hello");
    let cases = [
        (args!["run", "missing.js"].to_vec(), "INVALID_INPUT"),
        (
            args!["run", &js, "--memory", "1MiB"].to_vec(),
            "INVALID_INPUT",
        ),
        (
            args!["run", &js, "--memory", "32MiB", "--max-output", "64MiB"].to_vec(),
            "INVALID_INPUT",
        ),
        (
            args!["run", &js, "--max-concurrency", "0"].to_vec(),
            "INVALID_INPUT",
        ),
        (args!["run", &js, "--session", ""].to_vec(), "INVALID_INPUT"),
        (args!["run", &unknown].to_vec(), "ENGINE_UNAVAILABLE"),
        (
            args!["run", &js, "--engine", "cobol"].to_vec(),
            "ENGINE_UNAVAILABLE",
        ),
    ];
    for (args, code) in cases {
        let run = sandbox.forge(&args);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.stderr());
        let stderr = run.stderr();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error {code}: ")),
            "{args:?}: {stderr}"
        );
    }
    for args in [
        args!["run", &js, "--timeout", "soon"].to_vec(),
        args!["run"].to_vec(),
        args!["fly"].to_vec(),
    ] {
        assert_eq!(sandbox.forge(&args).code(), 2, "{args:?}");
    }
}

#[test]
fn json_mode_reports_a_run_that_could_not_start_as_one_object() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js("return 1;", &["--memory", "1MiB"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.report()["error"]["code"], "INVALID_INPUT");
}

/// Four 600 ms sleeps finish within a 1.5 s timeout only if they overlap; with one at a time
/// the same script times out. Each run proves one side; the margin (2.4 s of sleeping against
/// 1.5 s) keeps this independent of machine speed.
#[test]
fn four_concurrent_sleeps_overlap_in_time() {
    let sandbox = Sandbox::new();
    let script =
        "return await Promise.all([1, 2, 3, 4].map(() => tools.call('sleep', { ms: 600 })));";
    let concurrent = sandbox.run_js(script, &["--timeout", "1500ms", "--max-concurrency", "4"]);
    assert_eq!(
        concurrent.assert_succeeded()["value"],
        json!([{"slept": 600}, {"slept": 600}, {"slept": 600}, {"slept": 600}])
    );
    let serial = sandbox.run_js(script, &["--timeout", "1500ms", "--max-concurrency", "1"]);
    assert_eq!(serial.status(), "timed_out");
}

#[test]
fn an_output_flood_stays_bounded() {
    let sandbox = Sandbox::new();
    let script = "for (let i = 0; i < 200000; i++) console.log('line ' + i + ' ' + 'y'.repeat(64)); return 'done';";
    let report = sandbox
        .run_js(script, &["--max-output", "64KiB"])
        .assert_succeeded();
    let stdout = report["stdout"].as_str().unwrap_or_default();
    assert!(stdout.len() <= 64 * 1024, "retained {} bytes", stdout.len());
    let last_line = format!("line 199999 {}\n", "y".repeat(64));
    assert!(
        stdout.ends_with(&last_line),
        "the tail is kept, not the head"
    );
    assert!(report["metrics"]["stdout_bytes"].as_u64().unwrap_or(0) > 10_000_000);
}

#[test]
fn an_endless_flood_is_stopped_by_the_timeout_with_a_bounded_tail() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "while (true) console.log('z'.repeat(1000));",
        &["--timeout", "1s"],
    );
    let report = run.report();
    assert_eq!(report["status"], "timed_out");
    assert!(report["stdout"].as_str().unwrap_or_default().len() <= 256 * 1024);
}

#[test]
fn text_values_are_bounded_by_the_output_budget() {
    let sandbox = Sandbox::new();
    let script = "try { for (let i = 0; i < 100; i++) text('t'.repeat(1024)); return 'all'; } catch (e) { return e.code; }";
    let run = sandbox.run_js(script, &["--max-output", "16KiB"]);
    assert_eq!(run.report()["value"], "BUDGET_EXCEEDED");
    assert!(run.report()["text"].as_array().map_or(0, Vec::len) <= 16);
}

#[test]
fn the_host_stays_up_after_a_memory_bomb() {
    let sandbox = Sandbox::new();
    let bomb = sandbox.run_js(
        "const k = []; while (true) k.push(new Array(1e5).fill(0));",
        &["--memory", "64MiB"],
    );
    assert_eq!(bomb.error_code(), "MEMORY_LIMIT");
    assert!(
        bomb.report()["metrics"]["memory_peak_bytes"]
            .as_u64()
            .unwrap_or(u64::MAX)
            <= 64 << 20
    );
    assert_eq!(
        sandbox
            .run_js("return 'alive';", &["--memory", "64MiB"])
            .report()["value"],
        "alive"
    );
}

/// The arguments an example declares on a first-lines comment `// args: ...`, `# args: ...` or
/// `-- args: ...`,
/// with repository paths made absolute.
fn example_args(path: &std::path::Path) -> Vec<OsString> {
    let text = std::fs::read_to_string(path).expect("example");
    let line = text
        .lines()
        .take(5)
        .find_map(|l| {
            l.trim_start_matches(['/', '#', '-'])
                .trim()
                .strip_prefix("args:")
                .map(str::to_string)
        })
        .unwrap_or_default();
    line.split_whitespace()
        .map(|arg| {
            if arg.starts_with("examples/") {
                repo().join(arg).into_os_string()
            } else {
                arg.into()
            }
        })
        .collect()
}

#[test]
fn every_example_runs() {
    let sandbox = Sandbox::new();
    let mut ran = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(repo().join("examples")).expect("examples") {
        let path = entry.expect("entry").path();
        let Some(ext) = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if !["js", "py", "lua"].contains(&ext.as_str()) {
            continue;
        }
        let extra = example_args(&path);
        let mut args = args!["run", &path, "--json"].to_vec();
        args.extend(extra.iter().map(OsString::as_os_str));
        let run = sandbox.forge(&args);
        assert_eq!(
            run.status(),
            "succeeded",
            "{}: {}",
            path.display(),
            run.stdout()
        );
        *ran.entry(ext).or_insert(0) += 1;
    }
    assert!(
        ran.get("js").copied().unwrap_or(0) >= 3,
        "at least three JavaScript examples: {ran:?}"
    );
    assert!(
        ran.get("py").copied().unwrap_or(0) >= 3,
        "at least three Python examples: {ran:?}"
    );
    assert!(ran.contains_key("lua"), "a Lua example: {ran:?}");
}

#[test]
fn keep_leaves_the_job_folder_and_engine_forces_an_engine() {
    let sandbox = Sandbox::new();
    let kept = sandbox.run_js("return 1;", &["--keep"]);
    let job = kept.report()["job_dir"]
        .as_str()
        .expect("job_dir")
        .to_string();
    for folder in ["input", "output", "work"] {
        assert!(
            std::path::Path::new(&job).join(folder).is_dir(),
            "{job}/{folder}"
        );
    }
    let gone = sandbox.run_js("return 1;", NO_ARGS);
    assert!(gone.report().get("job_dir").is_none());
    let forced = sandbox.script("not-js.txt", "return 'ran as JavaScript';");
    let run = sandbox.forge(&args![
        "run",
        &forced,
        "--engine",
        "javascript-quickjs",
        "--json"
    ]);
    assert_eq!(run.report()["value"], "ran as JavaScript");
}

#[test]
fn a_config_file_sets_limits_and_typed_flags_override_it() {
    let sandbox = Sandbox::new();
    let config = sandbox.script(
        "limits.json",
        r#"{"timeout": "700ms", "max-tool-calls": 2, "memory": "64MiB"}"#,
    );
    let calls = "for (let i = 0; i < 3; i++) await tools.call('echo', {}); return 'done';";
    let budget = sandbox.run_js(calls, &args!["--config", &config]);
    assert_eq!(
        budget.error_code(),
        "TOOL_BUDGET",
        "the file's max-tool-calls applies"
    );
    let overridden = sandbox.run_js(calls, &args!["--config", &config, "--max-tool-calls", "5"]);
    assert_eq!(overridden.report()["value"], "done", "a typed flag wins");
    let spin = sandbox.run_js("while (true) {}", &args!["--config", &config]);
    assert_eq!(spin.status(), "timed_out");
    let bad = sandbox.script("bad.json", r#"{"timeuot": "1s"}"#);
    let refused = sandbox.run_js("return 1;", &args!["--config", &bad]);
    assert_eq!(refused.code(), 2);
    assert!(
        refused.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("timeuot")
    );
}
