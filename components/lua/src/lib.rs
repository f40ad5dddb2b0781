//! The Lua engine of forge-host: a component implementing the `forge:engine` world.
//!
//! A script is a Lua 5.4 chunk; `return value` gives the result (no value, or `nil`, is no
//! result; only the first value counts). The globals are Lua's base library, `string`, `table`,
//! `math`, `coroutine` and `utf8`, plus those of `prelude.lua`:
//!
//! - `tools.call(name, input)` returns the response (a table, or whatever JSON value the tool
//!   answered), or raises a `ForgeError`: a table with `.code` and `.message`, whose
//!   `tostring` is `"CODE: message"`; `pcall` catches it. A `nil` input is `{}`.
//! - `tools.gather({{name, input}, ...})` begins every call, then waits for all of them (they
//!   run concurrently on the host) and returns the responses in input order; when any failed
//!   (a call the host refused at once included), it raises the first failure's `ForgeError`
//!   after every call finished.
//! - `tools.begin(name, input)` starts a call and returns its id; `tools.wait()` returns the
//!   next begun call to finish, in the order they finish: `id, response` or `id, nil,
//!   ForgeError`, and `nil` when no call is in flight (the host's `wait-any` answering none).
//!   Completions that arrive while `gather` waits for its own calls are kept for `tools.wait`.
//! - `tools.list()`, `tools.search(query [, limit])`, `tools.describe(name)`: tool tables with
//!   `name`, `description`, `effect`, `input_schema` (decoded) and `function_path`.
//! - `tools.echo(input)`, `tools.ns.fn(input)`: every tool as a function, by the function path
//!   the host gives it (a tool whose path is one of the names above is reachable through
//!   `tools.call` only).
//! - `state.get(key)` (`nil` when unset), `state.set(key, value)`, `state.delete(key)`,
//!   `state.keys()`; `text(value)`; `progress(message [, completed [, total]])`.
//! - `print(...)` writes to stdout and `eprint(...)` to stderr (tab-separated, a newline after).
//! - `json.encode(value)`, `json.decode(text)`, `json.null`, `json.array([t])`: the rules of
//!   [`json`] (a table with keys exactly `1..n` is an array, any other table, `{}` included, an
//!   object; `json.array()` marks an array, even an empty one; `json.null` is null).
//! - `ForgeError.new(code, message)` and `ForgeError.is(value)`.
//! - `inputs()`: the files the host copied into `/input` (`--input`), in its order, each a table
//!   `{name, size, sha256, path}`: `name` below `/input` with `/` separators, `path` the full
//!   path to open (`/input/<name>`). As Python's `forge.inputs()`.
//! - `io`: Lua's, for the files of the job: `io.open`, `io.lines`, `io.read`, `io.write`,
//!   `io.close`, `io.type`, `io.input`, `io.output`, `io.stdin/stdout/stderr`, `io.tmpfile`, and
//!   `file:read/write/lines/seek/close/flush/setvbuf`; see below. There is no `io.popen`.
//! - `os.remove(name)` (a file, or an empty folder) and `os.rename(from, to)`: `true`, or `nil,
//!   message, errno`.
//! - `os.time()`, `os.clock()` (seconds since the run started: WASI has no CPU clock) and
//!   `os.difftime`, and nothing else of `os` (no `execute`, `getenv`, `exit`, `tmpname`, `date`).
//!
//! There is no `require`, `package`, `debug`, `dofile`, `loadfile` or `string.dump`, and `load`
//! takes source text only. `math.random` is seeded from `wasi:random` in every run.
//!
//! ```lua
//! local r = tools.call("echo", { n = 1 })        -- r.n == 1
//! local ok, e = pcall(tools.call, "fail", {})    -- e.code == "TOOL_FAILED", e.message
//! local a, b = table.unpack(tools.gather({ { "sleep", { ms = 10 } }, { "echo", {} } }))
//! local id = tools.begin("sleep", { ms = 5 })
//! local done, response, err = tools.wait()       -- done == id
//! state.set("count", (state.get("count") or 0) + 1)
//! for line in io.lines(inputs()[1].path) do print(line) end
//! local out = assert(io.open("/output/report.txt", "w"))
//! out:write("done\n")
//! assert(out:close())                            -- published when the run succeeds
//! return { done = true }
//! ```
//!
//! # Files
//!
//! The file system is the job's folders, the WASI preopens: `/input` (the `--input` files,
//! read-only), `/output` (published when the run succeeds) and `/work` (scratch, and the current
//! directory, so a relative path is below it). A path anywhere else fails as a missing file
//! (`/etc/passwd: No such file or directory`), a `..` out of a folder as `Operation not
//! permitted`, and a write into `/input` likewise. Writes count against the run's disk quota
//! (`--max-disk`) and open files against `--max-open-files`.
//!
//! Errors follow Lua: `io.open`, `file:read/write/seek/close`, `os.remove` and `os.rename` answer
//! `nil, message, errno` (`nil, "/input/x.csv: No such file or directory", 2`), so `assert(...)`
//! raises the message; `io.lines` and `io.input/io.output` with a name raise it. The errno and
//! message are Linux's (WASI numbers errors its own way; `src/files.rs` translates them): 1
//! `EPERM`, 2 `ENOENT`, 13 `EACCES`, 21 `EISDIR`, 28 `ENOSPC` (the disk quota), ... A failure
//! with no number in Lua's table has a message only: the open-file quota is `"Disk quota
//! exceeded"`. A run that fails after a write was refused for the quota ends `DISK_LIMIT`.
//!
//! Files are buffered as C's: writes wait in a 16 KiB buffer (`file:setvbuf("no")` or
//! `("line")` to change it) that `flush`, `seek`, a read and `close` write out; a write the
//! buffer held back that then fails is reported by `file:close()` / `io.close()` (`nil,
//! message, errno`), unlike omnilua's `close`, which answers `true` whatever happened. A file
//! that is collected, or left open at the end, is written out and closed without a report, so
//! close what you write. An open that fails for want of descriptors collects garbage and tries
//! again, so files nothing refers to any longer do not count. A directory opens but reading it
//! fails (`nil, "Is a directory", 21`). There is no directory listing, no `mkdir`, no links.
//!
//! `io.write`, `io.stdout` and `io.stderr` are the run's stdout and stderr (as `print` and
//! `eprint`; the host keeps a tail of each), and `io.read` reads stdin, which is empty: `nil` for
//! a line, `""` for `"a"`. `io.tmpfile()` makes its file in `/work` and removes its name at
//! once, so it disappears when closed. A read count is read in pieces of at most 1 MiB (omnilua
//! would reserve the whole count first, and cut it to 32 bits on wasm32); `lines` refuses a
//! count over 1 MiB.
//!
//! An uncaught error ends the run as `SCRIPT_RUNTIME` with Lua's traceback as its stack; an
//! uncaught `ForgeError` keeps its code only when it is one the host's calls fail with (the
//! request's `pass-through-codes`), so a script cannot claim `TIMEOUT`. A chunk that does not
//! parse is `SCRIPT_SYNTAX` (`file.lua:LINE: ...`).
//!
//! # Why omnilua
//!
//! The reference Lua is C and raises errors with `longjmp`. The wasi-libc of Debian bookworm,
//! which builds the QuickJS engine, has no `setjmp.h`; the ones that do need wasm exception
//! handling, which the host's wasmtime would have to turn on (with its GC feature). omnilua is
//! a Lua 5.4 VM in Rust: its errors are `Result`s, so it needs no non-local jump and no C
//! compiler, and builds for wasm32-wasip2 like any crate. It is young, so it is pinned and its
//! known wasm32 faults are guarded in the prelude (integers past 2^31 given to `string.rep`,
//! `sub`, `byte`, `find`, `match`, `gmatch`, which it would truncate to 32 bits).
//!
//! # Limits
//!
//! The host enforces every limit. A Lua stack overflow (`stack overflow` at Lua's cap of a
//! million slots, about 64 MiB here, or `C stack overflow` from 200 levels of metamethod, `pcall`
//! or `gsub` nesting) is `STACK_LIMIT`; a script that raises the same message itself gets the
//! same code. Under a memory limit too small for that stack, deep recursion is `MEMORY_LIMIT`.
//! Memory exhaustion cannot be caught in Lua: the allocation fails in Rust and the instance
//! traps, which the host reports as `MEMORY_LIMIT` because it refused the growth. One allocation
//! of 2 GiB or more is refused by Rust itself on wasm32, before the host can see it: `string.rep`
//! and `json.encode` stop short of that with a Lua error, but `s .. s` on a 1 GiB string (under
//! a memory limit over 2 GiB) ends `ISOLATE_FAILURE`. A result over its budget is refused here
//! before it is copied out (`BUDGET_EXCEEDED`), as are call inputs, state values and `text()`
//! values over theirs, and a value nested deeper than 512 levels (`INVALID_INPUT`, as the host
//! would answer).

wit_bindgen::generate!({
    world: "script-engine",
    path: "../../wit",
});

mod bridge;
mod files;
mod json;
mod runner;

use exports::forge::engine::engine::{EngineInfo, Guest, RunRequest, ScriptError};

struct LuaEngine;

impl Guest for LuaEngine {
    fn describe() -> EngineInfo {
        EngineInfo {
            id: "lua".into(),
            language: "lua".into(),
            version: "Lua 5.4 (omnilua 0.7.1)".into(),
            extensions: vec![".lua".into()],
            capabilities: [
                "tool-calls",
                "concurrent-calls",
                "catalog",
                "state",
                "text",
                "progress",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
        }
    }

    fn run(request: RunRequest) -> Result<Option<String>, ScriptError> {
        runner::run(request)
    }
}

export!(LuaEngine);
