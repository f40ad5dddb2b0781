//! The live task log of an execution (SPEC §5): everything it emits, as it happens, in a file
//! only its owner can read (mode 0600), bounded in bytes; `forge-host logs ID [-f]` reads it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::{Event, EventSink};

struct Inner {
    file: File,
    written: u64,
    truncated: bool,
}

/// An open task log.
#[derive(Clone)]
pub struct TaskLog {
    inner: Arc<Mutex<Inner>>,
    max_bytes: u64,
}

impl TaskLog {
    /// Creates the log at `path` (mode 0600), holding at most `max_bytes`.
    pub fn create(path: &Path, max_bytes: u64) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        Ok(TaskLog {
            inner: Arc::new(Mutex::new(Inner {
                file,
                written: 0,
                truncated: false,
            })),
            max_bytes,
        })
    }

    fn write(&self, bytes: &[u8]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.truncated {
            return;
        }
        let room = self.max_bytes.saturating_sub(inner.written);
        let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if inner.file.write_all(&bytes[..take]).is_ok() {
            inner.written += take as u64;
        }
        if take < bytes.len() {
            inner.truncated = true;
            let note = format!(
                "\n[forge-host: the log stops here, at its limit of {} bytes]\n",
                self.max_bytes
            );
            let _ = inner.file.write_all(note.as_bytes());
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
        let log = TaskLog::create(&path, 32).expect("create");
        let sink = log.tee(None);
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
