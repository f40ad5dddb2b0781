// The globals of a forge-host JavaScript script: forge's own, and the web platform's common API
// (WinterTC Minimum Common API) in the shapes of lib.dom.d.ts. Needs only `--lib es2022`.

// ---- forge ----

/** The error every host-side failure is thrown as; `code` is a stable code, e.g. `TOOL_DENIED`. */
declare class ForgeError extends Error {
  constructor(code: string, message?: string);
  code: string;
}
/** The session's state: JSON values kept from one run of the session to the next. */
declare const state: {
  /** The value at `key`, or `undefined`. */
  get<T = unknown>(key: string): T | undefined;
  /** Keeps a JSON-serialisable value (not `undefined`) at `key`. */
  set(key: string, value: unknown): void;
  delete(key: string): void;
  keys(): string[];
};
/** Sends a JSON-serialisable value to the caller as text, before the result. */
declare function text(value: unknown): void;
/** Reports progress: a message, and optionally how much of how much is done. */
declare function progress(message: string, completed?: number, total?: number): void;

// ---- buffers ----

type AllowSharedBufferSource = ArrayBufferLike | ArrayBufferView;
type BufferSource = ArrayBufferView | ArrayBuffer;

// ---- events and abort ----

/** An error named by the platform: `name` is AbortError, TimeoutError, NotSupportedError... */
declare class DOMException extends Error {
  constructor(message?: string, options?: string | { name?: string; cause?: unknown });
  /** The legacy numeric code of `name`, or 0. */
  readonly code: number;
  static readonly INDEX_SIZE_ERR: 1; static readonly HIERARCHY_REQUEST_ERR: 3;
  static readonly WRONG_DOCUMENT_ERR: 4; static readonly INVALID_CHARACTER_ERR: 5;
  static readonly NO_MODIFICATION_ALLOWED_ERR: 7; static readonly NOT_FOUND_ERR: 8;
  static readonly NOT_SUPPORTED_ERR: 9; static readonly INVALID_STATE_ERR: 11;
  static readonly SYNTAX_ERR: 12; static readonly INVALID_MODIFICATION_ERR: 13;
  static readonly NAMESPACE_ERR: 14; static readonly INVALID_ACCESS_ERR: 15;
  static readonly TYPE_MISMATCH_ERR: 17; static readonly SECURITY_ERR: 18;
  static readonly NETWORK_ERR: 19; static readonly ABORT_ERR: 20; static readonly URL_MISMATCH_ERR: 21;
  static readonly QUOTA_EXCEEDED_ERR: 22; static readonly TIMEOUT_ERR: 23;
  static readonly INVALID_NODE_TYPE_ERR: 24; static readonly DATA_CLONE_ERR: 25;
}

interface EventInit { bubbles?: boolean; cancelable?: boolean; composed?: boolean }
/** An event, dispatched by an EventTarget (here: AbortSignal, or one of the script's own). */
declare class Event {
  constructor(type: string, eventInitDict?: EventInit);
  readonly bubbles: boolean; cancelBubble: boolean; readonly cancelable: boolean;
  readonly composed: boolean; readonly currentTarget: EventTarget | null;
  readonly defaultPrevented: boolean; readonly eventPhase: number; readonly isTrusted: boolean;
  readonly returnValue: boolean; readonly srcElement: EventTarget | null;
  readonly target: EventTarget | null; readonly timeStamp: number; readonly type: string;
  composedPath(): EventTarget[];
  preventDefault(): void;
  stopImmediatePropagation(): void;
  stopPropagation(): void;
  readonly NONE: 0; readonly CAPTURING_PHASE: 1; readonly AT_TARGET: 2; readonly BUBBLING_PHASE: 3;
  static readonly NONE: 0; static readonly CAPTURING_PHASE: 1;
  static readonly AT_TARGET: 2; static readonly BUBBLING_PHASE: 3;
}
interface CustomEventInit<T = any> extends EventInit { detail?: T }
/** An event carrying `detail`. */
declare class CustomEvent<T = any> extends Event {
  constructor(type: string, eventInitDict?: CustomEventInit<T>);
  readonly detail: T;
}

