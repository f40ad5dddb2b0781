// setTimeout, setInterval, clearTimeout, clearInterval and queueMicrotask, on the run's event
// loop. The queue lives here; the engine's run loop (runner.rs) drives it through
// `internal.timers`: it reads the clock once per turn, fires what is due one timer at a time
// (draining promise jobs between them, as Node and browsers do) and sleeps in the host until
// the next one is due. A timer's due time counts from the loop's time, which the first timer
// set in each task refreshes from the clock: one clock reading per task, however many timers
// it sets, and never a timer that fires before its delay has passed on performance.now().
(function (native, internal) {
  "use strict";

  // Node's bounds: a delay under 1 ms, over 2^31 - 1 ms or not a number is 1 ms.
  const MAX_DELAY = 2147483647;
  const delayOf = (ms) => {
    const delay = Number(ms);
    return delay >= 1 && delay <= MAX_DELAY ? delay : 1;
  };

  let loopTime = 0;
  /** Whether the loop's time was read in the current task. */
  let fresh = false;
  let nextId = 1;
  let order = 0;
  /** Live timers by id, and how many (a script may take `Map.prototype.size` away). */
  const live = new Map();
  let liveCount = 0;
  /** A binary min-heap by (due, order); cleared timers stay in it until they reach the top. */
  const heap = [];
  const before = (a, b) => a.due < b.due || (a.due === b.due && a.order < b.order);
  const push = (timer) => {
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1, right = left + 1;
        let least = i;
        if (left < heap.length && before(heap[left], heap[least])) least = left;
        if (right < heap.length && before(heap[right], heap[least])) least = right;
        if (least === i) break;
        [heap[i], heap[least]] = [heap[least], heap[i]];
        i = least;
      }
    }
    return top;
  };
  const first = () => {
    while (heap.length > 0 && !live.has(heap[0].id)) pop();
    return heap[0];
  };

  const schedule = (kind, callback, ms, args, repeat) => {
    if (typeof callback !== "function") {
      throw new TypeError(`${kind}: the callback must be a function (got ${callback === null ? "null" : typeof callback})`);
    }
    const delay = delayOf(ms);
    if (!fresh) {
      loopTime = Math.max(loopTime, native.now());
      fresh = true;
    }
    const id = nextId++;
    const timer = { id, kind, callback, args, delay, repeat, due: loopTime + delay, order: order++ };
    live.set(id, timer);
    liveCount++;
    push(timer);
    return id;
  };
  const clear = (id) => {
    if (live.delete(typeof id === "number" ? id : Number(id))) liveCount--;
  };

  internal.define("setTimeout", function setTimeout(callback, ms, ...args) {
    return schedule("setTimeout", callback, ms, args, false);
  });
  internal.define("setInterval", function setInterval(callback, ms, ...args) {
    return schedule("setInterval", callback, ms, args, true);
  });
  internal.define("clearTimeout", function clearTimeout(id) { clear(id); });
  internal.define("clearInterval", function clearInterval(id) { clear(id); });
  if (typeof globalThis.queueMicrotask !== "function") {
    internal.define("queueMicrotask", function queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeError("queueMicrotask: the callback must be a function");
      Promise.resolve().then(() => callback());
    });
  }
  /** A timer for the platform's own use (AbortSignal.timeout), named `kind` when pending. */
  internal.timerFor = (callback, ms, kind) => schedule(kind, callback, ms, [], false);

  const describe = (timer) => {
    const name = timer.callback.name || "anonymous function";
    const every = timer.repeat ? `every ${timer.delay} ms` : `${timer.delay} ms`;
    return `${timer.kind}(${name}, ${every})`;
  };

  // The run loop's side (never a global).
  internal.timers = {
    /** Timers still to fire. */
    count: () => liveCount,
    /** Sets the loop's time (milliseconds since the run started). */
    advance(now) {
      if (now > loopTime) loopTime = now;
      fresh = false;
    },
    /** Milliseconds until the next timer is due (0 when one is due now), or -1 when none is left. */
    wait() {
      const timer = first();
      return timer === undefined ? -1 : Math.max(0, timer.due - loopTime);
    },
    /** Fires the first timer if it is due; true when it did. Its exception propagates. */
    fire() {
      const timer = first();
      if (timer === undefined || timer.due > loopTime) return false;
      pop();
      fresh = true;
      if (timer.repeat) {
        timer.due = loopTime + timer.delay;
        timer.order = order++;
        push(timer);
      } else {
        live.delete(timer.id);
        liveCount--;
      }
      Reflect.apply(timer.callback, globalThis, timer.args);
      return true;
    },
    /** What the loop is waiting for, for the host's message if the deadline passes meanwhile. */
    describe() {
      const timer = first();
      if (timer === undefined) return "";
      const more = liveCount > 1 ? ` and ${liveCount - 1} more timer${liveCount > 2 ? "s" : ""}` : "";
      return `${describe(timer)}${more}`;
    },
  };
})
