"""MCP measurements for `cargo xtask bench`, from the official Python MCP SDK:

- p50 of `run_javascript` `return 1` and `run_python` `forge.result(1)` through a warm
  `forge-host mcp` on stdio, and, in the same run, of a no-op `echo` call to npm
  server-everything (the cost of one MCP round trip to a fast server);
- 100 sequential calls to server-everything's `echo` made by one script inside forge-host,
  against the same 100 calls made directly by this client;
- the resident memory of `forge-host mcp` after 10 and after 1,000 calls.

    bench_mcp.py FORGE_HOST DATA_DIR SERVER_EVERYTHING

prints one flat JSON object of numbers (milliseconds, MiB).
"""

import json
import os
import statistics
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def children_named(name):
    """Pids of this process's children whose command is `name`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == os.getpid() and comm == name:
            found.append(int(entry))
    return found


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def p50(call, n):
    times = []
    for _ in range(n):
        began = time.perf_counter()
        await call()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def session_of(params, body):
    async with stdio_client(params) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


async def main():
    forge, data, everything = sys.argv[1], sys.argv[2], sys.argv[3]
    out = {}

    async def direct(session):
        echo = lambda: session.call_tool("echo", {"message": "x"})  # noqa: E731
        for _ in range(20):
            await echo()
        out["mcp_everything_echo_p50_ms"] = await p50(echo, 200)
        began = time.perf_counter()
        for _ in range(100):
            await echo()
        out["mcp_direct_echo_100_ms"] = (time.perf_counter() - began) * 1000

    await session_of(StdioServerParameters(command=everything, args=[]), direct)

    async def served(session):
        js = lambda: session.call_tool("run_javascript", {"code": "return 1"})  # noqa: E731
        py = lambda: session.call_tool(  # noqa: E731
            "run_python", {"code": "import forge\nforge.result(1)"}
        )
        for _ in range(10):
            await js()
        await py()
        pids = children_named("forge-host")
        out["mcp_server_rss_after_10_calls_mib"] = rss_mib(pids[0]) if pids else 0.0
        out["mcp_run_javascript_p50_ms"] = await p50(js, 300)
        out["mcp_run_python_p50_ms"] = await p50(py, 100)
        code = "for (let i = 0; i < 100; i++) await tools.ev.echo({message: 'x'}); return 1"
        hundred = []
        for _ in range(10):
            began = time.perf_counter()
            result = await session.call_tool("run_javascript", {"code": code})
            hundred.append((time.perf_counter() - began) * 1000)
            assert not result.is_error, result
        out["mcp_script_echo_100_ms"] = statistics.median(hundred)
        for _ in range(1000 - 10 - 300 - 100 - 10 - 1):
            await js()
        out["mcp_server_rss_after_1000_calls_mib"] = rss_mib(pids[0]) if pids else 0.0

    params = StdioServerParameters(
        command=forge,
        args=["mcp", "--data-dir", data, "--mcp", f"ev={everything}", "--trust", "ev=read"],
    )
    await session_of(params, served)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