interface EventListener { (evt: Event): void }
interface EventListenerObject { handleEvent(object: Event): void }
type EventListenerOrEventListenerObject = EventListener | EventListenerObject;
interface EventListenerOptions { capture?: boolean }
interface AddEventListenerOptions extends EventListenerOptions {
  once?: boolean; passive?: boolean; signal?: AbortSignal;
}
/** Something events are dispatched to; scripts may construct and extend it. */
declare class EventTarget {
  constructor();
  addEventListener(
    type: string,
    callback: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ): void;
  dispatchEvent(event: Event): boolean;
  removeEventListener(
    type: string,
    callback: EventListenerOrEventListenerObject | null,
    options?: EventListenerOptions | boolean,
  ): void;
}

/** Signals that an operation should stop; see AbortController. */
declare class AbortSignal extends EventTarget {
  private constructor();
  readonly aborted: boolean;
  onabort: ((this: AbortSignal, ev: Event) => unknown) | null;
  readonly reason: unknown;
  throwIfAborted(): void;
  /** A signal already aborted with `reason` (default: an AbortError). */
  static abort(reason?: unknown): AbortSignal;
  /** A signal that aborts when any of `signals` does. */
  static any(signals: AbortSignal[]): AbortSignal;
  /** A signal that aborts with a TimeoutError after `milliseconds` (on the run's clock). */
  static timeout(milliseconds: number): AbortSignal;
}
/** Aborts its `signal`. */
declare class AbortController {
  constructor();
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

// ---- timers, microtasks, errors ----

/** Runs `handler` once after `timeout` ms, on the run's event loop (no strings of code). */
declare function setTimeout<A extends unknown[]>(handler: (...args: A) => void, timeout?: number, ...args: A): number;
declare function setTimeout(handler: (arg: void) => void, timeout?: number): number;
/** Runs `handler` every `timeout` ms until cleared (the run waits for it). */
declare function setInterval<A extends unknown[]>(handler: (...args: A) => void, timeout?: number, ...args: A): number;
declare function setInterval(handler: (arg: void) => void, timeout?: number): number;
/** Cancels a setTimeout. */
declare function clearTimeout(id?: number): void;
/** Cancels a setInterval. */
declare function clearInterval(id?: number): void;
/** Runs `callback` once the current job is done, before any timer. */
declare function queueMicrotask(callback: () => void): void;
/** Reports an error as uncaught (it fails the run) without interrupting the caller. */
declare function reportError(e: unknown): void;

// ---- structuredClone ----

interface StructuredSerializeOptions {
  /** ArrayBuffers to move into the clone (they are detached). */
  transfer?: ArrayBuffer[];
}
/** A deep copy by the structured clone algorithm (Map, Set, Date, RegExp, buffers, errors...). */
declare function structuredClone<T = any>(value: T, options?: StructuredSerializeOptions): T;

// ---- encoding ----

/** Encodes strings as UTF-8. */
declare class TextEncoder {
  constructor();
  readonly encoding: string;
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
interface TextDecoderOptions { fatal?: boolean; ignoreBOM?: boolean }
interface TextDecodeOptions { stream?: boolean }
/** Decodes bytes to a string (UTF-8, UTF-16 and the other labels of the Encoding standard). */
declare class TextDecoder {
  constructor(label?: string, options?: TextDecoderOptions);
  readonly encoding: string; readonly fatal: boolean; readonly ignoreBOM: boolean;
  decode(input?: AllowSharedBufferSource, options?: TextDecodeOptions): string;
}
interface GenericTransformStream {
  readonly readable: ReadableStream; readonly writable: WritableStream;
}
/** A stream of strings in, UTF-8 bytes out. */
declare class TextEncoderStream implements GenericTransformStream {
  constructor();
  readonly encoding: string; readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<string>;
}
/** A stream of bytes in, strings out. */
declare class TextDecoderStream implements GenericTransformStream {
  constructor(label?: string, options?: TextDecoderOptions);
  readonly encoding: string; readonly fatal: boolean; readonly ignoreBOM: boolean;
  readonly readable: ReadableStream<string>; readonly writable: WritableStream<BufferSource>;
}
/** Decodes base64 to a binary string; throws InvalidCharacterError on bad input. */
declare function atob(data: string): string;
/** Encodes a binary string (every code unit under 256) as base64. */
declare function btoa(data: string): string;

// ---- URL ----

/** A parsed URL (WHATWG URL Standard). */
declare class URL {
  constructor(url: string | URL, base?: string | URL);
  static canParse(url: string | URL, base?: string | URL): boolean;
  /** The URL, or `null` where the constructor would throw. */
  static parse(url: string | URL, base?: string | URL): URL | null;
  hash: string; host: string; hostname: string; href: string; readonly origin: string;
  password: string; pathname: string; port: string; protocol: string; search: string;
  readonly searchParams: URLSearchParams; username: string;
  toString(): string;
  toJSON(): string;
}
/** A URL's query as ordered name-value pairs. */
declare class URLSearchParams {
  constructor(init?: string[][] | Record<string, string> | string | URLSearchParams);
  readonly size: number;
  append(name: string, value: string): void;
  delete(name: string, value?: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string, value?: string): boolean;
  set(name: string, value: string): void;
  sort(): void;
  toString(): string;
  forEach(callbackfn: (value: string, key: string, parent: URLSearchParams) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

// ---- crypto ----

type KeyUsage = "decrypt" | "deriveBits" | "deriveKey" | "encrypt" | "sign" | "unwrapKey" | "verify" | "wrapKey";
type KeyFormat = "jwk" | "pkcs8" | "raw" | "spki";
type KeyType = "private" | "public" | "secret";
interface Algorithm { name: string }
type AlgorithmIdentifier = Algorithm | string;
type HashAlgorithmIdentifier = AlgorithmIdentifier;
interface KeyAlgorithm { name: string }
interface HmacImportParams extends Algorithm { hash: HashAlgorithmIdentifier; length?: number }
interface HmacKeyGenParams extends Algorithm { hash: HashAlgorithmIdentifier; length?: number }
interface HmacKeyAlgorithm extends KeyAlgorithm { hash: KeyAlgorithm; length: number }
interface RsaOtherPrimesInfo { d?: string; r?: string; t?: string }
interface JsonWebKey {
  alg?: string; crv?: string; d?: string; dp?: string; dq?: string; e?: string; ext?: boolean;
  k?: string; key_ops?: string[]; kty?: string; n?: string; oth?: RsaOtherPrimesInfo[];
  p?: string; q?: string; qi?: string; use?: string; x?: string; y?: string;
}
/** A key of crypto.subtle (here: an HMAC secret key). */
declare class CryptoKey {
  private constructor();
  readonly algorithm: KeyAlgorithm; readonly extractable: boolean; readonly type: KeyType;
  readonly usages: KeyUsage[];
}
/** Web Crypto here: digest (SHA-1, SHA-256, SHA-384, SHA-512) and HMAC keys, sign and verify. */
declare class SubtleCrypto {
  private constructor();
  digest(algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer>;
  exportKey(format: "jwk", key: CryptoKey): Promise<JsonWebKey>;
  exportKey(format: Exclude<KeyFormat, "jwk">, key: CryptoKey): Promise<ArrayBuffer>;
  exportKey(format: KeyFormat, key: CryptoKey): Promise<ArrayBuffer | JsonWebKey>;
  generateKey(
    algorithm: HmacKeyGenParams | AlgorithmIdentifier,
    extractable: boolean,
    keyUsages: ReadonlyArray<KeyUsage>,
  ): Promise<CryptoKey>;
  importKey(
    format: "jwk",
    keyData: JsonWebKey,
    algorithm: HmacImportParams | AlgorithmIdentifier,
    extractable: boolean,
    keyUsages: ReadonlyArray<KeyUsage>,
  ): Promise<CryptoKey>;
  importKey(
    format: Exclude<KeyFormat, "jwk">,
    keyData: BufferSource,
    algorithm: HmacImportParams | AlgorithmIdentifier,
    extractable: boolean,
    keyUsages: KeyUsage[],
  ): Promise<CryptoKey>;
  sign(algorithm: AlgorithmIdentifier, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  verify(algorithm: AlgorithmIdentifier, key: CryptoKey, signature: BufferSource, data: BufferSource): Promise<boolean>;
}
declare class Crypto {
  private constructor();
  readonly subtle: SubtleCrypto;
  /** Fills an integer typed array (at most 65536 bytes) with random values, and returns it. */
  getRandomValues<T extends ArrayBufferView | null>(array: T): T;
  randomUUID(): `${string}-${string}-${string}-${string}-${string}`;
}
/** Randomness (recorded on the run's tape, so a replay draws the same) and crypto.subtle. */
declare var crypto: Crypto;

// ---- performance, navigator, self ----

declare class Performance {
  private constructor();
  /** Milliseconds since `timeOrigin`, on the run's clock. */
  now(): number;
  readonly timeOrigin: number;
  toJSON(): { timeOrigin: number };
}
/** The run's high-resolution clock. */
declare var performance: Performance;
declare class Navigator {
  private constructor();
  readonly userAgent: string; readonly language: string; readonly languages: ReadonlyArray<string>;
  readonly hardwareConcurrency: number; readonly onLine: boolean;
}
/** A description of the engine: userAgent "forge-host (QuickJS)", one core, en-US, offline. */
declare var navigator: Navigator;
/** The global object. */
declare var self: typeof globalThis;

// ---- console ----

interface Console {
  assert(condition?: boolean, ...data: unknown[]): void;
  count(label?: string): void;
  countReset(label?: string): void;
  debug(...data: unknown[]): void;
  dir(item?: unknown, options?: unknown): void;
  dirxml(...data: unknown[]): void;
  error(...data: unknown[]): void;
  group(...data: unknown[]): void;
  groupCollapsed(...data: unknown[]): void;
  groupEnd(): void;
  info(...data: unknown[]): void;
  log(...data: unknown[]): void;
  table(tabularData?: unknown, properties?: string[]): void;
  time(label?: string): void;
  timeEnd(label?: string): void;
  timeLog(label?: string, ...data: unknown[]): void;
  trace(...data: unknown[]): void;
  warn(...data: unknown[]): void;
}
/** Writes to the run's stdout (log, info, debug, dir, table) and stderr (warn, error, trace). */
declare var console: Console;

// ---- streams ----

interface QueuingStrategySize<T = any> { (chunk: T): number }
interface QueuingStrategy<T = any> { highWaterMark?: number; size?: QueuingStrategySize<T> }
interface QueuingStrategyInit { highWaterMark: number }
/** A queuing strategy counting chunks. */
declare class CountQueuingStrategy implements QueuingStrategy {
  constructor(init: QueuingStrategyInit);
  readonly highWaterMark: number; readonly size: QueuingStrategySize;
}
/** A queuing strategy counting bytes. */
declare class ByteLengthQueuingStrategy implements QueuingStrategy<ArrayBufferView> {
  constructor(init: QueuingStrategyInit);
  readonly highWaterMark: number; readonly size: QueuingStrategySize<ArrayBufferView>;
}

interface ReadableStreamDefaultController<R = any> {
  readonly desiredSize: number | null;
  close(): void;
  enqueue(chunk?: R): void;
  error(e?: unknown): void;
}
interface UnderlyingSource<R = any> {
  cancel?: (reason: unknown) => void | PromiseLike<void>;
  pull?: (controller: ReadableStreamDefaultController<R>) => void | PromiseLike<void>;
  start?: (controller: ReadableStreamDefaultController<R>) => unknown;
  type?: undefined;
}
type UnderlyingDefaultSource<R = any> = UnderlyingSource<R>;
interface ReadableStreamReadValueResult<T> { done: false; value: T }
interface ReadableStreamReadDoneResult<T> { done: true; value: T | undefined }
type ReadableStreamReadResult<T> = ReadableStreamReadValueResult<T> | ReadableStreamReadDoneResult<T>;
interface StreamPipeOptions {
  preventAbort?: boolean; preventCancel?: boolean; preventClose?: boolean; signal?: AbortSignal;
}
interface ReadableWritablePair<R = any, W = any> {
  readable: ReadableStream<R>; writable: WritableStream<W>;
}
interface ReadableStreamIteratorOptions { preventCancel?: boolean }
/** A source of chunks, read with a reader, `for await`, or piped (WHATWG Streams). */
declare class ReadableStream<R = any> {
  constructor(underlyingSource?: UnderlyingSource<R>, strategy?: QueuingStrategy<R>);
  readonly locked: boolean;
  cancel(reason?: unknown): Promise<void>;
  getReader(): ReadableStreamDefaultReader<R>;
  pipeThrough<T>(transform: ReadableWritablePair<T, R>, options?: StreamPipeOptions): ReadableStream<T>;
  pipeTo(destination: WritableStream<R>, options?: StreamPipeOptions): Promise<void>;
  tee(): [ReadableStream<R>, ReadableStream<R>];
  values(options?: ReadableStreamIteratorOptions): AsyncIterableIterator<R>;
  [Symbol.asyncIterator](options?: ReadableStreamIteratorOptions): AsyncIterableIterator<R>;
}
/** Reads a ReadableStream chunk by chunk (it locks the stream until released). */
declare class ReadableStreamDefaultReader<R = any> {
  constructor(stream: ReadableStream<R>);
  readonly closed: Promise<void>;
  cancel(reason?: unknown): Promise<void>;
  read(): Promise<ReadableStreamReadResult<R>>;
  releaseLock(): void;
}

interface WritableStreamDefaultController {
  readonly signal: AbortSignal;
  error(e?: unknown): void;
}
interface UnderlyingSink<W = any> {
  abort?: (reason: unknown) => void | PromiseLike<void>;
  close?: () => void | PromiseLike<void>;
  start?: (controller: WritableStreamDefaultController) => unknown;
  type?: undefined;
  write?: (chunk: W, controller: WritableStreamDefaultController) => void | PromiseLike<void>;
}
/** A destination of chunks (WHATWG Streams). */
declare class WritableStream<W = any> {
  constructor(underlyingSink?: UnderlyingSink<W>, strategy?: QueuingStrategy<W>);
  readonly locked: boolean;
  abort(reason?: unknown): Promise<void>;
  close(): Promise<void>;
  getWriter(): WritableStreamDefaultWriter<W>;
}
/** Writes to a WritableStream (it locks the stream until released). */
declare class WritableStreamDefaultWriter<W = any> {
  constructor(stream: WritableStream<W>);
  readonly closed: Promise<void>; readonly desiredSize: number | null;
  readonly ready: Promise<void>;
  abort(reason?: unknown): Promise<void>;
  close(): Promise<void>;
  releaseLock(): void;
  write(chunk?: W): Promise<void>;
}

interface TransformStreamDefaultController<O = any> {
  readonly desiredSize: number | null;
  enqueue(chunk?: O): void;
  error(reason?: unknown): void;
  terminate(): void;
}
interface Transformer<I = any, O = any> {
  cancel?: (reason: unknown) => void | PromiseLike<void>;
  flush?: (controller: TransformStreamDefaultController<O>) => void | PromiseLike<void>;
  readableType?: undefined;
  start?: (controller: TransformStreamDefaultController<O>) => unknown;
  transform?: (chunk: I, controller: TransformStreamDefaultController<O>) => void | PromiseLike<void>;
  writableType?: undefined;
}
/** A writable side whose chunks come out of the readable side transformed. */
declare class TransformStream<I = any, O = any> {
  constructor(
    transformer?: Transformer<I, O>,
    writableStrategy?: QueuingStrategy<I>,
    readableStrategy?: QueuingStrategy<O>,
  );
  readonly readable: ReadableStream<O>; readonly writable: WritableStream<I>;
}

type CompressionFormat = "deflate" | "deflate-raw" | "gzip";
/** Compresses a byte stream (gzip, deflate or deflate-raw). */
declare class CompressionStream implements GenericTransformStream {
  constructor(format: CompressionFormat);
  readonly readable: ReadableStream<Uint8Array>; readonly writable: WritableStream<BufferSource>;
}
/** Decompresses a byte stream (gzip, deflate or deflate-raw). */
declare class DecompressionStream implements GenericTransformStream {
  constructor(format: CompressionFormat);
  readonly readable: ReadableStream<Uint8Array>; readonly writable: WritableStream<BufferSource>;
}

// ---- Blob, File ----

type BlobPart = BufferSource | Blob | string;
interface BlobPropertyBag { endings?: "native" | "transparent"; type?: string }
interface FilePropertyBag extends BlobPropertyBag { lastModified?: number }
/** Immutable bytes with a MIME type, held in memory. */
declare class Blob {
  constructor(blobParts?: BlobPart[], options?: BlobPropertyBag);
  readonly size: number; readonly type: string;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  slice(start?: number, end?: number, contentType?: string): Blob;
  stream(): ReadableStream<Uint8Array>;
  text(): Promise<string>;
}
/** A Blob with a name and a modification time (in memory: not a file of the workspace). */
declare class File extends Blob {
  constructor(fileBits: BlobPart[], fileName: string, options?: FilePropertyBag);
  readonly lastModified: number; readonly name: string; readonly webkitRelativePath: string;
}

// ---- fetch and its types ----

type HeadersInit = [string, string][] | Record<string, string> | Headers;
/** HTTP headers: case-insensitive names, ordered. */
declare class Headers {
  constructor(init?: HeadersInit);
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  getSetCookie(): string[];
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callbackfn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}
type FormDataEntryValue = File | string;
/** Form fields: names with strings or files. */
declare class FormData {
  constructor();
  append(name: string, value: string | Blob, fileName?: string): void;
  delete(name: string): void;
  get(name: string): FormDataEntryValue | null;
  getAll(name: string): FormDataEntryValue[];
  has(name: string): boolean;
  set(name: string, value: string | Blob, fileName?: string): void;
  forEach(callbackfn: (value: FormDataEntryValue, key: string, parent: FormData) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, FormDataEntryValue]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<FormDataEntryValue>;
  [Symbol.iterator](): IterableIterator<[string, FormDataEntryValue]>;
}
type XMLHttpRequestBodyInit = Blob | BufferSource | FormData | URLSearchParams | string;
type BodyInit = ReadableStream | XMLHttpRequestBodyInit;
/** What Request and Response share: a body, read once. */
interface Body {
  readonly body: ReadableStream<Uint8Array> | null; readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  blob(): Promise<Blob>;
  bytes(): Promise<Uint8Array>;
  formData(): Promise<FormData>;
  json(): Promise<any>;
  text(): Promise<string>;
}
type RequestInfo = Request | string;
type RequestCache = "default" | "force-cache" | "no-cache" | "no-store" | "only-if-cached" | "reload";
type RequestCredentials = "include" | "omit" | "same-origin";
type RequestMode = "cors" | "navigate" | "no-cors" | "same-origin";
type RequestRedirect = "error" | "follow" | "manual";
interface RequestInit {
  body?: BodyInit | null; cache?: RequestCache; credentials?: RequestCredentials;
  headers?: HeadersInit; integrity?: string; keepalive?: boolean; method?: string;
  mode?: RequestMode; redirect?: RequestRedirect; referrer?: string; signal?: AbortSignal | null;
}
/** An HTTP request, as a value (nothing sends it: see fetch). */
declare class Request {
  constructor(input: RequestInfo | URL, init?: RequestInit);
  readonly cache: RequestCache; readonly credentials: RequestCredentials; readonly headers: Headers;
  readonly integrity: string; readonly keepalive: boolean; readonly method: string;
  readonly mode: RequestMode; readonly redirect: RequestRedirect; readonly referrer: string;
  readonly signal: AbortSignal; readonly url: string;
  clone(): Request;
}
interface Request extends Body {}
interface ResponseInit { headers?: HeadersInit; status?: number; statusText?: string }
type ResponseType = "basic" | "cors" | "default" | "error" | "opaque" | "opaqueredirect";
/** An HTTP response, as a value: handy to read a body as text, JSON, bytes or form data. */
declare class Response {
  constructor(body?: BodyInit | null, init?: ResponseInit);
  static error(): Response;
  static json(data: unknown, init?: ResponseInit): Response;
  static redirect(url: string | URL, status?: number): Response;
  readonly headers: Headers; readonly ok: boolean; readonly redirected: boolean;
  readonly status: number; readonly statusText: string; readonly type: ResponseType;
  readonly url: string;
  clone(): Response;
}
interface Response extends Body {}
/** Always rejects with a TypeError: a script has no network; call a tool (e.g. an HTTP tool). */
declare function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
