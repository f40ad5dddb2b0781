//! Session state on etcd (`--state etcd://[USER@]ENDPOINT[,ENDPOINT...][/PREFIX]`, over HTTP or
//! HTTPS, with etcd's authentication; see [`location`]), so that forge-hosts on several machines
//! share one state. A snapshot is one range read (one store revision); a
//! commit is one transaction that compares each key the run read or changed: its `mod_revision`
//! must be the snapshot's (0 for a key the snapshot did not have); then it puts them all, or does
//! nothing. A run that read more keys than one transaction may compare is checked against the
//! whole session instead: nothing in it may be newer than the snapshot.
//!
//! The byte budget is checked exactly as redb's: each session keeps its live byte count in a key
//! of its own, which every commit compares and rewrites in the same transaction. A commit that
//! loses only that race (another commit of the session, on other keys) reads the new count and
//! tries again; one that finds a changed key is a `STATE_CONFLICT`. A deletion leaves a tombstone
//! (an empty value: a JSON text is never empty) whose revision still conflicts with a snapshot
//! taken before it, as redb's do.
//!
//! Each commit also writes a mark of its own, a random value, in the same transaction. A commit
//! whose answer was lost (etcd went away after taking it) is tried again; the second try finds
//! its comparisons failing, and the mark says whether that is because the first landed: then the
//! commit succeeded, once.
//!
//! Keys: `PREFIX/state/<len>:<session>/<key>` (the session's byte length first, so that no
//! session's keys are a prefix of another's), `PREFIX/size/<len>:<session>` and
//! `PREFIX/commit/<len>:<session>`.

mod answers;
mod error;
mod gateway;
pub mod location;

use std::future::Future;
use std::sync::mpsc;

pub use error::EtcdError;
pub use gateway::{Compare, Gateway, Write};
pub use location::{DEFAULT_PREFIX, Endpoint, EtcdAccess, EtcdConfigError, EtcdLocation};

use super::{Commit, CommitError, Entry, Snapshot, StateStore};

/// Most operations etcd allows in one transaction (its `--max-txn-ops` default).
pub const MAX_TXN_OPS: usize = 128;

/// Commits that lose only the race for the session's byte count try again this often.
const MAX_ATTEMPTS: usize = 64;

/// Runs the store's requests on a small runtime of its own, so that the synchronous
/// [`StateStore`] calls work from any thread, inside an async runtime or not.
#[derive(Debug)]
struct Bridge {
    handle: tokio::runtime::Handle,
    /// Dropped with the store: the runtime's thread ends.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Bridge {
    fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("forge-etcd".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        Ok(Bridge {
            handle,
            _stop: stop,
        })
    }

    /// Runs `work` there and waits for it; `None` if the runtime is gone.
    fn run<T: Send + 'static>(&self, work: impl Future<Output = T> + Send + 'static) -> Option<T> {
        let (done, result) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = done.send(work.await);
        });
        result.recv().ok()
    }
}

/// Session state in etcd.
#[derive(Debug)]
pub struct EtcdStateStore {
    location: EtcdLocation,
    gateway: Gateway,
    bridge: Bridge,
}

fn etcd(error: EtcdError) -> CommitError {
    CommitError::Etcd(error)
}

impl EtcdStateStore {
    /// A store at `location`, with the user and password it names (if any) and the system's
    /// TLS roots. Nothing is contacted yet: the first snapshot says whether etcd answers.
    pub fn new(location: EtcdLocation) -> Result<Self, EtcdConfigError> {
        Self::open(location, &EtcdAccess::default())
    }

    /// A store at `location` reached as `access` says: refused before anything is contacted
    /// when plain HTTP would leave loopback without `access.insecure`, or when a TLS file
    /// cannot be read.
    pub fn open(location: EtcdLocation, access: &EtcdAccess) -> Result<Self, EtcdConfigError> {
        let location = location.with_access(access)?;
        Ok(EtcdStateStore {
            gateway: Gateway::new(&location, access)?,
            bridge: Bridge::new().map_err(EtcdConfigError::Thread)?,
            location,
        })
    }

    /// What a person must be told before it is used, when it reaches etcd over plain HTTP off
    /// loopback (see [`EtcdLocation::exposure_warning`]).
    pub fn exposure_warning(&self) -> Option<String> {
        self.location.exposure_warning()
    }

    fn session_dir(&self, session: &str) -> Vec<u8> {
        format!(
            "{}/state/{}:{session}/",
            self.location.prefix,
            session.len()
        )
        .into_bytes()
    }

    fn size_key(&self, session: &str) -> Vec<u8> {
        format!("{}/size/{}:{session}", self.location.prefix, session.len()).into_bytes()
    }

