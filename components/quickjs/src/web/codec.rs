//! Deflate for `CompressionStream` and `DecompressionStream` (the WHATWG Compression Standard):
//! the formats "deflate" (zlib, RFC 1950), "deflate-raw" (RFC 1951) and "gzip" (RFC 1952), by
//! flate2 over miniz_oxide. Each stream's state is kept in a table here, keyed by the handle its
//! script holds, until the stream ends (`codecClose`).
//!
//! Input is pushed whole (`codecPush`) and output pulled in pieces of at most [`PIECE_BYTES`]
//! (`codecPull`), so a small input that inflates to gigabytes (a "zip bomb") is never decoded in
//! one allocation: each piece goes through the script's heap, where the run's memory cap ends it.

use std::cell::RefCell;
use std::collections::HashMap;

use flate2::{Compress, Compression, Crc, Decompress, FlushCompress, FlushDecompress, Status};
use rquickjs::{Ctx, Exception, Function, Object, Result, TypedArray};

use super::bytes_of;

/// The most output one `codecPull` returns.
const PIECE_BYTES: usize = 64 * 1024;

/// The gzip header this encoder writes: magic, deflate, no flags, no time, no extra flags, and
/// OS 255 ("unknown", so the output does not depend on the platform).
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Where a stream is in its format's framing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the gzip header (written, or still to be read).
    Header,
    /// Inside the deflate data (with its zlib header and trailer, for "deflate").
    Body,
    /// After the deflate data: gzip's CRC-32 and length.
    Trailer,
    /// Everything written or read.
    Done,
}

enum Engine {
    Compress(Compress),
    Decompress(Decompress),
}

/// One stream's state.
struct Codec {
    engine: Engine,
    gzip: bool,
    stage: Stage,
    /// gzip's CRC-32 and length of the uncompressed data so far.
    crc: Crc,
    /// Input pushed and not consumed yet: `input[consumed..]`.
    input: Vec<u8>,
    consumed: usize,
}

thread_local! {
    static CODECS: RefCell<(u32, HashMap<u32, Codec>)> = RefCell::new((0, HashMap::new()));
}

/// Why a piece of compressed input cannot be decompressed.
type Corrupt = &'static str;

/// The length of the gzip header at the start of `bytes`, `None` if more bytes are needed.
fn gzip_header_len(bytes: &[u8]) -> std::result::Result<Option<usize>, Corrupt> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if bytes.len() < 10 {
        // A wrong magic number is reported as soon as it is seen.
        if bytes.first().is_some_and(|b| *b != 0x1f) || bytes.get(1).is_some_and(|b| *b != 0x8b) {
            return Err("not gzip data (wrong magic number)");
        }
        return Ok(None);
    }
    if bytes[0] != 0x1f || bytes[1] != 0x8b {
        return Err("not gzip data (wrong magic number)");
    }
    if bytes[2] != 8 {
        return Err("unknown gzip compression method");
    }
    let flags = bytes[3];
    if flags & 0xe0 != 0 {
        return Err("reserved gzip header flags are set");
    }
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let Some(len) = bytes.get(at..at + 2) else {
            return Ok(None);
        };
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let Some(rest) = bytes.get(at..) else {
                return Ok(None);
            };
            match rest.iter().position(|b| *b == 0) {
                Some(end) => at += end + 1,
                None => return Ok(None),
            }
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    Ok((at <= bytes.len()).then_some(at))
}

impl Codec {
    fn new(format: &str, compress: bool) -> Option<Codec> {
        let (zlib, gzip) = match format {
            "deflate" => (true, false),
            "deflate-raw" => (false, false),
            "gzip" => (false, true),
            _ => return None,
        };
        let engine = if compress {
            Engine::Compress(Compress::new(Compression::default(), zlib))
        } else {
            Engine::Decompress(Decompress::new(zlib))
        };
        Some(Codec {
            engine,
            gzip,
            stage: if gzip { Stage::Header } else { Stage::Body },
            crc: Crc::new(),
            input: Vec::new(),
            consumed: 0,
        })
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.consumed == self.input.len() {
            self.input.clear();
        } else {
            self.input.drain(..self.consumed);
        }
        self.consumed = 0;
        self.input.extend_from_slice(bytes);
    }

    fn pending(&self) -> &[u8] {
        &self.input[self.consumed..]
    }

    /// The next piece of output (empty when there is none until more input comes, or at the
    /// end). With `finish`, the input is complete: compression writes its end, and
    /// decompression fails if the data stops short.
    fn pull(&mut self, finish: bool) -> std::result::Result<Vec<u8>, Corrupt> {
        let mut out = Vec::with_capacity(PIECE_BYTES);
        match self.engine {
            Engine::Compress(_) => self.compress(&mut out, finish),
            Engine::Decompress(_) => self.decompress(&mut out, finish)?,
        }
        Ok(out)
    }

