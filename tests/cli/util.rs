//! Helpers for end-to-end tests: run the real `forge-host` binary with a private data directory.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// Command-line arguments of mixed kinds (`"--out"`, `&path`, `&format!(..)`) as one array of
/// `&OsStr`, so paths are passed as paths. Each argument is a reference to something that is
/// `AsRef<OsStr>`.
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        [$(::std::ffi::OsStr::new($arg)),*]
    };
}
pub(crate) use args;

/// No arguments after the script.
pub const NO_ARGS: &[&str] = &[];

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/engines/`, where `cargo xtask build` publishes the engine components.
pub fn engines_dir() -> PathBuf {
    repo().join("target/engines")
}

/// The published component of engine `id` (`javascript-quickjs`, `python-cpython`, ...).
pub fn engine_path(id: &str) -> PathBuf {
    engines_dir().join(format!("{id}.wasm"))
}

/// The longest one `forge-host` command of a test may take (the slowest, the upstream numpy and
/// pandas suites, take a few minutes): a hang fails its test instead of the whole suite.
pub const FORGE_LIMIT: Duration = Duration::from_secs(900);

/// Waits for `child` to end, at most `limit`: past it the child is killed and the test fails,
/// naming `what` and showing what the child printed, rather than hanging the whole suite.
pub fn finish_within(child: Child, limit: Duration, what: &str) -> Output {
    let pid = child.id();
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match ended.recv_timeout(limit) {
        Ok(output) => output.expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            let output = ended
                .recv_timeout(Duration::from_secs(10))
                .ok()
                .and_then(Result::ok);
            let (stdout, stderr) = output.map_or_else(Default::default, |o| {
                (
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                    String::from_utf8_lossy(&o.stderr).into_owned(),
                )
            });
            panic!(
                "{what} had not ended after {limit:?}: killed\nstdout: {stdout}\nstderr: {stderr}"
            );
        }
    }
}

/// The language of a script given as source.
#[derive(Clone, Copy, Debug)]
pub enum Lang {
    Js,
    Py,
}

impl Lang {
    /// The file the script is written to; its extension picks the engine.
    pub fn script_name(self) -> &'static str {
        match self {
            Lang::Js => "script.js",
            Lang::Py => "script.py",
        }
    }
}

/// A private data directory (and scratch folder) for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

/// What one `forge-host` invocation did.
pub struct Run {
    pub output: Output,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The one JSON object of `--json`.
    pub fn report(&self) -> Value {
        // Reports may nest as deep as the boundary allows (512), deeper than serde_json's default.
        let mut json = serde_json::Deserializer::from_slice(&self.output.stdout);
        json.disable_recursion_limit();
        serde::Deserialize::deserialize(&mut json).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
    }

    /// The report, which must say the run succeeded (else this panics with the report and the
    /// process's stderr).
    #[track_caller]
    pub fn assert_succeeded(&self) -> Value {
        let report = self.report();
        assert_eq!(
            report["status"],
            "succeeded",
            "{report:#}\nstderr:\n{}",
            self.stderr()
        );
        report
    }

    pub fn status(&self) -> String {
        self.report()["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn error_code(&self) -> String {
        self.report()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Sandbox {
    pub fn new() -> Self {
        Sandbox {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// An empty workspace folder, `ws`, beside the data directory.
    pub fn workspace(&self) -> PathBuf {
        let ws = self.dir.path().join("ws");
        std::fs::create_dir_all(&ws).expect("mkdir ws");
        ws
    }

    /// Writes a script into the sandbox and returns its path.
    pub fn script(&self, name: &str, source: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, source).expect("write script");
        path
    }

    /// The `forge-host` binary with ARGS, run from the sandbox.
    fn binary(&self, args: &[impl AsRef<OsStr>]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_forge-host"));
        command.args(args).current_dir(self.dir.path());
        command
    }

    /// `forge-host ARGS` with this sandbox's data directory, run from the sandbox; one that has
    /// not ended within [`FORGE_LIMIT`] is killed and fails the test.
    pub fn forge(&self, args: &[impl AsRef<OsStr>]) -> Run {
        let child = self
            .binary(args)
            .arg("--data-dir")
            .arg(self.data_dir())
            .env_remove("FORGE_HOST_DATA_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run forge-host");
        let output = finish_within(child, FORGE_LIMIT, "forge-host");
        Run { output }
    }

    /// `forge-host ARGS` for a test that spawns (or kills) the process itself: run from the
    /// sandbox, this sandbox's data directory in `FORGE_HOST_DATA_DIR`, stdout and stderr piped.
    pub fn command(&self, args: &[impl AsRef<OsStr>]) -> Command {
        let mut command = self.binary(args);
        command
            .env("FORGE_HOST_DATA_DIR", self.data_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// `forge-host run SCRIPT --json ARGS` for a script in `lang` given as source.
    /// `forge-host ARGS` (with this sandbox's data directory) on a terminal of its own: `script`
    /// (util-linux) runs it on a pty, so it draws what it draws for a person and reads what is
    /// typed on the command's stdin.
    pub fn on_terminal(&self, args: &[impl AsRef<OsStr>]) -> Command {
        let quote = |arg: &OsStr| format!("'{}'", arg.to_string_lossy().replace('\'', "'\\''"));
        let mut line = quote(OsStr::new(env!("CARGO_BIN_EXE_forge-host")));
        for arg in args {
            line.push(' ');
            line.push_str(&quote(arg.as_ref()));
        }
        line.push_str(" --data-dir ");
        line.push_str(&quote(self.data_dir().as_os_str()));
        let mut command = Command::new("script");
        command
            .args(["-qec", &line, "/dev/null"])
            .current_dir(self.dir.path());
        command
    }

    pub fn run_script(&self, lang: Lang, source: &str, args: &[impl AsRef<OsStr>]) -> Run {
        let script = self.script(lang.script_name(), source);
        let mut all = args!["run", &script, "--json"].to_vec();
        all.extend(args.iter().map(AsRef::as_ref));
        self.forge(&all)
    }

    /// `forge-host run SCRIPT --json ARGS` for JavaScript given as source.
    pub fn run_js(&self, source: &str, args: &[impl AsRef<OsStr>]) -> Run {
        self.run_script(Lang::Js, source, args)
    }

    /// `forge-host run SCRIPT --json ARGS` for Python given as source.
    pub fn run_py(&self, source: &str, args: &[impl AsRef<OsStr>]) -> Run {
        self.run_script(Lang::Py, source, args)
    }
}

/// A field of `/proc/PID/status`, in KiB.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}
