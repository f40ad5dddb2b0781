// Blob and File (the W3C File API), and FormData (the WHATWG XMLHttpRequest Standard's, without
// HTML forms) with its multipart/form-data serializer and parser, which fetch.js's bodies use.
// A blob's bytes are an immutable Uint8Array: slices share it, and readers get copies.
(function (native, internal) {
  "use strict";

  const S = internal.streams;
  const blobs = new WeakMap();
  const bytesOf = (blob) => {
    const record = blobs.get(blob);
    if (record === undefined) throw new TypeError("'this' is not a Blob");
    return record;
  };
  /** A blob's bytes (shared: the caller must not change them). */
  internal.blobBytes = (blob) => bytesOf(blob).bytes;

  // A type is kept only if it is printable ASCII, and lowercased.
  const normalizeType = (type) => {
    const text = String(type);
    return /^[\x20-\x7e]*$/.test(text) ? text.toLowerCase() : "";
  };
  const concat = (parts) => {
    let length = 0;
    for (const part of parts) length += part.byteLength;
    const out = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  };
  const processParts = (blobParts, endings) => {
    if (blobParts === undefined) return new Uint8Array(0);
    if (blobParts === null || typeof blobParts !== "object" || typeof blobParts[Symbol.iterator] !== "function") {
      throw new TypeError("Blob: blobParts must be a sequence");
    }
    const parts = [];
    for (const element of blobParts) {
      if (element instanceof ArrayBuffer || ArrayBuffer.isView(element)) parts.push(internal.copyBytes(element));
      else if (blobs.has(element)) parts.push(blobs.get(element).bytes);
      else {
        let text = String(element);
        if (endings === "native") text = text.replace(/\r\n?/g, "\n");
        parts.push(internal.utf8Encode(text));
      }
    }
    return concat(parts);
  };
  const endingsOf = (options) => {
    const endings = options?.endings === undefined ? "transparent" : String(options.endings);
    if (endings !== "transparent" && endings !== "native") throw new TypeError(`Blob: '${endings}' is not a valid endings value`);
    return endings;
  };
  // WebIDL's [Clamp] long long, for slice's positions.
  const position = (value, fallback, size) => {
    if (value === undefined) return fallback;
    let n = Number(value);
    n = Number.isNaN(n) ? 0 : Math.trunc(n);
    return n < 0 ? Math.max(size + n, 0) : Math.min(n, size);
  };

  class Blob {
    constructor(blobParts = undefined, options = undefined) {
      if (options !== undefined && options !== null && typeof options !== "object") {
        throw new TypeError("Blob: options must be an object");
      }
      const bytes = processParts(blobParts, endingsOf(options));
      blobs.set(this, { bytes, type: options?.type === undefined ? "" : normalizeType(options.type) });
    }
    get size() { return bytesOf(this).bytes.byteLength; }
    get type() { return bytesOf(this).type; }
    slice(start = undefined, end = undefined, contentType = undefined) {
      const { bytes } = bytesOf(this);
      const size = bytes.byteLength;
      const from = position(start, 0, size);
      const to = position(end, size, size);
      const blob = Object.create(Blob.prototype);
      blobs.set(blob, {
        bytes: bytes.subarray(from, Math.max(from, to)),
        type: contentType === undefined ? "" : normalizeType(contentType),
      });
      return blob;
    }
    stream() { return S.fromBytes(bytesOf(this).bytes); }
    text() {
      try {
        return Promise.resolve(internal.utf8Decode(bytesOf(this).bytes));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    arrayBuffer() {
      try {
        return Promise.resolve(bytesOf(this).bytes.slice().buffer);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    bytes() {
      try {
        return Promise.resolve(bytesOf(this).bytes.slice());
      } catch (error) {
        return Promise.reject(error);
      }
    }
  }

  const files = new WeakMap();
  const fileOf = (file) => {
    const record = files.get(file);
    if (record === undefined) throw new TypeError("'this' is not a File");
    return record;
  };
  class File extends Blob {
    constructor(fileBits, fileName, options = undefined) {
      if (arguments.length < 2) throw new TypeError(`File: 2 arguments required, but only ${arguments.length} present`);
      super(fileBits, options);
      let lastModified = Date.now();
      if (options?.lastModified !== undefined) {
        const n = Number(options.lastModified);
        lastModified = Number.isFinite(n) ? Math.trunc(n) : 0;
      }
      files.set(this, { name: String(fileName).toWellFormed(), lastModified });
    }
    get name() { return fileOf(this).name; }
    get lastModified() { return fileOf(this).lastModified; }
    get webkitRelativePath() {
      fileOf(this);
      return "";
    }
  }

  internal.tag(Blob, "Blob");
  internal.tag(File, "File");
  internal.define("Blob", Blob);
  internal.define("File", File);

  // FormData.
  const entryOf = (name, value, filename, arity) => {
    name = String(name).toWellFormed();
    if (!(value instanceof Blob)) {
      if (arity > 2) throw new TypeError("FormData: a filename is only allowed with a Blob value");
      return [name, String(value).toWellFormed()];
    }
    if (value instanceof File && filename === undefined) return [name, value];
    const fileName = filename !== undefined ? String(filename) : value instanceof File ? value.name : "blob";
    const options = { type: value.type };
    if (value instanceof File) options.lastModified = value.lastModified;
    return [name, new File([value], fileName, options)];
  };
  const forms = new WeakMap();
  const listOf = (form) => {
    const list = forms.get(form);
    if (list === undefined) throw new TypeError("'this' is not a FormData");
    return list;
  };
  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  const FormDataIteratorPrototype = Object.create(IteratorPrototype, {
    next: {
      value: function next() {
        const state = formIterators.get(this);
        if (state === undefined) throw new TypeError("next: 'this' is not a FormData iterator");
        const entry = state.list[state.index];
        if (entry === undefined) return { value: undefined, done: true };
        state.index++;
        return { value: state.kind === "keys" ? entry[0] : state.kind === "values" ? entry[1] : [entry[0], entry[1]], done: false };
      },
      writable: true, configurable: true,
    },
  });
  Object.defineProperty(FormDataIteratorPrototype, Symbol.toStringTag, { value: "FormData Iterator", configurable: true });
  const formIterators = new WeakMap();
  const formIterator = (form, kind) => {
    const iterator = Object.create(FormDataIteratorPrototype);
    formIterators.set(iterator, { list: listOf(form), index: 0, kind });
    return iterator;
  };

  class FormData {
    constructor(form = undefined, submitter = undefined) {
      if (form !== undefined) throw new TypeError("FormData: there are no HTML forms here; construct it empty");
      void submitter;
      forms.set(this, []);
    }
    append(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeError("FormData.append: 2 arguments required");
      listOf(this).push(entryOf(name, value, filename, arguments.length));
    }
    delete(name) {
      const list = listOf(this);
      name = String(name).toWellFormed();
      for (let i = list.length - 1; i >= 0; i--) if (list[i][0] === name) list.splice(i, 1);
    }
    get(name) {
      name = String(name).toWellFormed();
      return listOf(this).find((entry) => entry[0] === name)?.[1] ?? null;
    }
    getAll(name) {
      name = String(name).toWellFormed();
      return listOf(this).filter((entry) => entry[0] === name).map((entry) => entry[1]);
    }
    has(name) {
      name = String(name).toWellFormed();
      return listOf(this).some((entry) => entry[0] === name);
    }
    set(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeError("FormData.set: 2 arguments required");
      const list = listOf(this);
      const entry = entryOf(name, value, filename, arguments.length);
      const first = list.findIndex((e) => e[0] === entry[0]);
      if (first < 0) {
        list.push(entry);
        return;
      }
      list[first] = entry;
      for (let i = list.length - 1; i > first; i--) if (list[i][0] === entry[0]) list.splice(i, 1);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("FormData.forEach: the callback must be a function");
      const list = listOf(this);
      for (let i = 0; i < list.length; i++) callback.call(thisArg, list[i][1], list[i][0], this);
    }
    entries() { return formIterator(this, "entries"); }
    keys() { return formIterator(this, "keys"); }
    values() { return formIterator(this, "values"); }
  }
  Object.defineProperty(FormData.prototype, Symbol.iterator, { value: FormData.prototype.entries, writable: true, configurable: true });
  internal.tag(FormData, "FormData");
  internal.define("FormData", FormData);

  // multipart/form-data (RFC 7578, as the HTML Standard writes it).
  const escapeName = (name) => name.replace(/\n/g, "%0A").replace(/\r/g, "%0D").replace(/"/g, "%22");
  /** A FormData's multipart/form-data body: {bytes, type}. */
  internal.formDataSerialize = (form) => {
    let boundary = "----formdata-forge-";
    for (let i = 0; i < 24; i++) boundary += Math.floor(Math.random() * 10);
    const parts = [];
    for (const [name, value] of listOf(form)) {
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name.replace(/\r\n?|\n/g, "\r\n"))}"`;
      if (typeof value === "string") {
        parts.push(internal.utf8Encode(`${head}\r\n\r\n${value.replace(/\r\n?|\n/g, "\r\n")}\r\n`));
      } else {
        head += `; filename="${escapeName(value.name)}"\r\nContent-Type: ${value.type || "application/octet-stream"}\r\n\r\n`;
        parts.push(internal.utf8Encode(head), blobs.get(value).bytes, internal.utf8Encode("\r\n"));
      }
    }
    parts.push(internal.utf8Encode(`--${boundary}--\r\n`));
    return { bytes: concat(parts), type: `multipart/form-data; boundary=${boundary}` };
  };

  const latin1 = (bytes) => {
    let out = "";
    for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return out;
  };
  const parameter = (header, name) => {
    const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, "i").exec(header);
    return match === null ? undefined : match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2];
  };
  const bad = () => new TypeError("formData: the body is not valid multipart/form-data");
  /** Parses a multipart/form-data body into a FormData (TypeError if it is malformed). */
  internal.formDataParse = (bytes, contentType) => {
    const boundary = parameter(contentType, "boundary");
    if (!boundary) throw bad();
    const text = latin1(bytes);
    const form = new FormData();
    const delimiter = `--${boundary}`;
    let at = text.indexOf(delimiter);
    if (at < 0) throw bad();
    for (;;) {
      at += delimiter.length;
      if (text.startsWith("--", at)) return form;
      if (!text.startsWith("\r\n", at)) throw bad();
      const headersEnd = text.indexOf("\r\n\r\n", at);
      const next = text.indexOf(`\r\n${delimiter}`, at);
      if (headersEnd < 0 || next < 0 || headersEnd > next) throw bad();
      const headers = text.slice(at + 2, headersEnd).split("\r\n");
      const disposition = headers.find((h) => /^content-disposition:/i.test(h));
      const type = headers.find((h) => /^content-type:/i.test(h))?.replace(/^content-type:\s*/i, "") ?? "";
      const name = disposition === undefined ? undefined : parameter(disposition, "name");
      if (name === undefined) throw bad();
      const decodeText = (s) => internal.utf8Decode(Uint8Array.from(s, (c) => c.charCodeAt(0)));
      const filename = parameter(disposition, "filename");
      const body = bytes.subarray(headersEnd + 4, next);
      if (filename === undefined) form.append(decodeText(name), internal.utf8Decode(body));
      else form.append(decodeText(name), new File([body], decodeText(filename), { type: type || "text/plain" }));
      at = next + 2;
    }
  };
})