    fn compress(&mut self, out: &mut Vec<u8>, finish: bool) {
        let Engine::Compress(engine) = &mut self.engine else {
            return;
        };
        if self.stage == Stage::Header {
            out.extend_from_slice(&GZIP_HEADER);
            self.stage = Stage::Body;
        }
        while self.stage == Stage::Body && out.len() < out.capacity() {
            let input = &self.input[self.consumed..];
            let flush = if finish {
                FlushCompress::Finish
            } else {
                FlushCompress::None
            };
            let (before_in, before_out) = (engine.total_in(), engine.total_out());
            // Compressing into a buffer with room cannot fail (only a full one is a BufError).
            let status = engine.compress_vec(input, out, flush);
            let read = usize::try_from(engine.total_in() - before_in).unwrap_or(input.len());
            if self.gzip {
                self.crc.update(&input[..read.min(input.len())]);
            }
            self.consumed += read;
            if finish && matches!(status, Ok(Status::StreamEnd)) {
                self.stage = if self.gzip {
                    Stage::Trailer
                } else {
                    Stage::Done
                };
            } else if read == 0 && engine.total_out() == before_out {
                break;
            }
        }
        if self.stage == Stage::Trailer && out.capacity() - out.len() >= 8 {
            out.extend_from_slice(&self.crc.sum().to_le_bytes());
            out.extend_from_slice(&self.crc.amount().to_le_bytes());
            self.stage = Stage::Done;
        }
    }

    fn decompress(&mut self, out: &mut Vec<u8>, finish: bool) -> std::result::Result<(), Corrupt> {
        if self.stage == Stage::Header {
            match gzip_header_len(self.pending())? {
                Some(len) => {
                    self.consumed += len;
                    self.stage = Stage::Body;
                }
                None if finish => return Err("the gzip header is cut short"),
                None => return Ok(()),
            }
        }
        let Engine::Decompress(engine) = &mut self.engine else {
            return Ok(());
        };
        while self.stage == Stage::Body && out.len() < out.capacity() {
            let input = &self.input[self.consumed..];
            let (before_in, before_out) = (engine.total_in(), engine.total_out());
            let status = engine
                .decompress_vec(input, out, FlushDecompress::None)
                .map_err(|_| "the compressed data is corrupt")?;
            let read = usize::try_from(engine.total_in() - before_in).unwrap_or(input.len());
            self.consumed += read.min(input.len());
            let written = usize::try_from(engine.total_out() - before_out).unwrap_or(0);
            if self.gzip {
                self.crc.update(&out[out.len() - written.min(out.len())..]);
            }
            if status == Status::StreamEnd {
                self.stage = if self.gzip {
                    Stage::Trailer
                } else {
                    Stage::Done
                };
            } else if read == 0 && written == 0 {
                break;
            }
        }
        if self.stage == Stage::Trailer && self.pending().len() >= 8 {
            let trailer = &self.input[self.consumed..self.consumed + 8];
            let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
            let size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
            if crc != self.crc.sum() {
                return Err("the gzip data's CRC-32 does not match");
            }
            if size != self.crc.amount() {
                return Err("the gzip data's length does not match");
            }
            self.consumed += 8;
            self.stage = Stage::Done;
        }
        if self.stage == Stage::Done && !self.pending().is_empty() {
            return Err("there is data after the end of the compressed stream");
        }
        if finish && out.is_empty() && self.stage != Stage::Done {
            return Err("the compressed data is cut short");
        }
        Ok(())
    }
}

fn with_codec<'js, T>(
    ctx: &Ctx<'js>,
    handle: u32,
    f: impl FnOnce(&mut Codec) -> Result<T>,
) -> Result<T> {
    CODECS.with_borrow_mut(|(_, codecs)| match codecs.get_mut(&handle) {
        Some(codec) => f(codec),
        None => Err(Exception::throw_type(
            ctx,
            "the compression stream has ended",
        )),
    })
}

/// A new stream of `format` ("deflate", "deflate-raw", "gzip"), compressing or decompressing.
fn open(ctx: Ctx<'_>, format: String, compress: bool) -> Result<u32> {
    let Some(codec) = Codec::new(&format, compress) else {
        return Err(Exception::throw_type(
            &ctx,
            &format!("unsupported compression format '{format}'"),
        ));
    };
    CODECS.with_borrow_mut(|(next, codecs)| {
        *next = next.wrapping_add(1).max(1);
        while codecs.contains_key(next) {
            *next = next.wrapping_add(1).max(1);
        }
        codecs.insert(*next, codec);
        Ok(*next)
    })
}

/// Hands a chunk of input to stream `handle` (its bytes are copied).
fn push<'js>(ctx: Ctx<'js>, handle: u32, chunk: TypedArray<'js, u8>) -> Result<()> {
    let bytes = bytes_of(&chunk);
    with_codec(&ctx, handle, |codec| {
        codec.push(&bytes);
        Ok(())
    })
}

/// The next piece of stream `handle`'s output, or undefined when there is none for now (or, with
/// `finish`, at all). Corrupt input is a TypeError.
fn pull<'js>(ctx: Ctx<'js>, handle: u32, finish: bool) -> Result<Option<TypedArray<'js, u8>>> {
    let piece = with_codec(&ctx, handle, |codec| {
        codec
            .pull(finish)
            .map_err(|why| Exception::throw_type(&ctx, &format!("decompression failed: {why}")))
    })?;
    if piece.is_empty() {
        return Ok(None);
    }
    TypedArray::new(ctx, piece).map(Some)
}

/// Forgets stream `handle` (at its end, or when it is cancelled or fails).
fn close(handle: u32) {
    CODECS.with_borrow_mut(|(_, codecs)| codecs.remove(&handle));
}

/// `native.codecOpen`, `codecPush`, `codecPull` and `codecClose`.
pub fn install<'js>(ctx: &Ctx<'js>, native: &Object<'js>) -> Result<()> {
    native.set("codecOpen", Function::new(ctx.clone(), open)?)?;
    native.set("codecPush", Function::new(ctx.clone(), push)?)?;
    native.set("codecPull", Function::new(ctx.clone(), pull)?)?;
    native.set("codecClose", Function::new(ctx.clone(), close)?)?;
    Ok(())
}
