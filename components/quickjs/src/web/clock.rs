//! The run's monotonic clock in milliseconds: `performance.now()` and the event loop's time.
//!
//! Its origin is the run's start, read by [`start`] when the run begins (never while the engine
//! is being snapshotted, whose clocks stand at zero). Every reading goes through
//! `wasi:clocks/monotonic-clock`, which the host records on the run's tape.

use std::cell::Cell;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rquickjs::{Ctx, Function, Object, Result};

thread_local! {
    static ORIGIN: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Marks the start of the run: `performance.now()` counts from here.
pub fn start() {
    ORIGIN.set(Some(Instant::now()));
}

/// Milliseconds since the run started, with sub-millisecond precision.
pub fn now_ms() -> f64 {
    match ORIGIN.get() {
        Some(origin) => origin.elapsed().as_secs_f64() * 1000.0,
        None => {
            start();
            0.0
        }
    }
}

/// The wall-clock time of the run's start, in milliseconds since the Unix epoch
/// (`performance.timeOrigin`).
fn time_origin_ms() -> f64 {
    let since_start = Duration::from_secs_f64(now_ms() / 1000.0);
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    wall.saturating_sub(since_start).as_secs_f64() * 1000.0
}

/// `native.now()` and `native.timeOrigin()`.
pub fn install<'js>(ctx: &Ctx<'js>, native: &Object<'js>) -> Result<()> {
    native.set("now", Function::new(ctx.clone(), now_ms)?)?;
    native.set("timeOrigin", Function::new(ctx.clone(), time_origin_ms)?)?;
    Ok(())
}
