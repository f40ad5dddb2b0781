//! The web platform's streams, blobs, fetch's types and compression in the JavaScript engine
//! (issue 40): WHATWG Streams (readable, writable, transform, pipes, tee, async iteration), the
//! File API's Blob and File, FormData, Headers, Request and Response, `fetch` (always rejected:
//! no network), and CompressionStream/DecompressionStream, with the memory cap on a zip bomb.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox, args};

#[track_caller]
fn value_of(sandbox: &Sandbox, source: &str) -> Value {
    sandbox.run_js(source, NO_ARGS).assert_succeeded()["value"].clone()
}

/// A raw deflate stream (RFC 1951, one block with the fixed Huffman codes) of `matches` × 258
/// plus 1 zero bytes, built by the script as `bomb` (`matches` a multiple of 8): a literal 0, then
/// `matches` copies of (length 258, distance 1), 13 bits each, so eight of them are 13 bytes and
/// the stream repeats with that period after its first two bytes.
fn bomb_builder(matches: u64) -> String {
    format!(
        "const M = {matches};\n\
         const E = 1 + 13 * M / 8;\n\
         const bomb = new Uint8Array(E + 2);\n\
         let bit = 0;\n\
         const put = (v, n) => {{ for (let i = 0; i < n; i++, bit++) if ((v >> i) & 1) bomb[bit >> 3] |= 1 << (bit & 7); }};\n\
         const code = (v, n) => {{ for (let i = n - 1; i >= 0; i--, bit++) if ((v >> i) & 1) bomb[bit >> 3] |= 1 << (bit & 7); }};\n\
         put(1, 1); put(1, 2); code(0x30, 8);\n\
         for (let i = 0; i < Math.min(M, 16); i++) {{ code(0xc5, 8); code(0, 5); }}\n\
         for (let len = 13; 2 + len < E; len *= 2) bomb.copyWithin(2 + len, 2, 2 + len);\n\
         bomb[E] &= 7; bomb[E + 1] = 0;\n"
    )
}

#[test]
fn readable_streams_queue_pull_with_backpressure_and_iterate() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const log = [];\n\
         let n = 0;\n\
         const rs = new ReadableStream({\n\
           start(c) { log.push('start ' + c.desiredSize); },\n\
           pull(c) { n++; log.push('pull ' + n + ' ' + c.desiredSize); c.enqueue(n); if (n === 4) c.close(); },\n\
           cancel() { log.push('never'); },\n\
         }, new CountQueuingStrategy({ highWaterMark: 2 }));\n\
         await new Promise((r) => setTimeout(r, 0));\n\
         log.push('queued before any read: ' + n);\n\
         const reader = rs.getReader();\n\
         const locked = rs.locked;\n\
         const reads = [];\n\
         for (;;) { const { value, done } = await reader.read(); if (done) break; reads.push(value); }\n\
         await reader.closed;\n\
         reader.releaseLock();\n\
         let size; new ReadableStream({ start(c) { c.enqueue(new Uint8Array(3)); size = c.desiredSize; } },\n\
           new ByteLengthQueuingStrategy({ highWaterMark: 10 }));\n\
         const iterated = [];\n\
         for await (const x of ReadableStream.from((async function* () { yield 'a'; yield 'b'; })())) iterated.push(x);\n\
         const fromSync = [];\n\
         for await (const x of ReadableStream.from([1, Promise.resolve(2), 3])) fromSync.push(x);\n\
         let canceled = null;\n\
         const early = new ReadableStream({ pull(c) { c.enqueue('x'); }, cancel(r) { canceled = 'reason: ' + r; } });\n\
         for await (const x of early) break;\n\
         const kept = new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } });\n\
         for await (const x of kept.values({ preventCancel: true })) break;\n\
         const rest = await kept.getReader().read();\n\
         let bad; try { rs.getReader(); new ReadableStream().getReader({ mode: 'byob' }); } catch (e) { bad = e.constructor.name; }\n\
         const errored = new ReadableStream({ start(c) { c.error(new RangeError('boom')); } });\n\
         const failure = await errored.getReader().read().catch((e) => e.message);\n\
         const byteStream = new ReadableStream({ type: 'bytes', start(c) { c.enqueue(new Uint16Array([0x0201])); c.close(); } });\n\
         const byteChunk = await byteStream.getReader().read();\n\
         let second; const twice = new ReadableStream(); twice.getReader();\n\
         try { twice.getReader(); } catch (e) { second = e instanceof TypeError; }\n\
         return { log, locked, reads, canceled, rest, bad, failure, second, iterated, fromSync, size,\n\
           bytesType: [byteChunk.value.constructor.name, ...byteChunk.value],\n\
           tag: Object.prototype.toString.call(rs), strategy: new CountQueuingStrategy({ highWaterMark: 1 }).size() };",
    );
    assert_eq!(
        value,
        json!({
            "log": ["start 2", "pull 1 2", "pull 2 1", "queued before any read: 2",
                    "pull 3 1", "pull 4 1"],
            "locked": true,
            "reads": [1, 2, 3, 4],
            "canceled": "reason: undefined",
            "rest": {"value": 2, "done": false},
            "bad": "TypeError",
            "failure": "boom",
            "second": true,
            "iterated": ["a", "b"],
            "fromSync": [1, 2, 3],
            "size": 7,
            "bytesType": ["Uint8Array", 1, 2],
            "tag": "[object ReadableStream]",
            "strategy": 1,
        })
    );
}

