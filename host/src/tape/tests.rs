use super::*;

fn recorder(dir: &std::path::Path, budget: u64) -> (Recorder, Blobs) {
    let blobs = Blobs::new(dir.join("blobs"));
    let recorder = Recorder::new(RecordMode::Full, budget, blobs.clone(), Tape::default());
    (recorder, blobs)
}

fn outcome() -> RecordedOutcome {
    RecordedOutcome {
        status: "succeeded".into(),
        error_code: None,
        value_sha256: None,
        text_sha256: String::new(),
        stdout_sha256: String::new(),
        stderr_sha256: String::new(),
        fuel_consumed: None,
    }
}

#[test]
fn what_was_recorded_plays_back_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, blobs) = recorder(dir.path(), 1 << 20);
    recorder.wall(Duration::new(5, 7));
    let (mut first, mut second) = ([0; 3], [0; 3]);
    recorder.fill_random(&mut first, false);
    recorder.fill_random(&mut second, false);
    recorder.begin("sleep", "{\"ms\":30}", BeginOutcome::Started { id: 1 });
    recorder.begin("sleep", "{\"ms\":1}", BeginOutcome::Started { id: 2 });
    recorder.complete(2, Ok("{\"slept\":1}"));
    recorder.complete(1, Err((ErrorCode::ToolFailed, "late")));
    let tape = recorder.finish(outcome());

    let player = Player::new(&tape, blobs, true);
    assert_eq!(player.wall(Duration::ZERO), Duration::new(5, 7));
    assert_eq!(tape.events.len(), 6, "two reads of 3 bytes are one event");
    let mut bytes = [0; 3];
    player.random(&mut bytes, false);
    assert_eq!(bytes, first, "the same bytes, from the seed the tape keeps");
    player.random(&mut bytes, false);
    assert_eq!(bytes, second);
    assert_ne!(first, second);
    assert_eq!(
        player.begin("sleep", "{\"ms\":30}"),
        Ok(Served::Tape(BeginOutcome::Started { id: 1 }))
    );
    assert_eq!(
        player.begin("sleep", "{\"ms\":1}"),
        Ok(Served::Tape(BeginOutcome::Started { id: 2 }))
    );
    assert_eq!(
        player.wait_any(),
        Ok(Served::Tape(Some((2, Ok("{\"slept\":1}".to_string())))))
    );
    assert_eq!(
        player.wait_any(),
        Ok(Served::Tape(Some((
            1,
            Err((ErrorCode::ToolFailed, "late".to_string()))
        ))))
    );
    assert_eq!(
        player.wait_any(),
        Ok(Served::Tape(None)),
        "nothing in flight"
    );
    assert_eq!(player.divergence(), None);
    assert_eq!(player.unplayed(), None);
    assert_eq!(player.trace().len(), 6, "one line per event");
}

#[test]
fn another_call_than_the_recorded_one_is_the_divergence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, blobs) = recorder(dir.path(), 1 << 20);
    recorder.begin("fs.write", "{}", BeginOutcome::Started { id: 1 });
    let tape = recorder.finish(outcome());
    let player = Player::new(&tape, blobs, false);
    let why = player.begin("fs.read", "{}").expect_err("diverges");
    assert!(
        why.starts_with("call 1: recorded `fs.write` input sha256")
            && why.contains("replay asked `fs.read`"),
        "{why}"
    );
    assert_eq!(player.divergence(), Some(why));
}

#[test]
fn an_altered_response_blob_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, blobs) = recorder(dir.path(), 1 << 20);
    recorder.begin("echo", "{}", BeginOutcome::Started { id: 1 });
    recorder.complete(1, Ok("{\"a\":1}"));
    let tape = recorder.finish(outcome());
    let TapeEvent::Complete {
        outcome: CompletionOutcome::Response { sha256, .. },
        ..
    } = &tape.events[1]
    else {
        panic!("{tape:?}");
    };
    std::fs::write(dir.path().join("blobs").join(sha256), "{\"a\":2}").expect("alter");
    let player = Player::new(&tape, blobs, false);
    player.begin("echo", "{}").expect("same call");
    let why = player.wait_any().expect_err("altered");
    assert!(why.contains("was altered"), "{why}");
}

