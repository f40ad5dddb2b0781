//! The native functions `prelude.lua` builds the script's globals from. Each forwards to a host
//! import and answers in one shape the prelude unpacks: `true, value` when it worked, `false,
//! code, message` for a host failure (raised as a `ForgeError`), `false, nil, message` for the
//! script's own mistake (a value that is not JSON, raised as a plain error at the script's line).

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::rc::Rc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use omnilua::{Lua, Table, Value, Variadic};

use crate::exports::forge::engine::engine::{GuestLimits, InputFile};
use crate::files;
use crate::forge::engine::{catalog, output, state, tools, types::Effect, types::ErrorInfo};
use crate::json::{self, EncodeError, MAX_DEPTH, Markers};

/// The budgets this engine checks before it hands a value to the host, so that the script gets
/// a clean `BUDGET_EXCEEDED` error without building the whole text (the host checks them again).
#[derive(Clone, Copy)]
struct Budgets {
    call_input: u64,
    state_value: u64,
    output: u64,
    /// `json.encode`'s text cannot be larger than the memory it has to fit in.
    memory: u64,
}

thread_local! {
    static BUDGETS: Cell<Budgets> = const {
        Cell::new(Budgets {
            call_input: u64::MAX,
            state_value: u64::MAX,
            output: u64::MAX,
            memory: u64::MAX,
        })
    };
    /// When the run started, for `os.clock`.
    static STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The run's input files, for `inputs()`.
    static INPUTS: RefCell<Vec<InputFile>> = const { RefCell::new(Vec::new()) };
}

/// Records the input files of the current run.
pub fn set_inputs(inputs: &[InputFile]) {
    INPUTS.set(inputs.to_vec());
}

/// What `os.remove` and `os.rename` answer, as C's `luaL_fileresult`: `true`, or `nil,
/// "name: message", errno` (`os.rename` names no file).
fn file_result(
    lua: &Lua,
    name: Option<&[u8]>,
    result: std::io::Result<()>,
) -> omnilua::Result<Variadic<Value>> {
    let mut values = Variadic::with_capacity(3);
    match result {
        Ok(()) => values.push(Value::Boolean(true)),
        Err(error) => {
            let (message, errno) = files::describe(&error);
            let mut text = Vec::new();
            if let Some(name) = name {
                text.extend_from_slice(name);
                text.extend_from_slice(b": ");
            }
            text.extend_from_slice(message.as_bytes());
            values.push(Value::Nil);
            values.push(Value::String(lua.create_string(text)?));
            if let Some(errno) = errno {
                values.push(Value::Integer(errno));
            }
        }
    }
    Ok(values)
}

/// Records the budgets of the current run.
pub fn set_limits(limits: &GuestLimits) {
    BUDGETS.set(Budgets {
        call_input: limits.max_call_input_bytes,
        state_value: limits.max_state_value_bytes,
        output: limits.max_output_bytes,
        memory: limits.memory_bytes,
    });
    STARTED.set(Some(Instant::now()));
}

/// What a native answers, before it becomes Lua values.
enum Reply {
    Done(Value),
    /// A host failure, or one the engine reports as the host would.
    Failed(ErrorInfo),
    /// The script's mistake.
    Mistake(String),
}

impl From<Result<Value, ErrorInfo>> for Reply {
    fn from(result: Result<Value, ErrorInfo>) -> Self {
        match result {
            Ok(value) => Reply::Done(value),
            Err(error) => Reply::Failed(error),
        }
    }
}

fn answer(lua: &Lua, reply: Reply) -> omnilua::Result<Variadic<Value>> {
    let string = |s: &str| lua.create_string(s).map(Value::String);
    let mut values = Variadic::with_capacity(3);
    match reply {
        Reply::Done(value) => {
            values.push(Value::Boolean(true));
            values.push(value);
        }
        Reply::Failed(error) => {
            values.push(Value::Boolean(false));
            values.push(string(&error.code)?);
            values.push(string(&error.message)?);
        }
        Reply::Mistake(message) => {
            values.push(Value::Boolean(false));
            values.push(Value::Nil);
            values.push(string(&message)?);
        }
    }
    Ok(values)
}

fn failed(code: &str, message: String) -> ErrorInfo {
    ErrorInfo {
        code: code.into(),
        message,
    }
}

fn limit(budget: u64) -> usize {
    usize::try_from(budget).unwrap_or(usize::MAX)
}