#[test]
fn tee_pipes_and_transforms_keep_order_and_propagate_errors() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const collect = async (s) => { const out = []; for await (const x of s) out.push(x); return out; };\n\
         const [a, b] = ReadableStream.from([1, 2, 3]).tee();\n\
         const both = await Promise.all([collect(a), collect(b)]);\n\
         const double = new TransformStream({ transform(x, c) { c.enqueue(x * 2); c.enqueue(-x); }, flush(c) { c.enqueue('end'); } });\n\
         const piped = await collect(ReadableStream.from([1, 2]).pipeThrough(double));\n\
         const written = [];\n\
         const sink = new WritableStream({ write(x) { written.push(x); return new Promise((r) => setTimeout(r, 1)); }, close() { written.push('closed'); } });\n\
         await ReadableStream.from(['p', 'q', 'r']).pipeTo(sink);\n\
         const aborted = [];\n\
         const failing = new ReadableStream({ start(c) { c.enqueue(1); c.error(new Error('source broke')); } });\n\
         const pipeError = await failing.pipeTo(new WritableStream({ abort(r) { aborted.push(r.message); } })).catch((e) => e.message);\n\
         let cancelReason;\n\
         const source = new ReadableStream({ pull(c) { c.enqueue('x'); }, cancel(r) { cancelReason = r.message; } });\n\
         const destError = await source.pipeTo(new WritableStream({ write() { throw new Error('sink broke'); } })).catch((e) => e.message);\n\
         const controller = new AbortController();\n\
         const slow = new ReadableStream({ pull(c) { c.enqueue('tick'); return new Promise((r) => setTimeout(r, 1)); } });\n\
         const got = [];\n\
         const piping = slow.pipeTo(new WritableStream({ write(x) { got.push(x); if (got.length === 3) controller.abort(); } }), { signal: controller.signal });\n\
         const signalError = await piping.catch((e) => e.name);\n\
         const kept = new WritableStream();\n\
         await ReadableStream.from([1]).pipeTo(kept, { preventClose: true });\n\
         const w = kept.getWriter(); await w.write(2); await w.close();\n\
         const upper = new TransformStream({ transform(t, c) { if (t === 'bad') throw new TypeError('bad chunk'); c.enqueue(t.toUpperCase()); } });\n\
         const tw = upper.writable.getWriter();\n\
         const ur = upper.readable.getReader();\n\
         tw.write('ok');\n\
         const first = await ur.read();\n\
         const pending = ur.read().catch((e) => e.message);\n\
         const transformError = await tw.write('bad').catch((e) => e.message);\n\
         const terminated = new TransformStream({ start(c) { c.enqueue('only'); c.terminate(); } });\n\
         const identity = new TransformStream();\n\
         const iw = identity.writable.getWriter(); iw.write('same'); iw.close();\n\
         return { both, piped, written, pipeError, aborted, destError, cancelReason, signalError, got: got.length,\n\
           transform: [first.value, transformError, await pending], terminated: await collect(terminated.readable),\n\
           identity: await collect(identity.readable) };",
    );
    assert_eq!(
        value,
        json!({
            "both": [[1, 2, 3], [1, 2, 3]],
            "piped": [2, -1, 4, -2, "end"],
            "written": ["p", "q", "r", "closed"],
            "pipeError": "source broke",
            "aborted": ["source broke"],
            "destError": "sink broke",
            "cancelReason": "sink broke",
            "signalError": "AbortError",
            "got": 3,
            "transform": ["OK", "bad chunk", "bad chunk"],
            "terminated": ["only"],
            "identity": ["same"],
        })
    );
}

