//! Limit flag values and `--config` files: any text is a size, a duration or a refusal, never a
//! panic; a size or duration printed for a person reads back; any file gives limits or
//! `INVALID_INPUT`, and the limits it gives validate without a panic.
#![no_main]

use forge_host::Limits;
use forge_host::limits::{
    apply_config_file, format_duration, format_size, parse_duration, parse_size,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(bytes) = parse_size(text) {
            let printed = format_size(bytes);
            assert!(
                parse_size(&printed).is_ok(),
                "size {bytes} printed as {printed:?}"
            );
        }
        if let Ok(duration) = parse_duration(text) {
            let printed = format_duration(duration);
            assert!(
                parse_duration(&printed).is_ok(),
                "{duration:?} printed as {printed:?}"
            );
        }
    }
    let mut limits = Limits::default();
    if apply_config_file(&mut limits, "fuzz.json", data).is_ok() {
        let _ = limits.validate();
        let _ = limits.describe();
    }
});
