// DOMException, Event, EventTarget, CustomEvent, AbortController and AbortSignal (WHATWG DOM),
// and `internal.define`, which the other web scripts define their globals with.
(function (native, internal) {
  "use strict";

  /** A global as the web platform has it: writable, configurable, not enumerable. */
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, enumerable: false, configurable: true });
  internal.define = define;

  /** Makes `Class.prototype`'s members non-enumerable getters/methods and tags it. */
  const tag = (Class, name) => {
    Object.defineProperty(Class.prototype, Symbol.toStringTag, { value: name, configurable: true });
  };
  internal.tag = tag;

  // The legacy codes of the names that have one (WebIDL's DOMException names table).
  const CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };

  class DOMException extends Error {
    #name;
    #message;
    constructor(message = "", options = "Error") {
      super(String(message));
      this.#message = String(message);
      if (options !== null && typeof options === "object") {
        this.#name = "name" in options ? String(options.name) : "Error";
        if ("cause" in options) {
          Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true });
        }
      } else {
        this.#name = String(options);
      }
      // Error's own `message` would shadow the getter.
      delete this.message;
    }
    get name() { return this.#name; }
    get message() { return this.#message; }
    get code() { return CODES[this.#name] ?? 0; }
  }
  for (const [name, code] of Object.entries(CODES)) {
    const constant = name.replace(/Error$/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase() + "_ERR";
    Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
    Object.defineProperty(DOMException.prototype, constant, { value: code, enumerable: true });
  }
  tag(DOMException, "DOMException");
  define("DOMException", DOMException);
  internal.DOMException = DOMException;

  const NONE = 0, CAPTURING_PHASE = 1, AT_TARGET = 2, BUBBLING_PHASE = 3;

  class Event {
    #type;
    #bubbles;
    #cancelable;
    #composed;
    #canceled = false;
    #stop = false;
    #stopNow = false;
    #target = null;
    #currentTarget = null;
    #phase = NONE;
    #dispatching = false;
    #timeStamp = native.now();
    constructor(type, init = {}) {
      if (arguments.length === 0) throw new TypeError("Event: 1 argument required, but only 0 present");
      this.#type = String(type);
      this.#bubbles = Boolean(init?.bubbles);
      this.#cancelable = Boolean(init?.cancelable);
      this.#composed = Boolean(init?.composed);
    }
    get type() { return this.#type; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get composed() { return this.#composed; }
    get defaultPrevented() { return this.#canceled; }
    get returnValue() { return !this.#canceled; }
    get target() { return this.#target; }
    get srcElement() { return this.#target; }
    get currentTarget() { return this.#currentTarget; }
    get eventPhase() { return this.#phase; }
    get isTrusted() { return false; }
    get timeStamp() { return this.#timeStamp; }
    get cancelBubble() { return this.#stop; }
    set cancelBubble(value) { if (value) this.#stop = true; }
    composedPath() { return this.#dispatching && this.#currentTarget !== null ? [this.#currentTarget] : []; }
    preventDefault() { if (this.#cancelable) this.#canceled = true; }
    stopPropagation() { this.#stop = true; }
    stopImmediatePropagation() { this.#stop = true; this.#stopNow = true; }

    /** Dispatch bookkeeping, for EventTarget only. */
    static _begin(event, target) {
      if (event.#dispatching) throw new DOMException("The event is already being dispatched", "InvalidStateError");
      event.#dispatching = true;
      event.#target = target;
      event.#currentTarget = target;
      event.#phase = AT_TARGET;
    }
    static _stoppedNow(event) { return event.#stopNow; }
    static _end(event) {
      event.#dispatching = false;
      event.#currentTarget = null;
      event.#phase = NONE;
      event.#stop = false;
      event.#stopNow = false;
    }
  }
  for (const [name, value] of Object.entries({ NONE, CAPTURING_PHASE, AT_TARGET, BUBBLING_PHASE })) {
    Object.defineProperty(Event, name, { value, enumerable: true });
    Object.defineProperty(Event.prototype, name, { value, enumerable: true });
  }
  const dispatchBegin = Event._begin, dispatchEnd = Event._end, stoppedNow = Event._stoppedNow;
  delete Event._begin;
  delete Event._end;
  delete Event._stoppedNow;
  tag(Event, "Event");

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = {}) {
      super(type, init);
      this.#detail = init?.detail ?? null;
    }
    get detail() { return this.#detail; }
  }
  tag(CustomEvent, "CustomEvent");

  const flatten = (options) =>
    typeof options === "boolean" ? { capture: options } : options !== null && typeof options === "object" ? options : {};

  class EventTarget {
    #listeners = new Map();
    addEventListener(type, callback, options = {}) {
      if (arguments.length < 2) throw new TypeError("addEventListener: 2 arguments required");
      if (callback === null || callback === undefined) return;
      const { capture = false, once = false, passive = false, signal } = flatten(options);
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        throw new TypeError("addEventListener: signal must be an AbortSignal");
      }
      if (signal?.aborted) return;
      type = String(type);
      let list = this.#listeners.get(type);
      if (list === undefined) this.#listeners.set(type, (list = []));
      if (list.some((l) => l.callback === callback && l.capture === Boolean(capture))) return;
      const listener = { callback, capture: Boolean(capture), once: Boolean(once), passive: Boolean(passive), removed: false };
      list.push(listener);
      signal?.addEventListener("abort", () => this.removeEventListener(type, callback, { capture }));
    }
    removeEventListener(type, callback, options = {}) {
      const capture = Boolean(flatten(options).capture);
      const list = this.#listeners.get(String(type));
      if (list === undefined) return;
      const index = list.findIndex((l) => l.callback === callback && l.capture === capture);
      if (index >= 0) {
        list[index].removed = true;
        list.splice(index, 1);
      }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError("dispatchEvent: argument 1 is not an Event");
      dispatchBegin(event, this);
      try {
        const handler = internal.handlerOf(this, event.type);
        const list = [...(this.#listeners.get(event.type) ?? [])];
        if (handler !== undefined) list.push({ callback: handler, once: false, removed: false });
        for (const listener of list) {
          if (listener.removed) continue;
          if (listener.once) this.removeEventListener(event.type, listener.callback, { capture: listener.capture });
          try {
            if (typeof listener.callback === "function") listener.callback.call(this, event);
            else if (typeof listener.callback?.handleEvent === "function") listener.callback.handleEvent(event);
          } catch (error) {
            internal.reportError(error);
          }
          if (stoppedNow(event)) break;
        }
      } finally {
        dispatchEnd(event);
      }
      return !event.defaultPrevented;
    }
  }
  tag(EventTarget, "EventTarget");

  // `on<type>` handler attributes (AbortSignal's `onabort`), kept outside the objects.
  const handlers = new WeakMap();
  internal.handlerOf = (target, type) => handlers.get(target)?.[type];
  const handlerAttribute = (Class, type) =>
    Object.defineProperty(Class.prototype, `on${type}`, {
      get() { return handlers.get(this)?.[type] ?? null; },
      set(value) {
        const own = handlers.get(this) ?? {};
        own[type] = typeof value === "function" ? value : undefined;
        handlers.set(this, own);
      },
      configurable: true,
    });
  // `internal.reportError` (an error in a listener) is platform.js's, installed before any
  // script runs.

  const abortReason = () => new DOMException("This operation was aborted", "AbortError");
  const ILLEGAL = Symbol("illegal constructor");

  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    #dependents = [];
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    static abort(reason) {
      const signal = new AbortSignal(ILLEGAL);
      signal.#aborted = true;
      signal.#reason = reason === undefined ? abortReason() : reason;
      return signal;
    }
    static timeout(ms) {
      const delay = Number(ms);
      if (!Number.isFinite(delay) || delay < 0) throw new TypeError("AbortSignal.timeout: ms must be a non-negative number");
      const signal = new AbortSignal(ILLEGAL);
      internal.timerFor(() => abortSignal(signal, new DOMException("The operation timed out.", "TimeoutError")), delay, "AbortSignal.timeout");
      return signal;
    }
    static any(signals) {
      const signal = new AbortSignal(ILLEGAL);
      for (const source of signals) {
        if (!(source instanceof AbortSignal)) throw new TypeError("AbortSignal.any: every member must be an AbortSignal");
        if (source.aborted) {
          signal.#aborted = true;
          signal.#reason = source.reason;
          return signal;
        }
      }
      for (const source of signals) source.#dependents.push(new WeakRef(signal));
      return signal;
    }
    /** Signals abort with `reason` (AbortController's `abort`); taken off the class below. */
    static _abort(signal, reason) {
      if (signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason === undefined ? abortReason() : reason;
      const dependents = signal.#dependents;
      signal.#dependents = [];
      signal.dispatchEvent(new Event("abort"));
      for (const ref of dependents) {
        const dependent = ref.deref();
        if (dependent !== undefined) abortSignal(dependent, signal.#reason);
      }
    }
  }
  handlerAttribute(AbortSignal, "abort");
  tag(AbortSignal, "AbortSignal");
  const abortSignal = AbortSignal._abort;
  delete AbortSignal._abort;
  internal.abortSignal = abortSignal;

  class AbortController {
    #signal = new AbortSignal(ILLEGAL);
    get signal() { return this.#signal; }
    abort(reason) { abortSignal(this.#signal, reason); }
  }
  tag(AbortController, "AbortController");

  define("Event", Event);
  define("CustomEvent", CustomEvent);
  define("EventTarget", EventTarget);
  define("AbortSignal", AbortSignal);
  define("AbortController", AbortController);
})
