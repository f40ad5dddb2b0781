//! The CPython version and ABI tag come from the checkout's `toolchain.json`, the one place the
//! build steps and this crate read them from.

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolchain.json");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let facts: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
    for (variable, pointer) in [
        ("FORGE_PYTHON_VERSION", "/python/version"),
        ("FORGE_PYTHON_ABI", "/python/abi"),
    ] {
        let value = facts
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_else(|| panic!("{} has no text at {pointer}", path.display()));
        println!("cargo:rustc-env={variable}={value}");
    }
}
