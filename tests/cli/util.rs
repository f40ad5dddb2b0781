//! Helpers for end-to-end tests: run the real `forge-host` binary with a private data directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
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
        serde_json::from_slice(&self.output.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            )
        })
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

    /// Writes a script into the sandbox and returns its path.
    pub fn script(&self, name: &str, source: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, source).expect("write script");
        path
    }

    /// `forge-host ARGS` with this sandbox's data directory, run from the sandbox.
    pub fn forge(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_forge-host"))
            .args(args)
            .arg("--data-dir")
            .arg(self.data_dir())
            .current_dir(self.dir.path())
            .env_remove("FORGE_HOST_DATA_DIR")
            .output()
            .expect("run forge-host");
        Run { output }
    }

    /// `forge-host run --json SCRIPT ARGS` for a script given as source.
    pub fn run_js(&self, source: &str, args: &[&str]) -> Run {
        let path = self.script("script.js", source);
        let path = path.to_string_lossy().into_owned();
        let mut all = vec!["run", path.as_str(), "--json"];
        all.extend_from_slice(args);
        self.forge(&all)
    }
}
