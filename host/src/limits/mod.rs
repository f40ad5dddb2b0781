//! Every limit of an execution (SPEC §5), with its default, and the load-time check that rejects
//! a value out of range or an incompatible pair before anything runs.

mod config;
mod meter;
mod parse;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use config::{apply_config, set_limit};
pub use meter::{MemoryLimiter, MemoryStats};
pub use parse::{format_size, parse_duration, parse_size};

use crate::error::{Error, Result};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The limits of one execution. Build with [`Limits::default`] and change fields, then
/// [`Limits::validate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Wall clock of the whole execution.
    #[serde(with = "duration_ms", rename = "timeout_ms")]
    pub timeout: Duration,
    /// Deterministic CPU budget in wasmtime fuel units; `None` turns fuel metering off.
    pub fuel: Option<u64>,
    /// Linear memory and tables of the instance.
    pub memory_bytes: u64,
    /// Nested tool calls one execution may begin.
    pub max_tool_calls: u32,
    /// Nested tool calls running at once.
    pub max_concurrency: u32,
    /// JSON input of one nested call.
    pub max_call_input_bytes: u64,
    /// JSON response of one nested call.
    pub max_call_response_bytes: u64,
    /// Retained tail of stdout, and of stderr, each; also the total of `text()` values.
    pub max_output_bytes: u64,
    /// The returned JSON value.
    pub max_result_bytes: u64,
    /// All state values of a session together (keys included).
    pub max_state_bytes: u64,
    /// One state value.
    pub max_state_value_bytes: u64,
    /// Files published from `/output`.
    pub max_publish_files: u32,
    /// Bytes published from `/output`, all files together.
    pub max_publish_bytes: u64,
    /// Bytes of one published file.
    pub max_publish_file_bytes: u64,
    /// The live task log on disk (`forge-host logs`).
    pub max_log_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            fuel: None,
            memory_bytes: 256 * MIB,
            max_tool_calls: 100,
            max_concurrency: 4,
            max_call_input_bytes: MIB,
            max_call_response_bytes: 4 * MIB,
            max_output_bytes: 256 * KIB,
            max_result_bytes: 16 * MIB,
            max_state_bytes: MIB,
            max_state_value_bytes: 256 * KIB,
            max_publish_files: 1000,
            max_publish_bytes: 256 * MIB,
            max_publish_file_bytes: 64 * MIB,
            max_log_bytes: MIB,
        }
    }
}

/// Smallest memory cap: below it no engine can even start.
pub const MIN_MEMORY_BYTES: u64 = 16 * MIB;
/// Largest memory cap: a wasm32 memory cannot address more.
pub const MAX_MEMORY_BYTES: u64 = 4 * GIB;

impl Limits {
    /// Rejects a value out of range or an incompatible pair with `INVALID_INPUT`.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Err(Error::invalid_input(message));
        if self.timeout.is_zero() || self.timeout > Duration::from_secs(24 * 3600) {
            return bad(format!(
                "timeout {:?} is out of range (1ms..24h)",
                self.timeout
            ));
        }
        if self.fuel == Some(0) {
            return bad("fuel must be positive (omit it to turn fuel metering off)".into());
        }
        if !(MIN_MEMORY_BYTES..=MAX_MEMORY_BYTES).contains(&self.memory_bytes) {
            return bad(format!(
                "memory {} is out of range ({}..{})",
                format_size(self.memory_bytes),
                format_size(MIN_MEMORY_BYTES),
                format_size(MAX_MEMORY_BYTES)
            ));
        }
        if self.max_tool_calls > 1_000_000 {
            return bad(format!(
                "max tool calls {} is out of range (0..1000000)",
                self.max_tool_calls
            ));
        }
        if !(1..=256).contains(&self.max_concurrency) {
            return bad(format!(
                "max concurrency {} is out of range (1..256)",
                self.max_concurrency
            ));
        }
        // Every byte budget below is something the guest must hold in its own memory at once.
        let within_memory = [
            ("call input", self.max_call_input_bytes),
            ("call response", self.max_call_response_bytes),
            ("retained output", self.max_output_bytes),
            ("result", self.max_result_bytes),
            ("state", self.max_state_bytes),
            ("log", self.max_log_bytes),
        ];
        for (name, bytes) in within_memory {
            if bytes == 0 {
                return bad(format!("the {name} budget must be positive"));
            }
            if bytes > self.memory_bytes {
                return bad(format!(
                    "the {name} budget ({}) is larger than the memory it must fit in ({})",
                    format_size(bytes),
                    format_size(self.memory_bytes)
                ));
            }
        }
        if self.max_state_value_bytes == 0 || self.max_state_value_bytes > self.max_state_bytes {
            return bad(format!(
                "the state value budget ({}) must be positive and at most the state budget ({})",
                format_size(self.max_state_value_bytes),
                format_size(self.max_state_bytes)
            ));
        }
        if self.max_publish_files == 0 || self.max_publish_bytes == 0 {
            return bad("the publication limits must be positive".into());
        }
        if self.max_publish_file_bytes == 0 || self.max_publish_file_bytes > self.max_publish_bytes
        {
            return bad(format!(
                "the per-file publication limit ({}) must be positive and at most the total ({})",
                format_size(self.max_publish_file_bytes),
                format_size(self.max_publish_bytes)
            ));
        }
        Ok(())
    }

    /// The publication limits.
    pub fn publish_limits(&self) -> crate::files::OutputLimits {
        crate::files::OutputLimits {
            max_files: self.max_publish_files,
            max_total_bytes: self.max_publish_bytes,
            max_file_bytes: self.max_publish_file_bytes,
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(value.as_millis().try_into().unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn defaults_are_valid_and_match_the_cli_contract() {
        let limits = Limits::default();
        limits.validate().expect("defaults validate");
        assert_eq!(limits.timeout, Duration::from_secs(30));
        assert_eq!(limits.memory_bytes, 256 * MIB);
        assert_eq!(limits.fuel, None);
        assert_eq!((limits.max_tool_calls, limits.max_concurrency), (100, 4));
        assert_eq!(limits.max_result_bytes, 16 * MIB);
    }

    #[test]
    fn out_of_range_values_and_incompatible_pairs_are_rejected() {
        let cases: [fn(&mut Limits); 9] = [
            |l| l.timeout = Duration::ZERO,
            |l| l.memory_bytes = MIB,
            |l| l.memory_bytes = 8 * GIB,
            |l| l.fuel = Some(0),
            |l| l.max_concurrency = 0,
            |l| {
                l.memory_bytes = 32 * MIB;
                l.max_output_bytes = 64 * MIB;
            },
            |l| l.max_state_value_bytes = l.max_state_bytes + 1,
            |l| l.max_publish_files = 0,
            |l| l.max_publish_file_bytes = l.max_publish_bytes + 1,
        ];
        for change in cases {
            let mut limits = Limits::default();
            change(&mut limits);
            let error = limits.validate().expect_err("must be rejected");
            assert_eq!(error.code, ErrorCode::InvalidInput, "{error}");
        }
    }
}
