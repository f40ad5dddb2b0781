//! Parsing of the human forms of limits: durations (`500ms`, `1s`, `2m`) and sizes (`64MiB`).

use std::time::Duration;

/// Parses `500ms`, `30s`, `2m`, `1h` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (try 500ms, 30s, 2m)"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "unknown duration unit `{other}` in `{text}` (use ms, s, m or h)"
            ));
        }
    };
    if !seconds.is_finite() || !(0.0..=365.0 * 24.0 * 3600.0).contains(&seconds) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses `64MiB`, `1GiB`, `512KiB`, `100MB`, `4096` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (try 64MiB, 1GiB)"))?;
    let factor: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1000.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{text}` (use KiB, MiB or GiB)"
            ));
        }
    };
    let bytes = value * factor;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Formats a duration the way [`parse_duration`] reads it, in the largest whole unit.
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    const UNITS: [(&str, u128); 3] = [("h", 3_600_000), ("m", 60_000), ("s", 1000)];
    for (unit, size) in UNITS {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// Formats a byte count the way [`parse_size`] reads it.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1d").is_err());
        assert!(parse_duration("-1s").is_err());
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(24 * 3600)), "24h");
    }

    #[test]
    fn sizes_in_every_unit() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("256KiB"), Ok(256 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert_eq!(format_size(64 << 20), "64MiB");
        assert_eq!(format_size(1000), "1000B");
    }

    proptest::proptest! {
        /// Any flag value is parsed or refused, never a panic; a size or a duration printed for a
        /// person reads back as a value at least as large as its rounding.
        #[test]
        fn any_value_text_is_parsed_or_refused(text in ".{0,40}") {
            let _ = parse_duration(&text);
            let _ = parse_size(&text);
        }

        #[test]
        fn printed_durations_read_back(ms in 0u64..10_000_000_000) {
            let printed = format_duration(Duration::from_millis(ms));
            proptest::prop_assert!(parse_duration(&printed).is_ok(), "{}", printed);
        }
    }
}
