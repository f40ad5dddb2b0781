// `console` as Node has it: log, info and debug to stdout; warn, error and trace to stderr;
// printf-style %s %d %i %f %j %o %O %c; values shown as Node's util.inspect shows them
// (`{ a: 1, b: 'x' }`, `Map(1) { 'k' => 1 }`), two levels deep; table, dir, assert, count,
// time and group.
(function (native, internal) {
  "use strict";

  const STDOUT = 1, STDERR = 2;
  const MAX_DEPTH = 2;
  const MAX_ITEMS = 100;
  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

  const quote = (s) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`;
  const key = (k) => (typeof k === "symbol" ? `[${String(k)}]` : IDENTIFIER.test(k) ? k : quote(k));
  const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);
  const nameOf = (v) => {
    const proto = Object.getPrototypeOf(v);
    if (proto === null) return "[Object: null prototype]";
    const ctor = proto.constructor;
    return typeof ctor === "function" && ctor.name ? ctor.name : "Object";
  };

  const join = (open, items, close, prefix) => {
    const head = prefix ? `${prefix} ` : "";
    if (items.length === 0) return `${head}${open}${close}`;
    const flat = `${head}${open} ${items.join(", ")} ${close}`;
    if (flat.length <= 72 && !flat.includes("\n")) return flat;
    return `${head}${open}\n${items.map((i) => "  " + i.replace(/\n/g, "\n  ")).join(",\n")}\n${close}`;
  };

  const limited = (items, total) => (total > MAX_ITEMS ? [...items, `... ${total - MAX_ITEMS} more items`] : items);

  function inspect(value, depth = 0, seen = []) {
    switch (typeof value) {
      case "string": return depth === 0 ? value : quote(value);
      case "number": return Object.is(value, -0) ? "-0" : String(value);
      case "bigint": return `${value}n`;
      case "boolean": case "undefined": return String(value);
      case "symbol": return String(value);
      case "function": {
        const kind = /^class\b/.test(Function.prototype.toString.call(value)) ? "class" : "Function";
        return value.name ? `[${kind} ${value.name}]` : `[${kind} (anonymous)]`;
      }
    }
    if (value === null) return "null";
    if (seen.includes(value)) return "[Circular]";
    if (value instanceof Error) {
      const stack = typeof value.stack === "string" && value.stack ? `\n${value.stack.trimEnd()}` : "";
      return `${value.name}: ${value.message}${stack}`;
    }
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
    if (value instanceof RegExp) return String(value);
    if (value instanceof Promise) return "Promise { <pending> }";
    if (value instanceof WeakMap || value instanceof WeakSet) return `${tagOf(value)} { <items unknown> }`;
    if (typeof value.valueOf === "function" && [Number, String, Boolean].some((C) => value instanceof C)) {
      return `[${nameOf(value)}: ${inspect(value.valueOf(), 1)}]`;
    }
    if (depth > MAX_DEPTH) return Array.isArray(value) ? "[Array]" : `[${nameOf(value)}]`;
    const inner = [...seen, value];
    const show = (v) => inspect(v, depth + 1, inner);
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((v, i) => (i in value ? show(v) : "<empty item>"));
      return join("[", limited(items, value.length), "]", value.constructor !== Array && value.constructor ? nameOf(value) : "");
    }
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const items = Array.from(value.subarray(0, MAX_ITEMS), (v) => inspect(v, 1));
      return join("[", limited(items, value.length), "]", `${nameOf(value)}(${value.length})`);
    }
    if (value instanceof ArrayBuffer) return `ArrayBuffer { byteLength: ${value.byteLength} }`;
    if (value instanceof Map) {
      const items = [...value].slice(0, MAX_ITEMS).map(([k, v]) => `${show(k)} => ${show(v)}`);
      return join("{", limited(items, value.size), "}", `Map(${value.size})`);
    }
    if (value instanceof Set) {
      const items = [...value].slice(0, MAX_ITEMS).map(show);
      return join("{", limited(items, value.size), "}", `Set(${value.size})`);
    }
    const keys = Reflect.ownKeys(value).filter((k) => Object.prototype.propertyIsEnumerable.call(value, k));
    const items = keys.slice(0, MAX_ITEMS).map((k) => {
      const d = Object.getOwnPropertyDescriptor(value, k);
      const shown = d.get || d.set ? `[${d.get ? "Getter" : ""}${d.get && d.set ? "/" : ""}${d.set ? "Setter" : ""}]` : show(d.value);
      return `${key(k)}: ${shown}`;
    });
    const name = nameOf(value);
    const tag = value[Symbol.toStringTag];
    const prefix = name === "Object" ? (typeof tag === "string" && tag !== "Object" ? `Object [${tag}]` : "") : name;
    return join("{", limited(items, keys.length), "}", prefix);
  }
  internal.inspect = inspect;

  /** Node's util.format: printf-style directives in a first string argument, then the rest. */
  function format(args) {
    const parts = [];
    let rest = 0;
    if (typeof args[0] === "string" && args.length > 1) {
      let i = 1;
      const first = args[0].replace(/%([sdifjoOc%])/g, (match, directive) => {
        if (directive === "%") return "%";
        if (i >= args.length) return match;
        const arg = args[i++];
        switch (directive) {
          case "s": return typeof arg === "string" ? arg : typeof arg === "bigint" ? `${arg}n` : inspect(arg, 1);
          case "d": case "i": {
            if (typeof arg === "bigint") return `${arg}n`;
            const n = Number(arg);
            return String(directive === "i" ? Math.trunc(n) : n);
          }
          case "f": return String(parseFloat(arg));
          case "j": try { return JSON.stringify(arg); } catch { return "[Circular]"; }
          case "c": return "";
          default: return inspect(arg, 1);
        }
      });
      parts.push(first);
      rest = i;
    } else if (args.length > 0) {
      parts.push(inspect(args[0]));
      rest = 1;
    }
    for (let i = rest; i < args.length; i++) parts.push(inspect(args[i]));
    return parts.join(" ");
  }
  internal.format = format;

  let indent = "";
  const write = (stream, text) => {
    const body = indent ? text.split("\n").map((l) => indent + l).join("\n") : text;
    native.print(stream, body + "\n");
  };
  const counts = new Map();
  const timers = new Map();
  const elapsed = (label) => {
    const ms = native.now() - timers.get(label);
    return ms < 1000 ? `${ms.toFixed(3)}ms` : `${(ms / 1000).toFixed(3)}s`;
  };

  function table(data, columns) {
    if (data === null || typeof data !== "object") return format([data]);
    const rows = data instanceof Map ? [...data] : Object.entries(data);
    const index = data instanceof Map ? "(iteration index)" : "(index)";
    const keys = [];
    let values = false;
    for (const [, row] of rows) {
      if (row !== null && typeof row === "object") {
        for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
      } else values = true;
    }
    const header = [index, ...(columns ?? keys), ...(values ? ["Values"] : [])];
    const body = rows.map(([k, row]) => {
      const cells = [String(k)];
      for (const c of columns ?? keys) {
        cells.push(row !== null && typeof row === "object" && c in row ? inspect(row[c], 1) : "");
      }
      if (values) cells.push(row !== null && typeof row === "object" ? "" : inspect(row, 1));
      return cells;
    });
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)) + 2);
    const center = (s, w) => {
      const left = Math.floor((w - s.length) / 2);
      return " ".repeat(left) + s + " ".repeat(w - s.length - left);
    };
    const line = (l, m, r) => l + widths.map((w) => "─".repeat(w)).join(m) + r;
    const row = (cells) => "│" + cells.map((c, i) => center(c, widths[i])).join("│") + "│";
    return [line("┌", "┬", "┐"), row(header), line("├", "┼", "┤"), ...body.map(row), line("└", "┴", "┘")].join("\n");
  }

  const console = {
    log(...args) { write(STDOUT, format(args)); },
    info(...args) { write(STDOUT, format(args)); },
    debug(...args) { write(STDOUT, format(args)); },
    warn(...args) { write(STDERR, format(args)); },
    error(...args) { write(STDERR, format(args)); },
    trace(...args) {
      const stack = (new Error().stack ?? "").split("\n").slice(1).join("\n");
      write(STDERR, `Trace${args.length ? ": " + format(args) : ""}\n${stack}`.trimEnd());
    },
    dir(value) { write(STDOUT, inspect(value, typeof value === "string" ? 1 : 0)); },
    dirxml(...args) { write(STDOUT, format(args)); },
    table(data, columns) { write(STDOUT, table(data, columns)); },
    assert(condition, ...args) {
      if (condition) return;
      write(STDERR, args.length ? `Assertion failed: ${format(args)}` : "Assertion failed");
    },
    count(label = "default") {
      label = String(label);
      const n = (counts.get(label) ?? 0) + 1;
      counts.set(label, n);
      write(STDOUT, `${label}: ${n}`);
    },
    countReset(label = "default") { counts.delete(String(label)); },
    time(label = "default") {
      label = String(label);
      if (timers.has(label)) return write(STDERR, `Warning: Label '${label}' already exists for console.time()`);
      timers.set(label, native.now());
    },
    timeLog(label = "default", ...args) {
      label = String(label);
      if (!timers.has(label)) return write(STDERR, `Warning: No such label '${label}' for console.timeLog()`);
      write(STDOUT, [`${label}: ${elapsed(label)}`, ...args.map((a) => inspect(a))].join(" "));
    },
    timeEnd(label = "default") {
      label = String(label);
      if (!timers.has(label)) return write(STDERR, `Warning: No such label '${label}' for console.timeEnd()`);
      write(STDOUT, `${label}: ${elapsed(label)}`);
      timers.delete(label);
    },
    group(...args) {
      if (args.length) write(STDOUT, format(args));
      indent += "  ";
    },
    groupCollapsed(...args) { this.group(...args); },
    groupEnd() { indent = indent.slice(0, -2); },
  };
  internal.define("console", console);
})
