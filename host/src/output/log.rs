//! The live task log of an execution: everything it emits, as it happens, in a file
//! only its owner can read (mode 0600), bounded in bytes; `forge-host logs ID [-f]` reads it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Event, EventSink};

struct Inner {
    path: PathBuf,
    /// Created at the first write: a run that prints nothing costs no file.
    file: Option<File>,
    written: u64,
    truncated: bool,
}

/// The task log of one execution.
#[derive(Clone)]
pub struct TaskLog {
    inner: Arc<Mutex<Inner>>,
    max_bytes: u64,
}

fn open(path: &Path) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

impl TaskLog {
    /// The log at `path` (created with mode 0600 when something is first written), holding at
    /// most `max_bytes`.
    pub fn new(path: PathBuf, max_bytes: u64) -> Self {
        TaskLog {
            inner: Arc::new(Mutex::new(Inner {
                path,
                file: None,
                written: 0,
                truncated: false,
            })),
            max_bytes,
        }
    }

    /// Appends `bytes` that did not come from the guest (a tool server's stderr line).
    pub fn append(&self, bytes: &[u8]) {
        self.write(bytes);
    }

    fn write(&self, bytes: &[u8]) {
        let Ok(mut guard) = self.inner.lock() else {
            return;
        };
        let inner = &mut *guard;
        if inner.truncated || bytes.is_empty() {
            return;
        }
        if inner.file.is_none() {
            match open(&inner.path) {
                Ok(file) => inner.file = Some(file),
                // No log is no reason to stop the run; `logs` then has nothing to show.
                Err(_) => {
                    inner.truncated = true;
                    return;
                }
            }
        }
        let Some(file) = inner.file.as_mut() else {
            return;
        };
        let room = self.max_bytes.saturating_sub(inner.written);
        let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if file.write_all(&bytes[..take]).is_ok() {
            inner.written += take as u64;
        }
        if take < bytes.len() {
            inner.truncated = true;
            let note = format!(
                "\n[forge-host: the log stops here, at its limit of {} bytes]\n",
                self.max_bytes
            );
            let _ = file.write_all(note.as_bytes());
        }
    }

    /// A sink that writes every event to this log, then passes it to `next`.
    pub fn tee(&self, next: Option<EventSink>) -> EventSink {
        let log = self.clone();
        Arc::new(move |event: Event| {
            match &event {
                Event::Stdout(bytes) | Event::Stderr(bytes) => log.write(bytes),
                Event::Text(value) => {
                    let line = match value {
                        serde_json::Value::String(text) => format!("[text] {text}\n"),
                        other => format!("[text] {other}\n"),
                    };
                    log.write(line.as_bytes());
                }
                Event::Progress {
                    message,
                    completed,
                    total,
                } => {
                    let counts = match (completed, total) {
                        (Some(done), Some(total)) => format!(" ({done}/{total})"),
                        (Some(done), None) => format!(" ({done})"),
                        _ => String::new(),
                    };
                    log.write(format!("[progress] {message}{counts}\n").as_bytes());
                }
                Event::Started { .. } => {}
            }
            if let Some(next) = &next {
                next(event);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_log_is_private_bounded_and_says_where_it_stops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("logs/x.log");
        let log = TaskLog::new(path.clone(), 32);
        let sink = log.tee(None);
        sink(Event::Started { id: "x".into() });
        assert!(!path.exists(), "nothing written, no file");
        sink(Event::Stdout(bytes::Bytes::from("hello\n")));
        sink(Event::Progress {
            message: "half".into(),
            completed: Some(1.0),
            total: Some(2.0),
        });
        sink(Event::Stdout(bytes::Bytes::from("x".repeat(100))));
        sink(Event::Stdout(bytes::Bytes::from("never written")));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("hello\n[progress] half (1/2)\n"), "{text}");
        assert!(
            text.contains("the log stops here") && !text.contains("never"),
            "{text}"
        );
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
