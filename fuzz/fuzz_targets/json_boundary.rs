//! The JSON boundary (tool input and response, state value, result, `text`): any text is read
//! or refused without a panic; what serde_json reads within its own depth, the boundary reads
//! alike; and whatever the boundary reads comes back the same after printing.
#![no_main]

use forge_host::json;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ours = json::parse(text);
    // `check` judges depth and surrogates only, so it passes all that `parse` reads.
    if ours.is_ok() {
        assert!(json::check(text).is_ok(), "parse read what check refuses");
    }
    if let Ok(theirs) = serde_json::from_str::<Value>(text) {
        assert_eq!(
            ours.as_ref().ok(),
            Some(&theirs),
            "serde_json reads it otherwise"
        );
    }
    if let Ok(value) = ours {
        let printed = value.to_string();
        assert_eq!(
            json::parse(&printed).ok(),
            Some(value),
            "a read value does not round-trip"
        );
    }
});
