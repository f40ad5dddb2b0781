// ReadableStream, its default reader and controller, and the queuing strategies (the WHATWG
// Streams Standard, its abstract operations kept by name). A stream's state is a plain record
// kept in `slots` beside its public object. `type: "bytes"` streams are default streams that
// take ArrayBufferView chunks (there is no BYOB reader). `internal.streams` shares the records'
// operations with streams_writable.js (WritableStream, TransformStream, pipeTo) and with the
// scripts that read bodies (blob.js, fetch.js).
(function (native, internal) {
  "use strict";

  const slots = new WeakMap();
  /** The record behind `object`, which must be of `kind`; else a TypeError. */
  const slot = (object, kind, what = kind) => {
    const record = slots.get(object);
    if (record === undefined || record.kind !== kind) throw new TypeError(`${what}: 'this' is not a ${kind}`);
    return record;
  };
  const wrap = (Class, record) => {
    const object = Object.create(Class.prototype);
    slots.set(object, record);
    record.wrapper = object;
    return object;
  };
  const ILLEGAL = Symbol("illegal constructor");

  // Promises, with the spec's [[PromiseIsHandled]] as a no-op rejection handler.
  const noop = () => {};
  const handled = (promise) => (promise.then(undefined, noop), promise);
  const deferred = () => {
    const d = {};
    d.promise = new Promise((resolve, reject) => { d.resolve = resolve; d.reject = reject; });
    return d;
  };
  const resolvedWith = (value) => Promise.resolve(value);
  const rejectedWith = (reason) => Promise.reject(reason);
  /** Invokes `method` of `object` (if any) as a promise: a throw becomes a rejection. */
  const promiseCall = (method, object, ...args) => {
    if (method === undefined) return resolvedWith(undefined);
    try {
      return resolvedWith(method.apply(object, args));
    } catch (error) {
      return rejectedWith(error);
    }
  };
  const methodOf = (dict, name, what) => {
    const method = dict?.[name];
    if (method === undefined || method === null) return undefined;
    if (typeof method !== "function") throw new TypeError(`${what}: '${name}' must be a function`);
    return method;
  };

  // Queue-with-sizes.
  const enqueueValueWithSize = (container, value, size) => {
    size = Number(size);
    if (!Number.isFinite(size) || size < 0) throw new RangeError("A chunk's size must be a finite, non-negative number");
    container.queue.push({ value, size });
    container.queueTotalSize += size;
  };
  const dequeueValue = (container) => {
    const pair = container.queue.shift();
    container.queueTotalSize = Math.max(0, container.queueTotalSize - pair.size);
    return pair.value;
  };
  const resetQueue = (container) => { container.queue = []; container.queueTotalSize = 0; };

  // Strategies.
  const extractHighWaterMark = (strategy, fallback) => {
    const hwm = strategy?.highWaterMark;
    if (hwm === undefined) return fallback;
    const number = Number(hwm);
    if (Number.isNaN(number) || number < 0) throw new RangeError("highWaterMark must be a non-negative number");
    return number;
  };
  const extractSizeAlgorithm = (strategy) => {
    const size = strategy?.size;
    if (size === undefined) return () => 1;
    if (typeof size !== "function") throw new TypeError("The strategy's size must be a function");
    return (chunk) => size(chunk);
  };

  function countSize() { return 1; }
  function byteLengthSize(chunk) { return chunk?.byteLength; }
  class CountQueuingStrategy {
    #hwm;
    constructor(init) {
      if (init === null || typeof init !== "object" || init.highWaterMark === undefined) {
        throw new TypeError("CountQueuingStrategy: init.highWaterMark is required");
      }
      this.#hwm = Number(init.highWaterMark);
    }
    get highWaterMark() { return this.#hwm; }
    get size() { return countSize; }
  }
  class ByteLengthQueuingStrategy {
    #hwm;
    constructor(init) {
      if (init === null || typeof init !== "object" || init.highWaterMark === undefined) {
        throw new TypeError("ByteLengthQueuingStrategy: init.highWaterMark is required");
      }
      this.#hwm = Number(init.highWaterMark);
    }
    get highWaterMark() { return this.#hwm; }
    get size() { return byteLengthSize; }
  }

  // ReadableStream's abstract operations, on records: stream {state, reader, storedError,
  // disturbed, controller}, controller {stream, queue, ...algorithms}, reader {stream, closed,
  // readRequests}. A read request is {chunk(value), close(), error(e)}.
  const newStream = () => ({ kind: "ReadableStream", state: "readable", reader: null, storedError: undefined, disturbed: false, controller: null });
  const isLocked = (stream) => stream.reader !== null;

  const readableStreamClose = (stream) => {
    stream.state = "closed";
    const reader = stream.reader;
    if (reader === null) return;
    reader.closed.resolve(undefined);
    const requests = reader.readRequests;
    reader.readRequests = [];
    for (const request of requests) request.close();
  };
  const readableStreamError = (stream, error) => {
    stream.state = "errored";
    stream.storedError = error;
    const reader = stream.reader;
    if (reader === null) return;
    reader.closed.reject(error);
    handled(reader.closed.promise);
    const requests = reader.readRequests;
    reader.readRequests = [];
    for (const request of requests) request.error(error);
  };
  const readableStreamCancel = (stream, reason) => {
    stream.disturbed = true;
    if (stream.state === "closed") return resolvedWith(undefined);
    if (stream.state === "errored") return rejectedWith(stream.storedError);
    readableStreamClose(stream);
    const controller = stream.controller;
    resetQueue(controller);
    const result = controller.cancelAlgorithm(reason);
    clearAlgorithms(controller);
    return result.then(() => undefined);
  };

  const clearAlgorithms = (controller) => {
    controller.pullAlgorithm = undefined;
    controller.cancelAlgorithm = undefined;
    controller.sizeAlgorithm = undefined;
  };
  const canCloseOrEnqueue = (controller) => !controller.closeRequested && controller.stream.state === "readable";
  const desiredSize = (controller) => {
    const state = controller.stream.state;
    if (state === "errored") return null;
    if (state === "closed") return 0;
    return controller.highWaterMark - controller.queueTotalSize;
  };
  const shouldCallPull = (controller) => {
    if (!canCloseOrEnqueue(controller) || !controller.started) return false;
    const stream = controller.stream;
    if (isLocked(stream) && stream.reader.readRequests.length > 0) return true;
    return desiredSize(controller) > 0;
  };
  const callPullIfNeeded = (controller) => {
    if (!shouldCallPull(controller)) return;
    if (controller.pulling) {
      controller.pullAgain = true;
      return;
    }
    controller.pulling = true;
    controller.pullAlgorithm().then(() => {
      controller.pulling = false;
      if (controller.pullAgain) {
        controller.pullAgain = false;
        callPullIfNeeded(controller);
      }
    }, (error) => controllerError(controller, error));
  };
  const controllerClose = (controller) => {
    if (!canCloseOrEnqueue(controller)) return;
    controller.closeRequested = true;
    if (controller.queue.length === 0) {
      clearAlgorithms(controller);
      readableStreamClose(controller.stream);
    }
  };
  const controllerEnqueue = (controller, chunk) => {
    if (!canCloseOrEnqueue(controller)) return;
    const stream = controller.stream;
    if (isLocked(stream) && stream.reader.readRequests.length > 0) {
      stream.reader.readRequests.shift().chunk(chunk);
    } else {
      try {
        enqueueValueWithSize(controller, chunk, controller.sizeAlgorithm(chunk));
      } catch (error) {
        controllerError(controller, error);
        throw error;
      }
    }
    callPullIfNeeded(controller);
  };
  const controllerError = (controller, error) => {
    if (controller.stream.state !== "readable") return;
    resetQueue(controller);
    clearAlgorithms(controller);
    readableStreamError(controller.stream, error);
  };
  /** A read request on a controller (its [[PullSteps]]). */
  const pullSteps = (controller, request) => {
    const stream = controller.stream;
    if (controller.queue.length > 0) {
      const chunk = dequeueValue(controller);
      if (controller.closeRequested && controller.queue.length === 0) {
        clearAlgorithms(controller);
        readableStreamClose(stream);
      } else {
        callPullIfNeeded(controller);
      }
      request.chunk(chunk);
    } else {
      stream.reader.readRequests.push(request);
      callPullIfNeeded(controller);
    }
  };

  const setUpController = (stream, start, pull, cancel, highWaterMark, sizeAlgorithm, bytes = false) => {
    const controller = {
      kind: "ReadableStreamDefaultController", stream, queue: [], queueTotalSize: 0, started: false,
      closeRequested: false, pullAgain: false, pulling: false, highWaterMark, sizeAlgorithm,
      pullAlgorithm: pull, cancelAlgorithm: cancel, bytes,
    };
    stream.controller = controller;
    wrap(ReadableStreamDefaultController, controller);
    const started = start(controller.wrapper);
    resolvedWith(started).then(() => {
      controller.started = true;
      callPullIfNeeded(controller);
    }, (error) => controllerError(controller, error));
    return controller;
  };
  /** A stream driven by functions of its controller record (CreateReadableStream). */
  const createReadable = (start, pull, cancel, highWaterMark = 1, sizeAlgorithm = () => 1) => {
    const stream = newStream();
    wrap(ReadableStream, stream);
    setUpController(stream, (c) => start(slots.get(c)), () => pull(stream.controller), cancel, highWaterMark, sizeAlgorithm);
    return stream;
  };

  // Readers.
  const setUpReader = (reader, stream) => {
    if (isLocked(stream)) throw new TypeError("The stream is locked to a reader");
    reader.stream = stream;
    stream.reader = reader;
    reader.closed = deferred();
    if (stream.state === "closed") reader.closed.resolve(undefined);
    else if (stream.state === "errored") {
      reader.closed.reject(stream.storedError);
      handled(reader.closed.promise);
    }
  };
  const newReader = (stream) => {
    const reader = { kind: "ReadableStreamDefaultReader", stream: null, closed: null, readRequests: [] };
    setUpReader(reader, stream);
    return reader;
  };
  const acquireReader = (stream) => {
    const reader = newReader(stream);
    wrap(ReadableStreamDefaultReader, reader);
    return reader;
  };
  const readerRead = (reader, request) => {
    const stream = reader.stream;
    stream.disturbed = true;
    if (stream.state === "closed") request.close();
    else if (stream.state === "errored") request.error(stream.storedError);
    else pullSteps(stream.controller, request);
  };
  /** reader.read() as a promise of {value, done}. */
  const readChunk = (reader) => new Promise((resolve, reject) => readerRead(reader, {
    chunk: (value) => resolve({ value, done: false }),
    close: () => resolve({ value: undefined, done: true }),
    error: reject,
  }));
  const readerRelease = (reader) => {
    const stream = reader.stream;
    const released = new TypeError("The reader's lock was released");
    if (stream.state === "readable") reader.closed.reject(released);
    else {
      reader.closed = deferred();
      reader.closed.reject(released);
    }
    handled(reader.closed.promise);
    stream.reader = null;
    reader.stream = null;
    const requests = reader.readRequests;
    reader.readRequests = [];
    for (const request of requests) request.error(released);
  };

  class ReadableStreamDefaultReader {
    constructor(stream) {
      const record = slot(stream, "ReadableStream", "ReadableStreamDefaultReader");
      const reader = newReader(record);
      slots.set(this, reader);
      reader.wrapper = this;
    }
    get closed() { return slot(this, "ReadableStreamDefaultReader", "closed").closed.promise; }
    read() {
      let reader;
      try {
        reader = slot(this, "ReadableStreamDefaultReader", "read");
      } catch (error) {
        return rejectedWith(error);
      }
      if (reader.stream === null) return rejectedWith(new TypeError("read: the reader has been released"));
      return readChunk(reader);
    }
    releaseLock() {
      const reader = slot(this, "ReadableStreamDefaultReader", "releaseLock");
      if (reader.stream !== null) readerRelease(reader);
    }
    cancel(reason) {
      const reader = slots.get(this);
      if (reader?.kind !== "ReadableStreamDefaultReader") return rejectedWith(new TypeError("cancel: 'this' is not a reader"));
      if (reader.stream === null) return rejectedWith(new TypeError("cancel: the reader has been released"));
      return readableStreamCancel(reader.stream, reason);
    }
  }

  class ReadableStreamDefaultController {
    constructor() { throw new TypeError("Illegal constructor"); }
    get desiredSize() { return desiredSize(slot(this, "ReadableStreamDefaultController", "desiredSize")); }
    close() {
      const controller = slot(this, "ReadableStreamDefaultController", "close");
      if (!canCloseOrEnqueue(controller)) throw new TypeError("close: the stream is not in a state that permits close");
      controllerClose(controller);
    }
    enqueue(chunk) {
      const controller = slot(this, "ReadableStreamDefaultController", "enqueue");
      if (!canCloseOrEnqueue(controller)) throw new TypeError("enqueue: the stream is not in a state that permits enqueue");
      if (controller.bytes) {
        if (!ArrayBuffer.isView(chunk)) throw new TypeError("enqueue: a byte stream's chunk must be an ArrayBufferView");
        if (chunk.byteLength === 0) throw new TypeError("enqueue: a byte stream's chunk must not be empty");
        chunk = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength).slice();
      }
      controllerEnqueue(controller, chunk);
    }
    error(error) { controllerError(slot(this, "ReadableStreamDefaultController", "error"), error); }
    get byobRequest() {
      slot(this, "ReadableStreamDefaultController", "byobRequest");
      return null;
    }
  }

  // Tee (ReadableStreamDefaultTee: both branches get the same chunk objects).
  const tee = (stream) => {
    const reader = acquireReader(stream);
    let reading = false, readAgain = false, canceled1 = false, canceled2 = false, reason1, reason2;
    let branch1, branch2;
    const cancelPromise = deferred();
    const pull = () => {
      if (reading) {
        readAgain = true;
        return resolvedWith(undefined);
      }
      reading = true;
      readerRead(reader, {
        chunk: (chunk) => queueMicrotask(() => {
          readAgain = false;
          if (!canceled1) controllerEnqueue(branch1.controller, chunk);
          if (!canceled2) controllerEnqueue(branch2.controller, chunk);
          reading = false;
          if (readAgain) pull();
        }),
        close: () => {
          reading = false;
          if (!canceled1) controllerClose(branch1.controller);
          if (!canceled2) controllerClose(branch2.controller);
          if (!canceled1 || !canceled2) cancelPromise.resolve(undefined);
        },
        error: () => { reading = false; },
      });
      return resolvedWith(undefined);
    };
    const cancelBoth = () => cancelPromise.resolve(readableStreamCancel(stream, [reason1, reason2]));
    const cancel1 = (reason) => {
      canceled1 = true;
      reason1 = reason;
      if (canceled2) cancelBoth();
      return cancelPromise.promise;
    };
    const cancel2 = (reason) => {
      canceled2 = true;
      reason2 = reason;
      if (canceled1) cancelBoth();
      return cancelPromise.promise;
    };
    branch1 = createReadable(noop, pull, cancel1);
    branch2 = createReadable(noop, pull, cancel2);
    reader.closed.promise.then(undefined, (error) => {
      controllerError(branch1.controller, error);
      controllerError(branch2.controller, error);
      if (!canceled1 || !canceled2) cancelPromise.resolve(undefined);
    });
    return [branch1, branch2];
  };

  // Async iteration (ReadableStreamAsyncIteratorPrototype).
  const AsyncIteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype);
  const ReadableStreamAsyncIteratorPrototype = Object.create(AsyncIteratorPrototype, {
    next: { value: function next() { return iterators.get(this).next(); }, writable: true, configurable: true },
    return: { value: function (value) { return iterators.get(this).return(value); }, writable: true, configurable: true },
  });
  Object.defineProperty(ReadableStreamAsyncIteratorPrototype, Symbol.toStringTag, { value: "ReadableStream AsyncIterator", configurable: true });
  const iterators = new WeakMap();
  const iterate = (stream, preventCancel) => {
    const reader = acquireReader(stream);
    let ongoing = null, finished = false;
    const chain = (step) => (ongoing = ongoing === null ? step() : ongoing.then(step, step));
    const nextStep = () => {
      if (finished) return resolvedWith({ value: undefined, done: true });
      return new Promise((resolve, reject) => readerRead(reader, {
        chunk: (value) => resolve({ value, done: false }),
        close: () => { finished = true; readerRelease(reader); resolve({ value: undefined, done: true }); },
        error: (error) => { finished = true; readerRelease(reader); reject(error); },
      }));
    };
    const returnStep = (value) => {
      if (finished) return resolvedWith({ value, done: true });
      finished = true;
      if (!preventCancel) {
        const result = readableStreamCancel(reader.stream, value);
        readerRelease(reader);
        return result.then(() => ({ value, done: true }));
      }
      readerRelease(reader);
      return resolvedWith({ value, done: true });
    };
    const iterator = Object.create(ReadableStreamAsyncIteratorPrototype);
    iterators.set(iterator, { next: () => chain(nextStep), return: (value) => chain(() => returnStep(value)) });
    return iterator;
  };

  // ReadableStream.from: an async iterable, or a sync iterable whose values may be promises.
  const iteratorOf = (input) => {
    const asyncMethod = input?.[Symbol.asyncIterator];
    if (asyncMethod !== undefined && asyncMethod !== null) {
      const iterator = asyncMethod.call(input);
      if (iterator === null || typeof iterator !== "object") throw new TypeError("from: the async iterator is not an object");
      return { next: () => iterator.next(), return: iterator.return?.bind(iterator), has: () => typeof iterator.return === "function" };
    }
    const syncMethod = input?.[Symbol.iterator];
    if (typeof syncMethod !== "function") throw new TypeError("ReadableStream.from: the argument is not iterable");
    const iterator = syncMethod.call(input);
    return {
      next: () => {
        const result = iterator.next();
        if (result === null || typeof result !== "object") throw new TypeError("from: the iterator result is not an object");
        return resolvedWith(result.value).then((value) => ({ value, done: Boolean(result.done) }));
      },
      return: iterator.return?.bind(iterator),
    };
  };
  const from = (input) => {
    const iterator = iteratorOf(input);
    const pull = (controller) => promiseCall(iterator.next).then((result) => {
      if (result === null || typeof result !== "object") throw new TypeError("ReadableStream.from: the iterator result is not an object");
      if (result.done) controllerClose(controller);
      else controllerEnqueue(controller, result.value);
    });
    const cancel = (reason) => {
      if (typeof iterator.return !== "function") return resolvedWith(undefined);
      return promiseCall(iterator.return, undefined, reason).then((result) => {
        if (result === null || typeof result !== "object") throw new TypeError("ReadableStream.from: return() gave no object");
      });
    };
    return createReadable(noop, pull, cancel, 0).wrapper;
  };

  class ReadableStream {
    constructor(underlyingSource = undefined, strategy = {}) {
      const source = underlyingSource === undefined ? null : underlyingSource;
      if (source !== null && typeof source !== "object" && typeof source !== "function") {
        throw new TypeError("ReadableStream: the underlying source must be an object");
      }
      const stream = newStream();
      slots.set(this, stream);
      stream.wrapper = this;
      const start = methodOf(source, "start", "ReadableStream");
      const pull = methodOf(source, "pull", "ReadableStream");
      const cancel = methodOf(source, "cancel", "ReadableStream");
      const type = source?.type;
      let bytes = false;
      if (type !== undefined) {
        if (String(type) !== "bytes") throw new TypeError(`ReadableStream: '${type}' is not a valid stream type`);
        if (strategy?.size !== undefined) throw new RangeError("ReadableStream: a byte stream's strategy cannot have a size");
        bytes = true;
      }
      const highWaterMark = extractHighWaterMark(strategy, bytes ? 0 : 1);
      const sizeAlgorithm = extractSizeAlgorithm(strategy);
      setUpController(stream, (c) => start?.call(source, c), () => promiseCall(pull, source, stream.controller.wrapper),
        (reason) => promiseCall(cancel, source, reason), highWaterMark, sizeAlgorithm, bytes);
    }
    get locked() { return isLocked(slot(this, "ReadableStream", "locked")); }
    cancel(reason) {
      const stream = slots.get(this);
      if (stream?.kind !== "ReadableStream") return rejectedWith(new TypeError("cancel: 'this' is not a ReadableStream"));
      if (isLocked(stream)) return rejectedWith(new TypeError("cancel: the stream is locked to a reader"));
      return readableStreamCancel(stream, reason);
    }
    getReader(options = undefined) {
      const stream = slot(this, "ReadableStream", "getReader");
      const mode = options?.mode;
      if (mode !== undefined) {
        if (String(mode) !== "byob") throw new TypeError(`getReader: '${mode}' is not a valid reader mode`);
        throw new TypeError("getReader: BYOB readers are not supported; read with a default reader");
      }
      return acquireReader(stream).wrapper;
    }
    pipeThrough(transform, options = {}) {
      const stream = slot(this, "ReadableStream", "pipeThrough");
      const { writable, readable } = transform ?? {};
      if (slots.get(readable)?.kind !== "ReadableStream") throw new TypeError("pipeThrough: transform.readable must be a ReadableStream");
      const dest = slots.get(writable);
      if (dest?.kind !== "WritableStream") throw new TypeError("pipeThrough: transform.writable must be a WritableStream");
      if (isLocked(stream)) throw new TypeError("pipeThrough: the stream is locked");
      if (dest.writer !== null) throw new TypeError("pipeThrough: the writable stream is locked");
      const { preventClose, preventAbort, preventCancel, signal } = pipeOptions(options);
      handled(internal.streams.pipeTo(stream, dest, preventClose, preventAbort, preventCancel, signal));
      return readable;
    }
    pipeTo(destination, options = {}) {
      try {
        const stream = slot(this, "ReadableStream", "pipeTo");
        const dest = slots.get(destination);
        if (dest?.kind !== "WritableStream") throw new TypeError("pipeTo: the destination must be a WritableStream");
        const { preventClose, preventAbort, preventCancel, signal } = pipeOptions(options);
        if (isLocked(stream)) throw new TypeError("pipeTo: the stream is locked");
        if (dest.writer !== null) throw new TypeError("pipeTo: the destination is locked");
        return internal.streams.pipeTo(stream, dest, preventClose, preventAbort, preventCancel, signal);
      } catch (error) {
        return rejectedWith(error);
      }
    }
    tee() {
      return tee(slot(this, "ReadableStream", "tee")).map((branch) => branch.wrapper);
    }
    values(options = undefined) {
      return iterate(slot(this, "ReadableStream", "values"), Boolean(options?.preventCancel));
    }
    static from(asyncIterable) { return from(asyncIterable); }
  }
  Object.defineProperty(ReadableStream.prototype, Symbol.asyncIterator, {
    value: ReadableStream.prototype.values, writable: true, configurable: true,
  });

  const pipeOptions = (options) => {
    const signal = options?.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError("The pipe's signal must be an AbortSignal");
    return {
      preventClose: Boolean(options?.preventClose), preventAbort: Boolean(options?.preventAbort),
      preventCancel: Boolean(options?.preventCancel), signal,
    };
  };

  for (const [Class, name] of [[ReadableStream, "ReadableStream"], [ReadableStreamDefaultReader, "ReadableStreamDefaultReader"],
    [ReadableStreamDefaultController, "ReadableStreamDefaultController"], [CountQueuingStrategy, "CountQueuingStrategy"],
    [ByteLengthQueuingStrategy, "ByteLengthQueuingStrategy"]]) {
    internal.tag(Class, name);
    internal.define(name, Class);
  }

  internal.streams = {
    slots, slot, wrap, ILLEGAL, noop, handled, deferred, resolvedWith, rejectedWith, promiseCall, methodOf,
    enqueueValueWithSize, dequeueValue, resetQueue, extractHighWaterMark, extractSizeAlgorithm,
    createReadable, acquireReader, readerRead, readChunk, readerRelease, readableStreamCancel, isLocked,
    canCloseOrEnqueue, desiredSize, shouldCallPull, controllerClose, controllerEnqueue, controllerError,
    /** The record of a ReadableStream, or undefined. */
    readable: (object) => (slots.get(object)?.kind === "ReadableStream" ? slots.get(object) : undefined),
    /** `ReadableStream.prototype.tee` on a record, giving records. */
    tee,
    // pipeTo(source, dest, preventClose, preventAbort, preventCancel, signal), readAllBytes(stream)
    // and fromBytes(bytes): streams_pipe.js.
    pipeTo: undefined,
  };
})
