//! The random bytes of a recorded run. They come from two ChaCha20 streams (one for
//! `wasi:random/random`, one for `wasi:random/insecure`) keyed by a seed drawn from the operating
//! system, which the tape keeps; the tape then needs only how many bytes each read took, not the
//! bytes (CPython reads 4 bytes some 5,000 times as it starts: 20 KB a run otherwise). A replay
//! keyed by the same seed, reading the same lengths in the same order, draws the same bytes.

use chacha20::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// Bytes of a seed.
pub const SEED_BYTES: usize = 32;

/// The two streams of one run.
pub struct RandomStreams {
    secure: ChaCha20Rng,
    insecure: ChaCha20Rng,
}

impl RandomStreams {
    /// The streams keyed by `seed`.
    pub fn new(seed: [u8; SEED_BYTES]) -> Self {
        let secure = ChaCha20Rng::from_seed(seed);
        let mut insecure = ChaCha20Rng::from_seed(seed);
        insecure.set_stream(1);
        RandomStreams { secure, insecure }
    }

    /// The streams keyed by the hex `seed` a tape keeps; `None` when it is not one.
    pub fn from_hex(seed: &str) -> Option<Self> {
        let bytes: [u8; SEED_BYTES] = hex::decode(seed).ok()?.try_into().ok()?;
        Some(Self::new(bytes))
    }

    /// A new seed from the operating system, as hex.
    pub fn fresh_seed() -> String {
        let mut seed = [0; SEED_BYTES];
        wasmtime_wasi::thread_rng().fill_bytes(&mut seed);
        hex::encode(seed)
    }

    /// Fills `dst` with the next bytes of one stream.
    pub fn fill(&mut self, dst: &mut [u8], insecure: bool) {
        if insecure {
            self.insecure.fill_bytes(dst);
        } else {
            self.secure.fill_bytes(dst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_draws_the_same_bytes_and_the_two_streams_differ() {
        let seed = RandomStreams::fresh_seed();
        let mut a = RandomStreams::from_hex(&seed).expect("seed");
        let mut b = RandomStreams::from_hex(&seed).expect("seed");
        let (mut x, mut y, mut z) = ([0; 16], [0; 16], [0; 16]);
        a.fill(&mut x, false);
        b.fill(&mut y, false);
        b.fill(&mut z, true);
        assert_eq!(x, y);
        assert_ne!(y, z);
        assert_ne!(seed, RandomStreams::fresh_seed());
        assert!(RandomStreams::from_hex("abc").is_none());
    }

    #[test]
    fn the_algorithm_is_pinned() {
        // ChaCha20 keyed by zeros: a replay by any later forge-host must draw these bytes.
        let mut streams = RandomStreams::new([0; SEED_BYTES]);
        let mut bytes = [0; 8];
        streams.fill(&mut bytes, false);
        assert_eq!(hex::encode(bytes), "76b8e0ada0f13d90");
    }
}
