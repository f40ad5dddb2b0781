//! The host side of the `wit/` imports, one file per interface: thin adapters from the generated
//! `Host` traits to the logic in [`crate::tools`], [`crate::state`] and [`crate::output`]. Each
//! import sees only its own piece of the store (a `HasData` marker), as wasmtime-wasi does.
//! `filesystem.rs` shadows wasmtime-wasi's `wasi:filesystem/types` to put the disk quota in front
//! of its write paths.

mod filesystem;
mod output;
mod state;
mod tools;

pub(crate) use filesystem::{QuotaFs, QuotaFsView};
pub(crate) use output::OutputData;
pub(crate) use state::StateData;
pub(crate) use tools::ToolsData;
