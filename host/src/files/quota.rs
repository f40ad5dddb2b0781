//! The disk quota of one execution: the bytes it holds in `/work` and `/output` together
//! (`--max-disk`; a sparse file counts the blocks it was written in, `held.rs`), and the files
//! and folders it holds open (`--max-open-files`). The WASI filesystem adapter
//! (`engines/host/filesystem.rs`) asks it before every write that would grow what a file holds,
//! and gives bytes back when a file is truncated, replaced or deleted; a refused write fails in
//! the guest with "no space left on device". It counts every descriptor the guest opens, because
//! each is one of the host process's own, shared by every run.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::held::HeldBlocks;

/// The bytes a run may hold, and holds; the descriptors it may hold open, and holds.
#[derive(Debug)]
pub struct DiskQuota {
    max: u64,
    used: AtomicU64,
    peak: AtomicU64,
    denied: AtomicBool,
    host_full: AtomicBool,
    max_open: u32,
    open: AtomicU32,
    files: HeldBlocks,
}

/// An open the quota refused: the run already holds `max` descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run holds {max} open files and folders, its --max-open-files")]
pub struct TooManyOpen {
    /// The limit.
    pub max: u32,
}

/// A write the quota refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run would hold {wanted} bytes on disk, over its --max-disk of {max} bytes")]
pub struct DiskFull {
    /// What the run would have held.
    pub wanted: u64,
    /// The quota.
    pub max: u64,
}

impl DiskQuota {
    /// A quota of `max` bytes and `max_open` open descriptors, none used.
    pub fn new(max: u64, max_open: u32) -> Self {
        DiskQuota {
            max,
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            denied: AtomicBool::new(false),
            host_full: AtomicBool::new(false),
            max_open,
            open: AtomicU32::new(0),
            files: HeldBlocks::default(),
        }
    }

    /// Takes one more open descriptor, or refuses.
    pub fn open(&self) -> Result<(), TooManyOpen> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |open| {
                (open < self.max_open).then_some(open + 1)
            })
            .map(drop)
            .map_err(|_| TooManyOpen { max: self.max_open })
    }

    /// Gives one open descriptor back.
    pub fn close(&self) {
        let _ = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |open| {
                Some(open.saturating_sub(1))
            });
    }

    /// Takes `bytes` more, or refuses (and remembers that it refused).
    pub fn grow(&self, bytes: u64) -> Result<(), DiskFull> {
        if bytes == 0 {
            return Ok(());
        }
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let wanted = used.saturating_add(bytes);
            if wanted > self.max {
                self.denied.store(true, Ordering::Relaxed);
                return Err(DiskFull {
                    wanted,
                    max: self.max,
                });
            }
            match self
                .used
                .compare_exchange_weak(used, wanted, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(wanted, Ordering::Relaxed);
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }

    /// Gives `bytes` back (a file shrank or went away).
    pub fn release(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    /// What each file the run wrote holds, which is what it is charged for.
    pub fn files(&self) -> &HeldBlocks {
        &self.files
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Most bytes held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Whether a write was refused.
    pub fn denied(&self) -> bool {
        self.denied.load(Ordering::Relaxed)
    }

    /// Notes that a write within the quota failed because the host's own disk is full: a run
    /// that then fails is the host's doing (`HOST_DISK_FULL`), not the script's.
    pub fn note_host_full(&self) {
        self.host_full.store(true, Ordering::Relaxed);
    }

    /// Whether a write failed because the host's disk is full.
    pub fn host_full(&self) -> bool {
        self.host_full.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_taken_up_to_the_quota_and_given_back() {
        let quota = DiskQuota::new(100, 8);
        quota.grow(60).expect("fits");
        assert_eq!(
            quota.grow(41),
            Err(DiskFull {
                wanted: 101,
                max: 100
            })
        );
        assert!(quota.denied());
        quota.grow(40).expect("fits exactly");
        quota.release(70);
        assert_eq!(quota.used(), 30);
        quota.release(1000);
        assert_eq!(quota.used(), 0);
        assert_eq!(quota.peak(), 100);
    }

    #[test]
    fn descriptors_are_taken_up_to_the_limit_and_given_back() {
        let quota = DiskQuota::new(0, 2);
        quota.open().expect("first");
        quota.open().expect("second");
        assert_eq!(quota.open(), Err(TooManyOpen { max: 2 }));
        quota.close();
        quota.open().expect("room again");
        for _ in 0..5 {
            quota.close();
        }
        quota.open().expect("never below zero");
    }
}
