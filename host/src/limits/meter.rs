//! The memory cap of an instance: a [`wasmtime::ResourceLimiter`] that denies any growth
//! past the cap and remembers that it did, so that a trap or a script failure after a denied
//! growth is classified as `MEMORY_LIMIT` from the host's own record, never from guest text.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes counted per table element (a function reference is one pointer).
const TABLE_ELEMENT_BYTES: u64 = 8;

/// What the limiter saw, shared with the kernel so that it survives a stop.
#[derive(Debug, Default)]
pub struct MemoryStats {
    peak_bytes: AtomicU64,
    denied: AtomicBool,
}

impl MemoryStats {
    /// The most memory (linear memories plus tables) the instance held at once.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes.load(Ordering::Relaxed)
    }

    /// Whether a growth was denied.
    pub fn denied(&self) -> bool {
        self.denied.load(Ordering::Relaxed)
    }
}

/// Caps the linear memories and tables of one store together.
pub struct MemoryLimiter {
    max_bytes: u64,
    used_bytes: u64,
    stats: Arc<MemoryStats>,
}

impl MemoryLimiter {
    /// A limiter allowing `max_bytes` in all.
    pub fn new(max_bytes: u64) -> Self {
        MemoryLimiter {
            max_bytes,
            used_bytes: 0,
            stats: Arc::default(),
        }
    }

    /// The shared record of what happened.
    pub fn stats(&self) -> Arc<MemoryStats> {
        self.stats.clone()
    }

    fn grow(&mut self, current: u64, desired: u64) -> bool {
        let next = (self.used_bytes - current.min(self.used_bytes)).saturating_add(desired);
        if next > self.max_bytes {
            self.stats.denied.store(true, Ordering::Relaxed);
            return false;
        }
        self.used_bytes = next;
        self.stats.peak_bytes.fetch_max(next, Ordering::Relaxed);
        true
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        Ok(self.grow(current as u64, desired as u64))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        Ok(self.grow(
            current as u64 * TABLE_ELEMENT_BYTES,
            (desired as u64).saturating_mul(TABLE_ELEMENT_BYTES),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    #[test]
    fn growth_past_the_cap_is_denied_and_remembered() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 60, None).expect("ok"));
        assert!(
            limiter.table_growing(0, 5, None).expect("ok"),
            "40 bytes of table"
        );
        assert!(!limiter.stats().denied());
        assert!(!limiter.memory_growing(60, 61, None).expect("ok"));
        assert!(limiter.stats().denied());
        assert_eq!(limiter.stats().peak_bytes(), 100);
    }
}
