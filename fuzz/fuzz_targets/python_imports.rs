//! The Python import scanner (which picks the engine profile): any source is scanned without a
//! panic, and every name it finds is a non-empty dotted name.
#![no_main]

use forge_host::engines::python_imports::python_imports;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    for name in python_imports(source) {
        assert!(!name.is_empty(), "{source:?}");
        assert!(
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.'),
            "{name:?} from {source:?}"
        );
    }
});
