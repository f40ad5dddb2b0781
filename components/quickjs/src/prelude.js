// The JavaScript side of the forge-host QuickJS engine. Evaluated once per run, before the
// script, with the native bridge `host` as its only argument. It defines the script's globals
// (tools, state, text, progress; console and the web platform are web/'s) and returns the engine's private API. The bridge is
// not reachable from the script afterwards.
(function (host) {
  "use strict";

  /** The error every host-side failure is thrown as: `.code` is a stable error code. */
  class ForgeError extends Error {
    constructor(code, message) {
      super(message);
      this.name = "ForgeError";
      this.code = code;
    }
  }

  // A native returns either its value or a `{code, message}` error object (marked by host).
  const unwrap = (r) => {
    if (r !== null && typeof r === "object" && r.__forgeError === true) {
      throw new ForgeError(String(r.code), String(r.message));
    }
    return r;
  };

  const encode = (what, value) => {
    let text;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      throw new TypeError(`${what} is not JSON-serialisable: ${e && e.message}`);
    }
    return text === undefined ? "null" : text;
  };

  // QuickJS's own error type for engine limits; not standard JavaScript, and removed from the
  // script's globals so that an InternalError always comes from the engine.
  const EngineInternalError = globalThis.InternalError;
  delete globalThis.InternalError;

  // In-flight calls by host call id; settled by the engine's run loop (`settle`).
  const pending = new Map();

  const call = (name, input) => {
    if (typeof name !== "string") {
      return Promise.reject(new TypeError("tools.call: the tool name must be a string"));
    }
    let id;
    try {
      id = unwrap(host.begin(name, encode("tool input", input === undefined ? {} : input)));
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  };

  const toolInfo = (t) => ({
    name: t.name,
    description: t.description,
    effect: t.effect,
    inputSchema: JSON.parse(t.inputSchema),
    functionPath: t.functionPath,
  });

  const members = Object.freeze({
    call,
    list: () => {
      try {
        return Promise.resolve(JSON.parse(host.catalogList()).map(toolInfo));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    search: (query, limit) => {
      try {
        const found = JSON.parse(host.catalogSearch(String(query), limit === undefined ? 20 : Number(limit)));
        return Promise.resolve(found.map(toolInfo));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    describe: (name) => {
      try {
        const t = JSON.parse(host.catalogDescribe(String(name)));
        return Promise.resolve(t === null ? undefined : toolInfo(t));
      } catch (e) {
        return Promise.reject(e);
      }
    },
  });

  // Every tool is also a function: `tools.echo(input)`, `tools.fs.read_text_file(input)`. The
  // host gives each tool its function path (its namespace and name as identifiers), so every
  // engine maps names alike; the catalog is read once, at the first such use.
  let bound;
  const bindings = () => {
    if (bound === undefined) {
      const tree = Object.create(null);
      for (const t of JSON.parse(host.catalogList())) {
        const path = t.functionPath;
        const name = t.name;
        const fn = { [path[path.length - 1]]: (input) => call(name, input) }[path[path.length - 1]];
        if (path.length === 1) {
          if (!(path[0] in tree)) tree[path[0]] = fn;
        } else if (path.length === 2) {
          if (!(path[0] in tree)) tree[path[0]] = Object.create(null);
          if (typeof tree[path[0]] === "object") tree[path[0]][path[1]] = fn;
        }
      }
      for (const key of Object.keys(tree)) {
        if (typeof tree[key] === "object") Object.freeze(tree[key]);
      }
      bound = Object.freeze(tree);
    }
    return bound;
  };
  const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  const tools = new Proxy(Object.create(null), {
    get: (_, key) => {
      if (own(members, key)) return members[key];
      return typeof key === "string" ? bindings()[key] : undefined;
    },
    has: (_, key) => own(members, key) || (typeof key === "string" && key in bindings()),
    ownKeys: () => [...Object.keys(members), ...Object.keys(bindings())],
    getOwnPropertyDescriptor: (_, key) => {
      const value = own(members, key) ? members[key] : typeof key === "string" ? bindings()[key] : undefined;
      return value === undefined ? undefined : { value, writable: false, enumerable: true, configurable: true };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });

  const checkKey = (key) => {
    if (typeof key !== "string") throw new TypeError("state keys must be strings");
    return key;
  };

  const state = Object.freeze({
    get(key) {
      const text = unwrap(host.stateGet(checkKey(key)));
      return text === undefined ? undefined : JSON.parse(text);
    },
    set(key, value) {
      if (value === undefined) throw new TypeError("state.set: the value must not be undefined");
      unwrap(host.stateSet(checkKey(key), encode("state value", value)));
    },
    delete(key) {
      unwrap(host.stateDelete(checkKey(key)));
    },
    keys() {
      return JSON.parse(host.stateKeys());
    },
  });

  const text = (value) => {
    unwrap(host.text(encode("text value", value)));
  };

  const number = (what, v) => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new TypeError(`progress: ${what} must be a finite number`);
    return v;
  };

  const progress = (message, completed, total) => {
    host.progress(String(message), number("completed", completed), number("total", total));
  };

  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack ? `${v.name}: ${v.message}\n${v.stack}` : `${v.name}: ${v.message}`;
    if (typeof v === "function") return `[Function ${v.name || "anonymous"}]`;
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "symbol" || v === undefined) return String(v);
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch {
      return String(v);
    }
  };
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
  define("tools", tools);
  define("state", state);
  define("text", text);
  define("progress", progress);
  define("ForgeError", ForgeError);

  // The engine's private API (never a global).
  return {
    /** Settles call `id` with the tool's JSON response, or rejects it with a ForgeError. */
    settle(id, ok, payload, code) {
      const entry = pending.get(id);
      if (entry === undefined) return false;
      pending.delete(id);
      if (ok) {
        let value;
        try {
          value = JSON.parse(payload);
        } catch (e) {
          entry.reject(e);
          return true;
        }
        entry.resolve(value);
      } else {
        entry.reject(new ForgeError(code, payload));
      }
      return true;
    },
    /** The result as JSON text, or undefined for `undefined`. */
    encodeResult(value) {
      if (value === undefined) return undefined;
      return encode("the result", value);
    },
    /**
     * {code, forgeCode, message, stack} of a thrown value. `code` is the engine's own verdict, ""
     * when the runner should decide; `forgeCode` is a ForgeError's code, which the runner keeps
     * only when it is one the host's calls fail with (the run request's pass-through codes).
     */
    describeError(e) {
      if (e instanceof Error) {
        const forgeCode = e instanceof ForgeError && typeof e.code === "string" ? e.code : undefined;
        let code = "";
        // QuickJS builds `s + s` as a rope, so a doubling string reaches the engine's longest
        // string (2^30 characters) before it takes any memory: that is the string memory bomb
        // failing, not a bug in the script. Scripts cannot construct InternalError (see below).
        if (e instanceof EngineInternalError && e.message === "string too long") code = "MEMORY_LIMIT";
        const message = `${e.name}: ${e.message}`;
        return { code, forgeCode, message, stack: typeof e.stack === "string" ? e.stack : undefined };
      }
      let message;
      try {
        message = `Uncaught ${show(e)}`;
      } catch {
        message = "Uncaught exception";
      }
      return { code: "", forgeCode: undefined, message, stack: undefined };
    },
  };
})
