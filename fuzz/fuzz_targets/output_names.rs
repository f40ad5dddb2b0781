//! Output names under `/output`: any path is accepted or rejected, never a panic, and an accepted
//! one holds none of the names a publication must never hold.
#![no_main]

use forge_host::files::check_output_path;
use libfuzzer_sys::fuzz_target;

/// A file system's longest name, in bytes.
const MAX_NAME_BYTES: usize = 255;

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    if check_output_path(path).is_ok() {
        for name in path.split('/') {
            assert!(!name.is_empty() && name != "." && name != "..", "{path:?}");
            assert!(name.len() <= MAX_NAME_BYTES, "{path:?}");
            assert!(
                !name.chars().any(|c| c.is_control() || c == '\\'),
                "{path:?}"
            );
        }
    }
});
