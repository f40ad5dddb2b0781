//! Who owns an open execution, and whether that owner is still alive: a process id
//! plus the process's start time, so that a reused pid is not mistaken for the owner.

use serde::{Deserialize, Serialize};

/// The process that runs an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Process id.
    #[serde(rename = "owner_pid")]
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (`/proc/PID/stat` field 22), when
    /// known.
    #[serde(rename = "owner_start_ticks")]
    pub start_ticks: Option<u64>,
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count fields after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl Owner {
    /// This process. Read from `/proc` once: a process's start time never changes (a forked
    /// child has another pid, and reads its own).
    pub fn current() -> Self {
        static CURRENT: std::sync::OnceLock<Owner> = std::sync::OnceLock::new();
        let pid = std::process::id();
        match CURRENT.get() {
            Some(owner) if owner.pid == pid => *owner,
            _ => {
                let owner = Owner {
                    pid,
                    start_ticks: start_ticks(pid),
                };
                let _ = CURRENT.set(owner);
                owner
            }
        }
    }

    /// A short text form, `PID-TICKS`, for names of files a process leaves behind.
    pub fn tag(&self) -> String {
        format!("{}-{}", self.pid, self.start_ticks.unwrap_or(0))
    }

    /// Reads [`Owner::tag`] back.
    pub fn from_tag(tag: &str) -> Option<Owner> {
        let (pid, ticks) = tag.split_once('-')?;
        let ticks: u64 = ticks.parse().ok()?;
        Some(Owner {
            pid: pid.parse().ok()?,
            start_ticks: (ticks != 0).then_some(ticks),
        })
    }

    /// Whether the owning process still runs.
    pub fn is_alive(&self) -> bool {
        if self.pid == std::process::id() {
            return self.start_ticks == start_ticks(self.pid);
        }
        match (start_ticks(self.pid), self.start_ticks) {
            (Some(now), Some(then)) => now == then,
            // No /proc entry: the process is gone.
            (None, _) => false,
            // The owner's start time was unknown: a live pid is given the benefit of the doubt.
            (Some(_), None) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        let me = Owner::current();
        assert!(me.start_ticks.is_some());
        assert!(me.is_alive());
        let reused = Owner {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me
        };
        assert!(
            !reused.is_alive(),
            "same pid, other start time: not the owner"
        );
        let gone = Owner {
            pid: u32::MAX - 7,
            start_ticks: Some(1),
        };
        assert!(!gone.is_alive());
        assert_eq!(Owner::from_tag(&me.tag()), Some(me));
        assert_eq!(Owner::from_tag("12-x"), None);
    }
}
