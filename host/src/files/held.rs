//! What each file of a run holds, for the disk quota: the 4 KiB blocks the run's writes
//! touched, so that a sparse file (a seek far past its end, then a write; a `truncate` that
//! grows it) is charged for the bytes it holds, not for its length. It counts what the run
//! wrote, not what the host's filesystem allocated, so the same script meets the quota at the
//! same write on every machine, and `replay` says identical.
//!
//! A file the run has not written to yet (a hard link, say) is taken to hold all of its length.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The unit the quota charges a sparse file in.
pub const BLOCK: u64 = 4096;

/// A file's identity on the host: the same for every name and descriptor of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileKey {
    /// The device it is on.
    pub device: u64,
    /// Its inode there.
    pub inode: u64,
}

/// The blocks of every file a run wrote to.
#[derive(Debug, Default)]
pub struct HeldBlocks {
    files: Mutex<HashMap<FileKey, Extents>>,
}

/// A change in what a file holds: the quota takes `after - before` more, or gives back the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Bytes held before.
    pub before: u64,
    /// Bytes held after.
    pub after: u64,
}

impl Held {
    /// The bytes to take from the quota (none when the file holds less).
    pub fn growth(self) -> u64 {
        self.after.saturating_sub(self.before)
    }

    /// The bytes to give back to the quota (none when the file holds more).
    pub fn freed(self) -> u64 {
        self.before.saturating_sub(self.after)
    }
}

impl HeldBlocks {
    /// What writing `len` bytes at `offset` into the file `key`, now `size` long, would make it
    /// hold; nothing changes.
    pub fn before_write(&self, key: FileKey, size: u64, offset: u64, len: u64) -> Held {
        self.with(key, size, |extents| Held {
            before: extents.held(),
            after: extents.held_after_write(offset, len),
        })
    }

    /// Records that `len` bytes were written at `offset` into the file `key`, `size` long before.
    pub fn wrote(&self, key: FileKey, size: u64, offset: u64, len: u64) -> Held {
        self.with(key, size, |extents| {
            let before = extents.held();
            extents.write(offset, len);
            Held {
                before,
                after: extents.held(),
            }
        })
    }

    /// What cutting or growing the file `key`, `size` long, to `new_size` would make it hold;
    /// nothing changes.
    pub fn before_resize(&self, key: FileKey, size: u64, new_size: u64) -> Held {
        self.with(key, size, |extents| {
            let mut resized = extents.clone();
            resized.resize(new_size);
            Held {
                before: extents.held(),
                after: resized.held(),
            }
        })
    }

    /// Records that the file `key`, `size` long, is now `new_size` long (a truncate: growing it
    /// adds no blocks).
    pub fn resized(&self, key: FileKey, size: u64, new_size: u64) -> Held {
        self.with(key, size, |extents| {
            let before = extents.held();
            extents.resize(new_size);
            Held {
                before,
                after: extents.held(),
            }
        })
    }

    /// Forgets the file `key`, `size` long (its last name is gone, or it was emptied) and says
    /// what it held.
    pub fn forget(&self, key: FileKey, size: u64) -> u64 {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        files.remove(&key).map_or(size, |mut extents| {
            extents.resize(size);
            extents.held()
        })
    }

    fn with<T>(&self, key: FileKey, size: u64, f: impl FnOnce(&mut Extents) -> T) -> T {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let extents = files.entry(key).or_insert_with(|| Extents::dense(size));
        // Another descriptor (an append stream) may have grown it since: the host's length wins.
        extents.size = size;
        extents.trim();
        f(extents)
    }
}

/// The blocks of one file its writes touched, as runs of block numbers, and its length.
#[derive(Debug, Clone, Default)]
struct Extents {
    /// First block of each run -> the block after its last.
    runs: BTreeMap<u64, u64>,
    /// How many blocks the runs hold.
    blocks: u64,
    size: u64,
}

impl Extents {
    /// A file whose every byte was written.
    fn dense(size: u64) -> Self {
        let mut extents = Extents {
            size,
            ..Extents::default()
        };
        extents.touch(0, blocks_for(size));
        extents
    }

    /// Bytes held: the touched blocks, the last cut at the file's end.
    fn held(&self) -> u64 {
        held_of(self.blocks, self.contains(last_block(self.size)), self.size)
    }

    fn held_after_write(&self, offset: u64, len: u64) -> u64 {
        if len == 0 {
            return self.held();
        }
        let (first, end) = block_span(offset, len);
        let size = self.size.max(offset.saturating_add(len));
        let last = last_block(size);
        let last_touched = self.contains(last) || last.is_some_and(|b| (first..end).contains(&b));
        held_of(self.blocks + self.missing(first, end), last_touched, size)
    }

    fn write(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (first, end) = block_span(offset, len);
        self.touch(first, end);
        self.size = self.size.max(offset.saturating_add(len));
    }

    fn resize(&mut self, size: u64) {
        self.size = size;
        self.trim();
    }

