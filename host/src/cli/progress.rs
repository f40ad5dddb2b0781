//! Printing a run's events as they happen: the script's stdout and `text()` values on stdout,
//! its stderr and progress on stderr. On a terminal progress is an `indicatif` bar, which other
//! output is printed above and which is cleared before the result; with `--json` progress is
//! JSON lines on stderr (stdout is kept for the one report); otherwise plain lines.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use forge_host::output::{Event, EventSink};

/// Positions of the bar: progress may be fractional, so it is drawn in thousandths.
const BAR_STEPS: u64 = 1000;

/// How events are shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Json,
    Bar,
    Lines,
}

/// The printer of one run's events.
#[derive(Clone)]
pub struct Printer {
    mode: Mode,
    /// The bar, drawn from the first progress event on.
    bar: Arc<Mutex<Option<ProgressBar>>>,
}

impl Printer {
    /// A printer for `--json` or for a person.
    pub fn new(json: bool) -> Self {
        let mode = if json {
            Mode::Json
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        };
        Printer {
            mode,
            bar: Arc::default(),
        }
    }

    /// The sink the kernel calls.
    pub fn sink(&self) -> EventSink {
        let printer = self.clone();
        Arc::new(move |event| printer.print(event))
    }

    /// Clears the bar, so that what follows is printed on a clean line.
    pub fn finish(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut bar| bar.take()) {
            bar.finish_and_clear();
        }
    }

    /// Runs `write` with the bar out of the way.
    pub fn above_bar(&self, write: impl FnOnce()) {
        match self.bar.lock().ok().as_ref().and_then(|bar| bar.as_ref()) {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    fn print(&self, event: Event) {
        let json = self.mode == Mode::Json;
        match event {
            Event::Stdout(bytes) if !json => self.above_bar(|| {
                let _ = std::io::stdout().write_all(&bytes);
            }),
            Event::Stderr(bytes) if !json => self.above_bar(|| {
                let _ = std::io::stderr().write_all(&bytes);
            }),
            Event::Text(value) if !json => self.above_bar(|| {
                let text = match value {
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                let _ = writeln!(std::io::stdout(), "{text}");
            }),
            Event::Started { id } if json => {
                let _ = writeln!(std::io::stderr(), "{}", json!({"started": {"id": id}}));
            }
            Event::Progress {
                message,
                completed,
                total,
            } => match self.mode {
                Mode::Json => {
                    let line = json!({"progress": {"message": message, "completed": completed, "total": total}});
                    let _ = writeln!(std::io::stderr(), "{line}");
                }
                Mode::Bar => self.draw(&message, completed, total),
                Mode::Lines => {
                    let line = progress_line(&message, completed, total);
                    let _ = writeln!(std::io::stderr(), "progress: {line}");
                }
            },
            _ => {}
        }
    }

    fn draw(&self, message: &str, completed: Option<f64>, total: Option<f64>) {
        let Ok(mut slot) = self.bar.lock() else {
            return;
        };
        let bar = slot.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(Some(BAR_STEPS), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("[{bar:20}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("#> "),
            );
            bar
        });
        let ratio = match (completed, total) {
            (Some(done), Some(total)) if total > 0.0 => (done / total).clamp(0.0, 1.0),
            _ => 0.0,
        };
        bar.set_message(counted(message, completed, total));
        bar.set_position((ratio * BAR_STEPS as f64).round() as u64);
    }
}

/// `done/total message`, or as much of it as is known.
fn counted(message: &str, completed: Option<f64>, total: Option<f64>) -> String {
    match (completed, total) {
        (Some(done), Some(total)) => format!("{done}/{total} {message}"),
        (Some(done), None) => format!("{done} {message}"),
        _ => message.to_string(),
    }
}

/// A progress report as one line of text: a bar of `#` when the total is known.
fn progress_line(message: &str, completed: Option<f64>, total: Option<f64>) -> String {
    match (completed, total) {
        (Some(done), Some(total)) if total > 0.0 => {
            let ratio = (done / total).clamp(0.0, 1.0);
            let filled = (ratio * 20.0).round() as usize;
            format!(
                "[{}{}] {}",
                "#".repeat(filled),
                " ".repeat(20 - filled),
                counted(message, completed, Some(total))
            )
        }
        _ => counted(message, completed, total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_show_what_is_known() {
        assert_eq!(
            progress_line("step", Some(5.0), Some(10.0)),
            "[##########          ] 5/10 step"
        );
        assert_eq!(progress_line("step", Some(3.0), None), "3 step");
        assert_eq!(progress_line("step", None, None), "step");
    }
}
