//! Playing a tape back: each request of the guest is answered from the recorded events, and the
//! first that does not match what the recorded run asked is the divergence.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::random::RandomStreams;
use super::{PlayedCompletion, Recorder, Served, lock};
use crate::journal::{BeginOutcome, Blobs, CompletionOutcome, Tape, TapeEvent};
use crate::primitives::sha256_hex;

/// Serves a tape back to the guest.
#[derive(Clone)]
pub struct Player(Arc<Mutex<Playing>>);

struct Playing {
    blobs: Blobs,
    wall: VecDeque<(usize, Duration)>,
    monotonic: VecDeque<(usize, u64)>,
    random: VecDeque<RandomReads>,
    insecure: VecDeque<RandomReads>,
    /// The streams the recorded run's random bytes came from.
    streams: Option<RandomStreams>,
    /// Begins and completions, in the order the guest met them.
    calls: VecDeque<(usize, TapeEvent)>,
    /// Calls begun and not yet completed.
    in_flight: HashSet<u64>,
    /// Tool calls begun so far (1-based positions in divergence messages).
    begun: u32,
    divergence: Option<String>,
    trace: Vec<String>,
    /// Record the trace (`replay --trace`).
    tracing: bool,
    /// A resumed run: once the tape is done it goes on live, and everything it is served, from
    /// the tape or live, is recorded here (its own tape).
    live_after: Option<Recorder>,
}

impl Player {
    /// A player of `tape`'s events, with tool responses read from `blobs`.
    pub fn new(tape: &Tape, blobs: Blobs, tracing: bool) -> Self {
        let mut playing = Playing {
            blobs,
            wall: VecDeque::new(),
            monotonic: VecDeque::new(),
            random: VecDeque::new(),
            insecure: VecDeque::new(),
            streams: RandomStreams::from_hex(&tape.random_seed),
            calls: VecDeque::new(),
            in_flight: HashSet::new(),
            begun: 0,
            divergence: None,
            trace: Vec::new(),
            tracing,
            live_after: None,
        };
        for (at, event) in tape.events.iter().enumerate() {
            match event {
                TapeEvent::WallClock { secs, nanos } => {
                    playing.wall.push_back((at, Duration::new(*secs, *nanos)))
                }
                TapeEvent::Monotonic { nanos } => playing.monotonic.push_back((at, *nanos)),
                TapeEvent::Random { bytes, reads } => {
                    playing
                        .random
                        .push_back(RandomReads::new(at, *bytes, *reads));
                }
                TapeEvent::InsecureRandom { bytes, reads } => {
                    playing
                        .insecure
                        .push_back(RandomReads::new(at, *bytes, *reads));
                }
                TapeEvent::Begin { .. }
                | TapeEvent::Complete { .. }
                | TapeEvent::Elapsed { .. } => playing.calls.push_back((at, event.clone())),
            }
        }
        Player(Arc::new(Mutex::new(playing)))
    }

    /// A player for a resumed run: it serves `tape`, then lets the run go on live, recording
    /// all of it with `recorder`.
    pub fn resuming(tape: &Tape, blobs: Blobs, recorder: Recorder) -> Self {
        let player = Player::new(tape, blobs, false);
        let mut playing = lock(&player.0);
        // The call the run paused at is met live, with the person's answer.
        playing.calls.retain(|(_, event)| {
            !matches!(
                event,
                TapeEvent::Begin {
                    outcome: BeginOutcome::AwaitingApproval { .. },
                    ..
                }
            )
        });
        playing.live_after = Some(recorder);
        drop(playing);
        player
    }

    /// The recorder of a resumed run.
    pub fn recorder(&self) -> Option<Recorder> {
        lock(&self.0).live_after.clone()
    }

    fn diverge(playing: &mut Playing, why: String) {
        if playing.divergence.is_none() {
            playing.trace.push(format!("DIVERGED: {why}"));
            playing.divergence = Some(why);
        }
    }

    fn played(playing: &mut Playing, at: usize, line: impl FnOnce() -> String) {
        if playing.tracing {
            let line = line();
            playing.trace.push(format!("#{:<5} {line}", at + 1));
        }
    }

    /// The first request that did not match the tape, if any.
    pub fn divergence(&self) -> Option<String> {
        lock(&self.0).divergence.clone()
    }

    /// Notes a divergence found outside the guest's requests (the result differs, ...).
    pub fn note_divergence(&self, why: String) {
        Self::diverge(&mut lock(&self.0), why);
    }

    /// The timeline of what was served (with `tracing`).
    pub fn trace(&self) -> Vec<String> {
        lock(&self.0).trace.clone()
    }

