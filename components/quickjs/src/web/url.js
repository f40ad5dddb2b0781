// URL and URLSearchParams (the WHATWG URL Standard). Parsing and the setters are the `url`
// crate's (`native.urlParse`, `native.urlSet`); the application/x-www-form-urlencoded parser
// and serializer are here.
(function (native, internal) {
  "use strict";

  const [HREF, ORIGIN, PROTOCOL, USERNAME, PASSWORD, HOST, HOSTNAME, PORT, PATHNAME, SEARCH, HASH] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  const utf8 = (text) => internal.utf8Encode(text);

  // application/x-www-form-urlencoded: bytes kept as they are, space as "+", the rest
  // percent-encoded.
  const FORM_SAFE = /[A-Za-z0-9*\-._]/;
  const hex = (b) => "%" + (b < 16 ? "0" : "") + b.toString(16).toUpperCase();
  const formEncode = (text) => {
    let out = "";
    for (const b of utf8(text)) {
      const c = String.fromCharCode(b);
      out += b === 0x20 ? "+" : b < 0x80 && FORM_SAFE.test(c) ? c : hex(b);
    }
    return out;
  };
  const percentDecode = (text) => {
    const bytes = utf8(text);
    const out = new Uint8Array(bytes.length);
    let n = 0;
    const isHex = (b) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
        out[n++] = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
        i += 2;
      } else {
        out[n++] = b;
      }
    }
    return internal.utf8Decode(out.subarray(0, n));
  };
  const formParse = (query) => {
    const list = [];
    for (const sequence of query.split("&")) {
      if (sequence === "") continue;
      const eq = sequence.indexOf("=");
      const name = eq < 0 ? sequence : sequence.slice(0, eq);
      const value = eq < 0 ? "" : sequence.slice(eq + 1);
      list.push([percentDecode(name.replace(/\+/g, " ")), percentDecode(value.replace(/\+/g, " "))]);
    }
    return list;
  };
  const formSerialize = (list) => list.map(([n, v]) => `${formEncode(n)}=${formEncode(v)}`).join("&");
  internal.formSerialize = formSerialize;

  // How a URL's URLSearchParams tells it that the query changed.
  const owners = new WeakMap();

  class URLSearchParams {
    #list = [];
    constructor(init = "") {
      if (init instanceof URLSearchParams) {
        this.#list = init.#list.map(([n, v]) => [n, v]);
      } else if (init !== null && typeof init === "object" && typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const entry = [...pair];
          if (entry.length !== 2) throw new TypeError("URLSearchParams: each pair must have exactly two members");
          this.#list.push([String(entry[0]).toWellFormed(), String(entry[1]).toWellFormed()]);
        }
      } else if (init !== null && typeof init === "object") {
        for (const k of Reflect.ownKeys(init)) {
          const d = Object.getOwnPropertyDescriptor(init, k);
          if (d?.enumerable && typeof k === "string") this.#list.push([k.toWellFormed(), String(init[k]).toWellFormed()]);
        }
      } else {
        const text = String(init);
        this.#list = formParse(text.startsWith("?") ? text.slice(1) : text);
      }
    }
    static _reset(params, query) { params.#list = formParse(query); }
    #update() {
      owners.get(this)?.(formSerialize(this.#list));
    }
    get size() { return this.#list.length; }
    append(name, value) {
      this.#list.push([String(name).toWellFormed(), String(value).toWellFormed()]);
      this.#update();
    }
    delete(name, value) {
      name = String(name);
      this.#list = this.#list.filter(([n, v]) => n !== name || (value !== undefined && v !== String(value)));
      this.#update();
    }
    get(name) {
      name = String(name);
      return this.#list.find(([n]) => n === name)?.[1] ?? null;
    }
    getAll(name) {
      name = String(name);
      return this.#list.filter(([n]) => n === name).map(([, v]) => v);
    }
    has(name, value) {
      name = String(name);
      return this.#list.some(([n, v]) => n === name && (value === undefined || v === String(value)));
    }
    set(name, value) {
      name = String(name).toWellFormed();
      value = String(value).toWellFormed();
      const index = this.#list.findIndex(([n]) => n === name);
      if (index < 0) this.#list.push([name, value]);
      else {
        this.#list[index][1] = value;
        this.#list = this.#list.filter(([n], i) => i <= index || n !== name);
      }
      this.#update();
    }
    sort() {
      // Stable, by code units.
      this.#list = this.#list
        .map((entry, i) => [entry, i])
        .sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j))
        .map(([entry]) => entry);
      this.#update();
    }
    forEach(callback, thisArg) {
      for (let i = 0; i < this.#list.length; i++) callback.call(thisArg, this.#list[i][1], this.#list[i][0], this);
    }
    *entries() { for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]]; }
    *keys() { for (const [n] of this.entries()) yield n; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return formSerialize(this.#list); }
  }
  const resetParams = URLSearchParams._reset;
  delete URLSearchParams._reset;
  internal.tag(URLSearchParams, "URLSearchParams");

  const parse = (url, base) => {
    const parts = base === undefined ? native.urlParse(url) : native.urlParse(url, base);
    return parts ?? null;
  };

  class URL {
    #parts;
    #params;
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeError("URL: 1 argument required, but only 0 present");
      const text = String(url).toWellFormed();
      const parts = parse(text, base === undefined ? undefined : String(base).toWellFormed());
      if (parts === null) {
        const where = base === undefined ? "" : ` against base '${base}'`;
        throw new TypeError(`Invalid URL: '${text}'${where}`);
      }
      this.#parts = parts;
      this.#params = new URLSearchParams(parts[SEARCH]);
      owners.set(this.#params, (query) => {
        this.#parts = native.urlSet(this.#parts[HREF], "search", query) ?? this.#parts;
      });
    }
    static canParse(url, base) {
      return parse(String(url).toWellFormed(), base === undefined ? undefined : String(base).toWellFormed()) !== null;
    }
    static parse(url, base) {
      try {
        return base === undefined ? new URL(url) : new URL(url, base);
      } catch {
        return null;
      }
    }
    #set(field, value) {
      const parts = native.urlSet(this.#parts[HREF], field, String(value).toWellFormed());
      if (parts === undefined) throw new TypeError(`Invalid URL: '${value}'`);
      this.#parts = parts;
      if (field === "href" || field === "search") resetParams(this.#params, parts[SEARCH].slice(1));
    }
    get href() { return this.#parts[HREF]; }
    set href(value) { this.#set("href", value); }
    get origin() { return this.#parts[ORIGIN]; }
    get protocol() { return this.#parts[PROTOCOL]; }
    set protocol(value) { this.#set("protocol", value); }
    get username() { return this.#parts[USERNAME]; }
    set username(value) { this.#set("username", value); }
    get password() { return this.#parts[PASSWORD]; }
    set password(value) { this.#set("password", value); }
    get host() { return this.#parts[HOST]; }
    set host(value) { this.#set("host", value); }
    get hostname() { return this.#parts[HOSTNAME]; }
    set hostname(value) { this.#set("hostname", value); }
    get port() { return this.#parts[PORT]; }
    set port(value) { this.#set("port", value); }
    get pathname() { return this.#parts[PATHNAME]; }
    set pathname(value) { this.#set("pathname", value); }
    get search() { return this.#parts[SEARCH]; }
    set search(value) { this.#set("search", value); }
    get searchParams() { return this.#params; }
    get hash() { return this.#parts[HASH]; }
    set hash(value) { this.#set("hash", value); }
    toString() { return this.#parts[HREF]; }
    toJSON() { return this.#parts[HREF]; }
  }
  internal.tag(URL, "URL");

  internal.define("URL", URL);
  internal.define("URLSearchParams", URLSearchParams);
})
