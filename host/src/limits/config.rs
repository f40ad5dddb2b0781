//! Limits from a configuration file (SPEC §5): a JSON object whose keys are the `run` flags'
//! names (`timeout`, `memory`, `max-tool-calls`, ...) and whose values are what the flags take
//! (`"5s"`, `"64MiB"`, `10`). Unknown keys and bad values are `INVALID_INPUT`.

use serde_json::Value;

use super::{Limits, parse_duration, parse_size};
use crate::error::{Error, Result};

fn size(value: &Value) -> Result<u64, String> {
    match value {
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("{n} is not a byte count")),
        Value::String(text) => parse_size(text),
        other => Err(format!("{other} is not a size")),
    }
}

fn count(value: &Value) -> Result<u32, String> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("{value} is not a count"))
}

/// Sets the limit named `key` (a `run` flag name, with `-` or `_`) from `value`.
pub fn set_limit(limits: &mut Limits, key: &str, value: &Value) -> Result<()> {
    let key = key.replace('_', "-");
    let outcome: Result<(), String> = (|| {
        match key.as_str() {
            "timeout" => {
                limits.timeout = match value {
                    Value::Number(n) => std::time::Duration::from_millis(
                        n.as_u64()
                            .ok_or_else(|| format!("{n} is not milliseconds"))?,
                    ),
                    Value::String(text) => parse_duration(text)?,
                    other => return Err(format!("{other} is not a duration")),
                }
            }
            "fuel" => {
                limits.fuel = if value.is_null() {
                    None
                } else {
                    Some(value.as_u64().ok_or("fuel is a count")?)
                }
            }
            "memory" => limits.memory_bytes = size(value)?,
            "max-tool-calls" => limits.max_tool_calls = count(value)?,
            "max-concurrency" => limits.max_concurrency = count(value)?,
            "max-call-input" => limits.max_call_input_bytes = size(value)?,
            "max-call-response" => limits.max_call_response_bytes = size(value)?,
            "max-output" => limits.max_output_bytes = size(value)?,
            "max-result" => limits.max_result_bytes = size(value)?,
            "max-state" => limits.max_state_bytes = size(value)?,
            "max-state-value" => limits.max_state_value_bytes = size(value)?,
            "max-files" => limits.max_publish_files = count(value)?,
            "max-files-bytes" => limits.max_publish_bytes = size(value)?,
            "max-file-bytes" => limits.max_publish_file_bytes = size(value)?,
            "max-log" => limits.max_log_bytes = size(value)?,
            other => return Err(format!("unknown limit `{other}`")),
        }
        Ok(())
    })();
    outcome.map_err(|message| Error::invalid_input(format!("limit `{key}`: {message}")))
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
