//! The host side of the `wit/` imports, one file per interface: thin adapters from the generated
//! `Host` traits to the logic in [`crate::tools`], [`crate::state`] and [`crate::output`]. Each
//! import sees only its own piece of the store (a `HasData` marker), as wasmtime-wasi does.

mod output;
mod state;
mod tools;

pub(crate) use output::OutputData;
pub(crate) use state::StateData;
pub(crate) use tools::ToolsData;
