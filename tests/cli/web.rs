//! The web platform's common API in the JavaScript engine (issue 40): timers on the run's event
//! loop, encoding, URL, events and abort signals, crypto, structuredClone, console, and the
//! limits and replay kept around them. Streams, blobs, fetch's types and compression are in
//! `web_fetch.rs`; WPT's URL data in `wpt_url.rs`.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox, args};

#[track_caller]
fn value_of(sandbox: &Sandbox, source: &str) -> Value {
    sandbox.run_js(source, NO_ARGS).assert_succeeded()["value"].clone()
}

#[test]
fn timers_fire_in_order_and_the_run_waits_for_them_after_it_returns() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "const order = [];\n\
         setTimeout(() => order.push('t20'), 20);\n\
         setTimeout(() => order.push('t0'), 0);\n\
         const id = setTimeout(() => order.push('cleared'), 5); clearTimeout(id);\n\
         let n = 0; const iv = setInterval(() => { order.push('iv' + ++n); if (n === 3) clearInterval(iv); }, 1);\n\
         queueMicrotask(() => order.push('micro'));\n\
         const t0 = performance.now();\n\
         await new Promise((resolve) => setTimeout(resolve, 30));\n\
         const waited = performance.now() - t0;\n\
         setTimeout(() => console.log('after return', order.join(',')), 10);\n\
         return { order, waited: waited >= 30 };",
        NO_ARGS,
    );
    let report = run.assert_succeeded();
    assert_eq!(
        report["value"],
        json!({"order": ["micro", "t0", "iv1", "iv2", "iv3", "t20"], "waited": true})
    );
    assert_eq!(
        report["stdout"], "after return micro,t0,iv1,iv2,iv3,t20\n",
        "the run ends only once no timer is left, as in Node"
    );
}

#[test]
fn an_interval_never_cleared_ends_at_the_deadline_naming_it() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "setInterval(function heartbeat() {}, 50); return 'done';",
        &args!["--timeout", "1s"],
    );
    assert_eq!(run.error_code(), "TIMEOUT", "{}", run.stdout());
    let message = run.report()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("setInterval(heartbeat, every 50 ms)"),
        "{message}"
    );
}

#[test]
fn an_exception_in_a_timer_fails_the_run() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "setTimeout(() => { throw new RangeError('late failure'); }, 1); return 1;",
        NO_ARGS,
    );
    assert_eq!(run.error_code(), "SCRIPT_RUNTIME");
    assert!(
        run.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("RangeError: late failure")
    );
}

#[test]
fn a_million_pending_timers_end_at_the_memory_cap() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "for (let i = 0; i < 10_000_000; i++) setTimeout(() => {}, 1000 + i); return 'all set';",
        &args!["--memory", "64MiB"],
    );
    assert_eq!(run.error_code(), "MEMORY_LIMIT", "{}", run.stdout());
}

#[test]
fn timers_clocks_and_random_bytes_replay_identically() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "const seen = [];\n\
         const call = tools.call('sleep', { ms: 15 }).then(() => seen.push('call'));\n\
         setTimeout(() => seen.push('timer 5'), 5);\n\
         setTimeout(() => seen.push('timer 40'), 40);\n\
         await call;\n\
         await new Promise((r) => setTimeout(r, 50));\n\
         return { seen, uuid: crypto.randomUUID(), bytes: [...crypto.getRandomValues(new Uint8Array(4))],\n\
                  now: performance.now(), date: Date.now(), origin: performance.timeOrigin };",
        NO_ARGS,
    );
    let report = run.assert_succeeded();
    assert_eq!(
        report["value"]["seen"],
        json!(["timer 5", "call", "timer 40"])
    );
    let id = report["id"].as_str().expect("id").to_string();
    let replayed = sandbox.forge(&args!["replay", &id, "--json"]);
    let replayed = replayed.report();
    assert_eq!(replayed["identical"], true, "{replayed:#}");
}

