//! Tests of `store.rs`: the state machine, reconciliation, listing, group commit and decoding.

use super::super::{EndReason, JournalInput, JournalPackage, Owner, Step};
use super::*;
use crate::error::ErrorCode;
use crate::limits::Limits;
use crate::primitives::now_utc;

fn record(id: &str, owner: Owner) -> ExecutionRecord {
    ExecutionRecord {
        id: id.into(),
        session: "s".into(),
        engine: "javascript-quickjs".into(),
        engine_sha256: "e".repeat(64),
        script: "a.js".into(),
        script_sha256: "a".repeat(64),
        inputs: vec![JournalInput {
            name: "x.csv".into(),
            size: 1,
            sha256: "b".repeat(64),
            source: "/tmp/x.csv".into(),
        }],
        packages: vec![JournalPackage {
            name: "tabulate".into(),
            version: "0.9.0".into(),
            sha256: "c".repeat(64),
        }],
        package_lock: None,
        limits: serde_json::to_value(Limits::default()).expect("limits"),
        policy: Default::default(),
        status: ExecutionState::Preparing,
        steps: Vec::new(),
        error_code: None,
        error_message: None,
        reason: None,
        started_at: now_utc(),
        ended_at: None,
        metrics: None,
        out_dir: None,
        outputs: Vec::new(),
        owner,
        replay_of: None,
        pending: None,
        resumes: None,
        resumed_by: None,
        tool_sources: None,
        state_store: None,
    }
}

fn closing(status: ExecutionState) -> Closing {
    Closing {
        tape: None,
        pending: None,
        status,
        error: None,
        metrics: None,
        calls: Vec::new(),
        out_dir: None,
        outputs: Vec::new(),
        passed: vec![ExecutionState::Collecting, ExecutionState::Committing],
    }
}

fn journal() -> (tempfile::TempDir, Journal) {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::open(&DataDir::new(dir.path())).expect("open");
    (dir, journal)
}

#[test]
fn the_state_machine_is_enforced_and_a_terminal_state_is_reached_once() {
    let (_dir, journal) = journal();
    journal
        .create(&record("a", Owner::current()))
        .expect("create");
    assert!(matches!(
        journal.create(&record("a", Owner::current())),
        Err(JournalError::Duplicate(_))
    ));
    assert!(
        matches!(
            journal.close("a", closing(ExecutionState::Succeeded)),
            Err(JournalError::Transition { .. })
        ),
        "cannot succeed without running"
    );
    let mut running = record("b", Owner::current());
    running.status = ExecutionState::Running;
    running.steps = vec![Step {
        state: ExecutionState::Running,
        at: now_utc(),
    }];
    journal.create(&running).expect("create");
    journal
        .close("b", closing(ExecutionState::Succeeded))
        .expect("close");
    let before = journal.get("b").expect("get");
    let again = journal.close("b", closing(ExecutionState::Failed));
    assert!(matches!(again, Err(JournalError::Transition { .. })));
    assert_eq!(
        journal.get("b").expect("get"),
        before,
        "a second close changes nothing"
    );
    let states: Vec<_> = before.steps.iter().map(|s| s.state.as_str()).collect();
    assert_eq!(states, ["running", "collecting", "committing", "succeeded"]);
    assert!(matches!(journal.get("zzz"), Err(JournalError::NotFound(_))));
}

#[tokio::test]
async fn grouped_writes_commit_together_and_a_refused_one_fails_alone() {
    let (_dir, journal) = journal();
    let running = |id: &str| {
        let mut record = record(id, Owner::current());
        record.status = ExecutionState::Running;
        record
    };
    // All queued before any is awaited: the committing thread takes them in groups, in
    // order, so each close follows its own create.
    let mut creates = Vec::new();
    let mut closes = Vec::new();
    for i in 0..50 {
        let id = format!("r{i}");
        creates.push(journal.create_grouped(running(&id)));
        closes.push({
            let journal = journal.clone();
            async move {
                journal
                    .close_grouped(&id, closing(ExecutionState::Succeeded))
                    .await
            }
        });
    }
    let duplicate = journal.create_grouped(running("r7"));
    let second_close = journal.close_grouped("r3", closing(ExecutionState::Failed));
    for created in futures::future::join_all(creates).await {
        created.expect("created");
    }
    for closed in futures::future::join_all(closes).await {
        assert_eq!(closed.expect("closed").status, ExecutionState::Succeeded);
    }
    assert!(matches!(duplicate.await, Err(JournalError::Duplicate(_))));
    assert!(matches!(
        second_close.await,
        Err(JournalError::Transition { .. })
    ));
    let all = journal.list(&ListFilter::default()).expect("list");
    assert_eq!(all.len(), 50);
    assert!(all.iter().all(|r| r.status == ExecutionState::Succeeded));
}

#[test]
fn executions_of_dead_processes_are_reconciled_and_live_ones_left_alone() {
    let (dir, journal) = journal();
    let dead = Owner {
        pid: u32::MAX - 3,
        start_ticks: Some(5),
    };
    journal.create(&record("dead", dead)).expect("create");
    journal
        .create(&record("live", Owner::current()))
        .expect("create");
    let reopened = Journal::open(&DataDir::new(dir.path())).expect("reopen");
    let gone = reopened.get("dead").expect("get");
    assert_eq!(gone.status, ExecutionState::Failed);
    assert_eq!(gone.error_code, Some(ErrorCode::IsolateFailure));
    assert_eq!(gone.reason, Some(EndReason::Interrupted));
    assert_eq!(
        reopened.get("live").expect("get").status,
        ExecutionState::Preparing
    );
    assert_eq!(reopened.reconcile().expect("again"), 0, "reconciled once");
}

#[test]
fn calls_are_kept_in_order_and_lists_filter() {
    let (_dir, journal) = journal();
    for (id, session) in [("01", "x"), ("02", "y"), ("03", "x")] {
        let mut r = record(id, Owner::current());
        r.session = session.into();
        if id == "03" {
            r.status = ExecutionState::Running;
        }
        journal.create(&r).expect("create");
    }
    let mut end = closing(ExecutionState::Failed);
    end.error = Some((ErrorCode::ToolFailed, "x".repeat(10_000)));
    end.calls = (1..=3)
        .map(|position| CallRecord {
            position,
            tool: "echo".into(),
            effect: crate::permissions::Effect::Internal,
            input_sha256: "c".repeat(64),
            status: super::super::CallStatus::Succeeded,
            error_code: None,
            duration_ms: Some(1),
            paths: Vec::new(),
            decision: None,
        })
        .collect();
    journal.close("03", end).expect("close");
    assert_eq!(
        journal
            .calls("03")
            .expect("calls")
            .iter()
            .map(|c| c.position)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(
        journal
            .get("03")
            .expect("get")
            .error_message
            .expect("message")
            .len()
            < 5000
    );
    let xs: Vec<_> = journal
        .list(&ListFilter {
            session: Some("x".into()),
            ..ListFilter::default()
        })
        .expect("list")
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(xs, ["03", "01"], "most recent first");
    let failed = journal
        .list(&ListFilter {
            status: Some(ExecutionState::Failed),
            limit: Some(5),
            ..ListFilter::default()
        })
        .expect("list");
    assert_eq!(failed.len(), 1);
}

proptest::proptest! {
    /// Any bytes in place of a record decode or fail as corrupt, never a panic.
    #[test]
    fn any_bytes_decode_or_are_corrupt(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let _ = decode::<ExecutionRecord>("id", &bytes);
        let _ = decode::<CallRecord>("id", &bytes);
    }
}
