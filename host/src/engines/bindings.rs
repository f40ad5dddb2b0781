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
pub use forge::engine::{catalog, output, state, timers, tools, types};

impl From<&crate::limits::Limits> for GuestLimits {
    /// The limits an engine checks itself, for a clean error before the host's own check.
    fn from(limits: &crate::limits::Limits) -> Self {
        GuestLimits {
            memory_bytes: limits.memory_bytes,
            max_tool_calls: limits.max_tool_calls,
            max_concurrency: limits.max_concurrency,
            max_call_input_bytes: limits.max_call_input_bytes,
            max_call_response_bytes: limits.max_call_response_bytes,
            max_result_bytes: limits.max_result_bytes,
            max_state_value_bytes: limits.max_state_value_bytes,
            max_output_bytes: limits.max_output_bytes,
        }
    }
}
