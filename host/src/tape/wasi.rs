//! The WASI clocks and random generators of a run, through its [`Deck`]: recorded as they
//! answer, or answering from the tape.

use std::convert::Infallible;
use std::time::Duration;

use rand_core::TryRng;
use wasmtime_wasi::clocks::{MonotonicClock, WallClock};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

use super::Deck;

/// `wasi:clocks/wall-clock`.
pub struct TapedWallClock {
    deck: Deck,
    live: WallClock,
}

impl TapedWallClock {
    /// The wall clock of a run with `deck`.
    pub fn new(deck: Deck) -> Self {
        TapedWallClock {
            deck,
            live: WallClock::new(),
        }
    }
}

impl HostWallClock for TapedWallClock {
    fn resolution(&self) -> Duration {
        self.live.resolution()
    }

    fn now(&self) -> Duration {
        let live = self.live.now();
        match &self.deck {
            Deck::Off => live,
            Deck::Recording(recorder) => {
                recorder.wall(live);
                live
            }
            Deck::Playing(player) => player.wall(live),
        }
    }
}

/// `wasi:clocks/monotonic-clock`.
pub struct TapedMonotonicClock {
    deck: Deck,
    live: MonotonicClock,
}

impl TapedMonotonicClock {
    /// The monotonic clock of a run with `deck`.
    pub fn new(deck: Deck) -> Self {
        TapedMonotonicClock {
            deck,
            live: MonotonicClock::new(),
        }
    }
}

impl HostMonotonicClock for TapedMonotonicClock {
    fn resolution(&self) -> u64 {
        self.live.resolution()
    }

    fn now(&self) -> u64 {
        let live = self.live.now();
        match &self.deck {
            Deck::Off => live,
            Deck::Recording(recorder) => {
                recorder.monotonic(live);
                live
            }
            Deck::Playing(player) => player.monotonic(live),
        }
    }
}

/// `wasi:random/random` (or `insecure`): every read is whole bytes, so numbers and byte
/// strings record alike.
pub struct TapedRng {
    deck: Deck,
    insecure: bool,
    live: Box<dyn wasmtime_wasi::Rng + Send>,
}

impl TapedRng {
    /// The generator of a run with `deck`; `insecure` for `wasi:random/insecure`.
    pub fn new(deck: Deck, insecure: bool) -> Self {
        TapedRng {
            deck,
            insecure,
            live: wasmtime_wasi::thread_rng(),
        }
    }
}

impl TryRng for TapedRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut bytes = [0; 4];
        self.try_fill_bytes(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut bytes = [0; 8];
        self.try_fill_bytes(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        match &self.deck {
            Deck::Off => self.live.fill_bytes(dst),
            Deck::Recording(recorder) => recorder.fill_random(dst, self.insecure),
            Deck::Playing(player) => player.random(dst, self.insecure),
        }
        Ok(())
    }
}
