//! How much of the host's memory one run may hold, from its limits, and how much this machine
//! has: what lets a server admit runs by the memory they may use (`--max-memory`) instead of
//! finding out from the kernel's OOM killer.

use super::{Limits, MIB};

/// Memory a run holds that no limit counts: its wasm stacks (a 2 MiB guest stack and the
/// host's async stack around it), the instance's tables and the host's own records of it.
pub const RUN_OVERHEAD_BYTES: u64 = 8 * MIB;

impl Limits {
    /// The most host memory a run with these limits holds at once: its linear memory and
    /// tables (`memory`), its result as the guest hands it over and as it is rendered
    /// (`max-result`, twice), the tool calls it may have in flight, each with its input and
    /// response (`max-concurrency` x (`max-call-input` + `max-call-response`)), the tails of
    /// stdout and stderr and the `text()` values they bound (`max-output`, three times), its
    /// session state before and after (`max-state`, twice), and [`RUN_OVERHEAD_BYTES`].
    /// Published files, inputs and the task log are on disk, not in memory.
    pub fn resident_bytes(&self) -> u64 {
        let calls = u64::from(self.max_concurrency).saturating_mul(
            self.max_call_input_bytes
                .saturating_add(self.max_call_response_bytes),
        );
        [
            self.memory_bytes,
            self.max_result_bytes.saturating_mul(2),
            calls,
            self.max_output_bytes.saturating_mul(3),
            self.max_state_bytes.saturating_mul(2),
            RUN_OVERHEAD_BYTES,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// The memory this process may use: the machine's (`MemTotal`), or its cgroup's `memory.max`
/// when that is lower. `None` where neither can be read (not Linux).
pub fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(total), Some(cgroup)) => Some(total.min(cgroup)),
        (total, cgroup) => total.or(cgroup),
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// What runs at once may hold when a server is not told (`--max-memory`): three quarters of
/// [`machine_memory`], leaving the rest to the host itself, its page cache and its neighbours.
pub fn default_run_memory() -> Option<u64> {
    machine_memory().map(|bytes| bytes / 4 * 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limits_hold_about_a_third_of_a_gibibyte() {
        let bytes = Limits::default().resident_bytes();
        // 256 MiB memory, 2 x 16 MiB result, 4 x (1 + 4) MiB calls, 3 x 256 KiB output,
        // 2 x 1 MiB state, 8 MiB overhead.
        assert_eq!(bytes, (256 + 32 + 20 + 2 + 8) * MIB + 768 * 1024);
    }

    #[test]
    fn every_counted_limit_raises_the_bound() {
        let base = Limits::default();
        let raised: [fn(&mut Limits); 6] = [
            |l| l.memory_bytes += MIB,
            |l| l.max_result_bytes += MIB,
            |l| l.max_concurrency += 1,
            |l| l.max_call_response_bytes += MIB,
            |l| l.max_output_bytes += MIB,
            |l| l.max_state_bytes += MIB,
        ];
        for raise in raised {
            let mut limits = base.clone();
            raise(&mut limits);
            assert!(limits.resident_bytes() > base.resident_bytes());
        }
    }

    #[test]
    fn mem_total_is_read_in_kibibytes() {
        let meminfo = "MemFree:  1 kB\nMemTotal:       24576000 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_576_000 * 1024));
        assert_eq!(mem_total("MemTotal: lots"), None);
    }
}
