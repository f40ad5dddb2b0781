//! One entry of the limits table: what a limit is called, how its values are written and read,
//! and its bounds. Values travel as [`LimitValue`]: a number in the limit's unit
//! (milliseconds, bytes or a count), or off.

use std::time::Duration;

use serde_json::Value;

use super::parse::{format_duration, format_size, parse_duration, parse_size};
use super::{LIMITS, Limits};

/// How a limit's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A duration (`500ms`, `30s`, `2m`), kept in milliseconds.
    Duration,
    /// A size (`64MiB`, `1GiB`, `4096`), kept in bytes.
    Bytes,
    /// A plain count.
    Count,
    /// A count that may be off (no value).
    OptionalCount,
    /// A duration that may be off (no value), kept in milliseconds.
    OptionalDuration,
}

impl LimitKind {
    /// What `--help` shows as the flag's value name.
    pub const fn value_name(self) -> &'static str {
        match self {
            LimitKind::Duration | LimitKind::OptionalDuration => "DURATION",
            LimitKind::Bytes => "SIZE",
            LimitKind::Count | LimitKind::OptionalCount => "N",
        }
    }
}

/// A limit's value in its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitValue {
    /// Milliseconds, bytes or a count.
    Number(u64),
    /// No limit of this kind (fuel metering off).
    Off,
}

impl LimitValue {
    /// The value as a person writes it for a limit of `kind`.
    pub fn display(self, kind: LimitKind) -> String {
        match self {
            LimitValue::Off => "off".into(),
            LimitValue::Number(n) => match kind {
                LimitKind::Duration | LimitKind::OptionalDuration => {
                    format_duration(Duration::from_millis(n))
                }
                LimitKind::Bytes => format_size(n),
                LimitKind::Count | LimitKind::OptionalCount => n.to_string(),
            },
        }
    }
}

/// A field of [`Limits`] as a [`LimitValue`].
pub(super) trait LimitField {
    fn to_value(&self) -> LimitValue;
    fn from_value(value: LimitValue) -> Self;
}

impl LimitField for Duration {
    fn to_value(&self) -> LimitValue {
        LimitValue::Number(self.as_millis().try_into().unwrap_or(u64::MAX))
    }
    fn from_value(value: LimitValue) -> Self {
        match value {
            LimitValue::Number(ms) => Duration::from_millis(ms),
            LimitValue::Off => Duration::ZERO,
        }
    }
}

impl LimitField for u64 {
    fn to_value(&self) -> LimitValue {
        LimitValue::Number(*self)
    }
    fn from_value(value: LimitValue) -> Self {
        match value {
            LimitValue::Number(n) => n,
            LimitValue::Off => 0,
        }
    }
}

impl LimitField for u32 {
    fn to_value(&self) -> LimitValue {
        LimitValue::Number(u64::from(*self))
    }
    fn from_value(value: LimitValue) -> Self {
        match value {
            // Out of range for the field: saturate, so validation reports the value as too big.
            LimitValue::Number(n) => u32::try_from(n).unwrap_or(u32::MAX),
            LimitValue::Off => 0,
        }
    }
}

impl LimitField for Option<u64> {
    fn to_value(&self) -> LimitValue {
        self.map_or(LimitValue::Off, LimitValue::Number)
    }
    fn from_value(value: LimitValue) -> Self {
        match value {
            LimitValue::Number(n) => Some(n),
            LimitValue::Off => None,
        }
    }
}

/// One limit: everything the CLI, `--config`, validation and reports know about it.
#[derive(Debug)]
pub struct LimitSpec {
    /// The `run` flag name, also the key in a `--config` file (`max-call-input`).
    pub flag: &'static str,
    /// The field of [`Limits`] it sets.
    pub field: &'static str,
    /// How its values are written.
    pub kind: LimitKind,
    /// Smallest allowed value, in its unit.
    pub min: u64,
    /// Largest allowed value, in its unit.
    pub max: u64,
    /// The limit (by flag name) this one must not exceed, because it has to fit in it.
    pub at_most: Option<&'static str>,
    /// The `--help` line.
    pub help: &'static str,
    /// Reads the limit.
    pub get: fn(&Limits) -> LimitValue,
    /// Sets the limit.
    pub set: fn(&mut Limits, LimitValue),
}

