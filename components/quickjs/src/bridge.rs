//! The native functions `prelude.js` builds the script's globals from. Each one forwards to a
//! host import; a host error comes back as a `{__forgeError, code, message}` object that the
//! prelude turns into a thrown `ForgeError`.

use std::cell::Cell;
use std::io::Write;

use rquickjs::{Ctx, Function, Object, Result, Value, function::Opt};

use crate::exports::forge::engine::engine::GuestLimits;
use crate::forge::engine::{catalog, output, state, tools, types::ErrorInfo};

/// The byte budgets this engine checks before it hands a value to the host, so that the script
/// gets a clean `BUDGET_EXCEEDED` error (the host checks them again).
#[derive(Clone, Copy)]
struct Budgets {
    call_input: u64,
    state_value: u64,
    output: u64,
}

thread_local! {
    static BUDGETS: Cell<Budgets> = const {
        Cell::new(Budgets { call_input: u64::MAX, state_value: u64::MAX, output: u64::MAX })
    };
}

/// Records the budgets of the current run.
pub fn set_limits(limits: &GuestLimits) {
    BUDGETS.set(Budgets {
        call_input: limits.max_call_input_bytes,
        state_value: limits.max_state_value_bytes,
        output: limits.max_output_bytes,
    });
}

fn over_budget(what: &str, bytes: usize, budget: u64) -> Option<ErrorInfo> {
    (bytes as u64 > budget).then(|| ErrorInfo {
        code: "BUDGET_EXCEEDED".into(),
        message: format!("{what} is {bytes} bytes, over the budget of {budget} bytes"),
    })
}

fn error_object<'js>(ctx: &Ctx<'js>, error: ErrorInfo) -> Result<Value<'js>> {
    let object = Object::new(ctx.clone())?;
    object.set("__forgeError", true)?;
    object.set("code", error.code)?;
    object.set("message", error.message)?;
    Ok(object.into_value())
}

fn or_error<'js, T: rquickjs::IntoJs<'js>>(
    ctx: &Ctx<'js>,
    result: std::result::Result<T, ErrorInfo>,
) -> Result<Value<'js>> {
    match result {
        Ok(value) => value.into_js(ctx),
        Err(error) => error_object(ctx, error),
    }
}

fn tool_json(info: &catalog::ToolInfo) -> serde_json::Value {
    let effect = match info.effect {
        crate::forge::engine::types::Effect::Read => "read",
        crate::forge::engine::types::Effect::Write => "write",
        crate::forge::engine::types::Effect::Process => "process",
        crate::forge::engine::types::Effect::External => "external",
        crate::forge::engine::types::Effect::Internal => "internal",
    };
    serde_json::json!({
        "name": info.name,
        "description": info.description,
        "effect": effect,
        "inputSchema": info.input_schema,
        "functionPath": info.function_path,
    })
}

fn tools_json(list: &[catalog::ToolInfo]) -> String {
    serde_json::Value::Array(list.iter().map(tool_json).collect()).to_string()
}

/// Builds the `host` object handed to the prelude.
pub fn host_object<'js>(ctx: &Ctx<'js>) -> Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let c = ctx.clone();
    host.set(
        "begin",
        Function::new(c.clone(), |ctx: Ctx<'js>, name: String, input: String| {
            let budget = BUDGETS.get().call_input;
            if let Some(error) = over_budget(&format!("the input of `{name}`"), input.len(), budget)
            {
                return error_object(&ctx, error);
            }
            or_error(&ctx, tools::begin_call(&name, &input).map(|id| id as f64))
        })?,
    )?;
    host.set(
        "catalogList",
        Function::new(c.clone(), || tools_json(&catalog::list_tools()))?,
    )?;
    host.set(
        "catalogSearch",
        Function::new(c.clone(), |query: String, limit: f64| {
            let limit = if limit.is_finite() && limit >= 0.0 {
                limit.min(u32::MAX as f64) as u32
            } else {
                0
            };
            tools_json(&catalog::search_tools(&query, limit))
        })?,
    )?;
    host.set(
        "catalogDescribe",
        Function::new(c.clone(), |name: String| {
            match catalog::describe_tool(&name) {
                Some(info) => tool_json(&info).to_string(),
                None => "null".to_string(),
            }
        })?,
    )?;
    host.set(
        "stateGet",
        Function::new(c.clone(), |ctx: Ctx<'js>, key: String| {
            or_error(&ctx, state::get(&key))
        })?,
    )?;
    host.set(
        "stateSet",
        Function::new(c.clone(), |ctx: Ctx<'js>, key: String, value: String| {
            let budget = BUDGETS.get().state_value;
            if let Some(error) = over_budget(&format!("the value of `{key}`"), value.len(), budget)
            {
                return error_object(&ctx, error);
            }
            or_error(&ctx, state::set(&key, &value))
        })?,
    )?;
    host.set(
        "stateDelete",
        Function::new(c.clone(), |ctx: Ctx<'js>, key: String| {
            or_error(&ctx, state::delete(&key))
        })?,
    )?;
    host.set(
        "stateKeys",
        Function::new(c.clone(), || {
            serde_json::Value::from(state::keys()).to_string()
        })?,
    )?;
    host.set(
        "text",
        Function::new(c.clone(), |ctx: Ctx<'js>, value: String| {
            let budget = BUDGETS.get().output;
            if let Some(error) = over_budget("a text() value", value.len(), budget) {
                return error_object(&ctx, error);
            }
            or_error(&ctx, output::text(&value))
        })?,
    )?;
    host.set(
        "progress",
        Function::new(
            c.clone(),
            |message: String, completed: Opt<Option<f64>>, total: Opt<Option<f64>>| {
                output::progress(&message, completed.0.flatten(), total.0.flatten());
            },
        )?,
    )?;
    host.set(
        "print",
        Function::new(c, |fd: i32, text: String| {
            // Output is captured and bounded by the host; a closed stream only loses output.
            let _ = if fd == 2 {
                std::io::stderr().write_all(text.as_bytes())
            } else {
                std::io::stdout().write_all(text.as_bytes())
            };
        })?,
    )?;
    Ok(host)
}
