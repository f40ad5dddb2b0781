//! `forge-host worker` processes and submissions for the cluster tests: a worker keeps what it
//! prints and shows it when its test fails, and a submission that does not end in time fails
//! its test instead of hanging the suite.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::peers::NatsServer;
use crate::util::{Sandbox, finish_within};

/// How long a submitted run may take before its test fails (they take seconds).
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// A submitted run's end, within [`RUN_LIMIT`].
pub trait Finish {
    fn finish(self) -> Output;
}

impl Finish for Child {
    fn finish(self) -> Output {
        finish_within(self, RUN_LIMIT, "a forge-host submit")
    }
}

/// A `forge-host worker` with a data directory of its own; its stderr is kept (and shown when
/// its test fails), and it is killed when dropped.
pub struct Worker {
    child: Child,
    pub name: String,
    stderr: Arc<Mutex<String>>,
    pub sandbox: Sandbox,
}

impl Worker {
    /// Worker `name` on `nats`, with `extra` flags, once it says it serves.
    pub fn start(nats: &NatsServer, name: &str, extra: &[&str]) -> Self {
        let mut args: Vec<&OsStr> = ["--nats", &nats.url, "--name", name]
            .into_iter()
            .map(OsStr::new)
            .collect();
        args.extend(extra.iter().map(OsStr::new));
        Worker::launch(name, &args, &[], &mut |_| {})
    }

    /// `forge-host worker ARGS` with `env`, once it says it serves.
    pub fn with_env(args: &[&OsStr], env: &[(&str, &str)]) -> Self {
        Worker::launch("worker", args, env, &mut |_| {})
    }

    /// `forge-host worker ARGS`, once it says it serves; `on_line` hears each line it prints on
    /// stderr before that.
    pub fn watching(args: &[&OsStr], on_line: &mut dyn FnMut(&str)) -> Self {
        Worker::launch("worker", args, &[], on_line)
    }

    fn launch(
        name: &str,
        args: &[&OsStr],
        env: &[(&str, &str)],
        on_line: &mut dyn FnMut(&str),
    ) -> Self {
        let sandbox = Sandbox::new();
        let mut all: Vec<&OsStr> = vec![OsStr::new("worker")];
        all.extend(args);
        let mut command = sandbox.command(&all);
        command.envs(env.iter().copied());
        let mut child = command.spawn().expect("start a worker");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    stderr
                        .lock()
                        .expect("stderr")
                        .push_str(&format!("{line}\n"));
                    if line.contains("serving queue") {
                        break;
                    }
                    on_line(&line);
                }
                _ => panic!(
                    "worker {name} ended before it served:\n{}",
                    stderr.lock().expect("stderr")
                ),
            }
        }
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().expect("stderr").push_str(&format!("{line}\n"));
            }
        });
        Worker {
            child,
            name: name.to_string(),
            stderr,
            sandbox,
        }
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Whether its process has ended (by itself: a fault point, a crash).
    pub fn has_ended(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// `kill -9`.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("worker {} said:\n{}", self.name, self.stderr());
        }
    }
}

/// `forge-host submit -e CODE --lang js --json --nats URL EXTRA`, started.
pub fn submit(sandbox: &Sandbox, nats: &NatsServer, code: &str, extra: &[&str]) -> Child {
    let mut args = vec![
        "submit", "-e", code, "--lang", "js", "--json", "--nats", &nats.url,
    ];
    args.extend(extra);
    sandbox.command(&args).spawn().expect("submit")
}

/// The report a `submit --json` printed.
pub fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The workers' merged journal: each attempt's latest record, with `worker`, `run`, `attempt`.
pub fn merged_journal(sandbox: &Sandbox, nats: &NatsServer) -> Vec<Value> {
    let listed = sandbox.forge(&[
        "journal", "list", "--json", "--limit", "1000", "--nats", &nats.url,
    ]);
    assert_eq!(listed.code(), 0, "{}", listed.stderr());
    serde_json::from_str::<Value>(&listed.stdout())
        .expect("json")
        .as_array()
        .cloned()
        .unwrap_or_default()
}
