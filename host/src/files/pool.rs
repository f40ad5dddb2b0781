//! Job folders of finished runs, emptied and kept for the next runs of this process: reusing an
//! idle folder is cheaper than creating four. An idle folder is named after its process (pid and
//! start time), so a later process can tell that its owner is gone and remove it. A run that is
//! not kept (`--keep`) works in an idle folder where it is, so a run that writes no files
//! changes nothing on disk but the journal; a kept one is renamed to its execution id.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::JobDir;
use crate::error::Result;
use crate::journal::Owner;

/// Idle job folders kept per process.
const MAX_IDLE_JOBS: usize = 8;

/// The job folders of one data directory, with this process's idle ones.
#[derive(Debug)]
pub struct JobPool {
    jobs: PathBuf,
    idle: Mutex<Vec<PathBuf>>,
    owner: Owner,
    next: AtomicU64,
}

impl JobPool {
    /// The pool of the folder `jobs`; idle folders of processes that are gone are removed.
    pub fn new(jobs: PathBuf) -> Self {
        remove_stale_idle(&jobs);
        JobPool {
            jobs,
            idle: Mutex::default(),
            owner: Owner::current(),
            next: AtomicU64::new(0),
        }
    }

    /// The job folder of execution `id`: an idle one (renamed to `id` when it is kept), or a
    /// new one.
    pub fn take(&self, id: &str, keep: bool) -> Result<JobDir> {
        let root = self.jobs.join(id);
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        if let Some(idle) = idle {
            if !keep {
                return Ok(JobDir::reuse(idle));
            }
            if let Ok(job) = JobDir::adopt(&idle, root.clone(), keep) {
                return Ok(job);
            }
        }
        JobDir::create(root, keep)
    }

    /// Keeps an emptied job folder for the next run, or removes it.
    pub fn give_back(&self, job: JobDir) {
        let Ok(mut idle) = self.idle.lock() else {
            return;
        };
        if idle.len() >= MAX_IDLE_JOBS {
            return;
        }
        let ours = job
            .root()
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(idle_owner)
            .is_some_and(|owner| owner == self.owner);
        let path = if ours {
            job.root().to_path_buf()
        } else {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            self.jobs.join(format!("idle-{}-{n}", self.owner.tag()))
        };
        if job.recycle(&path) {
            idle.push(path);
        }
    }
}

/// The owner of an idle folder named `idle-PID-TICKS-N`.
fn idle_owner(name: &str) -> Option<Owner> {
    let (tag, _n) = name.strip_prefix("idle-")?.rsplit_once('-')?;
    Owner::from_tag(tag)
}

fn remove_stale_idle(jobs: &Path) {
    let Ok(entries) = std::fs::read_dir(jobs) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = match idle_owner(&name) {
            Some(owner) => !owner.is_alive(),
            // An idle folder of an older forge-host (`idle-PID-ID`): its owner is unknown.
            None => name.starts_with("idle-"),
        };
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_folders_are_reused_and_those_of_dead_processes_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let jobs = dir.path().join("jobs");
        let pool = JobPool::new(jobs.clone());
        let first = pool.take("a", false).expect("job");
        pool.give_back(first);
        let second = pool.take("b", false).expect("job");
        let reused = second.root().to_path_buf();
        assert!(second.input().is_dir());
        pool.give_back(second);
        let third = pool.take("c", false).expect("job");
        assert_eq!(third.root(), reused, "an idle folder is used where it is");
        pool.give_back(third);
        let kept = pool.take("k", true).expect("job");
        assert!(
            kept.root().ends_with("k"),
            "a kept run's folder is named by its id"
        );
        std::fs::remove_dir_all(kept.root()).expect("remove the kept folder");
        drop(kept);
        let written = pool.take("w", false).expect("job");
        std::fs::write(written.work().join("f"), "x").expect("write");
        let written_root = written.root().to_path_buf();
        pool.give_back(written);
        assert!(
            !written_root.exists(),
            "a folder with files left in it is not reused"
        );
        let second = pool.take("b", false).expect("job");
        drop(second);
        pool.give_back(pool.take("c", false).expect("job"));
        let dead = Owner {
            pid: u32::MAX - 9,
            start_ticks: Some(3),
        };
        std::fs::create_dir_all(jobs.join(format!("idle-{}-0", dead.tag()))).expect("mkdir");
        let _later = JobPool::new(jobs.clone());
        let names: Vec<String> = std::fs::read_dir(&jobs)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].starts_with(&format!("idle-{}-", Owner::current().tag())));
    }
}