#[test]
fn writable_streams_apply_backpressure_and_settle_in_order() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const log = [];\n\
         let release;\n\
         const ws = new WritableStream({\n\
           start() { log.push('start'); },\n\
           write(chunk, c) { log.push('write ' + chunk); return new Promise((r) => { release = r; }); },\n\
           close() { log.push('close'); },\n\
         }, new CountQueuingStrategy({ highWaterMark: 2 }));\n\
         const writer = ws.getWriter();\n\
         const sizes = [writer.desiredSize];\n\
         const p1 = writer.write('a'); sizes.push(writer.desiredSize);\n\
         const p2 = writer.write('b'); sizes.push(writer.desiredSize);\n\
         let readyResolved = false; writer.ready.then(() => { readyResolved = true; });\n\
         await new Promise((r) => setTimeout(r, 0));\n\
         log.push('ready before drain: ' + readyResolved);\n\
         release(); await p1; await new Promise((r) => setTimeout(r, 0)); release(); await p2;\n\
         log.push('ready after drain: ' + readyResolved);\n\
         const closing = writer.close();\n\
         const lateWrite = await writer.write('c').catch((e) => e.constructor.name);\n\
         await closing; await writer.closed;\n\
         const aborts = [];\n\
         const ab = new WritableStream({ abort(r) { aborts.push(r); } });\n\
         const aw = ab.getWriter();\n\
         await aw.abort('why');\n\
         const afterAbort = await aw.write('x').catch((e) => e);\n\
         const failing = new WritableStream({ write() { throw new Error('nope'); } }).getWriter();\n\
         const failed = await failing.write(1).catch((e) => e.message);\n\
         const closedError = await failing.closed.catch((e) => e.message);\n\
         let signalAborted;\n\
         const sig = new WritableStream({ start(c) { c.signal.addEventListener('abort', () => { signalAborted = c.signal.reason; }); } });\n\
         await sig.abort('stop');\n\
         const released = ws.locked;\n\
         writer.releaseLock();\n\
         return { log, sizes, lateWrite, aborts, afterAbort, failed, closedError, signalAborted, released, unlocked: ws.locked };",
    );
    assert_eq!(
        value,
        json!({
            "log": ["start", "write a", "ready before drain: false", "write b",
                    "ready after drain: true", "close"],
            "sizes": [2, 1, 0],
            "lateWrite": "TypeError",
            "aborts": ["why"],
            "afterAbort": "why",
            "failed": "nope",
            "closedError": "nope",
            "signalAborted": "stop",
            "released": true,
            "unlocked": false,
        })
    );
}