#[test]
fn past_its_budget_a_tape_says_it_cannot_be_replayed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, _) = recorder(dir.path(), 10);
    recorder.begin("echo", "{}", BeginOutcome::Started { id: 1 });
    recorder.complete(1, Ok("{\"long\":\"more than ten bytes\"}"));
    recorder.wall(Duration::ZERO);
    let tape = recorder.finish(outcome());
    assert!(tape.events.is_empty());
    let why = tape.not_replayable.expect("not replayable");
    assert!(why.contains("--max-record 10 bytes"), "{why}");
}

#[test]
fn reading_more_than_was_recorded_diverges_but_still_answers() {
    let player = Player::new(&Tape::default(), Blobs::new("/nonexistent"), false);
    assert_eq!(player.monotonic(42), 42);
    let mut bytes = [0; 4];
    player.random(&mut bytes, true);
    assert!(
        player
            .divergence()
            .is_some_and(|why| why.contains("monotonic clock")),
        "{:?}",
        player.divergence()
    );
}

#[test]
fn a_resumed_run_plays_its_prefix_then_goes_on_live_recording_all_of_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, blobs) = recorder(dir.path(), 1 << 20);
    recorder.wall(Duration::new(1, 0));
    recorder.begin("echo", "{}", BeginOutcome::Started { id: 1 });
    recorder.complete(1, Ok("{}"));
    let paused = recorder.finish(outcome());
    let (resumed, _) = self::recorder(dir.path(), 1 << 20);
    let player = Player::resuming(&paused, blobs, resumed.clone());
    assert_eq!(
        player.wall(Duration::new(9, 0)),
        Duration::new(1, 0),
        "from the tape"
    );
    assert_eq!(
        player.wall(Duration::new(9, 0)),
        Duration::new(9, 0),
        "then live"
    );
    assert!(matches!(player.begin("echo", "{}"), Ok(Served::Tape(_))));
    assert!(matches!(
        player.wait_any(),
        Ok(Served::Tape(Some((1, Ok(_)))))
    ));
    assert_eq!(player.begin("write", "{}"), Ok(Served::Live));
    assert_eq!(player.wait_any(), Ok(Served::Live));
    let mut bytes = [0; 2];
    player.random(&mut bytes, false);
    assert_eq!(player.divergence(), None);
    let tape = resumed.finish(outcome());
    assert_eq!(tape.events.len(), 5, "{:?}", tape.events);
}

#[test]
fn random_bytes_replay_from_the_seed_and_a_read_of_another_length_diverges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (recorder, blobs) = recorder(dir.path(), 1 << 20);
    let mut drawn = vec![[0_u8; 4]; 1000];
    for read in &mut drawn {
        recorder.fill_random(read, false);
    }
    let mut insecure = [0; 8];
    recorder.fill_random(&mut insecure, true);
    let tape = recorder.finish(outcome());
    assert_eq!(
        tape.events,
        [
            TapeEvent::Random {
                bytes: 4,
                reads: 1000
            },
            TapeEvent::InsecureRandom { bytes: 8, reads: 1 }
        ],
        "1,000 reads are one event, and no bytes are kept"
    );
    let text = serde_json::to_string(&tape).expect("json");
    assert!(text.len() < 400, "{text}");

    let player = Player::new(&tape, blobs.clone(), false);
    for expected in &drawn {
        let mut read = [0; 4];
        player.random(&mut read, false);
        assert_eq!(&read, expected);
    }
    let mut again = [0; 8];
    player.random(&mut again, true);
    assert_eq!(again, insecure);
    assert_eq!(player.divergence(), None);
    assert_eq!(player.unplayed(), None);

    let player = Player::new(&tape, blobs, false);
    let mut longer = [0; 8];
    player.random(&mut longer, false);
    let why = player.divergence().expect("diverged");
    assert!(
        why.contains("asked for 8 random bytes, the recorded run for 4"),
        "{why}"
    );
}