    /// What the tape still holds that the guest never asked for, if anything.
    pub fn unplayed(&self) -> Option<String> {
        let playing = lock(&self.0);
        let left = [
            ("tool call events", playing.calls.len()),
            ("wall-clock readings", playing.wall.len()),
            ("monotonic-clock readings", playing.monotonic.len()),
            ("random reads", reads_left(&playing.random)),
            ("insecure random reads", reads_left(&playing.insecure)),
        ];
        let left: Vec<String> = left
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        (!left.is_empty())
            .then(|| format!("the replay ended with {} not asked for", left.join(", ")))
    }

    /// The next wall-clock reading: from the tape; past it, `live` (a divergence, unless the
    /// run goes on live).
    pub fn wall(&self, live: Duration) -> Duration {
        let mut playing = lock(&self.0);
        let now = match playing.wall.pop_front() {
            Some((at, now)) => {
                Self::played(&mut playing, at, || {
                    let (secs, nanos) = (now.as_secs(), now.subsec_nanos());
                    format!("wall clock -> {secs}.{nanos:09} s")
                });
                now
            }
            None => {
                Self::past_the_tape(&mut playing, "read the wall clock");
                live
            }
        };
        if let Some(recorder) = &playing.live_after {
            recorder.wall(now);
        }
        now
    }

    /// The next monotonic-clock reading, as [`Player::wall`].
    pub fn monotonic(&self, live: u64) -> u64 {
        let mut playing = lock(&self.0);
        let nanos = match playing.monotonic.pop_front() {
            Some((at, nanos)) => {
                Self::played(&mut playing, at, || {
                    format!("monotonic clock -> {nanos} ns")
                });
                nanos
            }
            None => {
                Self::past_the_tape(&mut playing, "read the monotonic clock");
                live
            }
        };
        if let Some(recorder) = &playing.live_after {
            recorder.monotonic(nanos);
        }
        nanos
    }

    /// A request past the end of the tape: a divergence, unless the run goes on live.
    fn past_the_tape(playing: &mut Playing, what: &str) {
        if playing.live_after.is_none() {
            Self::diverge(
                playing,
                format!("the guest {what} more often than the recorded run"),
            );
        }
    }

    /// Fills `buffer` with the recorded run's next random bytes, drawn again from the streams
    /// its seed keys. A read of another length than the recorded one, or past the tape, is a
    /// divergence, unless the run goes on live (then the streams go on too).
    pub fn random(&self, buffer: &mut [u8], insecure: bool) {
        let mut playing = lock(&self.0);
        let tracing = playing.tracing;
        let goes_on_live = playing.live_after.is_some();
        let queue = if insecure {
            &mut playing.insecure
        } else {
            &mut playing.random
        };
        let mut traced = None;
        let why = match queue.front_mut() {
            Some(next) if next.bytes as usize == buffer.len() => {
                if tracing && next.left == next.reads {
                    traced = Some((next.at, next.describe(insecure)));
                }
                next.left -= 1;
                if next.left == 0 {
                    queue.pop_front();
                }
                None
            }
            Some(next) => Some(format!(
                "event {}: the guest asked for {} random bytes, the recorded run for {}",
                next.at + 1,
                buffer.len(),
                next.bytes
            )),
            None if goes_on_live => None,
            None => Some("the guest read more random bytes than the recorded run".to_string()),
        };
        if let Some((at, line)) = traced {
            Self::played(&mut playing, at, || line);
        }
        if let Some(why) = why {
            Self::diverge(&mut playing, why);
        }
        match &mut playing.streams {
            Some(streams) => streams.fill(buffer, insecure),
            None => {
                Self::diverge(
                    &mut playing,
                    "the recording has no readable random seed".into(),
                );
                rand_core::Rng::fill_bytes(&mut wasmtime_wasi::thread_rng(), buffer);
            }
        }
        if let Some(recorder) = &playing.live_after {
            recorder.random_read(buffer.len(), insecure);
        }
    }

    /// Answers a `begin-call` from the tape, or says the run goes on live (a resumed run whose
    /// tape has no more calls to begin). `Err` is the divergence: the guest asked for another
    /// call than the recorded run did.
    pub fn begin(&self, name: &str, input: &str) -> Result<Served<BeginOutcome>, String> {
        let mut playing = lock(&self.0);
        let begins_left = playing
            .calls
            .iter()
            .any(|(_, event)| matches!(event, TapeEvent::Begin { .. }));
        if !begins_left && playing.live_after.is_some() {
            return Ok(Served::Live);
        }
        playing.begun += 1;
        let position = playing.begun;
        let asked = sha256_hex(input.as_bytes());
        let next = playing.calls.pop_front();
        let why = match next {
            Some((
                at,
                TapeEvent::Begin {
                    name: recorded,
                    input_sha256,
                    outcome,
                },
            )) => {
                if recorded == name && input_sha256 == asked {
                    if let BeginOutcome::Started { id } = outcome {
                        playing.in_flight.insert(id);
                    }
                    let event = TapeEvent::Begin {
                        name: recorded,
                        input_sha256,
                        outcome: outcome.clone(),
                    };
                    Self::played(&mut playing, at, || event.describe());
                    if let Some(recorder) = &playing.live_after {
                        recorder.begin(name, input, outcome.clone());
                    }
                    return Ok(Served::Tape(outcome));
                }
                format!(
                    "call {position}: recorded `{recorded}` input sha256 {}, replay asked `{name}` input sha256 {}",
                    short(&input_sha256),
                    short(&asked)
                )
            }
            Some((_, TapeEvent::Complete { id, .. })) => format!(
                "call {position}: the replay began `{name}` where the recorded run waited for call {id} to finish"
            ),
            Some(_) | None => format!(
                "call {position}: the replay began `{name}` (input sha256 {}), the recorded run made no more calls",
                short(&asked)
            ),
        };
        Self::diverge(&mut playing, why.clone());
        Err(why)
    }

