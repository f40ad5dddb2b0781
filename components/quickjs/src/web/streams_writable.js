// WritableStream with its writer and controller, and TransformStream (the WHATWG Streams
// Standard, its abstract operations kept by name), on the records and helpers streams.js shares
// in `internal.streams`; their operations are added to it for streams_pipe.js.
(function (native, internal) {
  "use strict";

  const S = internal.streams;
  const { slots, slot, wrap, noop, handled, deferred, resolvedWith, rejectedWith, promiseCall, methodOf } = S;
  const CLOSE = Symbol("close sentinel");

  // WritableStream's records: stream {state, storedError, writer, controller, writeRequests,
  // inFlightWriteRequest, closeRequest, inFlightCloseRequest, pendingAbortRequest,
  // backpressure}; writer {stream, ready, closed} (deferreds); controller {stream, queue, ...}.
  const newWritable = () => ({
    kind: "WritableStream", state: "writable", storedError: undefined, writer: null, controller: null,
    writeRequests: [], inFlightWriteRequest: null, closeRequest: null, inFlightCloseRequest: null,
    pendingAbortRequest: null, backpressure: false,
  });
  const settled = (how, value) => {
    const d = deferred();
    d[how](value);
    if (how === "reject") handled(d.promise);
    return d;
  };
  const closeQueuedOrInFlight = (stream) => stream.closeRequest !== null || stream.inFlightCloseRequest !== null;
  const hasOperationMarkedInFlight = (stream) => stream.inFlightWriteRequest !== null || stream.inFlightCloseRequest !== null;

  const writableStreamAbort = (stream, reason) => {
    if (stream.state === "closed" || stream.state === "errored") return resolvedWith(undefined);
    stream.controller.abortController.abort(reason);
    const state = stream.state;
    if (state === "closed" || state === "errored") return resolvedWith(undefined);
    if (stream.pendingAbortRequest !== null) return stream.pendingAbortRequest.promise.promise;
    const wasAlreadyErroring = state === "erroring";
    if (wasAlreadyErroring) reason = undefined;
    const promise = deferred();
    stream.pendingAbortRequest = { promise, reason, wasAlreadyErroring };
    if (!wasAlreadyErroring) startErroring(stream, reason);
    return promise.promise;
  };
  const writableStreamClose = (stream) => {
    const state = stream.state;
    if (state === "closed" || state === "errored") {
      return rejectedWith(new TypeError("The stream is closed or errored and cannot be closed"));
    }
    const promise = deferred();
    stream.closeRequest = promise;
    if (stream.writer !== null && stream.backpressure && state === "writable") stream.writer.ready.resolve(undefined);
    S.enqueueValueWithSize(stream.controller, CLOSE, 0);
    advanceQueueIfNeeded(stream.controller);
    return promise.promise;
  };
  const dealWithRejection = (stream, error) => {
    if (stream.state === "writable") startErroring(stream, error);
    else finishErroring(stream);
  };
  const startErroring = (stream, reason) => {
    stream.state = "erroring";
    stream.storedError = reason;
    if (stream.writer !== null) writerEnsureReadyPromiseRejected(stream.writer, reason);
    if (!hasOperationMarkedInFlight(stream) && stream.controller.started) finishErroring(stream);
  };
  const finishErroring = (stream) => {
    stream.state = "errored";
    S.resetQueue(stream.controller);
    const error = stream.storedError;
    for (const request of stream.writeRequests) request.reject(error);
    stream.writeRequests = [];
    const abort = stream.pendingAbortRequest;
    if (abort === null) {
      rejectCloseAndClosedPromiseIfNeeded(stream);
      return;
    }
    stream.pendingAbortRequest = null;
    if (abort.wasAlreadyErroring) {
      abort.promise.reject(error);
      rejectCloseAndClosedPromiseIfNeeded(stream);
      return;
    }
    const controller = stream.controller;
    const result = controller.abortAlgorithm(abort.reason);
    clearWritableAlgorithms(controller);
    result.then(() => {
      abort.promise.resolve(undefined);
      rejectCloseAndClosedPromiseIfNeeded(stream);
    }, (reason) => {
      abort.promise.reject(reason);
      rejectCloseAndClosedPromiseIfNeeded(stream);
    });
  };
  const finishInFlightWrite = (stream) => {
    stream.inFlightWriteRequest.resolve(undefined);
    stream.inFlightWriteRequest = null;
  };
  const finishInFlightWriteWithError = (stream, error) => {
    stream.inFlightWriteRequest.reject(error);
    stream.inFlightWriteRequest = null;
    dealWithRejection(stream, error);
  };
  const finishInFlightClose = (stream) => {
    stream.inFlightCloseRequest.resolve(undefined);
    stream.inFlightCloseRequest = null;
    if (stream.state === "erroring") {
      stream.storedError = undefined;
      if (stream.pendingAbortRequest !== null) {
        stream.pendingAbortRequest.promise.resolve(undefined);
        stream.pendingAbortRequest = null;
      }
    }
    stream.state = "closed";
    if (stream.writer !== null) stream.writer.closed.resolve(undefined);
  };
  const finishInFlightCloseWithError = (stream, error) => {
    stream.inFlightCloseRequest.reject(error);
    stream.inFlightCloseRequest = null;
    if (stream.pendingAbortRequest !== null) {
      stream.pendingAbortRequest.promise.reject(error);
      stream.pendingAbortRequest = null;
    }
    dealWithRejection(stream, error);
  };
  const rejectCloseAndClosedPromiseIfNeeded = (stream) => {
    if (stream.closeRequest !== null) {
      stream.closeRequest.reject(stream.storedError);
      stream.closeRequest = null;
    }
    if (stream.writer !== null) {
      stream.writer.closed.reject(stream.storedError);
      handled(stream.writer.closed.promise);
    }
  };
  const updateBackpressure = (stream, backpressure) => {
    const writer = stream.writer;
    if (writer !== null && backpressure !== stream.backpressure) {
      if (backpressure) writer.ready = tracked(deferred());
      else writer.ready.resolve(undefined);
    }
    stream.backpressure = backpressure;
  };

  // Writers.
  const writerEnsureReadyPromiseRejected = (writer, error) => {
    if (writer.ready.settled) writer.ready = deferred();
    writer.ready.reject(error);
    writer.ready.settled = true;
    handled(writer.ready.promise);
  };
  const writerEnsureClosedPromiseRejected = (writer, error) => {
    if (writer.closed.settled) writer.closed = deferred();
    writer.closed.reject(error);
    writer.closed.settled = true;
    handled(writer.closed.promise);
  };
  /** A deferred that remembers it was settled (the writer replaces settled ones). */
  const tracked = (d) => {
    const { resolve, reject } = d;
    d.resolve = (v) => { d.settled = true; resolve(v); };
    d.reject = (e) => { d.settled = true; reject(e); };
    return d;
  };
  const newWriter = (stream) => {
    if (stream.writer !== null) throw new TypeError("The stream is locked to a writer");
    const writer = { kind: "WritableStreamDefaultWriter", stream, ready: null, closed: null };
    stream.writer = writer;
    const state = stream.state;
    const d = (how, value) => tracked(how === undefined ? deferred() : settled(how, value));
    if (state === "writable") {
      writer.ready = !closeQueuedOrInFlight(stream) && stream.backpressure ? d() : d("resolve");
      writer.closed = d();
    } else if (state === "erroring") {
      writer.ready = d("reject", stream.storedError);
      writer.closed = d();
    } else if (state === "closed") {
      writer.ready = d("resolve");
      writer.closed = d("resolve");
    } else {
      writer.ready = d("reject", stream.storedError);
      writer.closed = d("reject", stream.storedError);
    }
    return writer;
  };
  const acquireWriter = (stream) => {
    const writer = newWriter(stream);
    wrap(WritableStreamDefaultWriter, writer);
    return writer;
  };
  const writerDesiredSize = (writer) => {
    const state = writer.stream.state;
    if (state === "errored" || state === "erroring") return null;
    if (state === "closed") return 0;
    const controller = writer.stream.controller;
    return controller.highWaterMark - controller.queueTotalSize;
  };
  const writerRelease = (writer) => {
    const released = new TypeError("The writer's lock was released");
    writerEnsureReadyPromiseRejected(writer, released);
    writerEnsureClosedPromiseRejected(writer, released);
    writer.stream.writer = null;
    writer.stream = null;
  };
  const writerWrite = (writer, chunk) => {
    const stream = writer.stream;
    const controller = stream.controller;
    let size = 1;
    try {
      size = controller.sizeAlgorithm(chunk);
    } catch (error) {
      errorIfNeeded(controller, error);
    }
    const state = stream.state;
    if (state === "errored") return rejectedWith(stream.storedError);
    if (closeQueuedOrInFlight(stream) || state === "closed") {
      return rejectedWith(new TypeError("The stream is closing or closed and cannot be written to"));
    }
    if (state === "erroring") return rejectedWith(stream.storedError);
    const promise = deferred();
    stream.writeRequests.push(promise);
    try {
      S.enqueueValueWithSize(controller, chunk, size);
    } catch (error) {
      errorIfNeeded(controller, error);
      return promise.promise;
    }
    if (!closeQueuedOrInFlight(stream) && stream.state === "writable") updateBackpressure(stream, getBackpressure(controller));
    advanceQueueIfNeeded(controller);
    return promise.promise;
  };
  const writerCloseWithErrorPropagation = (writer) => {
    const stream = writer.stream;
    if (closeQueuedOrInFlight(stream) || stream.state === "closed") return resolvedWith(undefined);
    if (stream.state === "errored") return rejectedWith(stream.storedError);
    return writableStreamClose(stream);
  };

  // The controller.
  const clearWritableAlgorithms = (controller) => {
    controller.writeAlgorithm = undefined;
    controller.closeAlgorithm = undefined;
    controller.abortAlgorithm = undefined;
    controller.sizeAlgorithm = undefined;
  };
  const getBackpressure = (controller) => controller.highWaterMark - controller.queueTotalSize <= 0;
  const errorIfNeeded = (controller, error) => {
    if (controller.stream.state === "writable") writableControllerError(controller, error);
  };
  const writableControllerError = (controller, error) => {
    clearWritableAlgorithms(controller);
    startErroring(controller.stream, error);
  };
  const advanceQueueIfNeeded = (controller) => {
    const stream = controller.stream;
    if (!controller.started || stream.inFlightWriteRequest !== null) return;
    if (stream.state === "closed" || stream.state === "errored") return;
    if (stream.state === "erroring") {
      finishErroring(stream);
      return;
    }
    if (controller.queue.length === 0) return;
    const value = controller.queue[0].value;
    if (value === CLOSE) {
      stream.inFlightCloseRequest = stream.closeRequest;
      stream.closeRequest = null;
      S.dequeueValue(controller);
      const result = controller.closeAlgorithm();
      clearWritableAlgorithms(controller);
      result.then(() => finishInFlightClose(stream), (error) => finishInFlightCloseWithError(stream, error));
    } else {
      stream.inFlightWriteRequest = stream.writeRequests.shift();
      controller.writeAlgorithm(value).then(() => {
        finishInFlightWrite(stream);
        S.dequeueValue(controller);
        if (!closeQueuedOrInFlight(stream) && stream.state === "writable") updateBackpressure(stream, getBackpressure(controller));
        advanceQueueIfNeeded(controller);
      }, (error) => {
        if (stream.state === "writable") clearWritableAlgorithms(controller);
        finishInFlightWriteWithError(stream, error);
      });
    }
  };
  const setUpWritableController = (stream, start, write, close, abort, highWaterMark, sizeAlgorithm) => {
    const controller = {
      kind: "WritableStreamDefaultController", stream, queue: [], queueTotalSize: 0, started: false,
      abortController: new AbortController(), highWaterMark, sizeAlgorithm,
      writeAlgorithm: write, closeAlgorithm: close, abortAlgorithm: abort,
    };
    stream.controller = controller;
    wrap(WritableStreamDefaultController, controller);
    updateBackpressure(stream, getBackpressure(controller));
    const started = start(controller.wrapper);
    resolvedWith(started).then(() => {
      controller.started = true;
      advanceQueueIfNeeded(controller);
    }, (error) => {
      controller.started = true;
      dealWithRejection(stream, error);
    });
  };
  const createWritable = (start, write, close, abort, highWaterMark = 1, sizeAlgorithm = () => 1) => {
    const stream = newWritable();
    wrap(WritableStream, stream);
    setUpWritableController(stream, start, write, close, abort, highWaterMark, sizeAlgorithm);
    return stream;
  };

  class WritableStream {
    constructor(underlyingSink = undefined, strategy = {}) {
      const sink = underlyingSink === undefined ? null : underlyingSink;
      if (sink !== null && typeof sink !== "object" && typeof sink !== "function") {
        throw new TypeError("WritableStream: the underlying sink must be an object");
      }
      if (sink?.type !== undefined) throw new RangeError("WritableStream: 'type' must be undefined");
      const start = methodOf(sink, "start", "WritableStream");
      const write = methodOf(sink, "write", "WritableStream");
      const close = methodOf(sink, "close", "WritableStream");
      const abort = methodOf(sink, "abort", "WritableStream");
      const highWaterMark = S.extractHighWaterMark(strategy, 1);
      const sizeAlgorithm = S.extractSizeAlgorithm(strategy);
      const stream = newWritable();
      slots.set(this, stream);
      stream.wrapper = this;
      setUpWritableController(stream, (c) => start?.call(sink, c), (chunk) => promiseCall(write, sink, chunk, stream.controller.wrapper),
        () => promiseCall(close, sink), (reason) => promiseCall(abort, sink, reason), highWaterMark, sizeAlgorithm);
    }
    get locked() { return slot(this, "WritableStream", "locked").writer !== null; }
    abort(reason) {
      const stream = slots.get(this);
      if (stream?.kind !== "WritableStream") return rejectedWith(new TypeError("abort: 'this' is not a WritableStream"));
      if (stream.writer !== null) return rejectedWith(new TypeError("abort: the stream is locked to a writer"));
      return writableStreamAbort(stream, reason);
    }
    close() {
      const stream = slots.get(this);
      if (stream?.kind !== "WritableStream") return rejectedWith(new TypeError("close: 'this' is not a WritableStream"));
      if (stream.writer !== null) return rejectedWith(new TypeError("close: the stream is locked to a writer"));
      if (closeQueuedOrInFlight(stream)) return rejectedWith(new TypeError("close: the stream is already closing"));
      return writableStreamClose(stream);
    }
    getWriter() { return acquireWriter(slot(this, "WritableStream", "getWriter")).wrapper; }
  }

  const writerOf = (object, what) => {
    const writer = slots.get(object);
    if (writer?.kind !== "WritableStreamDefaultWriter") throw new TypeError(`${what}: 'this' is not a WritableStreamDefaultWriter`);
    return writer;
  };
  const attached = (object, what) => {
    const writer = writerOf(object, what);
    if (writer.stream === null) throw new TypeError(`${what}: the writer has been released`);
    return writer;
  };
  const asPromise = (f) => {
    try {
      return f();
    } catch (error) {
      return rejectedWith(error);
    }
  };

  class WritableStreamDefaultWriter {
    constructor(stream) {
      const writer = newWriter(slot(stream, "WritableStream", "WritableStreamDefaultWriter"));
      slots.set(this, writer);
      writer.wrapper = this;
    }
    get closed() { return writerOf(this, "closed").closed.promise; }
    get ready() { return writerOf(this, "ready").ready.promise; }
    get desiredSize() { return writerDesiredSize(attached(this, "desiredSize")); }
    abort(reason) { return asPromise(() => writableStreamAbort(attached(this, "abort").stream, reason)); }
    close() {
      return asPromise(() => {
        const stream = attached(this, "close").stream;
        if (closeQueuedOrInFlight(stream)) throw new TypeError("close: the stream is already closing");
        return writableStreamClose(stream);
      });
    }
    releaseLock() {
      const writer = writerOf(this, "releaseLock");
      if (writer.stream !== null) writerRelease(writer);
    }
    write(chunk) { return asPromise(() => writerWrite(attached(this, "write"), chunk)); }
  }

  class WritableStreamDefaultController {
    constructor() { throw new TypeError("Illegal constructor"); }
    get signal() { return slot(this, "WritableStreamDefaultController", "signal").abortController.signal; }
    error(error) {
      const controller = slot(this, "WritableStreamDefaultController", "error");
      if (controller.stream.state === "writable") writableControllerError(controller, error);
    }
  }

  // TransformStream: stream {readable, writable, backpressure, backpressureChange, controller}.
  const setTransformBackpressure = (stream, backpressure) => {
    stream.backpressureChange?.resolve(undefined);
    stream.backpressureChange = deferred();
    stream.backpressure = backpressure;
  };
  const transformStreamError = (stream, error) => {
    S.controllerError(stream.readable.controller, error);
    errorWritableAndUnblockWrite(stream, error);
  };
  const errorWritableAndUnblockWrite = (stream, error) => {
    clearTransformAlgorithms(stream.controller);
    errorIfNeeded(stream.writable.controller, error);
    if (stream.backpressure) setTransformBackpressure(stream, false);
  };
  const clearTransformAlgorithms = (controller) => {
    controller.transformAlgorithm = undefined;
    controller.flushAlgorithm = undefined;
    controller.cancelAlgorithm = undefined;
  };
  const transformEnqueue = (controller, chunk) => {
    const stream = controller.stream;
    const readable = stream.readable.controller;
    if (!S.canCloseOrEnqueue(readable)) throw new TypeError("enqueue: the readable side is not in a state that permits enqueue");
    try {
      S.controllerEnqueue(readable, chunk);
    } catch (error) {
      errorWritableAndUnblockWrite(stream, error);
      throw stream.readable.storedError;
    }
    if (!S.shouldCallPull(readable) && !stream.backpressure) setTransformBackpressure(stream, true);
  };
  const performTransform = (controller, chunk) =>
    controller.transformAlgorithm(chunk).then(undefined, (error) => {
      transformStreamError(controller.stream, error);
      throw error;
    });
  /** Settles a transform's finish promise from `promise`, checking `other` side for errors. */
  const finishWith = (stream, promise, onFulfilled) => {
    stream.finish = deferred();
    promise.then(() => {
      const failed = onFulfilled();
      if (failed === undefined) stream.finish.resolve(undefined);
      else stream.finish.reject(failed.error);
    }, (error) => {
      S.controllerError(stream.readable.controller, error);
      errorIfNeeded(stream.writable.controller, error);
      if (stream.backpressure) setTransformBackpressure(stream, false);
      stream.finish.reject(error);
    });
    return stream.finish.promise;
  };

  class TransformStream {
    constructor(transformer = undefined, writableStrategy = {}, readableStrategy = {}) {
      const t = transformer === undefined ? null : transformer;
      if (t?.readableType !== undefined) throw new RangeError("TransformStream: 'readableType' must be undefined");
      if (t?.writableType !== undefined) throw new RangeError("TransformStream: 'writableType' must be undefined");
      const start = methodOf(t, "start", "TransformStream");
      const transform = methodOf(t, "transform", "TransformStream");
      const flush = methodOf(t, "flush", "TransformStream");
      const cancel = methodOf(t, "cancel", "TransformStream");
      const readableHighWaterMark = S.extractHighWaterMark(readableStrategy, 0);
      const readableSize = S.extractSizeAlgorithm(readableStrategy);
      const writableHighWaterMark = S.extractHighWaterMark(writableStrategy, 1);
      const writableSize = S.extractSizeAlgorithm(writableStrategy);
      const startPromise = deferred();
      const stream = { kind: "TransformStream", backpressure: undefined, backpressureChange: undefined, controller: null, finish: null };
      slots.set(this, stream);
      stream.wrapper = this;
      stream.writable = createWritable(() => startPromise.promise, (chunk) => {
        if (!stream.backpressure) return performTransform(stream.controller, chunk);
        return stream.backpressureChange.promise.then(() => {
          if (stream.writable.state === "erroring") throw stream.writable.storedError;
          return performTransform(stream.controller, chunk);
        });
      }, () => {
        if (stream.finish !== null) return stream.finish.promise;
        const flushed = stream.controller.flushAlgorithm();
        clearTransformAlgorithms(stream.controller);
        return finishWith(stream, flushed, () => {
          if (stream.readable.state === "errored") return { error: stream.readable.storedError };
          S.controllerClose(stream.readable.controller);
        });
      }, (reason) => {
        if (stream.finish !== null) return stream.finish.promise;
        const canceled = stream.controller.cancelAlgorithm(reason);
        clearTransformAlgorithms(stream.controller);
        return finishWith(stream, canceled, () => {
          if (stream.readable.state === "errored") return { error: stream.readable.storedError };
          S.controllerError(stream.readable.controller, reason);
        });
      }, writableHighWaterMark, writableSize);
      stream.readable = S.createReadable(() => startPromise.promise, () => {
        setTransformBackpressure(stream, false);
        return stream.backpressureChange.promise;
      }, (reason) => {
        if (stream.finish !== null) return stream.finish.promise;
        const canceled = stream.controller.cancelAlgorithm(reason);
        clearTransformAlgorithms(stream.controller);
        return finishWith(stream, canceled, () => {
          if (stream.writable.state === "errored") return { error: stream.writable.storedError };
          errorIfNeeded(stream.writable.controller, reason);
          if (stream.backpressure) setTransformBackpressure(stream, false);
        });
      }, readableHighWaterMark, readableSize);
      setTransformBackpressure(stream, true);
      const controller = { kind: "TransformStreamDefaultController", stream };
      stream.controller = controller;
      const wrapper = wrap(TransformStreamDefaultController, controller);
      controller.transformAlgorithm = transform === undefined
        ? (chunk) => asPromise(() => (transformEnqueue(controller, chunk), resolvedWith(undefined)))
        : (chunk) => promiseCall(transform, t, chunk, wrapper);
      controller.flushAlgorithm = () => promiseCall(flush, t, wrapper);
      controller.cancelAlgorithm = (reason) => promiseCall(cancel, t, reason);
      startPromise.resolve(start === undefined ? undefined : start.call(t, wrapper));
    }
    get readable() { return slot(this, "TransformStream", "readable").readable.wrapper; }
    get writable() { return slot(this, "TransformStream", "writable").writable.wrapper; }
  }

  class TransformStreamDefaultController {
    constructor() { throw new TypeError("Illegal constructor"); }
    get desiredSize() {
      return S.desiredSize(slot(this, "TransformStreamDefaultController", "desiredSize").stream.readable.controller);
    }
    enqueue(chunk) { transformEnqueue(slot(this, "TransformStreamDefaultController", "enqueue"), chunk); }
    error(reason) { transformStreamError(slot(this, "TransformStreamDefaultController", "error").stream, reason); }
    terminate() {
      const stream = slot(this, "TransformStreamDefaultController", "terminate").stream;
      S.controllerClose(stream.readable.controller);
      errorWritableAndUnblockWrite(stream, new TypeError("The transform stream has been terminated"));
    }
  }

  for (const [Class, name] of [[WritableStream, "WritableStream"], [WritableStreamDefaultWriter, "WritableStreamDefaultWriter"],
    [WritableStreamDefaultController, "WritableStreamDefaultController"], [TransformStream, "TransformStream"],
    [TransformStreamDefaultController, "TransformStreamDefaultController"]]) {
    internal.tag(Class, name);
    internal.define(name, Class);
  }
  Object.assign(S, {
    createWritable, acquireWriter, writerWrite, writerRelease, writerCloseWithErrorPropagation, writableStreamAbort,
    closeQueuedOrInFlight, asPromise,
    /** Resolves once a TransformStream's readable side wants more (at once if it does now). */
    transformReady: (controller) => {
      const stream = slots.get(controller)?.stream;
      return stream?.backpressure ? stream.backpressureChange.promise : resolvedWith(undefined);
    },
  });
})
