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
mod url;

use rquickjs::{Ctx, Function, Object, Result, TypedArray, context::EvalOptions};

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
    ("web/platform.js", include_str!("platform.js")),
];

/// A copy of a Uint8Array's bytes (an empty one for a detached buffer).
pub(crate) fn bytes_of(array: &TypedArray<'_, u8>) -> Vec<u8> {
    // SAFETY: the bytes are copied out at once, before any JavaScript can run and detach them.
    unsafe { array.as_bytes() }
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
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
    let internal = Object::new(ctx.clone())?;
    for (name, source) in SCRIPTS {
        let mut options = EvalOptions::default();
        options.global = true;
        options.strict = true;
        options.filename = Some((*name).into());
        let script: Function = ctx.eval_with_options(*source, options)?;
        script.call::<_, ()>((native.clone(), internal.clone()))?;
    }
    Ok(internal)
}
