//! The names forge-host uses on NATS, in one place.

use crate::error::Error;

/// The work-queue stream of run requests.
pub const RUNS_STREAM: &str = "FORGE_RUNS";
/// Its subjects: `forge.run.<queue>`.
pub const RUN_SUBJECT: &str = "forge.run";
/// The stream of journal records: `forge.journal.<run>.<attempt>`.
pub const JOURNAL_STREAM: &str = "FORGE_JOURNAL";
/// Its subject prefix.
pub const JOURNAL_SUBJECT: &str = "forge.journal";
/// The object store of scripts, inputs and reports.
pub const BLOBS: &str = "forge_blobs";
/// The key-value bucket of run records (which attempt owns a run).
pub const OWNERS: &str = "forge_runs";
/// The queue of requests that name none.
pub const DEFAULT_QUEUE: &str = "default";
/// The subject prefix of cancellations: `forge.cancel.<run>`.
pub const CANCEL_SUBJECT: &str = "forge.cancel";
/// The header carrying the subject a request's replies go to.
pub const REPLY_HEADER: &str = "Forge-Reply";

/// Checks a queue name: it becomes a subject token and part of a consumer name.
pub fn validate_queue(queue: &str) -> Result<(), Error> {
    if is_token(queue, 64) {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "`{queue}` is not a queue name (1 to 64 of A-Z a-z 0-9 - _)"
        )))
    }
}

/// Checks a queued run's id: it becomes a subject token and a key of the run records.
pub fn validate_run_id(id: &str) -> Result<(), Error> {
    if is_token(id, 128) {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "`{id}` is not a run id (1 to 128 of A-Z a-z 0-9 - _)"
        )))
    }
}

fn is_token(text: &str, max: usize) -> bool {
    !text.is_empty()
        && text.len() <= max
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The subject of `queue`'s requests.
pub fn run_subject(queue: &str) -> String {
    format!("{RUN_SUBJECT}.{queue}")
}

/// The durable consumer `queue`'s workers share.
pub fn consumer(queue: &str) -> String {
    format!("workers-{queue}")
}

/// The object holding the bytes of `sha256`.
pub fn blob(sha256: &str) -> String {
    format!("sha256-{sha256}")
}

/// The subject a submitter cancels run `run` on, once a worker has taken it.
pub fn cancel_subject(run: &str) -> String {
    format!("{CANCEL_SUBJECT}.{run}")
}

/// The key, in the run records' bucket, that says run `run`'s submitter cancelled it after a
/// worker took it: a worker that takes over from a dead attempt answers it `CANCELLED`.
pub fn cancel_key(run: &str) -> String {
    format!("{run}.cancelled")
}

/// The subject of the journal record of attempt `attempt` at run `run`.
pub fn journal_subject(run: &str, attempt: u32) -> String {
    format!("{JOURNAL_SUBJECT}.{run}.{attempt}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names_are_subject_tokens() {
        assert!(validate_queue("default").is_ok());
        assert!(validate_queue("gpu_2-a").is_ok());
        for bad in ["", "a.b", "a b", "*", ">", &"x".repeat(65)] {
            assert!(validate_queue(bad).is_err(), "{bad}");
        }
        assert_eq!(run_subject("q"), "forge.run.q");
        assert!(validate_run_id("s01ABC-x_y").is_ok());
        for bad in ["", "a.b", "a>", "*", &"x".repeat(129)] {
            assert!(validate_run_id(bad).is_err(), "{bad}");
        }
    }
}
