//! What every [`StateStore`] must do, as checks any store can be put through: the embedded redb
//! store's unit tests and the etcd store's end-to-end tests run these same bodies. Each check
//! uses sessions of its own under `prefix`, so that a store holding other state can be checked.

use std::sync::{Arc, Barrier};

use super::{Changes, Commit, CommitError, Reads, Snapshot, StateStore};

/// A failed check: which, and what it saw.
pub type Failure = String;

/// One check, on the sessions under its prefix.
type Check = fn(&Arc<dyn StateStore>, &str) -> Result<(), Failure>;

fn set(pairs: &[(&str, Option<&str>)]) -> Changes {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect()
}

fn snapshot(store: &dyn StateStore, session: &str) -> Result<Snapshot, Failure> {
    store
        .snapshot(session)
        .map_err(|e| format!("snapshot of `{session}`: {}", crate::error::chain_text(&e)))
}

fn commit(
    store: &dyn StateStore,
    session: &str,
    base: &Snapshot,
    changes: &Changes,
    max_bytes: u64,
) -> Result<u64, Failure> {
    store
        .commit(session, &Commit::new(base, changes, max_bytes))
        .map_err(|e| format!("commit to `{session}`: {}", crate::error::chain_text(&e)))
}

fn try_commit(
    store: &dyn StateStore,
    session: &str,
    base: &Snapshot,
    changes: &Changes,
    max_bytes: u64,
) -> Result<u64, CommitError> {
    store.commit(session, &Commit::new(base, changes, max_bytes))
}

fn expect(holds: bool, what: impl FnOnce() -> String) -> Result<(), Failure> {
    if holds { Ok(()) } else { Err(what()) }
}

/// Runs every check against `store`; the first failure, if any.
pub fn check(store: Arc<dyn StateStore>, prefix: &str) -> Result<(), Failure> {
    let checks: [(&str, Check); 9] = [
        (
            "commits-are-seen-by-their-session-only",
            commits_are_seen_by_their_session_only,
        ),
        (
            "a-changed-key-conflicts-and-nothing-is-written",
            a_changed_key_conflicts_and_nothing_is_written,
        ),
        (
            "a-deleted-key-still-conflicts",
            a_deleted_key_still_conflicts,
        ),
        (
            "a-key-read-and-changed-meanwhile-conflicts",
            a_key_read_and_changed_meanwhile_conflicts,
        ),
        (
            "reading-everything-conflicts-with-any-change",
            reading_everything_conflicts_with_any_change,
        ),
        (
            "other-keys-of-the-session-do-not-conflict",
            other_keys_of_the_session_do_not_conflict,
        ),
        (
            "the-budget-counts-the-session-at-commit",
            the_budget_counts_the_session_at_commit,
        ),
        (
            "one-of-many-racing-writers-of-a-key-wins",
            one_of_many_racing_writers_of_a_key_wins,
        ),
        (
            "racing-writers-of-other-keys-all-commit",
            racing_writers_of_other_keys_all_commit,
        ),
    ];
    for (name, check) in checks {
        check(&store, &format!("{prefix}-{name}")).map_err(|why| format!("{name}: {why}"))?;
    }
    Ok(())
}

fn commits_are_seen_by_their_session_only(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let other = format!("{session}/other");
    let base = snapshot(store.as_ref(), session)?;
    expect(base.entries.is_empty(), || {
        format!("a new session has keys: {base:?}")
    })?;
    let first = commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    let now = snapshot(store.as_ref(), session)?;
    expect(now.get("a") == Some("1"), || {
        format!("committed `a` reads {:?}", now.get("a"))
    })?;
    expect(now.entries["a"].revision == first, || {
        format!(
            "`a` has revision {}, the commit returned {first}",
            now.entries["a"].revision
        )
    })?;
    let elsewhere = snapshot(store.as_ref(), &other)?;
    expect(elsewhere.get("a").is_none(), || {
        "another session sees `a`".to_string()
    })?;
    let second = commit(
        store.as_ref(),
        session,
        &now,
        &set(&[("a", Some("2"))]),
        1 << 20,
    )?;
    expect(second > first, || {
        format!("revisions went from {first} to {second}")
    })?;
    expect(
        store.delete_now(session, "a").map_err(|e| e.to_string())?,
        || "delete_now found no `a`".to_string(),
    )?;
    let gone = snapshot(store.as_ref(), session)?;
    expect(gone.get("a").is_none(), || {
        "`a` is still there after delete_now".to_string()
    })?;
    expect(
        !store.delete_now(session, "a").map_err(|e| e.to_string())?,
        || "delete_now deleted `a` twice".to_string(),
    )
}