/// `value` as JSON for the host: too deep is `INVALID_INPUT` and over `budget` is
/// `BUDGET_EXCEEDED` (what the host would answer), anything else is the script's mistake.
fn encode_for_host(
    markers: &Markers,
    value: &Value,
    what: &str,
    budget: u64,
) -> Result<String, Reply> {
    json::encode(value, markers, limit(budget)).map_err(|error| match error {
        EncodeError::TooDeep => Reply::Failed(failed(
            "INVALID_INPUT",
            format!("{what} nests deeper than the {MAX_DEPTH} levels allowed"),
        )),
        EncodeError::TooLarge { .. } => Reply::Failed(failed(
            "BUDGET_EXCEEDED",
            format!("{what} is over its budget of {budget} bytes"),
        )),
        EncodeError::Invalid(why) => Reply::Mistake(format!("{what} is not JSON: {why}")),
    })
}

/// A name or key argument: a string of UTF-8 text.
fn text_arg(value: &Value, what: &str) -> Result<String, Reply> {
    match value {
        Value::String(s) => s
            .to_str()
            .map_err(|_| Reply::Mistake(format!("{what} must be UTF-8 text"))),
        _ => Err(Reply::Mistake(format!("{what} must be a string"))),
    }
}

fn decoded(lua: &Lua, markers: &Markers, text: &str) -> omnilua::Result<Value> {
    json::decode(lua, markers, text)
}

fn tool_table(lua: &Lua, markers: &Markers, info: catalog::ToolInfo) -> omnilua::Result<Table> {
    let effect = match info.effect {
        Effect::Read => "read",
        Effect::Write => "write",
        Effect::Process => "process",
        Effect::External => "external",
        Effect::Internal => "internal",
    };
    let table = lua.create_table()?;
    table.raw_set("name", info.name)?;
    table.raw_set("description", info.description)?;
    table.raw_set("effect", effect)?;
    table.raw_set("input_schema", decoded(lua, markers, &info.input_schema)?)?;
    let path = lua.create_table()?;
    path.set_metatable(Some(&markers.array))?;
    for (index, part) in info.function_path.into_iter().enumerate() {
        path.raw_set(index as i64 + 1, part)?;
    }
    table.raw_set("function_path", path)?;
    Ok(table)
}

fn tool_list(lua: &Lua, markers: &Markers, list: Vec<catalog::ToolInfo>) -> omnilua::Result<Table> {
    let table = lua.create_table()?;
    table.set_metatable(Some(&markers.array))?;
    for (index, info) in list.into_iter().enumerate() {
        table.raw_set(index as i64 + 1, tool_table(lua, markers, info)?)?;
    }
    Ok(table)
}

/// A function of the `host` table.
fn native<A, F>(
    lua: &Lua,
    host: &Table,
    name: &str,
    markers: &Rc<Markers>,
    f: F,
) -> omnilua::Result<()>
where
    A: omnilua::FromLuaMulti + 'static,
    F: Fn(&Lua, &Markers, A) -> omnilua::Result<Reply> + 'static,
{
    let markers = Rc::clone(markers);
    let function = lua.create_function(move |lua, args: A| {
        let reply = f(lua, &markers, args)?;
        answer(lua, reply)
    })?;
    host.raw_set(name, function)
}

/// Runs `f`, turning an early `Err(reply)` into that reply.
fn reply(f: impl FnOnce() -> Result<Reply, Reply>) -> omnilua::Result<Reply> {
    Ok(f().unwrap_or_else(|reply| reply))
}

/// Builds the `host` table handed to the prelude: one group of functions per WIT interface it
/// adapts, as wasmtime's `add_to_linker` adds one interface at a time.
pub fn host_table(lua: &Lua, markers: &Rc<Markers>) -> omnilua::Result<Table> {
    let host = lua.create_table()?;
    add_tools(lua, &host, markers)?;
    add_catalog(lua, &host, markers)?;
    add_state(lua, &host, markers)?;
    add_output(lua, &host, markers)?;
    add_json(lua, &host, markers)?;
    add_clocks(lua, &host, markers)?;
    add_files(lua, &host, markers)?;
    Ok(host)
}

