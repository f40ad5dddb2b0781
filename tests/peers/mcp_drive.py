"""Drives `forge-host mcp` with the official Python MCP SDK, for the end-to-end tests.

    mcp_drive.py SCENARIO (--stdio JSON_ARGV | --http URL)

prints one JSON object with what it saw; the Rust tests assert on it. Scenarios:
- basic: initialize, tools/list, run_javascript and run_python with results, a bad request,
  search_tools and get_run;
- progress: a script's progress() arrives as notifications/progress;
- cancel: a long run is cancelled (server started with --max-runs 1, so the next call runs only
  once the cancelled one has ended), then a call succeeds;
- concurrent: 8 calls at once;
- upstream: a script calls a tool of an upstream MCP server (MCP behind MCP);
- elicit: the client declares elicitation and answers each question with --answer (approve,
  deny, decline); a run of --code is asked about its calls live;
- pause: a client that cannot ask runs --code, which pauses; `resume_run` continues it with
  --answer (approve, deny), and a second `resume_run` of it is refused (each --absent path is
  checked before the resume);
- bench: p50 of N `return 1` / `forge.result(1)` calls (and of upstream `echo`, when given);
- inputs: run_python reads each path of --input (one call per path) and returns its text, so a
  refusal (INVALID_INPUT) and a success are told apart;
- files: run_python publishes a small PNG, a larger one, a text file and a folder with an
  index.html; prints the result's content items, what resources/read returns for each link and
  for the page's asset (sha256, mime type, text or blob), what it answers for URIs it must
  refuse (another run's, outside the run's files, another scheme), and resources/list;
- pressure: -n calls of --code at once, each asking for --memory-mb (the server lowers it to
  its --memory); prints each result and how long its call took;
- probe (HTTP only, no session): posts an initialize request as it is (with the token of
  --token-file, if given) and prints the status and WWW-Authenticate header.

Over HTTP, --token-file FILE sends its token as `Authorization: Bearer ...`, and --ca FILE checks
the server's certificate against that authority.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import ssl
import statistics
import subprocess
import sys
import time

import httpx2

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def structured(result):
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text"),
    }


async def basic(session, _args):
    out = {}
    tools = await session.list_tools()
    out["tools"] = sorted(t.name for t in tools.tools)
    out["run_javascript_description"] = next(
        t.description for t in tools.tools if t.name == "run_javascript"
    )
    out["js"] = structured(await session.call_tool("run_javascript", {"code": "return 6 * 7"}))
    out["py"] = structured(
        await session.call_tool("run_python", {"code": "import forge\nforge.result({'n': 2 ** 10})"})
    )
    out["failed"] = structured(
        await session.call_tool("run_javascript", {"code": "throw new Error('boom')"})
    )
    out["clamped"] = structured(
        await session.call_tool("run_javascript", {"code": "return 1", "timeout_ms": 10**9})
    )
    try:
        bad = await session.call_tool("run_javascript", {"cod": "return 1"})
        out["bad"] = {"result": structured(bad)}
    except Exception as error:  # a JSON-RPC error is raised
        out["bad"] = {"error": str(error)}
    try:
        wrong = await session.call_tool("run_python", {"code": 5})
        out["wrong_type"] = {"result": structured(wrong)}
    except Exception as error:
        out["wrong_type"] = {"error": str(error)}
    out["search"] = structured(await session.call_tool("search_tools", {"query": "sleep"}))
    run_id = out["js"]["structured"]["id"]
    out["get_run"] = structured(await session.call_tool("get_run", {"id": run_id}))
    out["get_missing"] = structured(await session.call_tool("get_run", {"id": "no-such-run"}))
    out["ping"] = (await session.send_ping()) is not None
    return out


async def progress(session, _args):
    seen = []

    async def on_progress(done, total, message):
        seen.append({"progress": done, "total": total, "message": message})

    code = "for (let i = 1; i <= 3; i++) { progress(`step ${i}`, i, 3); await tools.sleep({ms: 5}); } return 'done'"
    result = await session.call_tool(
        "run_javascript", {"code": code}, progress_callback=on_progress
    )
    return {"result": structured(result), "progress": seen}


async def cancel(session, _args):
    started = asyncio.Event()

    async def on_progress(_done, _total, _message):
        started.set()

    code = "progress('looping'); while (true) {}"
    call = asyncio.create_task(
        session.call_tool(
            "run_javascript",
            {"code": code, "timeout_ms": 60000},
            progress_callback=on_progress,
        )
    )
    await started.wait()
    cancelled_at = time.monotonic()
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    # With --max-runs 1 this call waits until the cancelled run has ended.
    after = structured(await session.call_tool("run_javascript", {"code": "return 'next'"}))
    return {"after": after, "next_ms": (time.monotonic() - cancelled_at) * 1000}


async def concurrent(session, _args):
    code = "await tools.sleep({ms: 300}); return 'ok'"
    began = time.monotonic()
    results = await asyncio.gather(
        *(session.call_tool("run_javascript", {"code": code}) for _ in range(8))
    )
    return {
        "results": [structured(r) for r in results],
        "wall_ms": (time.monotonic() - began) * 1000,
    }


async def upstream(session, args):
    code = args.code or "return await tools.ev.echo({message: 'hi'})"
    return {"result": structured(await session.call_tool("run_javascript", {"code": code}))}


async def elicit(session, args):
    return {"result": structured(await session.call_tool("run_javascript", {"code": args.code}))}


def answerer(answer, asked):
    """An elicitation callback that records each question and answers `answer`."""

    async def callback(_context, params):
        schema = params.requested_schema
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        asked.append(
            {
                "message": params.message,
                "schema": schema,
                "call": dict(params.meta or {}).get("forge-host/call"),
            }
        )
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": answer == "approve"})

    return callback


async def pause(session, args):
    paused = structured(await session.call_tool("run_javascript", {"code": args.code}))
    run_id = (paused["structured"] or {}).get("id")
    approve = args.answer == "approve"
    absent_before_resume = [not os.path.exists(path) for path in args.absent]
    resumed = structured(await session.call_tool("resume_run", {"id": run_id, "approve": approve}))
    again = structured(await session.call_tool("resume_run", {"id": run_id, "approve": approve}))
    record = structured(await session.call_tool("get_run", {"id": run_id}))
    return {
        "paused": paused,
        "absent_before_resume": absent_before_resume,
        "resumed": resumed,
        "again": again,
        "record": record,
    }


async def timed(call, n):
    times = []
    for _ in range(n):
        began = time.perf_counter()
        await call()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def bench(session, args):
    n = args.n
    await session.call_tool("run_javascript", {"code": "return 1"})
    await session.call_tool("run_python", {"code": "import forge\nforge.result(1)"})
    out = {
        "run_javascript_p50_ms": await timed(
            lambda: session.call_tool("run_javascript", {"code": "return 1"}), n
        ),
        "run_python_p50_ms": await timed(
            lambda: session.call_tool("run_python", {"code": "import forge\nforge.result(1)"}), n
        ),
    }
    return out


async def inputs(session, args):
    code = (
        "import forge, pathlib\n"
        "forge.result({i['name']: pathlib.Path(i['path']).read_text() for i in forge.inputs()"
        " if pathlib.Path(i['path']).is_file()})"
    )
    results = []
    for path in args.input:
        results.append(structured(await session.call_tool("run_python", {"code": code, "inputs": [path]})))
    return {"results": results}


# A 1x1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

FILES = f"""
import base64, pathlib
png = base64.b64decode({PNG!r})
out = pathlib.Path('/output')
(out / 'chart.png').write_bytes(png)
(out / 'big.png').write_bytes(png + bytes(4096))
(out / 'notes.txt').write_text('caf\u00e9 au lait\\n')
(out / 'dash').mkdir()
(out / 'dash' / 'index.html').write_text('<html><script src="app.js"></script></html>')
(out / 'dash' / 'app.js').write_text('console.log(1)')
"""


async def read(session, uri):
    try:
        result = await session.read_resource(uri)
    except Exception as error:  # a JSON-RPC error is raised
        return {"error": str(error)}
    content = result.contents[0]
    text = getattr(content, "text", None)
    data = text.encode() if text is not None else base64.b64decode(content.blob)
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "mime": content.mime_type,
        "text": text is not None,
    }


def item(content):
    if content.type == "image":
        data = base64.b64decode(content.data)
        return {"type": "image", "mime": content.mime_type, "sha256": hashlib.sha256(data).hexdigest()}
    if content.type == "resource_link":
        return {
            "type": "resource_link",
            "uri": str(content.uri),
            "name": content.name,
            "mime": content.mime_type,
            "size": content.size,
        }
    return {"type": content.type}


async def files(session, _args):
    result = await session.call_tool("run_python", {"code": FILES})
    items = [item(c) for c in result.content]
    run = result.structured_content["id"]
    reads = {}
    for each in items:
        if each["type"] == "resource_link":
            reads[each["uri"]] = await read(session, each["uri"])
    asset = f"forge-host://runs/{run}/dash/app.js"
    reads[asset] = await read(session, asset)
    other = await session.call_tool(
        "run_python", {"code": "import pathlib\npathlib.Path('/output/other.txt').write_text('x')"}
    )
    other_run = other.structured_content["id"]
    refused = {}
    for uri in [
        f"forge-host://runs/{other_run}/chart.png",
        f"forge-host://runs/{run}/secret.txt",
        f"forge-host://runs/{run}/provenance.json",
        f"forge-host://runs/{run}/%2E%2E/{other_run}/other.txt",
        f"forge-host://runs/{run}",
        "forge-host://runs/00000000/chart.png",
        "file:///etc/passwd",
    ]:
        refused[uri] = await read(session, uri)
    listed = await session.list_resources()
    return {
        "structured": result.structured_content,
        "items": items,
        "reads": reads,
        "other": other.structured_content,
        "refused": refused,
        "listed": sorted(str(r.uri) for r in listed.resources),
    }


def http_client(args):
    headers = {}
    if args.token_file:
        with open(args.token_file) as file:
            headers["Authorization"] = "Bearer " + file.read().strip()
    verify = ssl.create_default_context(cafile=args.ca) if args.ca else True
    return httpx2.AsyncClient(
        headers=headers, verify=verify, timeout=httpx2.Timeout(30.0, read=300.0)
    )


async def probe(args):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    async with http_client(args) as client:
        response = await client.post(
            args.http,
            json=initialize,
            headers={"Accept": "application/json, text/event-stream"},
        )
    return {
        "status": response.status_code,
        "www_authenticate": response.headers.get("www-authenticate"),
    }


async def full_disk(session, args):
    """One server process: a run, then the data directory filled (by a file `--fill` names) and a
    run that must fail for it, then the room given back and a run that must work again."""
    # One script, stored with room: what meets the full disk is the journal and the state.
    code = "state.set('n', (state.get('n') ?? 0) + 1); return state.get('n')"
    run = lambda: session.call_tool("run_javascript", {"code": code, "session": "d"})
    out = {"before": structured(await run())}
    chunk = b"\0" * (64 * 1024)
    with open(args.fill, "wb", buffering=0) as filler:
        for step in (chunk, chunk[:4096]):
            try:
                while filler.write(step):
                    pass
            except OSError:
                pass
    out["full"] = structured(await run())
    os.remove(args.fill)
    out["after"] = structured(await run())
    # The journal as another process sees it while this server still runs (so reconciliation
    # leaves its records alone): whatever the full disk stopped must be closed by now.
    argv = json.loads(args.stdio)
    data_dir = argv[argv.index("--data-dir") + 1]
    listed = subprocess.run(
        [argv[0], "journal", "list", "--json", "--data-dir", data_dir],
        capture_output=True, check=True,
    )
    out["journal"] = json.loads(listed.stdout)
    return out


async def pressure(session, args):
    """-n calls at once, as a crowd of agents would make them; each result with its duration."""

    async def one():
        began = time.monotonic()
        arguments = {"code": args.code, "memory_mb": args.memory_mb}
        result = structured(await session.call_tool("run_javascript", arguments))
        return {"result": result, "ms": (time.monotonic() - began) * 1000}

    return {"calls": await asyncio.gather(*(one() for _ in range(args.n)))}


SCENARIOS = {
    "basic": basic,
    "progress": progress,
    "cancel": cancel,
    "concurrent": concurrent,
    "upstream": upstream,
    "elicit": elicit,
    "pause": pause,
    "bench": bench,
    "inputs": inputs,
    "files": files,
    "probe": probe,
    "full_disk": full_disk,
    "pressure": pressure,
}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--stdio", help="JSON list: the server's command line")
    parser.add_argument("--http", help="the server's URL")
    parser.add_argument("--code", help="the script of `upstream`")
    parser.add_argument("--answer", choices=["approve", "deny", "decline"], default="approve")
    parser.add_argument("--absent", action="append", default=[], help="`pause`: a path that must not exist before the resume")
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--input", action="append", default=[], help="`inputs`: a path to name")
    parser.add_argument("--token-file", help="HTTP: a file holding the bearer token to send")
    parser.add_argument("--ca", help="HTTP: the authority the server's certificate must chain to")
    parser.add_argument("--memory-mb", type=int, default=1024, help="`pressure`: each call's memory_mb")
    parser.add_argument("--fill", help="`full_disk`: the file that fills the data directory")
    args = parser.parse_args()
    scenario = SCENARIOS[args.scenario]
    if args.scenario == "probe":
        json.dump(await probe(args), sys.stdout)
        sys.stdout.write("\n")
        return
    if args.stdio:
        argv = json.loads(args.stdio)
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        transport = stdio_client(params)
    else:
        transport = streamable_http_client(args.http, http_client=http_client(args))
    async with transport as streams:
        read, write = streams[0], streams[1]
        asked = []
        callback = answerer(args.answer, asked) if args.scenario == "elicit" else None
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            info = await session.initialize()
            out = await scenario(session, args)
            out["server_name"] = info.server_info.name
            if callback is not None:
                out["asked"] = asked
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(main())
