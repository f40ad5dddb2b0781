//! Text encodings for `TextEncoder` and `TextDecoder` (the WHATWG Encoding Standard), by
//! `encoding_rs`. A streaming decode keeps its decoder in a table here, keyed by a handle the
//! script's `TextDecoder` holds; the table lives as long as the instance, which is one run.

use std::cell::RefCell;
use std::collections::HashMap;

use super::bytes_of;
use encoding_rs::{DecoderResult, Encoding};
use rquickjs::{Ctx, Exception, Function, Object, Result, TypedArray};

thread_local! {
    static STREAMS: RefCell<(u32, HashMap<u32, encoding_rs::Decoder>)> =
        RefCell::new((0, HashMap::new()));
}

/// The encoding's canonical name for a label, lowercase (`"utf-8"`), or undefined.
fn canonical(label: String) -> Option<String> {
    Encoding::for_label(label.trim().as_bytes())
        .filter(|e| *e != encoding_rs::REPLACEMENT)
        .map(|e| e.name().to_ascii_lowercase())
}

fn encode_utf8<'js>(ctx: Ctx<'js>, text: String) -> Result<TypedArray<'js, u8>> {
    TypedArray::new(ctx, text.into_bytes())
}

/// Flags of [`decode`].
const FATAL: u32 = 1;
const IGNORE_BOM: u32 = 2;
/// The last piece of a stream (or a whole decode): an incomplete sequence at the end is an error.
const LAST: u32 = 4;

/// Decodes `bytes` in `label`'s encoding, with the [`FATAL`], [`IGNORE_BOM`] and [`LAST`]
/// `flags`. `handle` 0 is a whole decode; any other is a streaming decode's (from
/// `newDecodeStream`), whose decoder is kept between pieces and dropped with its last one.
fn decode<'js>(
    ctx: Ctx<'js>,
    label: String,
    bytes: TypedArray<'js, u8>,
    flags: u32,
    handle: u32,
) -> Result<String> {
    let Some(encoding) = Encoding::for_label(label.as_bytes()) else {
        return Err(Exception::throw_range(
            &ctx,
            &format!("unknown encoding {label}"),
        ));
    };
    let input = bytes_of(&bytes);
    let last = flags & LAST != 0;
    let fresh = || {
        if flags & IGNORE_BOM != 0 {
            encoding.new_decoder_without_bom_handling()
        } else {
            encoding.new_decoder_with_bom_removal()
        }
    };
    STREAMS.with_borrow_mut(|(_, streams)| {
        let mut decoder = match handle {
            0 => fresh(),
            _ => streams.remove(&handle).unwrap_or_else(fresh),
        };
        // The decoders' worst case for this input, so one call decodes all of it.
        let capacity = decoder
            .max_utf8_buffer_length(input.len())
            .unwrap_or(usize::MAX);
        let mut out = String::new();
        out.try_reserve(capacity)
            .map_err(|_| Exception::throw_range(&ctx, "the decoded text is too long"))?;
        let malformed = if flags & FATAL != 0 {
            let (result, _) = decoder.decode_to_string_without_replacement(&input, &mut out, last);
            matches!(result, DecoderResult::Malformed(..))
        } else {
            let _ = decoder.decode_to_string(&input, &mut out, last);
            false
        };
        if malformed {
            let name = encoding.name().to_ascii_lowercase();
            return Err(Exception::throw_type(
                &ctx,
                &format!("The encoded data was not valid for encoding {name}"),
            ));
        }
        if handle != 0 && !last {
            streams.insert(handle, decoder);
        }
        Ok(out)
    })
}

fn new_stream() -> u32 {
    STREAMS.with_borrow_mut(|(next, _)| {
        *next = next.wrapping_add(1).max(1);
        *next
    })
}

/// `native.encodingName`, `utf8Encode`, `decode` and `newDecodeStream`.
pub fn install<'js>(ctx: &Ctx<'js>, native: &Object<'js>) -> Result<()> {
    native.set("encodingName", Function::new(ctx.clone(), canonical)?)?;
    native.set("utf8Encode", Function::new(ctx.clone(), encode_utf8)?)?;
    native.set("decode", Function::new(ctx.clone(), decode)?)?;
    native.set("newDecodeStream", Function::new(ctx.clone(), new_stream)?)?;
    Ok(())
}