    fn mark_key(&self, session: &str) -> Vec<u8> {
        format!(
            "{}/commit/{}:{session}",
            self.location.prefix,
            session.len()
        )
        .into_bytes()
    }

    /// The revision of the commit that wrote `mark`, if the session's last commit did.
    fn landed(&self, session: &str, mark: &str) -> Result<Option<u64>, CommitError> {
        let gateway = self.gateway.clone();
        let key = self.mark_key(session);
        let range = self.call(async move { gateway.range(&key, None, None).await })?;
        Ok(range
            .kvs
            .first()
            .filter(|kv| kv.value == mark.as_bytes())
            .map(|kv| kv.mod_revision))
    }

    fn call<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, EtcdError>> + Send + 'static,
    ) -> Result<T, CommitError> {
        self.bridge
            .run(work)
            .ok_or_else(|| CommitError::Unavailable("the etcd client's thread ended".into()))?
            .map_err(etcd)
    }

    /// The session's keys, at one revision.
    fn read_session(&self, session: &str) -> Result<Snapshot, CommitError> {
        let dir = self.session_dir(session);
        let end = prefix_end(&dir);
        let gateway = self.gateway.clone();
        let read_dir = dir.clone();
        let range = self.call(async move { gateway.range(&read_dir, Some(&end), None).await })?;
        let mut snapshot = Snapshot::default();
        for kv in range.kvs {
            let name = kv
                .key
                .strip_prefix(dir.as_slice())
                .and_then(|name| String::from_utf8(name.to_vec()).ok());
            let value = String::from_utf8(kv.value).ok();
            let (Some(name), Some(value)) = (name, value) else {
                return Err(CommitError::Corrupt {
                    key: String::from_utf8_lossy(&kv.key).into_owned(),
                });
            };
            let value = (!value.is_empty()).then_some(value);
            snapshot.entries.insert(
                name,
                Entry {
                    value,
                    revision: kv.mod_revision,
                },
            );
        }
        Ok(snapshot)
    }

    /// The session's live byte count and the revision of the key that holds it (0: none yet,
    /// then it is counted from the keys).
    fn read_size(&self, session: &str) -> Result<(u64, u64), CommitError> {
        let key = self.size_key(session);
        let gateway = self.gateway.clone();
        let read_key = key.clone();
        let range = self.call(async move { gateway.range(&read_key, None, None).await })?;
        match range.kvs.first() {
            Some(kv) => {
                let count = std::str::from_utf8(&kv.value)
                    .ok()
                    .and_then(|text| text.parse().ok())
                    .ok_or_else(|| CommitError::Corrupt {
                        key: String::from_utf8_lossy(&key).into_owned(),
                    })?;
                Ok((count, kv.mod_revision))
            }
            None => Ok((self.read_session(session)?.live_bytes(), 0)),
        }
    }

    /// The first compared key whose revision is not the snapshot's, if any; with
    /// `whole_session`, any key of the session.
    fn first_changed(
        &self,
        session: &str,
        commit: &Commit<'_>,
        whole_session: bool,
    ) -> Result<Option<String>, CommitError> {
        let now = self.read_session(session)?;
        let moved =
            |key: &&str| now.entries.get(*key).map(|e| e.revision) != commit.base_revision(key);
        let found = commit.checked_keys().find(moved).or_else(|| {
            whole_session
                .then(|| now.entries.keys().map(String::as_str).find(moved))
                .flatten()
        });
        Ok(found.map(str::to_string))
    }
}

/// The first key after every key that starts with `prefix`.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return end;
        }
    }
    // Every byte was 0xff: to the end of the keyspace.
    vec![0]
}

impl StateStore for EtcdStateStore {
    fn location(&self) -> Option<String> {
        Some(self.location.to_string())
    }

    fn snapshot(&self, session: &str) -> Result<Snapshot, CommitError> {
        self.read_session(session)
    }