#[test]
fn blobs_and_files_slice_by_bytes_and_read_back_utf8() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const blob = new Blob(['h\\u00e9llo ', new Uint8Array([0xe2, 0x82, 0xac]), new Blob(['!'])], { type: 'Text/Plain' });\n\
         const lone = new Blob(['\\ud800']);\n\
         const file = new File(['abc'], 'a.txt', { type: 'text/plain', lastModified: 42 });\n\
         const now = new File([], 'n').lastModified;\n\
         const chunks = [];\n\
         for await (const c of new Blob([new Uint8Array(70000)]).stream()) chunks.push(c.length);\n\
         let bad; try { new Blob('not a sequence'); } catch (e) { bad = e.constructor.name; }\n\
         return {\n\
           size: blob.size, type: blob.type, text: await blob.text(),\n\
           slices: [await blob.slice(1, 3).text(), await blob.slice(-4).text(), await blob.slice(-4, -1).text(), blob.slice(5, 2).size,\n\
             blob.slice(0, 1, 'A/B').type, blob.slice().type],\n\
           bytes: [...await blob.slice(7, 10).bytes()], buffer: (await blob.arrayBuffer()).byteLength,\n\
           lone: [...await lone.bytes()], invalidType: new Blob([], { type: '\\u00e9' }).type,\n\
           file: [file.name, file.size, file.type, file.lastModified, file instanceof Blob, String(file), await file.text()],\n\
           now: now > 1.6e12, chunks, bad, tag: String(blob),\n\
           clone: await structuredClone(file).text(),\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "size": 11,
            "type": "text/plain",
            "text": "héllo €!",
            "slices": ["é", "€!", "€", 0, "a/b", ""],
            "bytes": [0xe2, 0x82, 0xac],
            "buffer": 11,
            "lone": [0xef, 0xbf, 0xbd],
            "invalidType": "",
            "file": ["a.txt", 3, "text/plain", 42, true, "[object File]", "abc"],
            "now": true,
            "chunks": [65536, 4464],
            "bad": "TypeError",
            "tag": "[object Blob]",
            "clone": "abc",
        })
    );
}

#[test]
fn headers_normalise_combine_sort_and_reject_invalid_names_and_values() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const h = new Headers({ 'Content-Type': '  text/plain \\t', 'X-B': '1' });\n\
         h.append('x-b', '2'); h.append('Set-Cookie', 'a=1'); h.append('set-cookie', 'b=2'); h.append('A-First', 'z');\n\
         const errors = [];\n\
         for (const f of [() => h.append('bad name', 'v'), () => h.set('x', 'a\\nb'), () => h.get('\\u00e9'),\n\
           () => new Headers([['only-one']]), () => new Headers(5), () => h.append('x', '\\u0100')]) {\n\
           try { f(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name); }\n\
         }\n\
         const copy = new Headers(h); copy.delete('X-B'); copy.set('a-first', 'y');\n\
         const seen = []; h.forEach((v, k) => seen.push(k));\n\
         return { get: [h.get('CONTENT-TYPE'), h.get('x-b'), h.get('missing'), h.get('set-cookie')], cookies: h.getSetCookie(),\n\
           entries: [...h], keys: [...h.keys()], seen, has: [h.has('X-b'), copy.has('x-b')], copy: [...copy],\n\
           fromPairs: [...new Headers([['k', 'v'], ['K', 'w']])], errors, tag: String(h) };",
    );
    assert_eq!(
        value,
        json!({
            "get": ["text/plain", "1, 2", null, "a=1, b=2"],
            "cookies": ["a=1", "b=2"],
            "entries": [["a-first", "z"], ["content-type", "text/plain"], ["set-cookie", "a=1"],
                        ["set-cookie", "b=2"], ["x-b", "1, 2"]],
            "keys": ["a-first", "content-type", "set-cookie", "set-cookie", "x-b"],
            "seen": ["a-first", "content-type", "set-cookie", "set-cookie", "x-b"],
            "has": [true, false],
            "copy": [["a-first", "y"], ["content-type", "text/plain"], ["set-cookie", "a=1"], ["set-cookie", "b=2"]],
            "fromPairs": [["k", "v, w"]],
            "errors": ["TypeError", "TypeError", "TypeError", "TypeError", "TypeError", "TypeError"],
            "tag": "[object Headers]",
        })
    );
}

