//! `--max-memory` of the commands that run many scripts at once (`mcp`, `worker`): what all
//! runs at once may hold, each counted at its limits (`Limits::resident_bytes`).

use forge_host::error::Error;
use forge_host::limits::{Limits, default_run_memory};

/// The `--max-memory` flag.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryFlag {
    /// Memory all runs at once may hold at their limits (each run counts its --memory, twice
    /// its --max-result, its tool calls in flight, its output and state, and 8 MiB); a run
    /// waits until its share fits [default: 3/4 of this machine's memory, or of its cgroup's
    /// memory.max]
    #[arg(long, value_name = "SIZE", value_parser = forge_host::limits::parse_size)]
    pub max_memory: Option<u64>,
}

/// Sizes as people read them here: whole mebibytes, rounded up.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

impl MemoryFlag {
    /// The memory runs at once may hold and what one run at `ceilings` may hold; `None` where
    /// the machine's memory cannot be read and none was given. Refused when one run could
    /// never fit.
    fn checked(&self, ceilings: &Limits) -> Result<Option<(u64, u64)>, Error> {
        let Some(max_memory) = self.max_memory.or_else(default_run_memory) else {
            return Ok(None);
        };
        let per_run = ceilings.resident_bytes();
        if per_run > max_memory {
            return Err(Error::invalid_input(format!(
                "--max-memory {} is less than one run at these limits may hold ({}): \
raise it, or lower --memory",
                mib(max_memory),
                mib(per_run)
            )));
        }
        Ok(Some((max_memory, per_run)))
    }

    /// `forge-host mcp`'s budget for runs at once, said on stderr: a run waits until its share
    /// (at the limits it asked for) fits beside those running.
    pub fn budget(&self, ceilings: &Limits, max_runs: usize) -> Result<Option<u64>, Error> {
        let Some((max_memory, per_run)) = self.checked(ceilings)? else {
            return Ok(None);
        };
        let at_caps = u64::try_from(max_runs)
            .unwrap_or(u64::MAX)
            .saturating_mul(per_run);
        eprintln!(
            "forge-host mcp: up to {max_runs} runs at once (--max-runs), each holding at most {} \
at its limits, within {} (--max-memory){}",
            mib(per_run),
            mib(max_memory),
            if at_caps > max_memory {
                "; a run waits until its share fits"
            } else {
                ""
            }
        );
        Ok(Some(max_memory))
    }

    /// Runs a worker takes at once: `max_runs`, fewer when that many at `ceilings` would not
    /// fit in the budget. A worker takes a request before it reads what it asks for, so it
    /// counts every run at its ceilings.
    pub fn runs_at_once(&self, ceilings: &Limits, max_runs: usize) -> Result<usize, Error> {
        let Some((max_memory, per_run)) = self.checked(ceilings)? else {
            return Ok(max_runs);
        };
        let fit = usize::try_from(max_memory / per_run.max(1)).unwrap_or(usize::MAX);
        if fit < max_runs {
            eprintln!(
                "forge-host worker: {fit} run{} at once, not {max_runs} (--max-runs): each may \
hold {} at its limits, within {} (--max-memory)",
                if fit == 1 { "" } else { "s" },
                mib(per_run),
                mib(max_memory)
            );
        }
        Ok(max_runs.min(fit).max(1))
    }
}
