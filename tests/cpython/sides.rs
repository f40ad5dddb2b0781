//! The two sides of the comparison: `runner.py` on the native sid interpreter, and the same
//! file inside the engine through the built `forge-host run`. Both read the runner's event lines
//! (see its docstring) the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::known::{Outcome, Outcomes};
use crate::modules::Limits;

/// How the runner marks its lines on file descriptor 1.
const PREFIX: &str = "\u{1e}cpython-suite ";

/// The longest a native module may take (the slowest, test_tarfile, takes about 30 s).
const NATIVE_LIMIT: Duration = Duration::from_secs(600);

/// One module's run on one side.
#[derive(Debug, Default)]
pub struct Run {
    pub outcomes: Outcomes,
    /// Why the run ended early, when it did (the engine's error code and message).
    pub stopped: Option<String>,
    pub seconds: f64,
    /// The engine's peak linear memory.
    pub memory_peak: Option<u64>,
}

/// The outcomes in the runner's `text`, whether it got to `done`, and the test that started
/// and did not end (the one running when the run stopped).
fn parse(text: &str) -> (Outcomes, bool, Option<String>) {
    let mut outcomes = Outcomes::new();
    let mut done = false;
    let mut running = None;
    for line in text.lines() {
        let Some(event) = line.strip_prefix(PREFIX) else {
            continue;
        };
        let Ok(Value::Array(event)) = serde_json::from_str::<Value>(event) else {
            continue;
        };
        let text = |i: usize| {
            event
                .get(i)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match event.first().and_then(Value::as_str) {
            Some("start") => running = Some(text(1)),
            Some("end") => {
                running = None;
                let new = Outcome {
                    kind: text(2),
                    detail: text(4),
                };
                // A test id that runs twice (the doctests some modules load twice) keeps its
                // worst outcome: a pass never hides a failure.
                let keep = outcomes.get(&text(1)).is_some_and(|old| !old.passes());
                if !keep {
                    outcomes.insert(text(1), new);
                }
            }
            Some("done") => done = true,
            _ => {}
        }
    }
    (outcomes, done, running)
}

/// Waits for `command`'s output, at most `limit`: past it the child is killed.
fn output_within(command: &mut Command, limit: Duration) -> (Output, bool) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts the side's process");
    let started = Instant::now();
    // Reading the pipes in threads, so that a chatty child does not block on a full pipe.
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits for the child") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    };
    (output, killed)
}

/// `module` on the native interpreter `python`, in a fresh folder, with `TZ=UTC` (the engine's
/// local time). The baseline must run to its end: anything else fails the test.
pub fn native(python: &Path, runner: &Path, suite: &Path, module: &str) -> Run {
    let scratch = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let (out, killed) = output_within(
        Command::new(python)
            .arg(runner)
            .arg(suite)
            .arg(module)
            .current_dir(scratch.path())
            .env("TZ", "UTC")
            .env("FORGE_CPYTHON_EXECUTABLE", python),
        NATIVE_LIMIT,
    );
    let (outcomes, done, running) = parse(&String::from_utf8_lossy(&out.stdout));
    assert!(
        done && !killed,
        "cpython: {module} did not finish natively ({}{}): {}",
        out.status,
        running.map_or(String::new(), |t| format!(", in {t}")),
        String::from_utf8_lossy(&out.stderr)
    );
    Run {
        outcomes,
        stopped: None,
        seconds: started.elapsed().as_secs_f64(),
        memory_peak: None,
    }
}

/// What the engine side needs besides the module.
pub struct Engine {
    pub binary: PathBuf,
    pub engines: PathBuf,
    pub runner: PathBuf,
    pub suite: PathBuf,
}

/// Rounds of one module's run in the engine at most: each stopping test costs one.
const MAX_ROUNDS: usize = 8;

/// What one round of a module's run in the engine left.
struct Round {
    outcomes: Outcomes,
    /// The test that was running when the run stopped, and why it stopped.
    stopped: Option<(Option<String>, String)>,
    memory_peak: Option<u64>,
}