#[test]
fn requests_validate_urls_and_methods_and_carry_their_fields() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const errors = {};\n\
         for (const [name, f] of Object.entries({\n\
           relative: () => new Request('/path'), credentials: () => new Request('https://u:p@example.com/'),\n\
           connect: () => new Request('https://example.com', { method: 'connect' }), badMethod: () => new Request('https://e.com', { method: 'a b' }),\n\
           getBody: () => new Request('https://e.com', { body: 'x' }), mode: () => new Request('https://e.com', { mode: 'navigate' }),\n\
           redirect: () => new Request('https://e.com', { redirect: 'sometimes' }),\n\
           streamNoDuplex: () => new Request('https://e.com', { method: 'POST', body: new ReadableStream() }),\n\
         })) { try { f(); errors[name] = 'no error'; } catch (e) { errors[name] = e.constructor.name; } }\n\
         const controller = new AbortController();\n\
         const r = new Request('https://example.com/a/../b?q=1#frag', { method: 'post', body: 'hello', headers: { 'X-A': '1' }, signal: controller.signal, redirect: 'manual', cache: 'no-store' });\n\
         const clone = r.clone();\n\
         controller.abort('stop');\n\
         const bodies = [await clone.text(), r.bodyUsed];\n\
         const derived = new Request(r, { method: 'PUT' });\n\
         return { errors, url: r.url, method: r.method, patch: new Request('https://e.com', { method: 'patch' }).method,\n\
           custom: new Request('https://e.com', { method: 'Custom' }).method,\n\
           type: r.headers.get('content-type'), fields: [r.redirect, r.cache, r.mode, r.credentials, r.referrer, r.destination, r.keepalive],\n\
           aborted: [r.signal.aborted, r.signal.reason, clone.signal.aborted], bodies,\n\
           derived: [derived.method, derived.url, await derived.text(), r.bodyUsed, derived.headers.get('x-a')],\n\
           reuse: await r.text().catch((e) => e.constructor.name), tag: String(r) };",
    );
    assert_eq!(
        value,
        json!({
            "errors": {"relative": "TypeError", "credentials": "TypeError", "connect": "TypeError",
                       "badMethod": "TypeError", "getBody": "TypeError", "mode": "TypeError",
                       "redirect": "TypeError", "streamNoDuplex": "TypeError"},
            "url": "https://example.com/b?q=1#frag",
            "method": "POST",
            "patch": "PATCH",
            "custom": "Custom",
            "type": "text/plain;charset=UTF-8",
            "fields": ["manual", "no-store", "cors", "same-origin", "about:client", "", false],
            "aborted": [true, "stop", true],
            "bodies": ["hello", false],
            "derived": ["PUT", "https://example.com/b?q=1#frag", "hello", true, "1"],
            "reuse": "TypeError",
            "tag": "[object Request]",
        })
    );
}

