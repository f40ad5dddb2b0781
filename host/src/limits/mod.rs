//! Every limit of an execution, declared once in [`LIMITS`]: its flag name, its kind,
//! its default, its range, the limit it must fit in, and its help line. The CLI's flags, a
//! `--config` file, validation and the human report all read that table, so adding a limit is
//! one entry in the `declare_limits!` list below.

mod config;
mod meter;
mod parse;
mod patience;
mod resident;
mod spec;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use config::{apply_config, apply_config_file, set_limit};
pub use meter::{MemoryLimiter, MemoryStats};
pub use parse::{format_duration, format_size, parse_duration, parse_size};
pub use patience::{Backoff, DEFAULT_PATIENCE, GaveUp, patiently};
pub use resident::{RUN_OVERHEAD_BYTES, default_run_memory, machine_memory};
pub use spec::{LimitKind, LimitSpec, LimitValue};

use crate::error::{Error, Result};
use spec::LimitField;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Smallest memory cap: below it no engine can even start.
pub const MIN_MEMORY_BYTES: u64 = 16 * MIB;
/// Largest memory cap: a wasm32 memory cannot address more.
pub const MAX_MEMORY_BYTES: u64 = 4 * GIB;

/// Declares the [`Limits`] struct, its `Default`, and the [`LIMITS`] table from one list.
macro_rules! declare_limits {
    ($(
        $(#[$meta:meta])*
        $field:ident: $ty:ty {
            flag: $flag:literal,
            kind: $kind:ident,
            default: $default:expr,
            range: $min:expr => $max:expr,
            $(at_most: $other:literal,)?
            help: $help:literal $(,)?
        }
    )*) => {
        /// The limits of one execution. Build with [`Limits::default`] and change fields, then
        /// [`Limits::validate`]. Serialised with these field names in the journal and in
        /// `provenance.json`.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct Limits {
            $( $(#[$meta])* pub $field: $ty, )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Limits { $( $field: $default, )* }
            }
        }

        /// Every limit, in the order `run --help` lists them.
        pub const LIMITS: &[LimitSpec] = &[
            $(
                LimitSpec {
                    flag: $flag,
                    field: stringify!($field),
                    kind: LimitKind::$kind,
                    min: $min,
                    max: $max,
                    at_most: declare_limits!(@option $($other)?),
                    help: $help,
                    get: |limits| limits.$field.to_value(),
                    set: |limits, value| limits.$field = LimitField::from_value(value),
                },
            )*
        ];
    };
    (@option) => { None };
    (@option $other:literal) => { Some($other) };
}

declare_limits! {
    /// Wall clock of the whole execution.
    #[serde(with = "duration_ms", rename = "timeout_ms")]
    timeout: Duration {
        flag: "timeout",
        kind: Duration,
        default: Duration::from_secs(30),
        range: 1 => 24 * 3600 * 1000,
        help: "Wall-clock limit of the whole execution (500ms, 30s, 2m)",
    }
    /// Deterministic CPU budget in wasmtime fuel units; `None` turns fuel metering off.
    fuel: Option<u64> {
        flag: "fuel",
        kind: OptionalCount,
        default: None,
        range: 1 => u64::MAX,
        help: "Deterministic CPU budget in wasmtime fuel units [default: off]",
    }
    /// Linear memory and tables of the instance.
    memory_bytes: u64 {
        flag: "memory",
        kind: Bytes,
        default: 256 * MIB,
        range: MIN_MEMORY_BYTES => MAX_MEMORY_BYTES,
        help: "Memory cap of the instance (64MiB, 1GiB)",
    }
    /// Wall clock of one nested tool call, in milliseconds; past it the call is cancelled (an MCP
    /// server is sent `notifications/cancelled`) and fails. `None`: the run's remaining time.
    tool_timeout_ms: Option<u64> {
        flag: "tool-timeout",
        kind: OptionalDuration,
        default: None,
        range: 1 => 24 * 3600 * 1000,
        help: "Wall-clock limit of one tool call; it is cancelled and fails with TOOL_FAILED [default: the run's remaining time]",
    }
    /// Nested tool calls one execution may begin.
    max_tool_calls: u32 {
        flag: "max-tool-calls",
        kind: Count,
        default: 100,
        range: 0 => 1_000_000,
        help: "Nested tool calls the script may begin",
    }
    /// Nested tool calls running at once.
    max_concurrency: u32 {
        flag: "max-concurrency",
        kind: Count,
        default: 4,
        range: 1 => 256,
        help: "Nested tool calls running at once",
    }
    /// JSON input of one nested call.
    max_call_input_bytes: u64 {
        flag: "max-call-input",
        kind: Bytes,
        default: MIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "Largest JSON input of one tool call",
    }
    /// JSON response of one nested call.
    max_call_response_bytes: u64 {
        flag: "max-call-response",
        kind: Bytes,
        default: 4 * MIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "Largest JSON response of one tool call",
    }
    /// Retained tail of stdout, and of stderr, each; also the total of `text()` values.
    max_output_bytes: u64 {
        flag: "max-output",
        kind: Bytes,
        default: 256 * KIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "Retained tail of stdout and of stderr, each (also bounds all text() values)",
    }
    /// The returned JSON value.
    max_result_bytes: u64 {
        flag: "max-result",
        kind: Bytes,
        default: 16 * MIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "Largest result",
    }
    /// All state values of a session together (keys included).
    max_state_bytes: u64 {
        flag: "max-state",
        kind: Bytes,
        default: MIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "State budget of the session, all values together",
    }
    /// One state value.
    max_state_value_bytes: u64 {
        flag: "max-state-value",
        kind: Bytes,
        default: 256 * KIB,
        range: 1 => u64::MAX,
        at_most: "max-state",
        help: "Largest single state value",
    }
    /// Files published from `/output`.
    max_publish_files: u32 {
        flag: "max-files",
        kind: Count,
        default: 1000,
        range: 1 => u32::MAX as u64,
        help: "Files published from /output at most",
    }
    /// Bytes published from `/output`, all files together.
    max_publish_bytes: u64 {
        flag: "max-files-bytes",
        kind: Bytes,
        default: 256 * MIB,
        range: 1 => u64::MAX,
        help: "Bytes published from /output, all files together",
    }
    /// Bytes of one published file.
    max_publish_file_bytes: u64 {
        flag: "max-file-bytes",
        kind: Bytes,
        default: 64 * MIB,
        range: 1 => u64::MAX,
        at_most: "max-files-bytes",
        help: "Bytes of one published file",
    }
    /// Bytes the run holds in `/work` and `/output` together, enforced at each write.
    max_disk_bytes: u64 {
        flag: "max-disk",
        kind: Bytes,
        default: GIB,
        range: MIB => u64::MAX,
        help: "Bytes the run may hold in /work and /output together; a write past it fails in the script (an OSError), and a run that then fails is DISK_LIMIT",
    }
    /// Files and folders the script holds open at once: each is a descriptor of the host
    /// process, which all runs share.
    max_open_files: u32 {
        flag: "max-open-files",
        kind: Count,
        default: 256,
        range: 8 => 65_536,
        help: "Files and folders the script may hold open at once (each is one of forge-host's own descriptors); one more fails in the script (an OSError)",
    }
    /// Bytes of all inputs together, checked before anything is copied.
    max_input_bytes: u64 {
        flag: "max-input",
        kind: Bytes,
        default: GIB,
        range: 1 => u64::MAX,
        help: "Bytes of all --input files and folders together",
    }
    /// The live task log on disk (`forge-host logs`).
    max_log_bytes: u64 {
        flag: "max-log",
        kind: Bytes,
        default: MIB,
        range: 1 => u64::MAX,
        at_most: "memory",
        help: "The live task log on disk (forge-host logs ID)",
    }
    /// The script's source text. Every front door refuses a larger one before anything runs,
    /// so one caller cannot make the host hold an unbounded script.
    max_script_bytes: u64 {
        flag: "max-script",
        kind: Bytes,
        default: 4 * MIB,
        range: 1 => 64 * MIB,
        help: "Largest script source; a larger one is refused with BUDGET_EXCEEDED before it runs",
    }
    /// Tool-response bytes a run's replay record may keep; past it the run goes on, not
    /// replayable. (Random bytes cost nothing: the tape keeps the seed they came from.)
    max_record_bytes: u64 {
        flag: "max-record",
        kind: Bytes,
        default: 16 * MIB,
        range: 0 => u64::MAX,
        help: "Tool-response bytes the replay record keeps; past it the run is not replayable",
    }
}

impl Limits {
    /// These limits, each lowered to `ceilings`' where it is higher (`off` is the highest), and
    /// the flags of the limits that were lowered. A worker runs what it is sent within its own.
    pub fn within(&self, ceilings: &Limits) -> (Limits, Vec<&'static str>) {
        let mut limits = self.clone();
        let mut lowered = Vec::new();
        for spec in LIMITS {
            let (asked, ceiling) = ((spec.get)(self), (spec.get)(ceilings));
            let used = match (asked, ceiling) {
                (_, LimitValue::Off) => asked,
                (LimitValue::Off, LimitValue::Number(_)) => ceiling,
                (LimitValue::Number(a), LimitValue::Number(c)) => LimitValue::Number(a.min(c)),
            };
            if used != asked {
                (spec.set)(&mut limits, used);
                lowered.push(spec.flag);
            }
        }
        (limits, lowered)
    }

    /// Rejects a value out of its range, or larger than the limit it must fit in, with
    /// `INVALID_INPUT`.
    pub fn validate(&self) -> Result<()> {
        for spec in LIMITS {
            let LimitValue::Number(value) = spec.value(self) else {
                continue;
            };
            if !(spec.min..=spec.max).contains(&value) {
                return Err(Error::invalid_input(format!(
                    "limit `{}` is {}, out of range ({})",
                    spec.flag,
                    spec.format(value),
                    spec.range_text()
                )));
            }
            if let Some(other) = spec.at_most.and_then(LimitSpec::named)
                && let LimitValue::Number(bound) = other.value(self)
                && value > bound
            {
                return Err(Error::invalid_input(format!(
                    "limit `{}` ({}) is larger than `{}` ({}), which it must fit in",
                    spec.flag,
                    spec.format(value),
                    other.flag,
                    other.format(bound)
                )));
            }
        }
        Ok(())
    }

    /// `flag value` pairs of every limit, for people (`journal show`).
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        LIMITS
            .iter()
            .map(|spec| (spec.flag, spec.value(self).display(spec.kind)))
            .collect()
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

    #[test]
    fn limits_within_ceilings_are_lowered_to_them_and_off_is_the_highest() {
        let asked = Limits {
            timeout: Duration::from_secs(600),
            memory_bytes: 32 * MIB,
            ..Limits::default()
        };
        let ceilings = Limits {
            fuel: Some(1_000),
            ..Limits::default()
        };
        let (used, lowered) = asked.within(&ceilings);
        assert_eq!(used.timeout, ceilings.timeout);
        assert_eq!(used.memory_bytes, 32 * MIB, "a lower ask stands");
        assert_eq!(
            used.fuel,
            Some(1_000),
            "no fuel limit asked: the ceiling's applies"
        );
        assert_eq!(lowered, ["timeout", "fuel"]);
        assert_eq!(
            Limits::default().within(&Limits::default()).1,
            Vec::<&str>::new()
        );
    }
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

    #[test]
    fn the_table_names_every_field_once_and_reads_back_what_it_sets() {
        let fields = serde_json::to_value(Limits::default()).expect("serialise");
        let fields = fields.as_object().expect("an object");
        assert_eq!(fields.len(), LIMITS.len(), "one table entry per field");
        for (i, spec) in LIMITS.iter().enumerate() {
            assert!(
                LIMITS[..i].iter().all(|s| s.flag != spec.flag),
                "{} twice",
                spec.flag
            );
            if let Some(other) = spec.at_most {
                assert!(LimitSpec::named(other).is_some(), "{other} is a limit");
            }
            let mut limits = Limits::default();
            (spec.set)(&mut limits, LimitValue::Number(spec.min));
            assert_eq!(
                spec.value(&limits),
                LimitValue::Number(spec.min),
                "{}",
                spec.flag
            );
        }
        assert_eq!(
            Limits::default().describe()[..2],
            [("timeout", "30s".to_string()), ("fuel", "off".to_string())]
        );
    }
}