#[test]
fn text_encoder_and_decoder_follow_the_encoding_standard() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const enc = new TextEncoder();\n\
         const fatal = new TextDecoder('utf-8', { fatal: true });\n\
         let threw = null; try { fatal.decode(new Uint8Array([0xff, 0x41])); } catch (e) { threw = e.constructor.name; }\n\
         const streamed = new TextDecoder();\n\
         const euro = enc.encode('€');\n\
         const parts = streamed.decode(euro.subarray(0, 1), { stream: true }) + '|' + streamed.decode(euro.subarray(1));\n\
         const into = new Uint8Array(4); const r = enc.encodeInto('a€b', into);\n\
         let unknown = null; try { new TextDecoder('nope'); } catch (e) { unknown = e.constructor.name; }\n\
         return {\n\
           bytes: [...enc.encode('h\\u00e9\\ud83d\\ude00\\ud800')],\n\
           replaced: new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62])),\n\
           bom: new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])),\n\
           keptBom: new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])).length,\n\
           utf16: new TextDecoder('utf-16le').decode(new Uint8Array([0x68, 0, 0x69, 0])),\n\
           latin: new TextDecoder('latin1').decode(new Uint8Array([0x80, 0xe9])),\n\
           name: new TextDecoder('latin1').encoding, threw, parts, into: [r.read, r.written, ...into], unknown };",
    );
    assert_eq!(
        value,
        json!({
            "bytes": [0x68, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0xef, 0xbf, 0xbd],
            "replaced": "a\u{fffd}b",
            "bom": "a",
            "keptBom": 2,
            "utf16": "hi",
            "latin": "\u{20ac}\u{e9}",
            "name": "windows-1252",
            "threw": "TypeError",
            "parts": "|\u{20ac}",
            "into": [2, 4, 0x61, 0xe2, 0x82, 0xac],
            "unknown": "RangeError"
        })
    );
}

#[test]
fn url_parses_resolves_and_updates_its_search_params() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const u = new URL('../b/c?x=1&y=%20two#frag', 'https://user:pw@Example.COM:443/a/d/e');\n\
         u.searchParams.append('z', 'a b&c');\n\
         const parts = { href: u.href, origin: u.origin, host: u.host, port: u.port, pathname: u.pathname,\n\
                         search: u.search, hash: u.hash, username: u.username, y: u.searchParams.get('y') };\n\
         u.pathname = '/new path'; u.port = '8080'; u.hash = '';\n\
         let bad = null; try { new URL('no scheme here'); } catch (e) { bad = [e.constructor.name, e.message]; }\n\
         const p = new URLSearchParams({ b: '2', a: '1' }); p.sort();\n\
         return { parts, after: u.href, bad, sorted: p.toString(), can: [URL.canParse('http://x'), URL.canParse('x')],\n\
                  idna: new URL('http://bücher.example/').hostname, json: JSON.stringify({ u: new URL('http://a/') }) };",
    );
    assert_eq!(
        value,
        json!({
            "parts": {
                "href": "https://user:pw@example.com/a/b/c?x=1&y=+two&z=a+b%26c#frag",
                "origin": "https://example.com",
                "host": "example.com",
                "port": "",
                "pathname": "/a/b/c",
                "search": "?x=1&y=+two&z=a+b%26c",
                "hash": "#frag",
                "username": "user",
                "y": " two"
            },
            "after": "https://user:pw@example.com:8080/new%20path?x=1&y=+two&z=a+b%26c",
            "bad": ["TypeError", "Invalid URL: 'no scheme here'"],
            "sorted": "a=1&b=2",
            "can": [true, false],
            "idna": "xn--bcher-kva.example",
            "json": "{\"u\":\"http://a/\"}"
        })
    );
}

