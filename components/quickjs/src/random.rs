//! `Math.random`, seeded from the host's entropy on each instance's first call.
//!
//! QuickJS seeds its own generator from the clock when a context is created, so a context that
//! was created once and snapshotted would hand every run the same sequence. This replacement uses
//! the same xorshift64* generator (the same distribution), but its state is zero in the snapshot
//! and is drawn from `wasi:random` the first time a run asks for a number.

use std::cell::Cell;

use rquickjs::{Ctx, Function, Object, Result};

thread_local! {
    /// Zero means "not seeded yet"; xorshift never reaches zero from a non-zero state.
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// Replaces `Math.random` with the per-instance generator.
pub fn install(ctx: &Ctx<'_>) -> Result<()> {
    let math: Object = ctx.globals().get("Math")?;
    let random = Function::new(ctx.clone(), next)?.with_name("random")?;
    // A plain assignment keeps the built-in's attributes (writable, configurable, hidden).
    math.set("random", random)
}

/// Forgets the seed, so that a snapshot taken now holds none.
pub fn forget_seed() {
    STATE.set(0);
}

fn next() -> f64 {
    let mut x = STATE.get();
    if x == 0 {
        // A fixed odd constant only if the host has no entropy to give, which it always has.
        x = getrandom::u64().unwrap_or(0x9E37_79B9_7F4A_7C15) | 1;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    STATE.set(x);
    let bits = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    // 52 random mantissa bits under the exponent of 1.0: a double in [1, 2), minus one.
    f64::from_bits((0x3ff << 52) | (bits >> 12)) - 1.0
}
