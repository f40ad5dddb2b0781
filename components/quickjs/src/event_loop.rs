//! One turn of the run's event loop, over the timer queue of `web/timers.js`: read the clock
//! (through `wasi:clocks`, so on the run's tape), fire the first due timer, or say how long to
//! wait for the next one and what is pending, for the host's `wait-for`.

use rquickjs::{CatchResultExt, CaughtError, Ctx, Function, Object};

use crate::exports::forge::engine::engine::ScriptError;
use crate::web::clock;

/// What a turn did.
pub enum Turn {
    /// A timer fired: run its promise jobs, then turn again.
    Fired,
    /// The next timer is due in this many nanoseconds; the text names what is pending.
    Wait(u64, String),
    /// No timer is left.
    NoTimers,
}

/// The timer queue's functions (`internal.timers`).
pub struct EventLoop<'js> {
    count: Function<'js>,
    advance: Function<'js>,
    wait: Function<'js>,
    fire: Function<'js>,
    describe: Function<'js>,
}

fn missing(error: rquickjs::Error) -> ScriptError {
    ScriptError {
        code: "ISOLATE_FAILURE".into(),
        message: format!("QuickJS: the timer queue: {error}"),
        stack: None,
    }
}

impl<'js> EventLoop<'js> {
    /// The loop over `timers` (`internal.timers`).
    pub fn new(timers: Object<'js>) -> Result<Self, ScriptError> {
        Ok(EventLoop {
            count: timers.get("count").map_err(missing)?,
            advance: timers.get("advance").map_err(missing)?,
            wait: timers.get("wait").map_err(missing)?,
            fire: timers.get("fire").map_err(missing)?,
            describe: timers.get("describe").map_err(missing)?,
        })
    }

    /// Whether no timer is left.
    pub fn idle(&self) -> Result<bool, ScriptError> {
        let count: f64 = self.count.call(()).map_err(missing)?;
        Ok(count == 0.0)
    }

    /// Fires the first due timer or tells how long to wait. A timer's exception is the error.
    pub fn turn(&self, ctx: &Ctx<'js>) -> Result<Turn, CaughtError<'js>> {
        self.advance.call::<_, ()>((clock::now_ms(),)).catch(ctx)?;
        if self.fire.call::<_, bool>(()).catch(ctx)? {
            return Ok(Turn::Fired);
        }
        let wait_ms: f64 = self.wait.call(()).catch(ctx)?;
        if wait_ms < 0.0 {
            return Ok(Turn::NoTimers);
        }
        let pending: String = self.describe.call(()).catch(ctx)?;
        // `as` saturates: a wait past u64's nanoseconds is as good as for ever.
        let nanos = (wait_ms * 1e6).ceil().max(1.0) as u64;
        Ok(Turn::Wait(nanos, pending))
    }
}
