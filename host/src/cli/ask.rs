//! `--ask` on a terminal: a call the policy would deny is put to the person at the keyboard,
//! y/N, with the bar out of the way. Without a terminal there is nobody to ask: the run pauses at
//! the call, for `forge-host resume ID --approve|--deny`.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use forge_host::permissions::{Asker, Question};

use super::progress::Printer;

/// Longest input shown in a question, in characters.
const MAX_SHOWN_INPUT_CHARS: usize = 300;

/// An asker on this process's terminal, when stdin and stderr are one.
pub fn terminal_asker(printer: &Printer) -> Option<Asker> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    let printer = printer.clone();
    Some(Arc::new(move |question: &Question| {
        let mut answer = String::new();
        printer.above_bar(|| {
            let input: String = question
                .input
                .to_string()
                .chars()
                .take(MAX_SHOWN_INPUT_CHARS)
                .collect();
            let mut stderr = std::io::stderr().lock();
            let _ = write!(
                stderr,
                "forge-host: the script calls `{}` ({} effect) with {input}\n  {}\n  allow it? [y/N] ",
                question.tool,
                question.effect.as_str(),
                question.reason
            );
            let _ = stderr.flush();
            let _ = std::io::stdin().lock().read_line(&mut answer);
        });
        matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
    }))
}