    fn commit(&self, session: &str, commit: &Commit<'_>) -> Result<u64, CommitError> {
        let (base, changes) = (commit.base, commit.changes);
        // Each changed key is written, and the byte count and the commit's mark too.
        if changes.len() + 2 > MAX_TXN_OPS {
            return Err(CommitError::TooManyKeys {
                keys: changes.len(),
                max: MAX_TXN_OPS - 2,
            });
        }
        let mark = new_mark();
        let dir = self.session_dir(session);
        let key_of = |name: &str| [dir.as_slice(), name.as_bytes()].concat();
        // Each read or changed key is compared with the snapshot. For a run that read the whole
        // session, or more keys than one transaction may compare, one comparison says that
        // nothing in the session changed since the snapshot (stricter, and as sound).
        let checked: Vec<&str> = commit.checked_keys().collect();
        let whole_session = commit.reads_everything || checked.len() + 1 > MAX_TXN_OPS;
        let compares: Vec<Compare> = if whole_session {
            vec![Compare::NoneChangedAfter {
                key: dir.clone(),
                end: prefix_end(&dir),
                revision: newest_revision(base),
            }]
        } else {
            checked
                .iter()
                .map(|name| Compare::Unchanged {
                    key: key_of(name),
                    revision: commit.base_revision(name).unwrap_or(0),
                })
                .collect()
        };
        let live =
            |name: &str, value: Option<&str>| value.map_or(0, |v| (name.len() + v.len()) as i128);
        let delta: i128 = changes
            .iter()
            .map(|(name, value)| live(name, value.as_deref()) - live(name, base.get(name)))
            .sum();
        let writes: Vec<Write> = changes
            .iter()
            .map(|(name, value)| Write::Put {
                key: key_of(name),
                // A deletion is a tombstone: an empty value.
                value: value.clone().unwrap_or_default().into_bytes(),
            })
            .collect();
        for _ in 0..MAX_ATTEMPTS {
            let (count, count_revision) = self.read_size(session)?;
            let total = u64::try_from((i128::from(count) + delta).max(0)).unwrap_or(u64::MAX);
            if total > commit.max_bytes {
                // A key someone else changed is the truer reason, when there is one.
                if let Some(key) = self.first_changed(session, commit, whole_session)? {
                    return Err(CommitError::Conflict { key });
                }
                return Err(CommitError::OverBudget {
                    total,
                    max: commit.max_bytes,
                });
            }
            let mut attempt_compares = compares.clone();
            attempt_compares.push(Compare::Unchanged {
                key: self.size_key(session),
                revision: count_revision,
            });
            let mut attempt = writes.clone();
            attempt.push(Write::Put {
                key: self.size_key(session),
                value: total.to_string().into_bytes(),
            });
            attempt.push(Write::Put {
                key: self.mark_key(session),
                value: mark.clone().into_bytes(),
            });
            let gateway = self.gateway.clone();
            let outcome =
                self.call(async move { gateway.txn(&attempt_compares, &attempt).await })?;
            if outcome.succeeded {
                return Ok(outcome.revision);
            }
            // A try whose answer was lost may have landed, and made this one fail.
            if let Some(revision) = self.landed(session, &mark)? {
                return Ok(revision);
            }
            if let Some(key) = self.first_changed(session, commit, whole_session)? {
                return Err(CommitError::Conflict { key });
            }
            // Only the byte count moved: another commit of the session, on other keys.
        }
        Err(CommitError::Unavailable(format!(
            "the session's byte count kept changing under {MAX_ATTEMPTS} attempts to commit"
        )))
    }
}

/// A value no other commit writes as its mark: the time, the process, and a keyed hash's
/// random keys.
fn new_mark() -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let random = |salt: u32| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id() ^ salt);
        hasher.finish()
    };
    format!("{nanos:x}-{:016x}{:016x}", random(0), random(1))
}

/// The newest revision among a snapshot's keys: any key of the session changed after the
/// snapshot was taken has a newer one.
fn newest_revision(snapshot: &Snapshot) -> u64 {
    snapshot
        .entries
        .values()
        .map(|entry| entry.revision)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_sessions_keys_are_a_prefix_of_anothers() {
        let store = EtcdStateStore::new(EtcdLocation::parse("etcd://127.0.0.1:1").expect("loc"))
            .expect("store");
        let a = store.session_dir("a");
        let ab = store.session_dir("a/b");
        assert!(!ab.starts_with(&a) && !a.starts_with(&ab));
        assert_eq!(prefix_end(b"ab/"), b"ab0");
        assert_eq!(prefix_end(&[1, 0xff]), [2]);
    }

    #[test]
    fn an_unreachable_etcd_is_a_clear_error_after_the_patience() {
        // Port 1 on loopback: nothing listens there.
        let access = EtcdAccess {
            patience: Some(std::time::Duration::from_millis(300)),
            ..EtcdAccess::default()
        };
        let location = EtcdLocation::parse("etcd://127.0.0.1:1").expect("loc");
        let store = EtcdStateStore::open(location, &access).expect("store");
        let error = store.snapshot("s").expect_err("unreachable");
        assert_eq!(error.code(), crate::error::ErrorCode::ClusterUnreachable);
        let text = crate::error::chain_text(&error);
        assert!(
            text.contains("etcd is unreachable at http://127.0.0.1:1 (no answer for 300ms"),
            "{text}"
        );
    }

    #[test]
    fn marks_differ() {
        let marks: std::collections::HashSet<String> = (0..1000).map(|_| new_mark()).collect();
        assert_eq!(marks.len(), 1000);
    }
}
