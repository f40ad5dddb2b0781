// structuredClone (HTML's structured serialization, in one step): primitives, the wrappers of
// primitives, Date, RegExp, ArrayBuffer (and `transfer`), the typed arrays and DataView, Map,
// Set, Error and its standard kinds, Blob and File, DOMException, arrays and plain objects,
// cycles and shared references kept. Anything else (a function, a symbol, a WeakMap, a
// Promise, a class instance's private state) throws DataCloneError, as browsers do.
(function (native, internal) {
  "use strict";

  const { DOMException } = internal;
  const fail = (what) => new DOMException(`${what} could not be cloned.`, "DataCloneError");
  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const VIEWS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    Float32Array, Float64Array, BigInt64Array, BigUint64Array, DataView];
  if (typeof Float16Array === "function") VIEWS.push(Float16Array);
  const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);

  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError("structuredClone: 1 argument required, but only 0 present");
    const transfer = options?.transfer === undefined ? [] : [...options.transfer];
    for (const buffer of transfer) {
      if (!(buffer instanceof ArrayBuffer)) throw fail("A transferable that is not an ArrayBuffer");
      if (buffer.detached) throw fail("A detached ArrayBuffer");
    }
    if (new Set(transfer).size !== transfer.length) throw fail("An ArrayBuffer listed twice in transfer");
    const memory = new Map();
    // Transferred buffers move: the copy is a fresh buffer holding their bytes, and they detach.
    for (const buffer of transfer) memory.set(buffer, buffer.slice(0));
    const copy = (v) => {
      if (typeof v === "function") throw fail(`${v.name ? v.name + "()" : "A function"}`);
      if (typeof v === "symbol") throw fail(String(v));
      if (v === null || typeof v !== "object") return v;
      if (memory.has(v)) return memory.get(v);
      const remember = (c) => (memory.set(v, c), c);
      if (Array.isArray(v)) {
        const out = remember(new Array(v.length));
        for (const k of Object.keys(v)) out[k] = copy(v[k]);
        return out;
      }
      const tag = tagOf(v);
      switch (tag) {
        case "Boolean": return remember(Object(Boolean.prototype.valueOf.call(v)));
        case "Number": return remember(Object(Number.prototype.valueOf.call(v)));
        case "String": return remember(Object(String.prototype.valueOf.call(v)));
        case "BigInt": return remember(Object(BigInt.prototype.valueOf.call(v)));
        case "Date": return remember(new Date(Date.prototype.getTime.call(v)));
        case "RegExp": return remember(new RegExp(v.source, v.flags));
        case "ArrayBuffer": {
          if (v.detached) throw fail("A detached ArrayBuffer");
          return remember(v.slice(0));
        }
        case "Map": {
          const out = remember(new Map());
          for (const [k, x] of Map.prototype.entries.call(v)) out.set(copy(k), copy(x));
          return out;
        }
        case "Set": {
          const out = remember(new Set());
          for (const x of Set.prototype.values.call(v)) out.add(copy(x));
          return out;
        }
      }
      if (ArrayBuffer.isView(v)) {
        const View = VIEWS.find((T) => v instanceof T);
        if (View === undefined) throw fail(`A ${tag}`);
        const buffer = copy(v.buffer);
        const length = View === DataView ? v.byteLength : v.length;
        return remember(new View(buffer, v.byteOffset, length));
      }
      if (v instanceof DOMException) return remember(new DOMException(v.message, v.name));
      if (v instanceof Error) {
        const Kind = ERRORS[v.name] ?? Error;
        const out = remember(Object.create(Kind.prototype));
        const message = Object.getOwnPropertyDescriptor(v, "message");
        if (message !== undefined) Object.defineProperty(out, "message", { value: String(message.value), writable: true, configurable: true });
        if (typeof v.stack === "string") Object.defineProperty(out, "stack", { value: v.stack, writable: true, configurable: true });
        if ("cause" in v) Object.defineProperty(out, "cause", { value: copy(v.cause), writable: true, configurable: true });
        return out;
      }
      if (typeof File === "function" && v instanceof File) {
        return remember(new File([v], v.name, { type: v.type, lastModified: v.lastModified }));
      }
      if (typeof Blob === "function" && v instanceof Blob) return remember(new Blob([v], { type: v.type }));
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        // Platform objects and class instances with internal state cannot be serialised; a
        // class instance's own fields are copied as a plain object, as browsers do.
        if (["WeakMap", "WeakSet", "WeakRef", "Promise", "Proxy", "FinalizationRegistry", "SharedArrayBuffer"].includes(tag)
          || internal.platformObject?.(v)) {
          throw fail(`A ${tag}`);
        }
      }
      const out = remember({});
      for (const k of Object.keys(v)) out[k] = copy(v[k]);
      return out;
    };
    const result = copy(value);
    for (const buffer of transfer) buffer.transfer();
    return result;
  }

  internal.define("structuredClone", structuredClone);
})