fn a_changed_key_conflicts_and_nothing_is_written(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let base = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    let lost = try_commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("b", Some("2")), ("a", Some("3"))]),
        1 << 20,
    );
    expect(
        matches!(&lost, Err(CommitError::Conflict { key }) if key == "a"),
        || format!("a stale commit of `a` gave {lost:?}"),
    )?;
    let now = snapshot(store.as_ref(), session)?;
    expect((now.get("a"), now.get("b")) == (Some("1"), None), || {
        format!(
            "after the conflict: a={:?} b={:?}",
            now.get("a"),
            now.get("b")
        )
    })
}

/// A run that read `a` (or the absent `c`) and wrote `b` must not commit once `a` changed (or `c`
/// appeared): its `b` was decided from what it read.
fn a_key_read_and_changed_meanwhile_conflicts(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let empty = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &empty,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    let base = snapshot(store.as_ref(), session)?;
    let writes_b = set(&[("b", Some("2"))]);
    for (read, changed) in [("a", "a"), ("c", "c")] {
        let reads = Reads::from([read.to_string()]);
        let other = snapshot(store.as_ref(), session)?;
        commit(
            store.as_ref(),
            session,
            &other,
            &set(&[(changed, Some("9"))]),
            1 << 20,
        )?;
        let lost = store.commit(
            session,
            &Commit::new(&base, &writes_b, 1 << 20).reading(&reads, false),
        );
        expect(
            matches!(&lost, Err(CommitError::Conflict { key }) if key == read),
            || format!("a commit that read `{read}`, changed meanwhile, gave {lost:?}"),
        )?;
    }
    let now = snapshot(store.as_ref(), session)?;
    expect(now.get("b").is_none(), || {
        format!("a lost commit wrote b={:?}", now.get("b"))
    })?;
    // Reads that still hold do not stop the commit.
    let reads = Reads::from(["a".to_string(), "c".to_string(), "d".to_string()]);
    store
        .commit(
            session,
            &Commit::new(&now, &writes_b, 1 << 20).reading(&reads, false),
        )
        .map_err(|e| {
            format!(
                "a commit whose reads hold: {}",
                crate::error::chain_text(&e)
            )
        })?;
    Ok(())
}

/// A run that read the whole session conflicts with a change to any of its keys, a new one
/// included; one that read many keys (more than etcd compares one by one) with a change to one
/// of them; and both commit when nothing changed.
fn reading_everything_conflicts_with_any_change(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let empty = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &empty,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    let base = snapshot(store.as_ref(), session)?;
    let many: Reads = (0..300).map(|i| format!("k{i}")).collect();
    let writes_b = set(&[("b", Some("2"))]);
    for (reads, everything) in [(&Reads::new(), true), (&many, false)] {
        let other = snapshot(store.as_ref(), session)?;
        // A key of its own for a run that read everything; one of the 300 for the other.
        let newcomer = if everything { "new" } else { "k7" };
        commit(
            store.as_ref(),
            session,
            &other,
            &set(&[(newcomer, Some("9"))]),
            1 << 20,
        )?;
        let lost = store.commit(
            session,
            &Commit::new(&base, &writes_b, 1 << 20).reading(reads, everything),
        );
        expect(matches!(&lost, Err(CommitError::Conflict { .. })), || {
            format!(
                "a commit that read {} gave {lost:?} after `{newcomer}` appeared",
                if everything { "everything" } else { "300 keys" }
            )
        })?;
        let now = snapshot(store.as_ref(), session)?;
        expect(now.get("b").is_none(), || {
            "a lost commit wrote b".to_string()
        })?;
        store
            .commit(
                session,
                &Commit::new(&now, &writes_b, 1 << 20).reading(reads, everything),
            )
            .map_err(|e| format!("an unhindered commit: {}", crate::error::chain_text(&e)))?;
        let after = snapshot(store.as_ref(), session)?;
        commit(
            store.as_ref(),
            session,
            &after,
            &set(&[("b", None)]),
            1 << 20,
        )?;
    }
    Ok(())
}