#[test]
fn responses_read_their_bodies_once_in_every_form() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const r = new Response('{\"a\":[1,2]}', { status: 201, statusText: 'Created', headers: { 'X-Y': 'z' } });\n\
         const c = r.clone();\n\
         const json = await r.json();\n\
         const again = await r.text().catch((e) => e.constructor.name);\n\
         const stream = new Response(new ReadableStream({ start(k) { k.enqueue(new Uint8Array([104, 105])); k.enqueue(new Uint8Array([33])); k.close(); } }));\n\
         const teed = stream.clone();\n\
         const viaBody = []; for await (const chunk of stream.body) viaBody.push(...chunk);\n\
         const errors = {};\n\
         for (const [name, f] of Object.entries({ low: () => new Response(null, { status: 199 }), high: () => new Response('', { status: 600 }),\n\
           nullBody: () => new Response('x', { status: 204 }), text: () => new Response('', { statusText: 'a\\nb' }),\n\
           redirect: () => Response.redirect('https://e.com', 200), relative: () => Response.redirect('/x'),\n\
           json: () => Response.json(undefined), cloneUsed: () => r.clone() })) {\n\
           try { f(); errors[name] = 'no error'; } catch (e) { errors[name] = e.constructor.name; }\n\
         }\n\
         const notBytes = await new Response(new ReadableStream({ start(k) { k.enqueue('text'); k.close(); } })).text().catch((e) => e.constructor.name);\n\
         const params = new Response(new URLSearchParams({ a: '1 2', b: '\\u00e9' }));\n\
         const blob = await new Response(new Blob(['xyz'], { type: 'text/x' })).blob();\n\
         const form = new FormData(); form.append('k', 'v'); form.append('f', new Blob(['file body'], { type: 'text/x' }), 'f.txt');\n\
         const parsed = await new Response(form).formData();\n\
         const urlForm = await new Response('a=1&b=%C3%A9&a=2', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }).formData();\n\
         const jsonResponse = Response.json({ ok: 1 }, { status: 202, headers: { 'x': '1' } });\n\
         const redirect = Response.redirect('https://example.com/next', 307);\n\
         const error = Response.error();\n\
         let immutable; try { error.headers.set('a', 'b'); } catch (e) { immutable = e.constructor.name; }\n\
         const empty = new Response();\n\
         return {\n\
           first: [r.status, r.statusText, r.ok, r.type, r.url, r.redirected, r.headers.get('content-type'), r.headers.get('x-y'), r.bodyUsed],\n\
           json, again, clone: await c.text(), viaBody, stream: [stream.bodyUsed, await teed.text()], errors, notBytes,\n\
           params: [params.headers.get('content-type'), await params.text()],\n\
           blob: [blob.type, await blob.text()],\n\
           form: [parsed.get('k'), parsed.get('f').name, parsed.get('f').type, await parsed.get('f').text()],\n\
           urlForm: urlForm.getAll('a').concat(urlForm.get('b')),\n\
           jsonResponse: [jsonResponse.status, jsonResponse.headers.get('content-type'), await jsonResponse.json()],\n\
           redirect: [redirect.status, redirect.headers.get('location')], error: [error.type, error.status, error.ok, immutable],\n\
           empty: [empty.body, empty.bodyUsed, await empty.text(), empty.bodyUsed],\n\
           bytes: [...await new Response(new Uint8Array([1, 2, 3])).bytes()],\n\
           buffer: (await new Response('abc').arrayBuffer()).byteLength,\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "first": [201, "Created", true, "default", "", false, "text/plain;charset=UTF-8", "z", true],
            "json": {"a": [1, 2]},
            "again": "TypeError",
            "clone": "{\"a\":[1,2]}",
            "viaBody": [104, 105, 33],
            "stream": [true, "hi!"],
            "errors": {"low": "RangeError", "high": "RangeError", "nullBody": "TypeError", "text": "TypeError",
                       "redirect": "RangeError", "relative": "TypeError", "json": "TypeError",
                       "cloneUsed": "TypeError"},
            "notBytes": "TypeError",
            "params": ["application/x-www-form-urlencoded;charset=UTF-8", "a=1+2&b=%C3%A9"],
            "blob": ["text/x", "xyz"],
            "form": ["v", "f.txt", "text/x", "file body"],
            "urlForm": ["1", "2", "é"],
            "jsonResponse": [202, "application/json", {"ok": 1}],
            "redirect": [307, "https://example.com/next"],
            "error": ["error", 0, false, "TypeError"],
            "empty": [null, false, "", false],
            "bytes": [1, 2, 3],
            "buffer": 3,
        })
    );
}

#[test]
fn fetch_always_rejects_with_a_type_error_that_points_to_tools() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const outcomes = [];\n\
         for (const args of [['https://example.com'], [new Request('https://example.com')], ['/relative'], [], [42, { method: 'TRACE' }]]) {\n\
           const promise = fetch(...args);\n\
           outcomes.push(promise instanceof Promise);\n\
           const error = await promise.catch((e) => e);\n\
           outcomes.push(error instanceof TypeError, error.message);\n\
         }\n\
         return { outcomes: [...new Set(outcomes)], length: fetch.length, name: fetch.name };",
    );
    let message = "fetch is not available: forge-host scripts have no network access. Call a tool \
                   instead (tools.call(name, input), or tools.<name>(input)); forge-host tools lists them.";
    assert_eq!(
        value,
        json!({"outcomes": [true, message], "length": 1, "name": "fetch"})
    );
}

