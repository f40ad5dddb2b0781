//! Where the builds put things under `target/`: every path xtask reads or writes there, named
//! once.

use std::path::PathBuf;

use crate::workspace_root;

/// `target/`.
pub fn target() -> PathBuf {
    workspace_root().join("target")
}

/// `target/engines/`: the published engine components and their `engines.lock`.
pub fn engines() -> PathBuf {
    target().join("engines")
}

/// The release `forge-host`.
pub fn host_binary() -> PathBuf {
    target().join("release/forge-host")
}

/// A release build of the host's example `name` (the benchmark drivers, the embedding
/// example).
pub fn release_example(name: &str) -> PathBuf {
    target().join("release/examples").join(name)
}

/// A release binary of the workspace, by name.
pub fn release_binary(name: &str) -> PathBuf {
    target().join("release").join(name)
}

/// A guest crate's component as cargo builds it (`forge_quickjs` for `forge-quickjs`).
pub fn guest_wasm(artifact: &str) -> PathBuf {
    target()
        .join("wasm32-wasip2/release")
        .join(format!("{artifact}.wasm"))
}
