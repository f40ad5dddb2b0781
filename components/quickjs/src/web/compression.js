// CompressionStream and DecompressionStream (the WHATWG Compression Standard): TransformStreams
// of BufferSource chunks to Uint8Array chunks, over codec.rs (`native.codecOpen`, `codecPush`,
// `codecPull`, `codecClose`). Output comes in pieces of at most 64 KiB, each handed on only when
// the readable side wants more, so a small input that inflates hugely is produced as it is read.
(function (native, internal) {
  "use strict";

  const FORMATS = ["deflate", "deflate-raw", "gzip"];
  // A stream dropped before its end frees its codec once the stream is collected.
  const registry = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((handle) => native.codecClose(handle)) : null;

  const codecTransform = (what, format, compress) => {
    if (format === undefined) throw new TypeError(`${what}: 1 argument required, but only 0 present`);
    format = String(format);
    if (!FORMATS.includes(format)) {
      throw new TypeError(`${what}: '${format}' is not a supported format (use "deflate", "deflate-raw" or "gzip")`);
    }
    // What every use of the codec holds: it is freed by the registry only once nothing does.
    const codec = { handle: native.codecOpen(format, compress) };
    // Hands out every piece the codec has, waiting for the reader between pieces.
    const drain = async (controller, finish) => {
      try {
        for (;;) {
          const piece = native.codecPull(codec.handle, finish);
          if (piece === undefined) break;
          controller.enqueue(piece);
          await internal.streams.transformReady(controller);
        }
      } catch (error) {
        native.codecClose(codec.handle);
        throw error;
      }
      if (finish) native.codecClose(codec.handle);
    };
    const transformer = {
      transform(chunk, controller) {
        let bytes;
        try {
          bytes = internal.toBytes(chunk, `${what}: a chunk`);
        } catch (error) {
          native.codecClose(codec.handle);
          throw error;
        }
        native.codecPush(codec.handle, bytes);
        return drain(controller, false);
      },
      flush(controller) { return drain(controller, true); },
      cancel() { native.codecClose(codec.handle); },
    };
    registry?.register(codec, codec.handle);
    return new TransformStream(transformer);
  };

  class CompressionStream {
    #transform;
    constructor(format) { this.#transform = codecTransform("CompressionStream", format, true); }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  class DecompressionStream {
    #transform;
    constructor(format) { this.#transform = codecTransform("DecompressionStream", format, false); }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }

  internal.tag(CompressionStream, "CompressionStream");
  internal.tag(DecompressionStream, "DecompressionStream");
  internal.define("CompressionStream", CompressionStream);
  internal.define("DecompressionStream", DecompressionStream);
})