    /// Answers a `wait-for` from the tape: `Tape(None)` where the recorded run's wait ran out of
    /// time first (served at once: a replay never sleeps), else as [`Player::wait_any`].
    pub fn wait_for(&self) -> Result<Served<Option<PlayedCompletion>>, String> {
        let mut playing = lock(&self.0);
        if let Some((at, TapeEvent::Elapsed { nanos })) = playing.calls.front().cloned() {
            playing.calls.pop_front();
            Self::played(&mut playing, at, || TapeEvent::Elapsed { nanos }.describe());
            if let Some(recorder) = &playing.live_after {
                recorder.elapsed(nanos);
            }
            return Ok(Served::Tape(None));
        }
        if playing.live_after.is_none() && playing.in_flight.is_empty() {
            let why = "the replay waited on a timer where the recorded run did not".to_string();
            Self::diverge(&mut playing, why.clone());
            return Err(why);
        }
        drop(playing);
        self.wait_any()
    }

    /// Answers a `wait-any` from the tape: `Tape(None)` when nothing is in flight (as the host
    /// answers), `Live` when a resumed run's tape has no completion for what it waits on, `Err`
    /// on a divergence.
    pub fn wait_any(&self) -> Result<Served<Option<PlayedCompletion>>, String> {
        let mut playing = lock(&self.0);
        let next_is_ours = matches!(
            playing.calls.front(),
            Some((_, TapeEvent::Complete { id, .. })) if playing.in_flight.contains(id)
        );
        if playing.live_after.is_some() && !next_is_ours {
            return Ok(Served::Live);
        }
        if playing.in_flight.is_empty() {
            return Ok(Served::Tape(None));
        }
        let why = match playing.calls.pop_front() {
            Some((at, TapeEvent::Complete { id, outcome })) if playing.in_flight.remove(&id) => {
                let event = TapeEvent::Complete {
                    id,
                    outcome: outcome.clone(),
                };
                Self::played(&mut playing, at, || event.describe());
                match outcome {
                    CompletionOutcome::Response { sha256, .. } => {
                        match playing.blobs.get(&sha256) {
                            Ok(bytes) => match String::from_utf8(bytes) {
                                Ok(text) => {
                                    if let Some(recorder) = &playing.live_after {
                                        recorder.complete(id, Ok(&text));
                                    }
                                    return Ok(Served::Tape(Some((id, Ok(text)))));
                                }
                                Err(_) => format!("call {id}: its recorded response is not text"),
                            },
                            Err(error) => format!("call {id}: its recorded response: {error}"),
                        }
                    }
                    CompletionOutcome::Failed { code, message } => {
                        if let Some(recorder) = &playing.live_after {
                            recorder.complete(id, Err((code, &message)));
                        }
                        return Ok(Served::Tape(Some((id, Err((code, message))))));
                    }
                }
            }
            Some((_, TapeEvent::Begin { name, .. })) => format!(
                "the replay waited for a call to finish where the recorded run began `{name}`"
            ),
            Some((_, TapeEvent::Complete { id, .. })) => {
                format!("the recorded run's call {id} finished, which the replay never began")
            }
            Some(_) | None => {
                "the replay waited for a call the recorded run never saw finish".to_string()
            }
        };
        Self::diverge(&mut playing, why.clone());
        Err(why)
    }
}

/// The reads of one random event still to serve.
struct RandomReads {
    /// The event's index on the tape.
    at: usize,
    bytes: u32,
    reads: u32,
    left: u32,
}

impl RandomReads {
    fn new(at: usize, bytes: u32, reads: u32) -> Self {
        RandomReads {
            at,
            bytes,
            reads,
            left: reads,
        }
    }

    fn describe(&self, insecure: bool) -> String {
        let kind = if insecure {
            "insecure random"
        } else {
            "random"
        };
        format!("{kind} -> {} read(s) of {} bytes", self.reads, self.bytes)
    }
}

fn reads_left(queue: &VecDeque<RandomReads>) -> usize {
    queue.iter().map(|reads| reads.left as usize).sum()
}

fn short(sha256: &str) -> &str {
    &sha256[..sha256.len().min(12)]
}
