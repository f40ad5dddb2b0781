//! `crypto`'s natives: random bytes from `wasi:random` (on the run's tape), and SubtleCrypto's
//! digests and HMAC (the RustCrypto crates).

use super::bytes_of;
use hmac::{Hmac, Mac};
use rquickjs::{Ctx, Exception, Function, Object, Result, TypedArray};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

/// `length` random bytes (the script's `getRandomValues` checks its 65,536-byte quota first).
fn random_bytes(ctx: Ctx<'_>, length: u32) -> Result<TypedArray<'_, u8>> {
    let mut bytes = vec![0; length as usize];
    getrandom::fill(&mut bytes)
        .map_err(|e| Exception::throw_internal(&ctx, &format!("no random bytes: {e}")))?;
    TypedArray::new(ctx, bytes)
}

fn unsupported(ctx: &Ctx<'_>, algorithm: &str) -> rquickjs::Error {
    Exception::throw_type(ctx, &format!("unsupported algorithm {algorithm}"))
}

/// The digest of `data` with `algorithm` (`SHA-1`, `SHA-256`, `SHA-384`, `SHA-512`).
fn digest<'js>(
    ctx: Ctx<'js>,
    algorithm: String,
    data: TypedArray<'js, u8>,
) -> Result<TypedArray<'js, u8>> {
    let data = bytes_of(&data);
    let out = match algorithm.as_str() {
        "SHA-1" => Sha1::digest(&data).to_vec(),
        "SHA-256" => Sha256::digest(&data).to_vec(),
        "SHA-384" => Sha384::digest(&data).to_vec(),
        "SHA-512" => Sha512::digest(&data).to_vec(),
        other => return Err(unsupported(&ctx, other)),
    };
    TypedArray::new(ctx, out)
}

fn mac<M: Mac + hmac::digest::KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes keys of any length, so this never fails.
    match <M as Mac>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

/// The HMAC of `data` under `key` with the hash `algorithm`.
fn hmac<'js>(
    ctx: Ctx<'js>,
    algorithm: String,
    key: TypedArray<'js, u8>,
    data: TypedArray<'js, u8>,
) -> Result<TypedArray<'js, u8>> {
    let (key, data) = (bytes_of(&key), bytes_of(&data));
    let out = match algorithm.as_str() {
        "SHA-1" => mac::<Hmac<Sha1>>(&key, &data),
        "SHA-256" => mac::<Hmac<Sha256>>(&key, &data),
        "SHA-384" => mac::<Hmac<Sha384>>(&key, &data),
        "SHA-512" => mac::<Hmac<Sha512>>(&key, &data),
        other => return Err(unsupported(&ctx, other)),
    };
    TypedArray::new(ctx, out)
}

/// `native.randomBytes`, `native.digest` and `native.hmac`.
pub fn install<'js>(ctx: &Ctx<'js>, native: &Object<'js>) -> Result<()> {
    native.set("randomBytes", Function::new(ctx.clone(), random_bytes)?)?;
    native.set("digest", Function::new(ctx.clone(), digest)?)?;
    native.set("hmac", Function::new(ctx.clone(), hmac)?)?;
    Ok(())
}