#[test]
fn compression_round_trips_and_decodes_known_vectors() {
    let sandbox = Sandbox::new();
    // Made by Python: gzip.compress(data, mtime=0), zlib.compress(data), a raw deflate stream,
    // and a gzip member whose header has a file name and a comment.
    let value = value_of(
        &sandbox,
        "const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));\n\
         const pipe = async (bytes, stream) => new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());\n\
         const text = (bytes) => new TextDecoder().decode(bytes);\n\
         const vectors = {\n\
           gzip: 'H4sIAAAAAAACAwvJSFUoLM1MzlZIKsovz1NIy69QyCrNLShWyC9LLVIoAUrnJFZVKqTkp+sphNBMMQBYAB4AhwAAAA==',\n\
           deflate: 'eJwLyUhVKCzNTM5WSCrKL89TSMuvUMgqzS0oVsgvSy1SKAFK5yRWVSqk5KfrKYTQTDEA+Twwdg==',\n\
           'deflate-raw': 'C8lIVSgszUzOVkgqyi/PU0jLr1DIKs0tKFbIL0stUigBSuckVlUqpOSn6ymE0EwxAA==',\n\
         };\n\
         const known = {};\n\
         for (const [format, data] of Object.entries(vectors)) known[format] = text(await pipe(b64(data), new DecompressionStream(format)));\n\
         known.named = text(await pipe(b64('H4sIGAAAAAAAA25hbWUudHh0AGEgY29tbWVudADLSM3JyQcAhqYQNgUAAAA='), new DecompressionStream('gzip')));\n\
         const input = new TextEncoder().encode('forge '.repeat(50000) + '\\u00e9');\n\
         const round = {};\n\
         for (const format of ['gzip', 'deflate', 'deflate-raw']) {\n\
           const packed = await pipe(input, new CompressionStream(format));\n\
           const unpacked = await pipe(packed, new DecompressionStream(format));\n\
           round[format] = [packed.length < 5000, unpacked.length === input.length && unpacked.every((b, i) => b === input[i])];\n\
         }\n\
         const gz = await pipe(new Uint8Array(0), new CompressionStream('gzip'));\n\
         const header = [...gz.slice(0, 4)];\n\
         const oneByOne = new DecompressionStream('gzip');\n\
         const w = oneByOne.writable.getWriter();\n\
         const reading = new Response(oneByOne.readable).text();\n\
         for (const byte of b64(vectors.gzip)) await w.write(new Uint8Array([byte]));\n\
         await w.close();\n\
         const chunked = await reading;\n\
         let unknown; try { new CompressionStream('brotli'); } catch (e) { unknown = e.constructor.name; }\n\
         let missing; try { new DecompressionStream(); } catch (e) { missing = e.constructor.name; }\n\
         return { known, round, header, chunked: chunked === known.gzip, empty: text(await pipe(gz, new DecompressionStream('gzip'))), unknown, missing,\n\
           tags: [String(new CompressionStream('gzip')), String(new DecompressionStream('deflate'))] };",
    );
    let data = "The quick brown fox jumps over the lazy dog. ".repeat(3);
    assert_eq!(
        value,
        json!({
            "known": {"gzip": data, "deflate": data, "deflate-raw": data, "named": "hello"},
            "round": {"gzip": [true, true], "deflate": [true, true], "deflate-raw": [true, true]},
            "header": [0x1f, 0x8b, 8, 0],
            "chunked": true,
            "empty": "",
            "unknown": "TypeError",
            "missing": "TypeError",
            "tags": ["[object CompressionStream]", "[object DecompressionStream]"],
        })
    );
}

