// TextEncoder, TextDecoder, TextEncoderStream and TextDecoderStream (the WHATWG Encoding
// Standard), over encoding_rs (`native.decode`), and the byte helpers the other scripts share.
(function (native, internal) {
  "use strict";

  /** A Uint8Array over the bytes of any BufferSource, without copying. */
  const toBytes = (source, what = "the argument") => {
    if (source instanceof Uint8Array) return source;
    if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && source instanceof SharedArrayBuffer)) {
      return new Uint8Array(source);
    }
    throw new TypeError(`${what} is not an ArrayBuffer or an ArrayBuffer view`);
  };
  internal.toBytes = toBytes;
  internal.copyBytes = (source, what) => toBytes(source, what).slice();
  const wellFormed = (text) => String(text).toWellFormed();
  internal.utf8Encode = (text) => native.utf8Encode(wellFormed(text));
  const FATAL = 1, IGNORE_BOM = 2, LAST = 4;
  internal.utf8Decode = (bytes) => native.decode("utf-8", bytes, LAST, 0);

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") {
      return native.utf8Encode(wellFormed(input));
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) throw new TypeError("encodeInto: the destination must be a Uint8Array");
      const text = wellFormed(source);
      let read = 0, written = 0;
      // Whole code points only, as many as fit.
      for (const ch of text) {
        const cp = ch.codePointAt(0);
        const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (written + size > destination.length) break;
        if (size === 1) destination[written] = cp;
        else if (size === 2) {
          destination[written] = 0xc0 | (cp >> 6);
          destination[written + 1] = 0x80 | (cp & 0x3f);
        } else if (size === 3) {
          destination[written] = 0xe0 | (cp >> 12);
          destination[written + 1] = 0x80 | ((cp >> 6) & 0x3f);
          destination[written + 2] = 0x80 | (cp & 0x3f);
        } else {
          destination[written] = 0xf0 | (cp >> 18);
          destination[written + 1] = 0x80 | ((cp >> 12) & 0x3f);
          destination[written + 2] = 0x80 | ((cp >> 6) & 0x3f);
          destination[written + 3] = 0x80 | (cp & 0x3f);
        }
        written += size;
        read += ch.length;
      }
      return { read, written };
    }
  }
  internal.tag(TextEncoder, "TextEncoder");

  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    #stream = 0;
    constructor(label = "utf-8", options = {}) {
      const name = native.encodingName(String(label));
      if (name === undefined) throw new RangeError(`TextDecoder: the encoding '${label}' is not supported`);
      this.#encoding = name;
      this.#fatal = Boolean(options?.fatal);
      this.#ignoreBOM = Boolean(options?.ignoreBOM);
    }
    get encoding() { return this.#encoding; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input, options = {}) {
      const bytes = input === undefined ? new Uint8Array(0) : toBytes(input, "TextDecoder.decode: the input");
      const stream = Boolean(options?.stream);
      if (stream && this.#stream === 0) this.#stream = native.newDecodeStream();
      const flags = (this.#fatal ? FATAL : 0) | (this.#ignoreBOM ? IGNORE_BOM : 0) | (stream ? 0 : LAST);
      const handle = this.#stream;
      if (!stream) this.#stream = 0;
      try {
        return native.decode(this.#encoding, bytes, flags, handle);
      } catch (error) {
        // A failed streaming decode starts over, as the spec's decoder is reset.
        this.#stream = 0;
        throw error;
      }
    }
  }
  internal.tag(TextDecoder, "TextDecoder");

  class TextEncoderStream {
    #transform;
    constructor() {
      let pending = "";
      this.#transform = new TransformStream({
        transform(chunk, controller) {
          let text = pending + String(chunk);
          pending = "";
          // A lone high surrogate at the end may pair with the next chunk's first unit.
          const last = text.charCodeAt(text.length - 1);
          if (last >= 0xd800 && last <= 0xdbff) {
            pending = text.slice(-1);
            text = text.slice(0, -1);
          }
          if (text.length > 0) controller.enqueue(native.utf8Encode(wellFormed(text)));
        },
        flush(controller) {
          if (pending) controller.enqueue(native.utf8Encode(wellFormed(pending)));
        },
      });
    }
    get encoding() { return "utf-8"; }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  internal.tag(TextEncoderStream, "TextEncoderStream");

  class TextDecoderStream {
    #decoder;
    #transform;
    constructor(label = "utf-8", options = {}) {
      const decoder = (this.#decoder = new TextDecoder(label, options));
      this.#transform = new TransformStream({
        transform(chunk, controller) {
          const text = decoder.decode(toBytes(chunk, "TextDecoderStream: a chunk"), { stream: true });
          if (text) controller.enqueue(text);
        },
        flush(controller) {
          const text = decoder.decode();
          if (text) controller.enqueue(text);
        },
      });
    }
    get encoding() { return this.#decoder.encoding; }
    get fatal() { return this.#decoder.fatal; }
    get ignoreBOM() { return this.#decoder.ignoreBOM; }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  internal.tag(TextDecoderStream, "TextDecoderStream");

  internal.define("TextEncoder", TextEncoder);
  internal.define("TextDecoder", TextDecoder);
  internal.define("TextEncoderStream", TextEncoderStream);
  internal.define("TextDecoderStream", TextDecoderStream);
})