/// The host functions of the tool calls: `begin`, `call`, `wait`.
fn add_tools(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    native(
        lua,
        host,
        "begin",
        markers,
        |_, m, (name, input): (Value, Value)| {
            reply(|| {
                let name = text_arg(&name, "the tool name")?;
                let what = format!("the input of `{name}`");
                let input = encode_for_host(m, &input, &what, BUDGETS.get().call_input)?;
                Ok(match tools::begin_call(&name, &input) {
                    Ok(id) => Reply::Done(Value::Integer(id as i64)),
                    Err(error) => Reply::Failed(error),
                })
            })
        },
    )?;
    native(
        lua,
        host,
        "call",
        markers,
        |lua, m, (name, input): (Value, Value)| {
            let outcome = (|| {
                let name = text_arg(&name, "the tool name")?;
                let what = format!("the input of `{name}`");
                let input = encode_for_host(m, &input, &what, BUDGETS.get().call_input)?;
                Ok(tools::call(&name, &input))
            })();
            Ok(match outcome {
                Ok(Ok(response)) => Reply::Done(decoded(lua, m, &response)?),
                Ok(Err(error)) => Reply::Failed(error),
                Err(reply) => reply,
            })
        },
    )?;
    // `nil` when nothing is in flight, else `id, true, response` or `id, false, code, message`.
    let wait_markers = Rc::clone(markers);
    host.raw_set(
        "wait",
        lua.create_function(move |lua, ()| {
            let mut values = Variadic::with_capacity(4);
            let Some(done) = tools::wait_any() else {
                return Ok(values);
            };
            values.push(Value::Integer(done.id as i64));
            let outcome = match done.outcome {
                Ok(response) => Reply::Done(decoded(lua, &wait_markers, &response)?),
                Err(error) => Reply::Failed(error),
            };
            values.extend(answer(lua, outcome)?.into_vec());
            Ok(values)
        })?,
    )?;
    Ok(())
}

/// The host functions of the catalog: `list`, `search`, `describe`.
fn add_catalog(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    native(lua, host, "list", markers, |lua, m, ()| {
        Ok(Reply::Done(Value::Table(tool_list(
            lua,
            m,
            catalog::list_tools(),
        )?)))
    })?;
    native(
        lua,
        host,
        "search",
        markers,
        |lua, m, (query, count): (Value, Option<i64>)| {
            reply(|| {
                let query = text_arg(&query, "the query")?;
                let count = u32::try_from(count.unwrap_or(20).max(0)).unwrap_or(u32::MAX);
                let found = catalog::search_tools(&query, count);
                Ok(Reply::Done(Value::Table(
                    tool_list(lua, m, found).map_err(|e| Reply::Mistake(e.to_string()))?,
                )))
            })
        },
    )?;
    native(lua, host, "describe", markers, |lua, m, name: Value| {
        reply(|| {
            let name = text_arg(&name, "the tool name")?;
            Ok(Reply::Done(match catalog::describe_tool(&name) {
                Some(info) => Value::Table(
                    tool_table(lua, m, info).map_err(|e| Reply::Mistake(e.to_string()))?,
                ),
                None => Value::Nil,
            }))
        })
    })?;
    Ok(())
}

/// The host functions of session state: `state_get`, `state_set`, `state_delete`, `state_keys`.
fn add_state(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    native(lua, host, "state_get", markers, |lua, m, key: Value| {
        let key = match text_arg(&key, "a state key") {
            Ok(key) => key,
            Err(reply) => return Ok(reply),
        };
        Ok(match state::get(&key) {
            Ok(Some(text)) => Reply::Done(decoded(lua, m, &text)?),
            Ok(None) => Reply::Done(Value::Nil),
            Err(error) => Reply::Failed(error),
        })
    })?;
    native(
        lua,
        host,
        "state_set",
        markers,
        |_, m, (key, value): (Value, Value)| {
            reply(|| {
                let key = text_arg(&key, "a state key")?;
                let what = format!("the value of `{key}`");
                let text = encode_for_host(m, &value, &what, BUDGETS.get().state_value)?;
                Ok(state::set(&key, &text).map(|()| Value::Nil).into())
            })
        },
    )?;
    native(lua, host, "state_delete", markers, |_, _, key: Value| {
        reply(|| {
            let key = text_arg(&key, "a state key")?;
            Ok(state::delete(&key).map(|()| Value::Nil).into())
        })
    })?;
    native(lua, host, "state_keys", markers, |lua, m, ()| {
        let keys = lua.create_table()?;
        keys.set_metatable(Some(&m.array))?;
        for (index, key) in state::keys().into_iter().enumerate() {
            keys.raw_set(index as i64 + 1, key)?;
        }
        Ok(Reply::Done(Value::Table(keys)))
    })?;
    Ok(())
}

