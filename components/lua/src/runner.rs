//! One run: a fresh Lua state with the prelude run, the script loaded as a text chunk named
//! after its file, called under the prelude's `xpcall`, and its first return value written as
//! JSON.
//!
//! The state is built for each run (about a millisecond): this engine is not pre-initialised,
//! so nothing can leak from a snapshot, and `math.random` is seeded from `wasi:random` when the
//! state opens its libraries.

use std::rc::Rc;

use omnilua::{Function, HostHooks, Lua, Table, Value, Variadic};

use crate::bridge;
use crate::exports::forge::engine::engine::{RunRequest, ScriptError};
use crate::files;
use crate::json::{self, EncodeError, Markers};

const PRELUDE: &str = include_str!("prelude.lua");
/// Run before the prelude: `load` and the string functions made safe (see its opening).
const STRINGS: &str = include_str!("strings.lua");

fn failure(code: &str, message: impl Into<String>, stack: Option<String>) -> ScriptError {
    ScriptError {
        code: code.into(),
        message: message.into(),
        stack,
    }
}

fn engine_failure(error: omnilua::Error) -> ScriptError {
    failure("ISOLATE_FAILURE", format!("Lua: {error}"), None)
}

/// `math.random`'s seed (and `math.randomseed()`'s), from the host's entropy.
fn entropy() -> u64 {
    // A fixed constant only if the host has no entropy to give, which it always has.
    getrandom::u64().unwrap_or(0x9E37_79B9_7F4A_7C15)
}

/// A state with the prelude run: the state and the prelude's private API.
fn prepare() -> Result<(Lua, Rc<Markers>, Table), ScriptError> {
    // Standard streams are WASI's through Rust's own (no hook): `print`, `io.write` and
    // `io.stdout:flush()` share one buffer.
    let hooks = HostHooks::new()
        .entropy(entropy)
        .file_open(files::open)
        .temp_name(files::temp_name);
    let lua = Lua::with_hooks(hooks).map_err(engine_failure)?;
    let markers = Rc::new(Markers::new(&lua).map_err(engine_failure)?);
    let host = bridge::host_table(&lua, &markers).map_err(engine_failure)?;
    let load = |source: &str| {
        lua.load(source)
            .set_name("=forge-prelude")
            .into_function()
            .map_err(engine_failure)
    };
    let settle: Value = load(STRINGS)?.call(()).map_err(engine_failure)?;
    let mut rest = Variadic::with_capacity(2);
    rest.push(Value::Table(markers.array.clone()));
    rest.push(settle);
    let api: Table = load(PRELUDE)?
        .call((host, markers.null.clone(), rest))
        .map_err(engine_failure)?;
    Ok((lua, markers, api))
}

/// Runs `request` to completion.
pub fn run(request: RunRequest) -> Result<Option<String>, ScriptError> {
    bridge::set_limits(&request.limits);
    bridge::set_inputs(&request.inputs);
    // Relative paths are below /work, as in the Python engine.
    let _ = std::env::set_current_dir("/work");
    let (lua, markers, api) = prepare()?;
    let outcome = run_in(&lua, &markers, &api, &request);
    // `io.write` without a newline waits in Rust's line buffer: no process exit will flush it.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // The host throws this instance away after its one run: freeing every object first would
    // only cost time.
    std::mem::forget(api);
    std::mem::forget(markers);
    std::mem::forget(lua);
    outcome
}

fn run_in(
    lua: &Lua,
    markers: &Markers,
    api: &Table,
    request: &RunRequest,
) -> Result<Option<String>, ScriptError> {
    // A binary chunk (it starts with ESC) is never loaded: it could break the VM's invariants.
    if request
        .source
        .trim_start_matches('\u{feff}')
        .starts_with('\u{1b}')
    {
        return Err(failure(
            "SCRIPT_SYNTAX",
            format!(
                "{}: a precompiled (binary) chunk cannot be run",
                request.filename
            ),
            None,
        ));
    }
    // As `lua script.lua` reads a file: a byte-order mark goes, and a first line starting with
    // `#` (`#!/usr/bin/env lua`) is a comment, so line numbers stay the file's.
    let source = request
        .source
        .strip_prefix('\u{feff}')
        .unwrap_or(&request.source);
    let source = if source.starts_with('#') {
        format!("--{source}")
    } else {
        source.to_string()
    };
    let chunk = lua
        .load(source.as_bytes())
        .set_name(format!("@{}", request.filename))
        .into_function()
        // Nothing but parsing ran: whatever went wrong is the script's syntax.
        .map_err(|e| failure("SCRIPT_SYNTAX", e.to_string(), None))?;
    let run: Function = api.get("run").map_err(engine_failure)?;
    let outcome: Variadic<Value> = run.call(chunk).map_err(engine_failure)?;
    let mut outcome = outcome.into_vec().into_iter();
    match outcome.next() {
        Some(Value::Boolean(true)) => encode_result(markers, outcome.next(), request),
        _ => {
            let text = |value: Option<Value>| match value {
                Some(Value::String(s)) => s.as_bytes().ok().map(|b| lossy(&b)),
                _ => None,
            };
            let code = text(outcome.next()).unwrap_or_default();
            let forge_code = text(outcome.next());
            let message = text(outcome.next()).unwrap_or_else(|| "the script failed".into());
            let stack = text(outcome.next()).map(|s| trim_stack(&s));
            Err(failure(
                &verdict(code, forge_code, &request.pass_through_codes),
                message,
                stack,
            ))
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The engine's own code when it has one, else a `ForgeError`'s code when it is one the host's
/// calls fail with (`pass_through`), else `SCRIPT_RUNTIME`: a script cannot claim `TIMEOUT`.
fn verdict(code: String, forge_code: Option<String>, pass_through: &[String]) -> String {
    if !code.is_empty() {
        return code;
    }
    forge_code
        .filter(|code| pass_through.contains(code))
        .unwrap_or_else(|| "SCRIPT_RUNTIME".into())
}

/// The traceback without its blank first line and the prelude's own frames.
fn trim_stack(trace: &str) -> String {
    trace
        .lines()
        .filter(|line| !line.trim().is_empty())
        .filter(|line| !line.contains("forge-prelude") && !line.contains("in function 'xpcall'"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn encode_result(
    markers: &Markers,
    value: Option<Value>,
    request: &RunRequest,
) -> Result<Option<String>, ScriptError> {
    let value = match value {
        None | Some(Value::Nil) => return Ok(None),
        Some(value) => value,
    };
    let budget = request.limits.max_result_bytes;
    let limit = usize::try_from(budget).unwrap_or(usize::MAX);
    match json::encode(&value, markers, limit) {
        Ok(text) => Ok(Some(text)),
        Err(EncodeError::TooLarge { .. }) => Err(failure(
            "BUDGET_EXCEEDED",
            format!("the result is over its budget of {budget} bytes"),
            None,
        )),
        Err(error) => Err(failure(
            "SCRIPT_RUNTIME",
            format!("the result is not JSON: {error}"),
            None,
        )),
    }
}
