// The rest of the platform's globals: performance, navigator, reportError, atob and btoa, and
// `self`; and `internal.platformObject`, which tells structuredClone what it must refuse.
(function (native, internal) {
  "use strict";

  const ILLEGAL = Symbol("illegal constructor");

  class Performance {
    #origin;
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    /** Milliseconds since the run started (the monotonic clock, on the run's tape). */
    now() { return native.now(); }
    /** When the run started, in milliseconds since the Unix epoch (read at first use). */
    get timeOrigin() {
      if (this.#origin === undefined) this.#origin = native.timeOrigin();
      return this.#origin;
    }
    toJSON() { return { timeOrigin: this.timeOrigin }; }
  }
  internal.tag(Performance, "Performance");

  class Navigator {
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    get userAgent() { return "forge-host (QuickJS)"; }
    get language() { return "en-US"; }
    get languages() { return ["en-US"]; }
    get hardwareConcurrency() { return 1; }
    get onLine() { return false; }
  }
  internal.tag(Navigator, "Navigator");

  function reportError(error) {
    if (arguments.length === 0) throw new TypeError("reportError: 1 argument required, but only 0 present");
    native.print(2, `Uncaught ${internal.inspect(error, 0)}\n`);
  }
  internal.reportError = reportError;

  const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const invalid = (message) => new internal.DOMException(message, "InvalidCharacterError");
  function btoa(data) {
    if (arguments.length === 0) throw new TypeError("btoa: 1 argument required, but only 0 present");
    const text = String(data);
    let out = "";
    for (let i = 0; i < text.length; i += 3) {
      const codes = [text.charCodeAt(i), text.charCodeAt(i + 1), text.charCodeAt(i + 2)];
      for (const c of codes) if (c > 255) throw invalid("btoa: the string contains characters outside of Latin1");
      const [a, b, c] = codes;
      out += BASE64[a >> 2] + BASE64[((a & 3) << 4) | ((b || 0) >> 4)];
      out += Number.isNaN(b) ? "==" : BASE64[((b & 15) << 2) | ((c || 0) >> 6)] + (Number.isNaN(c) ? "=" : BASE64[c & 63]);
    }
    return out;
  }
  function atob(data) {
    if (arguments.length === 0) throw new TypeError("atob: 1 argument required, but only 0 present");
    let text = String(data).replace(/[\t\n\f\r ]/g, "");
    if (text.length % 4 === 0) text = text.replace(/==?$/, "");
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) throw invalid("atob: the string is not correctly encoded");
    let out = "";
    let bits = 0, count = 0;
    for (const ch of text) {
      bits = (bits << 6) | BASE64.indexOf(ch);
      count += 6;
      if (count >= 8) {
        count -= 8;
        out += String.fromCharCode((bits >> count) & 0xff);
      }
    }
    return out;
  }

  // Objects whose state lives in private fields or native handles: structuredClone refuses them
  // instead of copying an empty shell.
  const PLATFORM = ["EventTarget", "Event", "AbortController", "URL", "URLSearchParams", "TextEncoder", "TextDecoder",
    "TextEncoderStream", "TextDecoderStream", "ReadableStream", "WritableStream", "TransformStream", "Headers", "Request",
    "Response", "FormData", "CompressionStream", "DecompressionStream", "CryptoKey", "Crypto", "SubtleCrypto",
    "Performance", "Navigator"];
  internal.platformObject = (value) =>
    PLATFORM.some((name) => typeof globalThis[name] === "function" && value instanceof globalThis[name]);

  internal.define("Performance", Performance);
  internal.define("performance", new Performance(ILLEGAL));
  internal.define("Navigator", Navigator);
  internal.define("navigator", new Navigator(ILLEGAL));
  internal.define("reportError", reportError);
  if (typeof globalThis.btoa !== "function") internal.define("btoa", btoa);
  if (typeof globalThis.atob !== "function") internal.define("atob", atob);
  if (!("self" in globalThis)) internal.define("self", globalThis);
})