#[test]
fn corrupt_or_truncated_compressed_data_errors_the_stream_with_a_type_error() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));\n\
         const gzip = b64('H4sIAAAAAAACAwvJSFUoLM1MzlZIKsovz1NIy69QyCrNLShWyC9LLVIoAUrnJFZVKqTkp+sphNBMMQBYAB4AhwAAAA==');\n\
         const attempt = (bytes, format = 'gzip') => new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream(format))).text()\n\
           .then(() => 'no error', (e) => e.constructor.name + (e.message.includes('decompression failed') || e.message.includes('chunk') ? '' : ': ' + e.message));\n\
         const flipped = gzip.slice(); flipped[20] ^= 0xff;\n\
         const badCrc = gzip.slice(); badCrc[gzip.length - 6] ^= 1;\n\
         const trailing = new Uint8Array([...gzip, 0]);\n\
         const adler = b64('eJwLyUhVKCzNTM5WSCrKL89TSMuvUMgqzS0oVsgvSy1SKAFK5yRWVSqk5KfrKYTQTDEA+Twwdg=='); adler[adler.length - 1] ^= 1;\n\
         const notChunk = new DecompressionStream('gzip');\n\
         const w = notChunk.writable.getWriter();\n\
         const reading = notChunk.readable.getReader().read().catch((e) => e.constructor.name);\n\
         const wrote = await w.write('a string').catch((e) => e.constructor.name);\n\
         const readable = await reading;\n\
         return { flipped: await attempt(flipped), truncated: await attempt(gzip.slice(0, gzip.length - 5)), headerOnly: await attempt(gzip.slice(0, 6)),\n\
           empty: await attempt(new Uint8Array(0)), badCrc: await attempt(badCrc), trailing: await attempt(trailing),\n\
           notGzip: await attempt(new TextEncoder().encode('plain text, not gzip')), adler: await attempt(adler, 'deflate'),\n\
           raw: await attempt(new Uint8Array([0xff, 0xff]), 'deflate-raw'), wrote, readable };",
    );
    assert_eq!(
        value,
        json!({
            "flipped": "TypeError", "truncated": "TypeError", "headerOnly": "TypeError",
            "empty": "TypeError", "badCrc": "TypeError", "trailing": "TypeError",
            "notGzip": "TypeError", "adler": "TypeError", "raw": "TypeError",
            "wrote": "TypeError", "readable": "TypeError",
        })
    );
}

#[test]
fn a_decompression_bomb_is_inflated_piece_by_piece_as_it_is_read() {
    let sandbox = Sandbox::new();
    // 128 MiB of zeros from 0.85 MB, read and dropped piece by piece under a 64 MiB cap.
    let source = format!(
        "{}\
         const sizes = new Set(); let total = 0;\n\
         for await (const piece of new Blob([bomb]).stream().pipeThrough(new DecompressionStream('deflate-raw'))) {{\n\
           sizes.add(piece.length <= 65536); total += piece.length;\n\
         }}\n\
         return {{ total, bounded: [...sizes], compressed: bomb.length }};",
        bomb_builder(520_264)
    );
    let run = sandbox.run_js(&source, &args!["--memory", "64MiB"]);
    let value = run.assert_succeeded()["value"].clone();
    assert_eq!(
        value,
        json!({"total": 1 + 258 * 520_264_u64, "bounded": [true], "compressed": 845_432})
    );
}

#[test]
fn a_decompression_bomb_read_whole_ends_at_the_memory_cap() {
    let sandbox = Sandbox::new();
    // About 1 GiB of zeros from 6.8 MB, collected into one buffer: the cap ends the run.
    let source = format!(
        "{}\
         const out = await new Response(new Blob([bomb]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer();\n\
         return out.byteLength;",
        bomb_builder(4_161_832)
    );
    let run = sandbox.run_js(&source, &args!["--memory", "64MiB"]);
    assert_eq!(run.error_code(), "MEMORY_LIMIT", "{}", run.stdout());
}