#[test]
fn events_and_abort_signals_behave_as_the_dom_says() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const target = new EventTarget(); const seen = [];\n\
         const listener = (e) => seen.push(['a', e.type, e.target === target, e.eventPhase]);\n\
         target.addEventListener('ping', listener);\n\
         target.addEventListener('ping', listener);\n\
         target.addEventListener('ping', () => seen.push(['once']), { once: true });\n\
         target.addEventListener('ping', { handleEvent: (e) => { seen.push(['obj', e.detail]); e.preventDefault(); } });\n\
         const notCanceled = target.dispatchEvent(new CustomEvent('ping', { detail: 7, cancelable: true }));\n\
         target.dispatchEvent(new Event('ping'));\n\
         const controller = new AbortController(); let reason = null;\n\
         controller.signal.addEventListener('abort', () => { reason = controller.signal.reason.name; });\n\
         const any = AbortSignal.any([controller.signal, new AbortController().signal]);\n\
         controller.abort();\n\
         let thrown = null; try { any.throwIfAborted(); } catch (e) { thrown = [e instanceof DOMException, e.name, e.code]; }\n\
         const timeout = AbortSignal.timeout(5);\n\
         await new Promise((r) => timeout.onabort = r);\n\
         return { seen, notCanceled, reason, anyAborted: any.aborted, thrown, timeout: timeout.reason.name,\n\
                  aborted: AbortSignal.abort('why').reason };",
    );
    assert_eq!(
        value,
        json!({
            "seen": [["a", "ping", true, 2], ["once"], ["obj", 7], ["a", "ping", true, 2], ["obj", null]],
            "notCanceled": false,
            "reason": "AbortError",
            "anyAborted": true,
            "thrown": [true, "AbortError", 20],
            "timeout": "TimeoutError",
            "aborted": "why"
        })
    );
}

#[test]
fn crypto_digests_and_hmac_match_the_published_vectors() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');\n\
         const abc = new TextEncoder().encode('abc');\n\
         const digests = {};\n\
         for (const alg of ['SHA-1', 'SHA-256', 'sha-384', 'SHA-512']) digests[alg] = hex(await crypto.subtle.digest(alg, abc));\n\
         // RFC 4231, test case 2.\n\
         const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);\n\
         const data = new TextEncoder().encode('what do ya want for nothing?');\n\
         const mac = await crypto.subtle.sign('HMAC', key, data);\n\
         const ok = await crypto.subtle.verify('HMAC', key, mac, data);\n\
         const bad = await crypto.subtle.verify('HMAC', key, new Uint8Array(32), data);\n\
         const unsupported = await crypto.subtle.digest('MD5', abc).then(() => null, (e) => [e.name, e instanceof DOMException]);\n\
         const uuid = crypto.randomUUID();\n\
         let quota = null; try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { quota = e.name; }\n\
         const jwk = await crypto.subtle.exportKey('jwk', key);\n\
         return { digests, mac: hex(mac), ok, bad, unsupported, uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuid),\n\
                  quota, jwk: [jwk.kty, jwk.k, jwk.alg], algorithm: key.algorithm };",
    );
    assert_eq!(
        value,
        json!({
            "digests": {
                "SHA-1": "a9993e364706816aba3e25717850c26c9cd0d89d",
                "SHA-256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "sha-384": "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
                "SHA-512": "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
            },
            "mac": "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            "ok": true,
            "bad": false,
            "unsupported": ["NotSupportedError", true],
            "uuid": true,
            "quota": "QuotaExceededError",
            "jwk": ["oct", "SmVmZQ", "HS256"],
            "algorithm": {"name": "HMAC", "hash": {"name": "SHA-256"}, "length": 32}
        })
    );
}