impl LimitSpec {
    /// The limit whose flag is `flag` (`_` may stand for `-`).
    pub fn named(flag: &str) -> Option<&'static LimitSpec> {
        let flag = flag.replace('_', "-");
        LIMITS.iter().find(|spec| spec.flag == flag)
    }

    /// Its value in `limits`.
    pub fn value(&self, limits: &Limits) -> LimitValue {
        (self.get)(limits)
    }

    /// Its default, as `--help` shows it; `None` when it is off by default.
    pub fn default_text(&self) -> Option<String> {
        match self.value(&Limits::default()) {
            LimitValue::Off => None,
            value => Some(value.display(self.kind)),
        }
    }

    /// `value` written for a person.
    pub fn format(&self, value: u64) -> String {
        LimitValue::Number(value).display(self.kind)
    }

    /// Its range, written for a person.
    pub fn range_text(&self) -> String {
        if self.max == u64::MAX {
            format!("at least {}", self.format(self.min))
        } else {
            format!("{}..{}", self.format(self.min), self.format(self.max))
        }
    }

    /// Parses a value as typed on the command line.
    pub fn parse(&self, text: &str) -> Result<LimitValue, String> {
        let number = match self.kind {
            LimitKind::Duration | LimitKind::OptionalDuration => parse_duration(text)?
                .as_millis()
                .try_into()
                .unwrap_or(u64::MAX),
            LimitKind::Bytes => parse_size(text)?,
            LimitKind::Count | LimitKind::OptionalCount => text
                .trim()
                .parse()
                .map_err(|_| format!("`{text}` is not a count"))?,
        };
        Ok(LimitValue::Number(number))
    }

    /// Reads a value from a `--config` file: a number in the limit's unit (milliseconds for a
    /// duration), the text a flag takes, or `null` for a limit that can be off.
    pub fn from_json(&self, value: &Value) -> Result<LimitValue, String> {
        match (value, self.kind) {
            (Value::Null, LimitKind::OptionalCount | LimitKind::OptionalDuration) => {
                Ok(LimitValue::Off)
            }
            (Value::Number(n), _) => n
                .as_u64()
                .map(LimitValue::Number)
                .ok_or_else(|| format!("{n} is not a whole, non-negative number")),
            (
                Value::String(text),
                LimitKind::Duration | LimitKind::OptionalDuration | LimitKind::Bytes,
            ) => self.parse(text),
            (other, kind) => Err(format!(
                "{other} is not a {}",
                match kind {
                    LimitKind::Duration | LimitKind::OptionalDuration => "duration",
                    LimitKind::Bytes => "size",
                    LimitKind::Count | LimitKind::OptionalCount => "count",
                }
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_from_flags_and_config_files_alike() {
        let timeout = LimitSpec::named("timeout").expect("timeout");
        assert_eq!(timeout.parse("2s"), Ok(LimitValue::Number(2000)));
        assert_eq!(
            timeout.from_json(&Value::from(1500)),
            Ok(LimitValue::Number(1500))
        );
        assert_eq!(timeout.default_text().as_deref(), Some("30s"));
        let memory = LimitSpec::named("memory").expect("memory");
        assert_eq!(memory.parse("64MiB"), Ok(LimitValue::Number(64 << 20)));
        assert_eq!(memory.default_text().as_deref(), Some("256MiB"));
        let fuel = LimitSpec::named("fuel").expect("fuel");
        assert_eq!(fuel.from_json(&Value::Null), Ok(LimitValue::Off));
        assert_eq!(fuel.default_text(), None);
        let calls = LimitSpec::named("max_tool_calls").expect("underscores work");
        assert!(
            calls.from_json(&Value::from("7")).is_err(),
            "a count is a number"
        );
        assert!(calls.parse("-1").is_err());
        assert!(LimitSpec::named("tiemout").is_none());
    }
}