    /// Drops the blocks past the file's end.
    fn trim(&mut self) {
        let end = blocks_for(self.size);
        let cut: Vec<(u64, u64)> = self
            .runs
            .range(..)
            .rev()
            .take_while(|(_, run_end)| **run_end > end)
            .map(|(start, run_end)| (*start, *run_end))
            .collect();
        for (start, run_end) in cut {
            self.runs.remove(&start);
            if start < end {
                self.runs.insert(start, end);
                self.blocks -= run_end - end;
            } else {
                self.blocks -= run_end - start;
            }
        }
    }

    fn contains(&self, block: Option<u64>) -> bool {
        block.is_some_and(|block| {
            self.runs
                .range(..=block)
                .next_back()
                .is_some_and(|(_, end)| block < *end)
        })
    }

    /// How many of the blocks `first..end` no run holds.
    fn missing(&self, first: u64, end: u64) -> u64 {
        let mut held = 0;
        let from = self
            .runs
            .range(..=first)
            .next_back()
            .map_or(first, |(start, _)| *start);
        for (start, run_end) in self.runs.range(from..end) {
            held += (*run_end).min(end).saturating_sub((*start).max(first));
        }
        (end - first) - held
    }

    /// Adds the blocks `first..end`, merging the runs they meet.
    fn touch(&mut self, mut first: u64, mut end: u64) {
        if first >= end {
            return;
        }
        self.blocks += self.missing(first, end);
        let from = self
            .runs
            .range(..=first)
            .next_back()
            .map_or(first, |(start, _)| *start);
        let met: Vec<(u64, u64)> = self
            .runs
            .range(from..=end)
            .filter(|(start, run_end)| **run_end >= first && **start <= end)
            .map(|(start, run_end)| (*start, *run_end))
            .collect();
        for (start, run_end) in met {
            self.runs.remove(&start);
            first = first.min(start);
            end = end.max(run_end);
        }
        self.runs.insert(first, end);
    }
}

fn blocks_for(size: u64) -> u64 {
    size.div_ceil(BLOCK)
}

/// The block holding a file's last byte, if it has one.
fn last_block(size: u64) -> Option<u64> {
    blocks_for(size).checked_sub(1)
}

/// The blocks a write of `len` (at least 1) bytes at `offset` touches.
fn block_span(offset: u64, len: u64) -> (u64, u64) {
    let end = offset.saturating_add(len);
    (offset / BLOCK, blocks_for(end))
}

/// Bytes held by `blocks` touched blocks of a file `size` long, whose last block is among them
/// when `last_touched` (it counts only up to the file's end).
fn held_of(blocks: u64, last_touched: bool, size: u64) -> u64 {
    let past_end = if last_touched {
        blocks_for(size) * BLOCK - size
    } else {
        0
    };
    (blocks * BLOCK).saturating_sub(past_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: FileKey = FileKey {
        device: 1,
        inode: 2,
    };

    #[test]
    fn a_file_written_from_the_start_holds_its_length() {
        let held = HeldBlocks::default();
        assert_eq!(held.before_write(KEY, 0, 0, 100).after, 100);
        assert_eq!(
            held.wrote(KEY, 0, 0, 100),
            Held {
                before: 0,
                after: 100
            }
        );
        assert_eq!(held.wrote(KEY, 100, 100, 10_000).after, 10_100);
        assert_eq!(held.wrote(KEY, 10_100, 0, 10).growth(), 0, "an overwrite");
        assert_eq!(held.forget(KEY, 10_100), 10_100);
    }

    #[test]
    fn a_sparse_file_holds_the_blocks_it_was_written_in() {
        let held = HeldBlocks::default();
        let far = 5 << 20;
        let preview = held.before_write(KEY, 0, far, 1);
        assert_eq!(
            preview,
            Held {
                before: 0,
                after: 1
            }
        );
        assert_eq!(held.wrote(KEY, 0, far, 1), preview);
        // A block in the middle, then the start.
        assert_eq!(held.wrote(KEY, far + 1, 8192, 10).after, 1 + BLOCK);
        assert_eq!(held.wrote(KEY, far + 1, 0, 1).after, 1 + 2 * BLOCK);
        // Growing it by a truncate adds nothing but completes its last block.
        assert_eq!(held.resized(KEY, far + 1, far + 2 * BLOCK).after, 3 * BLOCK);
        // Cutting it drops the blocks past the new end.
        assert_eq!(held.resized(KEY, far + 2 * BLOCK, 100).after, 100);
        assert_eq!(held.forget(KEY, 100), 100);
    }

    #[test]
    fn a_file_not_written_yet_holds_its_length_and_runs_merge() {
        let held = HeldBlocks::default();
        assert_eq!(
            held.wrote(KEY, 3 * BLOCK, 10 * BLOCK, 1).after,
            3 * BLOCK + 1
        );
        for block in [5, 7, 6, 4] {
            held.wrote(KEY, 10 * BLOCK + 1, block * BLOCK, BLOCK);
        }
        assert_eq!(held.forget(KEY, 10 * BLOCK + 1), 7 * BLOCK + 1);
        let mut extents = Extents::dense(0);
        extents.touch(0, 2);
        extents.touch(4, 6);
        extents.touch(1, 5);
        assert_eq!(extents.runs.len(), 1);
        assert_eq!(extents.blocks, 6);
        assert_eq!(extents.missing(0, 10), 4);
    }
}