#[test]
fn structured_clone_keeps_shapes_and_refuses_what_cannot_be_cloned() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const shared = { n: 1 }; const src = { a: [shared, shared], m: new Map([['k', new Set([1, 2])]]),\n\
           d: new Date(0), r: /x+/gi, bytes: new Uint8Array([1, 2, 3]).subarray(1), e: new RangeError('boom'), big: 10n };\n\
         src.self = src;\n\
         const c = structuredClone(src);\n\
         const refusals = [];\n\
         for (const bad of [() => 1, Symbol('s'), new WeakMap(), Promise.resolve(), new URL('http://a/')]) {\n\
           try { structuredClone(bad); refusals.push('cloned'); } catch (e) { refusals.push(e.name); }\n\
         }\n\
         const buffer = new ArrayBuffer(8); const moved = structuredClone(buffer, { transfer: [buffer] });\n\
         return { same: c.a[0] === c.a[1], notSource: c.a[0] !== shared, cycle: c.self === c, set: [...c.m.get('k')],\n\
                  date: c.d.toISOString(), regexp: [c.r.source, c.r.flags], bytes: [...c.bytes], error: [c.e instanceof RangeError, c.e.message],\n\
                  big: typeof c.big, refusals, transfer: [buffer.byteLength, moved.byteLength] };",
    );
    assert_eq!(
        value,
        json!({
            "same": true, "notSource": true, "cycle": true, "set": [1, 2],
            "date": "1970-01-01T00:00:00.000Z", "regexp": ["x+", "gi"], "bytes": [2, 3],
            "error": [true, "boom"], "big": "bigint",
            "refusals": ["DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError"],
            "transfer": [0, 8]
        })
    );
}

#[test]
fn console_writes_like_node_and_the_platform_globals_are_there() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_js(
        "console.log('%s has %d items', 'cart', 3, { a: 1, b: 'x' });\n\
         console.info(new Map([['k', [1, 2]]]), new Set(['s']));\n\
         console.warn('careful'); console.error(new TypeError('bad'));\n\
         console.table([{ a: 1, b: 2 }, { a: 3 }]);\n\
         console.group('g'); console.log('inside'); console.groupEnd(); console.log('outside');\n\
         console.count(); console.count(); console.assert(1 === 2, 'math');\n\
         const missing = ['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'TextEncoderStream', 'TextDecoderStream',\n\
           'structuredClone', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'AbortController',\n\
           'AbortSignal', 'Event', 'EventTarget', 'CustomEvent', 'DOMException', 'crypto', 'performance', 'navigator',\n\
           'reportError', 'atob', 'btoa', 'console'].filter((name) => !(name in globalThis));\n\
         const fetched = await fetch('https://example.com/').then(() => 'resolved', (e) => [e instanceof TypeError, e.message]);\n\
         return { missing, agent: navigator.userAgent, b64: [btoa('hi!'), atob('aGkh')], fetched };",
        NO_ARGS,
    );
    let report = run.assert_succeeded();
    assert_eq!(report["value"]["missing"], json!([]));
    assert_eq!(report["value"]["b64"], json!(["aGkh", "hi!"]));
    let fetched = &report["value"]["fetched"];
    assert_eq!(fetched[0], true, "{fetched}");
    assert!(
        fetched[1]
            .as_str()
            .unwrap_or_default()
            .contains("no network")
            && fetched[1]
                .as_str()
                .unwrap_or_default()
                .contains("tools.call"),
        "{fetched}"
    );
    let stdout = report["stdout"].as_str().unwrap_or_default();
    let stderr = report["stderr"].as_str().unwrap_or_default();
    assert!(
        stdout.starts_with(
            "cart has 3 items { a: 1, b: 'x' }\nMap(1) { 'k' => [ 1, 2 ] } Set(1) { 's' }\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("│ (index) │ a │ b │"), "{stdout}");
    assert!(
        stdout.contains("g\n  inside\noutside\ndefault: 1\ndefault: 2\n"),
        "{stdout}"
    );
    assert!(stderr.starts_with("careful\nTypeError: bad\n"), "{stderr}");
    assert!(stderr.ends_with("Assertion failed: math\n"), "{stderr}");
}