impl Engine {
    /// `module` in the engine: `forge-host run runner.py` with the suite and a request as
    /// inputs, under `limits`; `not_run` are ids the runner leaves out. A test that stops the
    /// run (a trap, the timeout, the memory cap) is reported `stopped` with the error, and the
    /// module goes on from the tests after it in a fresh run, so one stopping test costs one
    /// round, not the rest of its module.
    pub fn run(&self, module: &str, limits: Limits, not_run: &[String]) -> Run {
        let started = Instant::now();
        let mut run = Run {
            // unless a round gets to the end, or stops where no test was running
            stopped: Some(format!("{MAX_ROUNDS} of its tests stopped the run")),
            ..Run::default()
        };
        for _ in 0..MAX_ROUNDS {
            let ran: Vec<&String> = run.outcomes.keys().collect();
            let round = self.round(module, limits, not_run, &ran);
            run.memory_peak = run.memory_peak.max(round.memory_peak);
            for (test, outcome) in round.outcomes {
                run.outcomes.entry(test).or_insert(outcome);
            }
            match round.stopped {
                None => {
                    run.stopped = None;
                    break;
                }
                Some((Some(test), why)) if !run.outcomes.contains_key(&test) => {
                    let outcome = Outcome {
                        kind: "stopped".into(),
                        detail: why,
                    };
                    run.outcomes.insert(test, outcome);
                }
                // stopped outside a test (loading the module, a fixture): no way past it
                Some((_, why)) => {
                    run.stopped = Some(why);
                    break;
                }
            }
        }
        run.seconds = started.elapsed().as_secs_f64();
        run
    }

    /// One `forge-host run` of the runner, leaving out `not_run` and the tests in `ran`.
    fn round(&self, module: &str, limits: Limits, not_run: &[String], ran: &[&String]) -> Round {
        let scratch = tempfile::tempdir().expect("tempdir");
        let folder = self
            .suite
            .file_name()
            .and_then(|n| n.to_str())
            .expect("the suite's folder has a name");
        let request = serde_json::json!({
            "suite": format!("/input/{folder}"),
            "module": module,
            "skip": not_run,
            "ran": ran,
        });
        let request_file = scratch.path().join("request.json");
        std::fs::write(&request_file, request.to_string()).expect("writes request.json");
        let mut command = Command::new(&self.binary);
        command
            .arg("run")
            .arg(&self.runner)
            .args(["--engine", "python-cpython", "--json", "--input"])
            .arg(&self.suite)
            .arg("--input")
            .arg(&request_file)
            .arg("--timeout")
            .arg(format!("{}s", limits.timeout_secs))
            .args(["--max-output", "16MiB", "--data-dir"])
            .arg(scratch.path().join("data"))
            .current_dir(scratch.path())
            .env_remove("FORGE_HOST_DATA_DIR")
            .env("FORGE_HOST_ENGINES_DIR", &self.engines);
        if let Some(memory) = limits.memory {
            command.args(["--memory", memory]);
        }
        // forge-host stops the run at its timeout; this only catches a host that hangs.
        let limit = Duration::from_secs(limits.timeout_secs + 120);
        let (out, killed) = output_within(&mut command, limit);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::Deserializer::from_str(&stdout)
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
            .unwrap_or(Value::Null);
        let printed = report["stdout"].as_str().unwrap_or_default();
        let (outcomes, done, running) = parse(printed);
        let stopped = (!done).then(|| {
            let why = if killed {
                "forge-host did not end".to_string()
            } else if report.is_null() {
                format!(
                    "no report from forge-host ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                )
            } else {
                format!(
                    "{}: {}",
                    report["error"]["code"], report["error"]["message"]
                )
                .replace('"', "")
            };
            (running, why)
        });
        Round {
            outcomes,
            stopped,
            memory_peak: report["metrics"]["memory_peak_bytes"].as_u64(),
        }
    }
}