/// The host functions of output: `text`, `progress`, `write`.
fn add_output(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    native(lua, host, "text", markers, |_, m, value: Value| {
        reply(|| {
            let text = encode_for_host(m, &value, "a text() value", BUDGETS.get().output)?;
            Ok(output::text(&text).map(|()| Value::Nil).into())
        })
    })?;
    host.raw_set(
        "progress",
        lua.create_function(
            |_, (message, completed, total): (String, Option<f64>, Option<f64>)| {
                output::progress(&message, completed, total);
                Ok(())
            },
        )?,
    )?;
    host.raw_set(
        "write",
        lua.create_function(|_, (fd, text): (i64, omnilua::LuaString)| {
            let bytes = text.as_bytes()?;
            // Output is captured and bounded by the host; a closed stream only loses output.
            let _ = if fd == 2 {
                std::io::stderr().write_all(&bytes)
            } else {
                std::io::stdout().write_all(&bytes)
            };
            Ok(())
        })?,
    )?;
    Ok(())
}

/// The host functions of JSON: `json_encode`, `json_decode`.
fn add_json(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    native(lua, host, "json_encode", markers, |lua, m, value: Value| {
        Ok(match json::encode(&value, m, limit(BUDGETS.get().memory)) {
            Ok(text) => Reply::Done(Value::String(lua.create_string(text)?)),
            Err(error) => Reply::Mistake(format!("json.encode: {error}")),
        })
    })?;
    native(
        lua,
        host,
        "json_decode",
        markers,
        |lua, m, text: omnilua::LuaString| {
            let bytes = text.as_bytes()?;
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Ok(Reply::Mistake("json.decode: the text is not UTF-8".into()));
            };
            Ok(match json::decode(lua, m, text) {
                Ok(value) => Reply::Done(value),
                Err(error) => Reply::Mistake(format!("json.decode: {error}")),
            })
        },
    )?;
    Ok(())
}

/// The host functions of the clocks: `time`, `clock`.
fn add_clocks(lua: &Lua, host: &Table, _markers: &Rc<Markers>) -> omnilua::Result<()> {
    host.raw_set(
        "time",
        lua.create_function(|_, ()| {
            let now = SystemTime::now().duration_since(UNIX_EPOCH);
            Ok(now.map(|d| d.as_secs() as i64).unwrap_or(0))
        })?,
    )?;
    host.raw_set(
        "clock",
        lua.create_function(|_, ()| {
            let started = STARTED.get().unwrap_or_else(Instant::now);
            Ok(started.elapsed().as_secs_f64())
        })?,
    )?;
    Ok(())
}

/// The host functions of the job's files: `remove`, `rename`, `inputs`.
fn add_files(lua: &Lua, host: &Table, markers: &Rc<Markers>) -> omnilua::Result<()> {
    host.raw_set(
        "remove",
        lua.create_function(|lua, name: omnilua::LuaString| {
            let name = name.as_bytes()?;
            file_result(lua, Some(&name), files::remove(&name))
        })?,
    )?;
    host.raw_set(
        "rename",
        lua.create_function(
            |lua, (from, to): (omnilua::LuaString, omnilua::LuaString)| {
                let (from, to) = (from.as_bytes()?, to.as_bytes()?);
                file_result(lua, None, files::rename(&from, &to))
            },
        )?,
    )?;
    // A fresh list at every call: {name, size, sha256, path}, in the host's order.
    let inputs_markers = Rc::clone(markers);
    host.raw_set(
        "inputs",
        lua.create_function(move |lua, ()| {
            let list = lua.create_table()?;
            list.set_metatable(Some(&inputs_markers.array))?;
            INPUTS.with_borrow(|inputs| {
                for (index, input) in inputs.iter().enumerate() {
                    let file = lua.create_table()?;
                    file.raw_set("name", input.name.as_str())?;
                    file.raw_set("size", i64::try_from(input.size).unwrap_or(i64::MAX))?;
                    file.raw_set("sha256", input.sha256.as_str())?;
                    file.raw_set("path", format!("/input/{}", input.name))?;
                    list.raw_set(index as i64 + 1, file)?;
                }
                Ok::<_, omnilua::Error>(())
            })?;
            Ok(list)
        })?,
    )?;
    Ok(())
}
