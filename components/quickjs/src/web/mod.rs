//! The web platform's common API (the WinterTC Minimum Common API) as globals of the script:
//! events and abort signals, timers, encoding, URL, streams, blobs, fetch's types, crypto,
//! compression, `structuredClone`, `performance`, `navigator` and a Node-like `console`.
//!
//! Each `*.js` file here is a function `(native, internal) => void` evaluated once, in
//! [`SCRIPTS`] order, when the engine is prepared (so it is part of the snapshot and costs a run
//! nothing). `native` holds the Rust functions of this module's other files (UTF-8 and legacy
//! encodings, the WHATWG URL parser, hashes and HMAC, deflate, the clock and random bytes);
//! `internal` is shared by the scripts for what is not a global (the timer queue the run loop
//! drives, stream helpers). Nothing reaches the host but the WASI clocks and random bytes,
//! which are on the run's tape.

pub mod clock;
mod codec;
mod crypto;
mod encoding;
mod intl;
mod url;

use std::ffi::CString;

use rquickjs::{Ctx, Exception, FromJs, Function, Object, Result, TypedArray, Value, qjs};

/// The scripts, in the order they run: each may use what the ones before it defined.
const SCRIPTS: &[(&str, &str)] = &[
    ("web/events.js", include_str!("events.js")),
    ("web/timers.js", include_str!("timers.js")),
    ("web/console.js", include_str!("console.js")),
    ("web/encoding.js", include_str!("encoding.js")),
    ("web/url.js", include_str!("url.js")),
    ("web/streams.js", include_str!("streams.js")),
    (
        "web/streams_writable.js",
        include_str!("streams_writable.js"),
    ),
    ("web/streams_pipe.js", include_str!("streams_pipe.js")),
    ("web/blob.js", include_str!("blob.js")),
    ("web/compression.js", include_str!("compression.js")),
    ("web/fetch.js", include_str!("fetch.js")),
    ("web/crypto.js", include_str!("crypto.js")),
    ("web/clone.js", include_str!("clone.js")),
    ("web/intl/core.js", include_str!("intl/core.js")),
    ("web/intl/number.js", include_str!("intl/number.js")),
    ("web/intl/datetime.js", include_str!("intl/datetime.js")),
    ("web/intl/text.js", include_str!("intl/text.js")),
    ("web/platform.js", include_str!("platform.js")),
];

/// A copy of a Uint8Array's bytes (an empty one for a detached buffer).
pub(crate) fn bytes_of(array: &TypedArray<'_, u8>) -> Vec<u8> {
    // SAFETY: the bytes are copied out at once, before any JavaScript can run and detach them.
    unsafe { array.as_bytes() }
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

/// Evaluates one of [`SCRIPTS`] (strict, global) with its functions' source text dropped, as
/// QuickJS-ng drops it from bytecode written without source: the built-ins the scripts define
/// then print as `function name() { [native code] }`, as the spec has built-ins print, and the
/// snapshot does not carry the text twice.
fn eval_without_source<'js>(ctx: &Ctx<'js>, name: &str, source: &str) -> Result<Function<'js>> {
    let nul = |_| Exception::throw_internal(ctx, &format!("{name} holds a NUL byte"));
    let text = CString::new(source).map_err(nul)?;
    let file = CString::new(name).map_err(nul)?;
    let raw = ctx.as_raw().as_ptr();
    let flags =
        qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_STRICT | qjs::JS_EVAL_FLAG_COMPILE_ONLY;
    // SAFETY: every value made here is freed once, or handed to `Value::from_raw`, which owns it;
    // the buffer `JS_WriteObject` returns is freed with the context's allocator after it is read.
    unsafe {
        let compiled = qjs::JS_Eval(
            raw,
            text.as_ptr(),
            source.len() as _,
            file.as_ptr(),
            flags as i32,
        );
        if qjs::JS_IsException(compiled) {
            return Err(rquickjs::Error::Exception);
        }
        let mut length = 0;
        let flags = qjs::JS_WRITE_OBJ_BYTECODE | qjs::JS_WRITE_OBJ_STRIP_SOURCE;
        let bytes = qjs::JS_WriteObject(raw, &mut length, compiled, flags as i32);
        qjs::JS_FreeValue(raw, compiled);
        if bytes.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let read = qjs::JS_ReadObject(raw, bytes, length, qjs::JS_READ_OBJ_BYTECODE as i32);
        qjs::js_free(raw, bytes.cast());
        if qjs::JS_IsException(read) {
            return Err(rquickjs::Error::Exception);
        }
        let result = qjs::JS_EvalFunction(raw, read);
        if qjs::JS_IsException(result) {
            return Err(rquickjs::Error::Exception);
        }
        Function::from_js(ctx, Value::from_raw(ctx.clone(), result))
    }
}

/// Installs the globals, and returns `internal` (the run loop reads the timer queue from it).
pub fn install<'js>(ctx: &Ctx<'js>, print: Function<'js>) -> Result<Object<'js>> {
    let native = Object::new(ctx.clone())?;
    native.set("print", print)?;
    clock::install(ctx, &native)?;
    encoding::install(ctx, &native)?;
    url::install(ctx, &native)?;
    crypto::install(ctx, &native)?;
    codec::install(ctx, &native)?;
    intl::install(ctx, &native)?;
    let internal = Object::new(ctx.clone())?;
    for (name, source) in SCRIPTS {
        let script = eval_without_source(ctx, name, source)?;
        script.call::<_, ()>((native.clone(), internal.clone()))?;
    }
    Ok(internal)
}