fn a_deleted_key_still_conflicts(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let empty = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &empty,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    let with_a = snapshot(store.as_ref(), session)?;
    let deleted = commit(
        store.as_ref(),
        session,
        &with_a,
        &set(&[("a", None)]),
        1 << 20,
    )?;
    expect(deleted > with_a.entries["a"].revision, || {
        "the delete has no newer revision".into()
    })?;
    let stale = try_commit(
        store.as_ref(),
        session,
        &with_a,
        &set(&[("a", Some("2"))]),
        1 << 20,
    );
    expect(matches!(stale, Err(CommitError::Conflict { .. })), || {
        format!("a commit against the snapshot before the delete gave {stale:?}")
    })?;
    let recreated = try_commit(
        store.as_ref(),
        session,
        &empty,
        &set(&[("a", Some("3"))]),
        1 << 20,
    );
    expect(
        matches!(recreated, Err(CommitError::Conflict { .. })),
        || format!("a commit against the snapshot before `a` existed gave {recreated:?}"),
    )
}

fn other_keys_of_the_session_do_not_conflict(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let base = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("a", Some("1"))]),
        1 << 20,
    )?;
    commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("b", Some("2"))]),
        1 << 20,
    )?;
    let now = snapshot(store.as_ref(), session)?;
    expect(
        (now.get("a"), now.get("b")) == (Some("1"), Some("2")),
        || format!("a={:?} b={:?}", now.get("a"), now.get("b")),
    )
}

fn the_budget_counts_the_session_at_commit(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let base = snapshot(store.as_ref(), session)?;
    commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("a", Some("12345"))]),
        10,
    )?;
    // Against the old snapshot: the store's own count must be used, not the snapshot's.
    let over = try_commit(
        store.as_ref(),
        session,
        &base,
        &set(&[("b", Some("12345"))]),
        10,
    );
    expect(
        matches!(over, Err(CommitError::OverBudget { total: 12, max: 10 })),
        || format!("12 bytes against a budget of 10 gave {over:?}"),
    )?;
    let now = snapshot(store.as_ref(), session)?;
    expect(now.get("b").is_none(), || {
        "`b` was written over the budget".into()
    })?;
    // Replacing and deleting give bytes back.
    commit(
        store.as_ref(),
        session,
        &now,
        &set(&[("a", None), ("b", Some("1234567"))]),
        10,
    )?;
    let now = snapshot(store.as_ref(), session)?;
    expect(now.live_bytes() == 8, || {
        format!("{} live bytes, not 8", now.live_bytes())
    })
}

/// `writers` threads commit `changes_of(i)` against one snapshot at once.
fn race(
    store: &Arc<dyn StateStore>,
    session: &str,
    writers: usize,
    changes_of: fn(usize) -> Changes,
) -> Result<Vec<Result<u64, CommitError>>, Failure> {
    let base = snapshot(store.as_ref(), session)?;
    let start = Arc::new(Barrier::new(writers));
    let handles: Vec<_> = (0..writers)
        .map(|i| {
            let (store, base, start) = (store.clone(), base.clone(), start.clone());
            let session = session.to_string();
            std::thread::spawn(move || {
                start.wait();
                try_commit(store.as_ref(), &session, &base, &changes_of(i), 1 << 20)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "a writer panicked".to_string()))
        .collect()
}

fn one_of_many_racing_writers_of_a_key_wins(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let outcomes = race(store, session, 8, |i| set(&[("k", Some(&i.to_string()))]))?;
    let won = outcomes.iter().filter(|o| o.is_ok()).count();
    let conflicts = outcomes
        .iter()
        .filter(|o| matches!(o, Err(CommitError::Conflict { .. })))
        .count();
    expect((won, conflicts) == (1, 7), || {
        format!("{won} won, {conflicts} conflicted: {outcomes:?}")
    })
}

fn racing_writers_of_other_keys_all_commit(
    store: &Arc<dyn StateStore>,
    session: &str,
) -> Result<(), Failure> {
    let outcomes = race(store, session, 8, |i| {
        set(&[(&format!("k{i}"), Some("12"))])
    })?;
    expect(outcomes.iter().all(Result::is_ok), || {
        format!("{outcomes:?}")
    })?;
    let now = snapshot(store.as_ref(), session)?;
    expect(now.live_bytes() == 8 * 4, || {
        format!("{} live bytes, not 32", now.live_bytes())
    })
}
