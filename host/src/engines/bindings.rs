//! The only `bindgen!` of the host: Rust types and traits for the `wit/` world.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

wasmtime::component::bindgen!({
    path: "../wit",
    world: "script-engine",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use exports::forge::engine::engine::{
    EngineInfo, GuestLimits, InputFile, RunRequest, ScriptError,
};
pub use forge::engine::{catalog, output, state, tools, types};
