// ReadableStream's pipeTo (ReadableStreamPipeTo of the WHATWG Streams Standard), and the byte
// helpers the scripts that read and make bodies share (blob.js, fetch.js, compression.js).
(function (native, internal) {
  "use strict";

  const S = internal.streams;
  const { noop, deferred, resolvedWith, closeQueuedOrInFlight, acquireWriter, writerWrite, writerRelease,
    writerCloseWithErrorPropagation, writableStreamAbort, asPromise, acquireReader, readChunk, readerRelease,
    readableStreamCancel, createReadable, controllerClose, controllerEnqueue } = S;

  // ReadableStreamPipeTo.
  const pipeTo = (source, dest, preventClose, preventAbort, preventCancel, signal) => {
    const reader = S.acquireReader(source);
    const writer = acquireWriter(dest);
    source.disturbed = true;
    let shuttingDown = false;
    let currentWrite = resolvedWith(undefined);
    const result = deferred();
    let abortAlgorithm;
    const finalize = (isError, error) => {
      writerRelease(writer);
      S.readerRelease(reader);
      if (signal !== undefined) signal.removeEventListener("abort", abortAlgorithm);
      if (isError) result.reject(error);
      else result.resolve(undefined);
    };
    // Waits for the writes already begun before acting, if the destination still takes them.
    const afterWrites = (then) => {
      if (dest.state === "writable" && !closeQueuedOrInFlight(dest)) currentWrite.then(then);
      else then();
    };
    const shutdownWithAction = (action, isError, error) => {
      if (shuttingDown) return;
      shuttingDown = true;
      afterWrites(() => asPromise(action).then(() => finalize(isError, error), (newError) => finalize(true, newError)));
    };
    const shutdown = (isError, error) => {
      if (shuttingDown) return;
      shuttingDown = true;
      afterWrites(() => finalize(isError, error));
    };
    if (signal !== undefined) {
      abortAlgorithm = () => {
        const error = signal.reason;
        shutdownWithAction(() => Promise.all([
          !preventAbort && dest.state === "writable" ? writableStreamAbort(dest, error) : undefined,
          !preventCancel && source.state === "readable" ? S.readableStreamCancel(source, error) : undefined,
        ]), true, error);
      };
      if (signal.aborted) {
        abortAlgorithm();
        return result.promise;
      }
      signal.addEventListener("abort", abortAlgorithm);
    }
    // Errors forward and backward, closing forward and backward.
    const sourceErrored = (error) => {
      if (!preventAbort) shutdownWithAction(() => writableStreamAbort(dest, error), true, error);
      else shutdown(true, error);
    };
    const destErrored = (error) => {
      if (!preventCancel) shutdownWithAction(() => S.readableStreamCancel(source, error), true, error);
      else shutdown(true, error);
    };
    const sourceClosed = () => {
      if (!preventClose) shutdownWithAction(() => writerCloseWithErrorPropagation(writer));
      else shutdown();
    };
    if (source.state === "errored") sourceErrored(source.storedError);
    else reader.closed.promise.then(() => sourceClosed(), (error) => !shuttingDown && sourceErrored(error));
    if (dest.state === "errored" || dest.state === "erroring") destErrored(dest.storedError);
    else writer.closed.promise.then(noop, (error) => !shuttingDown && destErrored(error));
    if (source.state === "closed") sourceClosed();
    if ((closeQueuedOrInFlight(dest) || dest.state === "closed") && !shuttingDown) {
      const closed = new TypeError("The destination stream is closed");
      if (!preventCancel) shutdownWithAction(() => S.readableStreamCancel(source, closed), true, closed);
      else shutdown(true, closed);
    }
    const step = () => {
      if (shuttingDown) return;
      writer.ready.promise.then(() => {
        if (shuttingDown) return;
        S.readerRead(reader, {
          chunk: (chunk) => {
            currentWrite = writerWrite(writer, chunk).then(noop, noop);
            step();
          },
          close: noop,
          error: noop,
        });
      }, noop);
    };
    step();
    return result.promise;
  };

  /** All of a stream's chunks, which must be Uint8Arrays, as one Uint8Array. */
  const readAllBytes = async (stream, what = "The body") => {
    const reader = acquireReader(stream);
    const chunks = [];
    let length = 0;
    for (;;) {
      const { value, done } = await readChunk(reader);
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        const error = new TypeError(`${what} stream gave a chunk that is not a Uint8Array`);
        await readableStreamCancel(stream, error).catch(noop);
        throw error;
      }
      chunks.push(value);
      length += value.byteLength;
    }
    readerRelease(reader);
    if (chunks.length === 1) return chunks[0].slice();
    const out = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  };
  /** A stream of `bytes` in pieces of at most 64 KiB (pulled, so nothing is copied ahead). */
  const fromBytes = (bytes) => {
    let at = 0;
    return createReadable(noop, (controller) => {
      if (at >= bytes.byteLength) controllerClose(controller);
      else {
        const end = Math.min(bytes.byteLength, at + 65536);
        controllerEnqueue(controller, bytes.slice(at, end));
        at = end;
        if (at >= bytes.byteLength) controllerClose(controller);
      }
      return resolvedWith(undefined);
    }, () => resolvedWith(undefined), 0).wrapper;
  };

  S.pipeTo = pipeTo;
  S.readAllBytes = readAllBytes;
  S.fromBytes = fromBytes;
})
