//! Limits from a configuration file: a JSON object whose keys are the `run` flags'
//! names (`timeout`, `memory`, `max-tool-calls`, ...) and whose values are what the flags take
//! (`"5s"`, `"64MiB"`, `10`). Unknown keys and bad values are `INVALID_INPUT`.

use serde_json::Value;

use super::{LimitSpec, Limits};
use crate::error::{Error, Result};

/// Sets the limit named `key` (a `run` flag name, with `-` or `_`) from `value`.
pub fn set_limit(limits: &mut Limits, key: &str, value: &Value) -> Result<()> {
    let spec = LimitSpec::named(key).ok_or_else(|| {
        let known: Vec<&str> = super::LIMITS.iter().map(|spec| spec.flag).collect();
        Error::invalid_input(format!(
            "unknown limit `{key}` (the limits are: {})",
            known.join(", ")
        ))
    })?;
    let value = spec
        .from_json(value)
        .map_err(|message| Error::invalid_input(format!("limit `{}`: {message}", spec.flag)))?;
    (spec.set)(limits, value);
    Ok(())
}

/// Applies a configuration file's bytes (one JSON object) to `limits`. Any bytes give limits or
/// `INVALID_INPUT`, never a panic (the fuzz target `limit_config`).
pub fn apply_config_file(limits: &mut Limits, name: &str, bytes: &[u8]) -> Result<()> {
    let config: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::invalid_input(format!("{name} is not JSON: {e}")))?;
    apply_config(limits, &config)
}

/// Applies every limit of a configuration file's JSON object.
pub fn apply_config(limits: &mut Limits, config: &Value) -> Result<()> {
    let object = config
        .as_object()
        .ok_or_else(|| Error::invalid_input("a limits file holds one JSON object"))?;
    for (key, value) in object {
        set_limit(limits, key, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn flag_names_and_human_values_set_limits() {
        let mut limits = Limits::default();
        apply_config(
            &mut limits,
            &json!({"timeout": "2s", "memory": "64MiB", "max_tool_calls": 7, "max-output": 1024, "fuel": 5}),
        )
        .expect("valid");
        assert_eq!(limits.timeout, Duration::from_secs(2));
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(
            (limits.max_tool_calls, limits.max_output_bytes, limits.fuel),
            (7, 1024, Some(5))
        );
        for bad in [
            json!({"tiemout": "2s"}),
            json!({"memory": "lots"}),
            json!({"max-files": -1}),
            json!([1]),
        ] {
            let error = apply_config(&mut Limits::default(), &bad).expect_err("rejected");
            assert_eq!(error.code, ErrorCode::InvalidInput, "{bad}");
        }
    }
}
