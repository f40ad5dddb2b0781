//! One run: a runtime and context with the prelude evaluated, the script as an async function
//! body, and the loop that drives its promise to the end, waiting on the host for tool calls.
//!
//! The runtime, context and prelude are built by [`prepare`], which the host calls once and
//! snapshots (`wizer-initialize`), so a run normally starts with them already in memory. An
//! instance that was not pre-initialised builds them at the start of its run instead.

use std::cell::RefCell;

use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, Function, Object, Persistent, Promise, Runtime,
    Value, context::EvalOptions, promise::PromiseState,
};

use crate::bridge;
use crate::exports::forge::engine::engine::{RunRequest, ScriptError};
use crate::forge::engine::tools;
use crate::random;

const PRELUDE: &str = include_str!("prelude.js");

fn failure(code: &str, message: impl Into<String>, stack: Option<String>) -> ScriptError {
    ScriptError {
        code: code.into(),
        message: message.into(),
        stack,
    }
}

fn engine_failure(error: rquickjs::Error) -> ScriptError {
    failure("ISOLATE_FAILURE", format!("QuickJS: {error}"), None)
}

/// A context with the prelude evaluated, and the prelude's private API. Fields drop in order:
/// the API before the context, the context before the runtime.
struct Prepared {
    api: Persistent<Object<'static>>,
    context: Context,
    _runtime: Runtime,
}

thread_local! {
    /// Set by [`prepare`]; taken by the one run of this instance.
    static PREPARED: RefCell<Option<Prepared>> = const { RefCell::new(None) };
}

fn build() -> Result<Prepared, ScriptError> {
    let runtime = Runtime::new().map_err(engine_failure)?;
    let context = Context::full(&runtime).map_err(engine_failure)?;
    let api = context.with(|ctx| -> Result<_, ScriptError> {
        random::install(&ctx).map_err(engine_failure)?;
        let api = install_prelude(&ctx)?;
        Ok(Persistent::save(&ctx, api))
    })?;
    // Garbage from parsing the prelude would otherwise be part of every snapshot.
    runtime.run_gc();
    Ok(Prepared {
        api,
        context,
        _runtime: runtime,
    })
}

/// Builds the runtime, context and prelude ahead of the run (`wizer-initialize`). Idempotent.
pub fn prepare() {
    PREPARED.with_borrow_mut(|prepared| {
        if prepared.is_none() {
            // A failure here leaves nothing prepared; the run builds again and reports it.
            *prepared = build().ok();
        }
    });
    random::forget_seed();
}

/// Runs `request` to completion.
pub fn run(request: RunRequest) -> Result<Option<String>, ScriptError> {
    let prepared = match PREPARED.take() {
        Some(prepared) => prepared,
        None => build()?,
    };
    let outcome = prepared.context.with(|ctx| {
        let api = prepared.api.clone().restore(&ctx).map_err(engine_failure)?;
        run_in(&ctx, api, &request)
    });
    // The host throws this instance away after its one run: freeing every object of the runtime
    // first would only write to (and so copy) pages of the snapshot for nothing.
    std::mem::forget(prepared);
    outcome
}

