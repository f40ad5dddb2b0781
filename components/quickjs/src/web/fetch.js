// Headers, Request and Response (the WHATWG Fetch Standard), and `fetch`, which always rejects:
// scripts have no network; tools reach the outside. Bodies are kept as bytes until their `body`
// stream is asked for, and read through it after that.
(function (native, internal) {
  "use strict";

  const S = internal.streams;
  const NO_NETWORK = "fetch is not available: forge-host scripts have no network access. Call a tool instead " +
    "(tools.call(name, input), or tools.<name>(input)); forge-host tools lists them.";

  // Headers.
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const normalizeValue = (value) => String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  const checkName = (name, what) => {
    name = String(name);
    if (!TOKEN.test(name)) throw new TypeError(`${what}: '${name}' is not a valid header name`);
    return name.toLowerCase();
  };
  const checkValue = (value, what) => {
    const normalized = normalizeValue(value);
    if (/[\0\r\n]|[^\x00-\xff]/.test(normalized)) throw new TypeError(`${what}: '${normalized}' is not a valid header value`);
    return normalized;
  };
  const headerLists = new WeakMap();
  const headersOf = (headers, what) => {
    const record = headerLists.get(headers);
    if (record === undefined) throw new TypeError(`${what}: 'this' is not a Headers`);
    return record;
  };
  const mutable = (record, what) => {
    if (record.immutable) throw new TypeError(`${what}: the headers are immutable`);
  };
  const getCombined = (list, name) => {
    const values = list.filter((entry) => entry[0] === name).map((entry) => entry[1]);
    return values.length === 0 ? null : values.join(", ");
  };
  const sortAndCombine = (list) => {
    const names = [...new Set(list.map((entry) => entry[0]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out = [];
    for (const name of names) {
      if (name === "set-cookie") {
        for (const entry of list) if (entry[0] === name) out.push([name, entry[1]]);
      } else {
        out.push([name, getCombined(list, name)]);
      }
    }
    return out;
  };
  const fill = (record, init, what) => {
    if (init === undefined) return;
    if (init === null || (typeof init !== "object" && typeof init !== "function")) {
      throw new TypeError(`${what}: the headers init must be an object or a sequence of pairs`);
    }
    if (headerLists.has(init)) {
      for (const [name, value] of headerLists.get(init).list) appendHeader(record, name, value, what);
    } else if (typeof init[Symbol.iterator] === "function") {
      for (const pair of init) {
        if (pair === null || typeof pair !== "object") throw new TypeError(`${what}: each header must be a [name, value] pair`);
        const entry = [...pair];
        if (entry.length !== 2) throw new TypeError(`${what}: each header pair must have exactly two members`);
        appendHeader(record, entry[0], entry[1], what);
      }
    } else {
      for (const key of Reflect.ownKeys(init)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
        if (descriptor?.enumerable && typeof key === "string") appendHeader(record, key, init[key], what);
      }
    }
  };
  const appendHeader = (record, name, value, what) => {
    const lower = checkName(name, what);
    const normalized = checkValue(value, what);
    mutable(record, what);
    record.list.push([lower, normalized]);
  };
  const newHeaders = (list = [], immutable = false) => {
    const headers = Object.create(Headers.prototype);
    headerLists.set(headers, { list, immutable });
    return headers;
  };

  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  const headerIterators = new WeakMap();
  const HeadersIteratorPrototype = Object.create(IteratorPrototype, {
    next: {
      value: function next() {
        const state = headerIterators.get(this);
        if (state === undefined) throw new TypeError("next: 'this' is not a Headers iterator");
        const pairs = sortAndCombine(state.record.list);
        const pair = pairs[state.index];
        if (pair === undefined) return { value: undefined, done: true };
        state.index++;
        return { value: state.kind === "keys" ? pair[0] : state.kind === "values" ? pair[1] : pair, done: false };
      },
      writable: true, configurable: true,
    },
  });
  Object.defineProperty(HeadersIteratorPrototype, Symbol.toStringTag, { value: "Headers Iterator", configurable: true });
  const headersIterator = (headers, kind) => {
    const iterator = Object.create(HeadersIteratorPrototype);
    headerIterators.set(iterator, { record: headersOf(headers, kind), index: 0, kind });
    return iterator;
  };

  class Headers {
    constructor(init = undefined) {
      const record = { list: [], immutable: false };
      headerLists.set(this, record);
      fill(record, init, "Headers");
    }
    append(name, value) {
      if (arguments.length < 2) throw new TypeError("Headers.append: 2 arguments required");
      appendHeader(headersOf(this, "append"), name, value, "Headers.append");
    }
    delete(name) {
      const record = headersOf(this, "delete");
      const lower = checkName(name, "Headers.delete");
      mutable(record, "Headers.delete");
      record.list = record.list.filter((entry) => entry[0] !== lower);
    }
    get(name) {
      return getCombined(headersOf(this, "get").list, checkName(name, "Headers.get"));
    }
    getSetCookie() {
      return headersOf(this, "getSetCookie").list.filter((entry) => entry[0] === "set-cookie").map((entry) => entry[1]);
    }
    has(name) {
      const lower = checkName(name, "Headers.has");
      return headersOf(this, "has").list.some((entry) => entry[0] === lower);
    }
    set(name, value) {
      if (arguments.length < 2) throw new TypeError("Headers.set: 2 arguments required");
      const record = headersOf(this, "set");
      const lower = checkName(name, "Headers.set");
      const normalized = checkValue(value, "Headers.set");
      mutable(record, "Headers.set");
      const first = record.list.findIndex((entry) => entry[0] === lower);
      if (first < 0) record.list.push([lower, normalized]);
      else {
        record.list[first] = [lower, normalized];
        record.list = record.list.filter((entry, i) => i <= first || entry[0] !== lower);
      }
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("Headers.forEach: the callback must be a function");
      const record = headersOf(this, "forEach");
      for (let i = 0; ; i++) {
        const pair = sortAndCombine(record.list)[i];
        if (pair === undefined) return;
        callback.call(thisArg, pair[1], pair[0], this);
      }
    }
    entries() { return headersIterator(this, "entries"); }
    keys() { return headersIterator(this, "keys"); }
    values() { return headersIterator(this, "values"); }
  }
  Object.defineProperty(Headers.prototype, Symbol.iterator, { value: Headers.prototype.entries, writable: true, configurable: true });

  // Bodies: {bytes: Uint8Array | null, stream: ReadableStream | null, used}; a null body is null.
  const extractBody = (object, what, keepalive = false) => {
    void keepalive;
    if (object instanceof ReadableStream) {
      const record = S.readable(object);
      if (record.disturbed || S.isLocked(record)) throw new TypeError(`${what}: the body stream is disturbed or locked`);
      return { body: { bytes: null, stream: object, used: false }, type: null };
    }
    let bytes, type = null;
    if (object instanceof Blob) {
      bytes = internal.blobBytes(object);
      if (object.type !== "") type = object.type;
    } else if (object instanceof ArrayBuffer || ArrayBuffer.isView(object)) {
      bytes = internal.copyBytes(object);
    } else if (object instanceof FormData) {
      ({ bytes, type } = internal.formDataSerialize(object));
    } else if (object instanceof URLSearchParams) {
      bytes = internal.utf8Encode(object.toString());
      type = "application/x-www-form-urlencoded;charset=UTF-8";
    } else {
      bytes = internal.utf8Encode(String(object));
      type = "text/plain;charset=UTF-8";
    }
    return { body: { bytes, stream: null, used: false }, type };
  };
  const streamOf = (body) => {
    if (body.stream === null) body.stream = S.fromBytes(body.bytes);
    return body.stream;
  };
  const isUnusable = (body) => {
    if (body === null) return false;
    if (body.stream === null) return body.used;
    const record = S.readable(body.stream);
    return record.disturbed || S.isLocked(record);
  };
  const bodyUsed = (body) => body !== null && (body.stream === null ? body.used : S.readable(body.stream).disturbed);
  const cloneBody = (body) => {
    if (body === null) return null;
    if (body.stream === null) return { bytes: body.bytes, stream: null, used: false };
    const [one, two] = S.tee(S.readable(body.stream));
    body.stream = one.wrapper;
    return { bytes: null, stream: two.wrapper, used: false };
  };
  const readBody = (body, what) => {
    if (isUnusable(body)) return Promise.reject(new TypeError(`${what}: the body has already been read`));
    if (body === null) return Promise.resolve(new Uint8Array(0));
    if (body.stream === null) {
      body.used = true;
      return Promise.resolve(body.bytes);
    }
    return S.readAllBytes(S.readable(body.stream));
  };

  // What Request and Response share: their state is {body, headers, ...} in `messages`.
  const messages = new WeakMap();
  const messageOf = (object, kind, what) => {
    const record = messages.get(object);
    if (record === undefined || record.kind !== kind) throw new TypeError(`${what}: 'this' is not a ${kind}`);
    return record;
  };
  const consume = (object, what, finish) => {
    let record;
    try {
      record = messages.get(object);
      if (record === undefined) throw new TypeError(`${what}: 'this' is not a Request or a Response`);
    } catch (error) {
      return Promise.reject(error);
    }
    return readBody(record.body, what).then((bytes) => finish(bytes, record));
  };
  const mimeType = (record) => headerLists.get(record.headers).list.find((e) => e[0] === "content-type")?.[1] ?? "";
  const BodyMixin = {
    get body() {
      const record = messages.get(this);
      if (record === undefined) throw new TypeError("body: 'this' is not a Request or a Response");
      return record.body === null ? null : streamOf(record.body);
    },
    get bodyUsed() {
      const record = messages.get(this);
      if (record === undefined) throw new TypeError("bodyUsed: 'this' is not a Request or a Response");
      return bodyUsed(record.body);
    },
    arrayBuffer() { return consume(this, "arrayBuffer", (bytes) => bytes.slice().buffer); },
    bytes() { return consume(this, "bytes", (bytes) => bytes.slice()); },
    text() { return consume(this, "text", (bytes) => internal.utf8Decode(bytes)); },
    json() { return consume(this, "json", (bytes) => JSON.parse(internal.utf8Decode(bytes))); },
    blob() { return consume(this, "blob", (bytes, record) => new Blob([bytes], { type: mimeType(record) })); },
    formData() {
      return consume(this, "formData", (bytes, record) => {
        const type = mimeType(record);
        const essence = type.split(";")[0].trim().toLowerCase();
        if (essence === "multipart/form-data") return internal.formDataParse(bytes, type);
        if (essence === "application/x-www-form-urlencoded") {
          const form = new FormData();
          for (const [name, value] of new URLSearchParams(internal.utf8Decode(bytes))) form.append(name, value);
          return form;
        }
        throw new TypeError("formData: the body's Content-Type is neither multipart/form-data nor application/x-www-form-urlencoded");
      });
    },
  };
  const mixBody = (Class) => {
    for (const key of Object.keys(BodyMixin)) {
      const descriptor = Object.getOwnPropertyDescriptor(BodyMixin, key);
      descriptor.enumerable = false;
      Object.defineProperty(Class.prototype, key, descriptor);
    }
  };
  const setContentType = (headers, type) => {
    const record = headerLists.get(headers);
    if (type !== null && !record.list.some((e) => e[0] === "content-type")) record.list.push(["content-type", type]);
  };

  // Request.
  const FORBIDDEN_METHODS = ["CONNECT", "TRACE", "TRACK"];
  const NORMALIZED_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"];
  const ENUMS = {
    mode: ["navigate", "same-origin", "no-cors", "cors"],
    credentials: ["omit", "same-origin", "include"],
    cache: ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"],
    redirect: ["follow", "error", "manual"],
    referrerPolicy: ["", "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin",
      "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"],
    priority: ["high", "low", "auto"],
    duplex: ["half"],
  };
  const enumOf = (init, key, fallback) => {
    if (init[key] === undefined) return fallback;
    const value = String(init[key]);
    if (!ENUMS[key].includes(value)) throw new TypeError(`Request: '${value}' is not a valid value for ${key}`);
    return value;
  };
  const parseUrl = (input, what) => {
    let url;
    try {
      url = new URL(String(input));
    } catch {
      throw new TypeError(`${what}: '${input}' is not an absolute URL (there is no base URL to resolve it against)`);
    }
    if (url.username !== "" || url.password !== "") throw new TypeError(`${what}: the URL '${input}' includes credentials`);
    return url;
  };
  /** A signal that follows `parent` (if any), for a request's own signal. */
  const followingSignal = (parent) => {
    if (parent === null || parent === undefined) return new AbortController().signal;
    return AbortSignal.any([parent]);
  };

  class Request {
    constructor(input, init = {}) {
      if (arguments.length === 0) throw new TypeError("Request: 1 argument required, but only 0 present");
      if (init === null || init === undefined) init = {};
      else if (typeof init !== "object" && typeof init !== "function") throw new TypeError("Request: init must be an object");
      const source = input instanceof Request ? messageOf(input, "Request", "Request") : null;
      const r = source === null
        ? {
          url: parseUrl(input, "Request").href, method: "GET", referrer: "about:client", referrerPolicy: "", mode: "cors",
          credentials: "same-origin", cache: "default", redirect: "follow", integrity: "", keepalive: false,
          priority: "auto", signal: null,
        }
        : { ...source };
      r.kind = "Request";
      if (init.mode !== undefined && String(init.mode) === "navigate") throw new TypeError("Request: mode cannot be 'navigate'");
      if (source !== null && r.mode === "navigate" && Object.keys(init).length > 0) r.mode = "same-origin";
      if (init.referrer !== undefined) {
        const referrer = String(init.referrer);
        r.referrer = referrer === "" ? "" : parseUrl(referrer, "Request: referrer").href;
      }
      for (const key of ["referrerPolicy", "mode", "credentials", "cache", "redirect", "priority"]) r[key] = enumOf(init, key, r[key]);
      if (r.cache === "only-if-cached" && r.mode !== "same-origin") {
        throw new TypeError("Request: cache 'only-if-cached' requires mode 'same-origin'");
      }
      if (init.integrity !== undefined) r.integrity = String(init.integrity);
      if (init.keepalive !== undefined) r.keepalive = Boolean(init.keepalive);
      if (init.method !== undefined) {
        const method = String(init.method);
        if (!TOKEN.test(method)) throw new TypeError(`Request: '${method}' is not a valid HTTP method`);
        const upper = method.toUpperCase();
        if (FORBIDDEN_METHODS.includes(upper)) throw new TypeError(`Request: the method '${method}' is forbidden`);
        r.method = NORMALIZED_METHODS.includes(upper) ? upper : method;
      }
      let parentSignal = source?.signal ?? null;
      if (init.signal !== undefined) {
        if (init.signal !== null && !(init.signal instanceof AbortSignal)) throw new TypeError("Request: signal must be an AbortSignal");
        parentSignal = init.signal;
      }
      r.signal = followingSignal(parentSignal);
      r.headers = newHeaders();
      fill(headerLists.get(r.headers), init.headers !== undefined ? init.headers : source?.headers, "Request");
      const inputBody = source?.body ?? null;
      if ((init.body !== undefined && init.body !== null || inputBody !== null) && (r.method === "GET" || r.method === "HEAD")) {
        throw new TypeError(`Request: a ${r.method} request cannot have a body`);
      }
      r.duplex = enumOf(init, "duplex", "half");
      let body = inputBody;
      if (init.body !== undefined && init.body !== null) {
        const extracted = extractBody(init.body, "Request", r.keepalive);
        if (extracted.body.stream !== null && init.duplex === undefined) {
          throw new TypeError("Request: the duplex option ('half') is required when the body is a ReadableStream");
        }
        body = extracted.body;
        setContentType(r.headers, extracted.type);
      } else if (init.body === null) {
        body = null;
      }
      if (body !== null && body === inputBody) {
        if (isUnusable(inputBody)) throw new TypeError("Request: the input request's body has already been read");
        // The new request takes the input's body: reading it through the input is over.
        body = { bytes: inputBody.bytes, stream: inputBody.stream, used: false };
        if (inputBody.stream === null) inputBody.used = true;
        else S.readable(inputBody.stream).disturbed = true;
      }
      r.body = body;
      messages.set(this, r);
    }
    get method() { return messageOf(this, "Request", "method").method; }
    get url() { return messageOf(this, "Request", "url").url; }
    get headers() { return messageOf(this, "Request", "headers").headers; }
    get destination() { messageOf(this, "Request", "destination"); return ""; }
    get referrer() { return messageOf(this, "Request", "referrer").referrer; }
    get referrerPolicy() { return messageOf(this, "Request", "referrerPolicy").referrerPolicy; }
    get mode() { return messageOf(this, "Request", "mode").mode; }
    get credentials() { return messageOf(this, "Request", "credentials").credentials; }
    get cache() { return messageOf(this, "Request", "cache").cache; }
    get redirect() { return messageOf(this, "Request", "redirect").redirect; }
    get integrity() { return messageOf(this, "Request", "integrity").integrity; }
    get keepalive() { return messageOf(this, "Request", "keepalive").keepalive; }
    get isReloadNavigation() { messageOf(this, "Request", "isReloadNavigation"); return false; }
    get isHistoryNavigation() { messageOf(this, "Request", "isHistoryNavigation"); return false; }
    get signal() { return messageOf(this, "Request", "signal").signal; }
    get duplex() { return messageOf(this, "Request", "duplex").duplex; }
    clone() {
      const r = messageOf(this, "Request", "clone");
      if (isUnusable(r.body)) throw new TypeError("Request.clone: the body has already been read");
      const copy = Object.create(Request.prototype);
      messages.set(copy, {
        ...r, headers: newHeaders(headerLists.get(r.headers).list.map((e) => [...e])),
        signal: followingSignal(r.signal), body: cloneBody(r.body),
      });
      return copy;
    }
  }
  mixBody(Request);

  // Response.
  const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
  const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
  const newResponse = (fields) => {
    const response = Object.create(Response.prototype);
    messages.set(response, {
      kind: "Response", type: "default", url: "", redirected: false, status: 200, statusText: "",
      headers: newHeaders(), body: null, ...fields,
    });
    return response;
  };
  const initializeResponse = (r, init, extracted) => {
    if (init === null || init === undefined) init = {};
    else if (typeof init !== "object" && typeof init !== "function") throw new TypeError("Response: init must be an object");
    const status = init.status === undefined ? 200 : Math.trunc(Number(init.status)) & 0xffff;
    if (status < 200 || status > 599) throw new RangeError(`Response: status ${init.status} is not in the range 200 to 599`);
    const statusText = init.statusText === undefined ? "" : String(init.statusText);
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText)) throw new TypeError(`Response: '${statusText}' is not a valid status text`);
    r.status = status;
    r.statusText = statusText;
    if (init.headers !== undefined) fill(headerLists.get(r.headers), init.headers, "Response");
    if (extracted !== null) {
      if (NULL_BODY_STATUSES.includes(status)) throw new TypeError(`Response: a response with status ${status} cannot have a body`);
      r.body = extracted.body;
      setContentType(r.headers, extracted.type);
    }
  };

  class Response {
    constructor(body = null, init = {}) {
      const r = { kind: "Response", type: "default", url: "", redirected: false, status: 200, statusText: "", headers: newHeaders(), body: null };
      initializeResponse(r, init, body === null || body === undefined ? null : extractBody(body, "Response"));
      messages.set(this, r);
    }
    static error() {
      return newResponse({ type: "error", status: 0, headers: newHeaders([], true) });
    }
    static redirect(url, status = 302) {
      const parsed = parseUrl(url, "Response.redirect").href;
      status = Number(status);
      if (!REDIRECT_STATUSES.includes(status)) throw new RangeError(`Response.redirect: ${status} is not a redirect status`);
      return newResponse({ status, headers: newHeaders([["location", parsed]], true) });
    }
    static json(data, init = {}) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError("Response.json: the data cannot be serialized to JSON");
      const r = { kind: "Response", type: "default", url: "", redirected: false, status: 200, statusText: "", headers: newHeaders(), body: null };
      initializeResponse(r, init, { body: { bytes: internal.utf8Encode(text), stream: null, used: false }, type: "application/json" });
      const response = Object.create(Response.prototype);
      messages.set(response, r);
      return response;
    }
    get type() { return messageOf(this, "Response", "type").type; }
    get url() { return messageOf(this, "Response", "url").url; }
    get redirected() { return messageOf(this, "Response", "redirected").redirected; }
    get status() { return messageOf(this, "Response", "status").status; }
    get ok() {
      const status = messageOf(this, "Response", "ok").status;
      return status >= 200 && status <= 299;
    }
    get statusText() { return messageOf(this, "Response", "statusText").statusText; }
    get headers() { return messageOf(this, "Response", "headers").headers; }
    clone() {
      const r = messageOf(this, "Response", "clone");
      if (isUnusable(r.body)) throw new TypeError("Response.clone: the body has already been read");
      const { immutable, list } = headerLists.get(r.headers);
      return newResponse({ ...r, headers: newHeaders(list.map((e) => [...e]), immutable), body: cloneBody(r.body) });
    }
  }
  mixBody(Response);

  function fetch(input, init = undefined) {
    void input;
    void init;
    return Promise.reject(new TypeError(NO_NETWORK));
  }

  for (const [Class, name] of [[Headers, "Headers"], [Request, "Request"], [Response, "Response"]]) {
    internal.tag(Class, name);
    internal.define(name, Class);
  }
  internal.define("fetch", fetch);
})
