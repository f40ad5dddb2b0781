//! What a run needs from its recording: for a recorded run, a [`Recorder`] holding what is known
//! at the start (the insecure seed, the catalog, the state snapshot); for a replay, the tape's
//! snapshot and catalog in place of the store's and the registry's, and a [`Player`]. After the
//! run, the recorder's tape is closed with how the run ended, by hashes.

use std::sync::Arc;

use wasmtime_wasi::Rng;

use super::report::RunReport;
use super::{ExecutionRequest, Kernel};
use crate::error::{Error, Result};
use crate::journal::{Blobs, RecordMode, RecordedEntry, RecordedOutcome, Tape};
use crate::primitives::sha256_hex;
use crate::state::{Entry, Snapshot};
use crate::tape::{Deck, Recorder};
use crate::tools::{ToolRegistry, recorded_catalog, replayed_registry};

/// The tape side of a prepared run.
pub(super) struct Taped {
    pub tools: Arc<ToolRegistry>,
    pub snapshot: Snapshot,
    pub deck: Deck,
    pub insecure_seed: u128,
}

fn recorded_snapshot(snapshot: &Snapshot) -> Vec<RecordedEntry> {
    snapshot
        .entries
        .iter()
        .map(|(key, entry)| RecordedEntry {
            key: key.clone(),
            value: entry.value.clone(),
            revision: entry.revision,
        })
        .collect()
}

/// The snapshot a tape recorded.
pub(super) fn snapshot_of(tape: &Tape) -> Snapshot {
    Snapshot {
        entries: tape
            .snapshot
            .iter()
            .map(|entry| {
                let value = Entry {
                    value: entry.value.clone(),
                    revision: entry.revision,
                };
                (entry.key.clone(), value)
            })
            .collect(),
    }
}

pub(super) fn prepare(kernel: &Kernel, request: &ExecutionRequest) -> Result<Taped> {
    if let Some(replay) = &request.lineage().replay {
        let tape = &replay.tape;
        let insecure_seed = tape.insecure_seed.parse().map_err(|_| {
            Error::invalid_input(format!(
                "the recording of {} has no readable insecure seed",
                replay.of
            ))
        })?;
        // A resume runs live tools past its tape: the registry the caller connected, which
        // must still hold what the recorded run saw.
        let tools = if replay.is_replay() {
            Arc::new(replayed_registry(&tape.catalog))
        } else {
            kernel.tools.clone()
        };
        return Ok(Taped {
            tools,
            snapshot: snapshot_of(tape),
            deck: Deck::Playing(replay.player.clone()),
            insecure_seed,
        });
    }
    let snapshot = kernel
        .state
        .snapshot(&request.options().session)
        .map_err(|e| Error::from_source(e.code(), e))?;
    let mut seed = [0; 16];
    wasmtime_wasi::thread_rng().fill_bytes(&mut seed);
    let insecure_seed = u128::from_le_bytes(seed);
    let deck = match request.options().record {
        RecordMode::Off => Deck::Off,
        mode => Deck::Recording(Recorder::new(
            mode,
            request.options().limits.max_record_bytes,
            Blobs::new(kernel.data_dir.blob_dir()),
            Tape {
                insecure_seed: insecure_seed.to_string(),
                catalog: recorded_catalog(&kernel.tools),
                snapshot: recorded_snapshot(&snapshot),
                ..Tape::default()
            },
        )),
    };
    Ok(Taped {
        tools: kernel.tools.clone(),
        snapshot,
        deck,
        insecure_seed,
    })
}

/// How `report` ended, by hashes.
pub(super) fn outcome_of(report: &RunReport) -> RecordedOutcome {
    let hash = |text: &str| sha256_hex(text.as_bytes());
    RecordedOutcome {
        status: report.status.as_str().to_string(),
        error_code: report.error.as_ref().map(|e| e.code),
        value_sha256: report.value.as_ref().map(|v| hash(&v.to_string())),
        text_sha256: hash(&serde_json::Value::from(report.text.clone()).to_string()),
        stdout_sha256: hash(&report.stdout),
        stderr_sha256: hash(&report.stderr),
        fuel_consumed: report.metrics.fuel_consumed,
    }
}

/// The recorded run's tape, closed with its outcome (`None` when it was not recorded).
pub(super) fn finish(deck: &Deck, report: &RunReport) -> Option<Tape> {
    let recorder = match deck {
        Deck::Recording(recorder) => recorder.clone(),
        // A resumed run records its own tape, prefix and live part alike.
        Deck::Playing(player) => player.recorder()?,
        Deck::Off => return None,
    };
    Some(recorder.finish(outcome_of(report)))
}

/// The recorder of a resumed run: the paused run's seed, catalog and snapshot, since it
/// continues that run.
pub(super) fn resume_recorder(
    kernel: &Kernel,
    limits: &crate::limits::Limits,
    paused: &Tape,
) -> Recorder {
    Recorder::new(
        RecordMode::Full,
        limits.max_record_bytes,
        Blobs::new(kernel.data_dir.blob_dir()),
        Tape {
            insecure_seed: paused.insecure_seed.clone(),
            random_seed: paused.random_seed.clone(),
            catalog: paused.catalog.clone(),
            snapshot: paused.snapshot.clone(),
            ..Tape::default()
        },
    )
}
