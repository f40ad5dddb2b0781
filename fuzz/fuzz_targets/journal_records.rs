//! Journal records as read back from the database: any bytes decode or fail as corrupt, never a
//! panic, and a record that decodes is written again the same way.
#![no_main]

use forge_host::journal::{CallRecord, ExecutionRecord, StateCommitMark, decode_record};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn stable<T: Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(record) = decode_record::<T>("fuzz", data) else {
        return;
    };
    let written = serde_json::to_vec(&record).expect("a decoded record serialises");
    let again: T = decode_record("fuzz", &written).expect("a written record decodes");
    let rewritten = serde_json::to_vec(&again).expect("a decoded record serialises");
    assert_eq!(written, rewritten, "a record changes when written twice");
}

fuzz_target!(|data: &[u8]| {
    stable::<ExecutionRecord>(data);
    stable::<CallRecord>(data);
    stable::<StateCommitMark>(data);
});
