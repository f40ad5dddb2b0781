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
use crate::event_loop::{EventLoop, Turn};
use crate::exports::forge::engine::engine::{RunRequest, ScriptError};
use crate::forge::engine::tools;
use crate::random;
use crate::web;

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
    /// The event loop's timer queue (`internal.timers` of `web/timers.js`).
    timers: Persistent<Object<'static>>,
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
    let (api, timers) = context.with(|ctx| -> Result<_, ScriptError> {
        random::install(&ctx).map_err(engine_failure)?;
        let host = bridge::host_object(&ctx).map_err(engine_failure)?;
        let print: Function = host.get("print").map_err(engine_failure)?;
        let internal = web::install(&ctx, print).map_err(|e| web_failure(&ctx, e))?;
        let timers: Object = internal.get("timers").map_err(engine_failure)?;
        let api = install_prelude(&ctx, host)?;
        Ok((Persistent::save(&ctx, api), Persistent::save(&ctx, timers)))
    })?;
    // Garbage from parsing the prelude would otherwise be part of every snapshot.
    runtime.run_gc();
    Ok(Prepared {
        api,
        timers,
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
        let timers = prepared
            .timers
            .clone()
            .restore(&ctx)
            .map_err(engine_failure)?;
        run_in(&ctx, api, EventLoop::new(timers)?, &request)
    });
    // The host throws this instance away after its one run: freeing every object of the runtime
    // first would only write to (and so copy) pages of the snapshot for nothing.
    std::mem::forget(prepared);
    outcome
}

fn run_in<'js>(
    ctx: &Ctx<'js>,
    api: Object<'js>,
    timers: EventLoop<'js>,
    request: &RunRequest,
) -> Result<Option<String>, ScriptError> {
    bridge::set_limits(&request.limits);
    web::clock::start();
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

    let settle_call = |done: tools::Completion| -> Result<(), ScriptError> {
        let (ok, payload, code) = match done.outcome {
            Ok(json) => (true, json, String::new()),
            Err(error) => (false, error.message, error.code),
        };
        match settle
            .call::<_, bool>((done.id as f64, ok, payload, code))
            .catch(ctx)
        {
            Ok(_) => Ok(()),
            Err(error) => Err(thrown(caught_value(ctx, error), "SCRIPT_RUNTIME")),
        }
    };

    // The event loop: promise jobs, then due timers one at a time, then a wait in the host for
    // the next timer or tool call. The run ends once its promise has settled and no timer is
    // left, as a Node or Deno program does.
    loop {
        while ctx.execute_pending_job() {}
        match root.state() {
            PromiseState::Rejected => {
                let reason = match root.result::<Value>() {
                    Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                    Some(Ok(value)) => value,
                    _ => Value::new_undefined(ctx.clone()),
                };
                return Err(thrown(reason, "SCRIPT_RUNTIME"));
            }
            PromiseState::Resolved if timers.idle()? => {
                let value: Value = root
                    .result()
                    .transpose()
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                return finish(ctx, &encode, value, request, &thrown);
            }
            _ => {}
        }
        match timers.turn(ctx) {
            Ok(Turn::Fired) => continue,
            Ok(Turn::Wait(nanos, pending)) => {
                if let Some(done) = crate::forge::engine::timers::wait_for(nanos, &pending) {
                    settle_call(done)?;
                }
            }
            Ok(Turn::NoTimers) => match tools::wait_any() {
                Some(done) => settle_call(done)?,
                None => {
                    return Err(failure(
                        "UNRESOLVABLE_PROMISE",
                        "the script is waiting on a promise that nothing can settle",
                        None,
                    ));
                }
            },
            Err(error) => return Err(thrown(caught_value(ctx, error), "SCRIPT_RUNTIME")),
        }
    }
}

/// The result of a run whose promise resolved to `value`, as JSON within its budget.
fn finish<'js>(
    ctx: &Ctx<'js>,
    encode: &Function<'js>,
    value: Value<'js>,
    request: &RunRequest,
    thrown: &dyn Fn(Value<'js>, &str) -> ScriptError,
) -> Result<Option<String>, ScriptError> {
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
    Ok(text)
}

fn install_prelude<'js>(ctx: &Ctx<'js>, host: Object<'js>) -> Result<Object<'js>, ScriptError> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some("forge-prelude.js".into());
    let factory: Function = ctx
        .eval_with_options(PRELUDE, options)
        .map_err(engine_failure)?;
    factory.call((host,)).map_err(engine_failure)
}

/// A failure while installing the web platform's scripts, with the exception's own message.
fn web_failure(ctx: &Ctx<'_>, error: rquickjs::Error) -> ScriptError {
    if let rquickjs::Error::Exception = error {
        let value = ctx.catch();
        let text = value
            .as_exception()
            .map(|e| {
                format!(
                    "{}\n{}",
                    e.message().unwrap_or_default(),
                    e.stack().unwrap_or_default()
                )
            })
            .unwrap_or_else(|| format!("{value:?}"));
        return failure(
            "ISOLATE_FAILURE",
            format!("QuickJS: the web platform: {text}"),
            None,
        );
    }
    engine_failure(error)
}

pub(crate) fn caught_value<'js>(ctx: &Ctx<'js>, error: CaughtError<'js>) -> Value<'js> {
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
