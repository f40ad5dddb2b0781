//! A build that runs beside the others, its output in a log file: the test command's builds
//! leave a core idle for stretches (configure scripts, pip, componentize-py, the science build's
//! single-threaded steps, a crate that compiles alone, links), and a second build fills them.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::{Result, describe};

/// A child process building something; stopped (with everything under it) when dropped
/// unfinished, as when the command that started it failed first.
pub struct Background {
    what: &'static str,
    child: Child,
    log: PathBuf,
    started: Instant,
}

impl Background {
    /// Starts `command` with its output in `log`, at CPU priority `nice` (0 as the rest, 19 the
    /// lowest: a `nice 19` process gets about 1.5% of a core that a normal one also wants).
    pub fn start(
        what: &'static str,
        command: &mut Command,
        log: PathBuf,
        nice: u8,
    ) -> Result<Self> {
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let copy = file
            .try_clone()
            .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
        let mut niced = Command::new("nice");
        niced
            .args(["-n", &nice.to_string()])
            .arg(command.get_program())
            .args(command.get_args())
            .stdin(Stdio::null())
            .stdout(copy)
            .stderr(file)
            // Its own process group, so that stopping it stops the cargo and rustc under it.
            .process_group(0);
        if let Some(dir) = command.get_current_dir() {
            niced.current_dir(dir);
        }
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => niced.env(key, value),
                None => niced.env_remove(key),
            };
        }
        eprintln!(
            "xtask: in the background: {} (log: {})",
            describe(&niced),
            log.display()
        );
        let child = niced
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", describe(&niced)))?;
        Ok(Self {
            what,
            child,
            log,
            started: Instant::now(),
        })
    }

    /// Waits for it; the end of its log when it failed.
    pub fn finish(mut self) -> Result {
        eprintln!("xtask: waiting for {}", self.what);
        let status = self
            .child
            .wait()
            .map_err(|e| format!("{}: {e}", self.what))?;
        let minutes = self.started.elapsed().as_secs_f64() / 60.0;
        if status.success() {
            eprintln!("xtask: {} ended after {minutes:.1} min", self.what);
            return Ok(());
        }
        let tail = tail(&std::fs::read_to_string(&self.log).unwrap_or_default(), 60);
        Err(format!(
            "{} failed ({status}) after {minutes:.1} min; the end of {}:\n{tail}",
            self.what,
            self.log.display()
        ))
    }
}

/// The last `lines` lines of a log's `text`, for an error message.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
            let _ = self.child.wait();
        }
    }
}
