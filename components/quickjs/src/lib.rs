//! The QuickJS engine of forge-host: a component implementing the `forge:engine` world.
//!
//! A script is the body of an async function; `return` gives the result. Its globals are those
//! of `prelude.js` (tools, state, text, progress) and the web platform's common API of `web/`
//! (console, timers, URL, encoding, streams, fetch's types, crypto, ...): no modules, no
//! network (`fetch` rejects), no quickjs-libc `std`/`os`. Tool calls go through `begin-call`
//! and `wait-any`, so `Promise.all` runs calls concurrently even though the component itself is
//! synchronous; timers wait in the host's `wait-for` (`event_loop.rs`).
//!
//! Limits are enforced by the host. This engine only fails cleanly where it can: an allocation
//! denied by the host's memory cap becomes a catchable JavaScript `InternalError`, and a result
//! over its budget is refused here before it is copied out.

wit_bindgen::generate!({
    world: "preinitialized-script-engine",
    path: "../../wit",
});

mod bridge;
mod event_loop;
mod random;
mod runner;
mod web;

use exports::forge::engine::engine::{EngineInfo, Guest as EngineGuest, RunRequest, ScriptError};

struct QuickJs;

impl Guest for QuickJs {
    /// Creates the runtime and context and evaluates the prelude, once, for the host to snapshot.
    fn wizer_initialize() {
        runner::prepare();
    }
}

impl EngineGuest for QuickJs {
    fn describe() -> EngineInfo {
        EngineInfo {
            id: "javascript-quickjs".into(),
            language: "javascript".into(),
            version: "quickjs-ng 0.16.2 (rquickjs 0.14.0)".into(),
            extensions: vec![".js".into(), ".mjs".into(), ".cjs".into()],
            capabilities: [
                "tool-calls",
                "concurrent-calls",
                "catalog",
                "state",
                "text",
                "progress",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
        }
    }

    fn run(request: RunRequest) -> Result<Option<String>, ScriptError> {
        runner::run(request)
    }
}

export!(QuickJs);