fn run_in<'js>(
    ctx: &Ctx<'js>,
    api: Object<'js>,
    request: &RunRequest,
) -> Result<Option<String>, ScriptError> {
    bridge::set_limits(&request.limits);
    let settle: Function = api.get("settle").map_err(engine_failure)?;
    let encode: Function = api.get("encodeResult").map_err(engine_failure)?;
    let describe: Function = api.get("describeError").map_err(engine_failure)?;
    let pass_through = &request.pass_through_codes;
    let thrown = |value: Value<'js>, fallback: &str| {
        describe_thrown(&describe, value, fallback, pass_through)
    };

    // The script is the body of an async function. It starts on the wrapper's first line so
    // that line numbers in stack traces are the script's own.
    let wrapped = format!("(async function () {{{}\n}})", request.source);
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(request.filename.clone());
    let body: Function = match ctx.eval_with_options(wrapped, options).catch(ctx) {
        Ok(body) => body,
        Err(error) => {
            let value = caught_value(ctx, error);
            // Nothing but parsing ran: whatever went wrong is the script's syntax.
            let mut e = thrown(value, "SCRIPT_SYNTAX");
            e.code = "SCRIPT_SYNTAX".into();
            return Err(e);
        }
    };
    let root: Promise = match body.call(()).catch(ctx) {
        Ok(promise) => promise,
        Err(error) => return Err(thrown(caught_value(ctx, error), "SCRIPT_RUNTIME")),
    };

    loop {
        while ctx.execute_pending_job() {}
        match root.state() {
            PromiseState::Resolved => {
                let value: Value = root
                    .result()
                    .transpose()
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                let text: Option<String> = match encode.call((value,)).catch(ctx) {
                    Ok(text) => text,
                    Err(error) => return Err(thrown(caught_value(ctx, error), "SCRIPT_RUNTIME")),
                };
                if let Some(text) = &text
                    && text.len() as u64 > request.limits.max_result_bytes
                {
                    return Err(failure(
                        "BUDGET_EXCEEDED",
                        format!(
                            "the result is {} bytes, over the budget of {} bytes",
                            text.len(),
                            request.limits.max_result_bytes
                        ),
                        None,
                    ));
                }
                return Ok(text);
            }
            PromiseState::Rejected => {
                let reason = match root.result::<Value>() {
                    Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                    Some(Ok(value)) => value,
                    _ => Value::new_undefined(ctx.clone()),
                };
                return Err(thrown(reason, "SCRIPT_RUNTIME"));
            }
            PromiseState::Pending => match tools::wait_any() {
                Some(done) => {
                    let (ok, payload, code) = match done.outcome {
                        Ok(json) => (true, json, String::new()),
                        Err(error) => (false, error.message, error.code),
                    };
                    if let Err(error) = settle
                        .call::<_, bool>((done.id as f64, ok, payload, code))
                        .catch(ctx)
                    {
                        return Err(thrown(caught_value(ctx, error), "SCRIPT_RUNTIME"));
                    }
                }
                None => {
                    return Err(failure(
                        "UNRESOLVABLE_PROMISE",
                        "the script is waiting on a promise that nothing can settle",
                        None,
                    ));
                }
            },
        }
    }
}

fn install_prelude<'js>(ctx: &Ctx<'js>) -> Result<Object<'js>, ScriptError> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some("forge-prelude.js".into());
    let factory: Function = ctx
        .eval_with_options(PRELUDE, options)
        .map_err(engine_failure)?;
    let host = bridge::host_object(ctx).map_err(engine_failure)?;
    factory.call((host,)).map_err(engine_failure)
}

fn caught_value<'js>(ctx: &Ctx<'js>, error: CaughtError<'js>) -> Value<'js> {
    match error {
        CaughtError::Exception(exception) => exception.into_value(),
        CaughtError::Value(value) => value,
        CaughtError::Error(rquickjs::Error::Exception) => ctx.catch(),
        CaughtError::Error(other) => rquickjs::String::from_str(ctx.clone(), &format!("{other}"))
            .map(|s| s.into_value())
            .unwrap_or_else(|_| Value::new_null(ctx.clone())),
    }
}

/// Turns a thrown value into a script error. `null` is also what QuickJS throws when it cannot
/// even allocate its out-of-memory error; the engine cannot tell that from `throw null`, so it
/// reports a runtime failure and the host, which knows whether it denied a memory growth, decides
/// whether it was `MEMORY_LIMIT`. A `ForgeError` keeps its code only when it is in
/// `pass_through` (the run request's `pass-through-codes`, the codes the host's calls fail with):
/// anything else a script puts on one is a plain `fallback` failure.
fn describe_thrown<'js>(
    describe: &Function<'js>,
    value: Value<'js>,
    fallback: &str,
    pass_through: &[String],
) -> ScriptError {
    if value.is_null() {
        let message = "null was thrown (QuickJS throws null when it is out of memory)";
        return failure(fallback, message, None);
    }
    let described = describe.call::<_, Object>((value,)).and_then(|o| {
        Ok((
            o.get::<_, String>("code")?,
            o.get::<_, Option<String>>("forgeCode")?,
            o.get::<_, String>("message")?,
            o.get::<_, Option<String>>("stack")?,
        ))
    });
    match described {
        Ok((code, forge_code, message, stack)) => {
            let code = if !code.is_empty() {
                code
            } else {
                forge_code
                    .filter(|code| pass_through.contains(code))
                    .unwrap_or_else(|| fallback.to_string())
            };
            failure(&code, message, stack)
        }
        // Describing the error failed too: almost always memory exhaustion, which the host
        // confirms from its own record.
        Err(_) => failure(
            fallback,
            "the error could not be described (out of memory?)",
            None,
        ),
    }
}
