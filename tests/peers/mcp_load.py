"""Puts `forge-host mcp --http` under load with the official Python MCP SDK.

    mcp_load.py --http URL --token-file FILE [--clients N] [--seconds S] [--code JS] [--flood N]

N clients (64 by default), each with its own HTTP client and MCP session, call `run_javascript`
with JS one call after another for S seconds (after all have initialized). With --flood N, they
do so a second time while slowloris.py holds N half-open sockets to the server. Prints one JSON
object: for each phase, calls, runs per second, p50 and p99 latency in ms, errors and a few of
them; and what the flood did. The Rust tests and `cargo xtask bench` read it.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

import httpx2

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, int(round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


class Phase:
    """What the clients saw while one phase lasted."""

    def __init__(self):
        self.latencies = []
        self.errors = []

    def summary(self, seconds):
        latencies = sorted(self.latencies)
        return {
            "seconds": seconds,
            "calls": len(latencies),
            "runs_per_second": len(latencies) / seconds if seconds else 0,
            "p50_ms": percentile(latencies, 0.50),
            "p99_ms": percentile(latencies, 0.99),
            "mean_ms": statistics.fmean(latencies) if latencies else None,
            "errors": len(self.errors),
            "error_samples": self.errors[:5],
        }


async def client(args, token, ready, phases):
    """One client: a session of its own that calls through each phase it is handed."""
    headers = {"Authorization": "Bearer " + token}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0))
    announced = False
    handed = None
    try:
        async with streamable_http_client(args.http, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                ready.release()
                announced = True
                while (handed := await phases.get()) is not None:
                    phase, deadline, done = handed
                    while time.monotonic() < deadline:
                        began = time.monotonic()
                        try:
                            result = await session.call_tool("run_javascript", {"code": args.code})
                        except Exception as error:  # noqa: BLE001 - every failure is counted
                            phase.errors.append(f"{type(error).__name__}: {error}")
                            continue
                        if result.is_error:
                            text = " ".join(getattr(c, "text", "") for c in result.content)
                            phase.errors.append(text[:300])
                        else:
                            phase.latencies.append((time.monotonic() - began) * 1000)
                    done.release()
                    handed = None
    except Exception as error:  # noqa: BLE001 - a session that fails counts as an error
        print(f"mcp_load: a client failed: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("MCP_LOAD_TRACEBACKS"):
            traceback.print_exc()
        if not announced:
            ready.release()
        if handed is not None:
            phase, _, done = handed
            phase.errors.append(f"session: {type(error).__name__}: {error}")
            done.release()
    finally:
        await http.aclose()


async def run_phase(args, queues):
    phase = Phase()
    done = asyncio.Semaphore(0)
    began = time.monotonic()
    for queue in queues:
        queue.put_nowait((phase, began + args.seconds, done))
    for _ in queues:
        await done.acquire()
    return phase.summary(time.monotonic() - began)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--code", default="return 1 + 1")
    parser.add_argument("--flood", type=int, default=0, help="sockets of the second phase's flood")
    args = parser.parse_args()
    with open(args.token_file) as file:
        token = file.read().strip()
    ready = asyncio.Semaphore(0)
    queues = [asyncio.Queue() for _ in range(args.clients)]
    opening = time.monotonic()
    tasks = [asyncio.create_task(client(args, token, ready, queue)) for queue in queues]
    for _ in queues:
        await ready.acquire()
    out = {"clients": args.clients, "sessions_opened_s": time.monotonic() - opening}
    alive = lambda: [q for q, t in zip(queues, tasks) if not t.done()]  # noqa: E731
    out["calm"] = await run_phase(args, alive())
    if args.flood:
        target = args.http.split("://", 1)[1].split("/", 1)[0]
        flood = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(__file__), "slowloris.py"), target,
             "--sockets", str(args.flood)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        said = await asyncio.to_thread(flood.stdout.readline)
        if not said.startswith("flooding"):
            raise SystemExit(f"mcp_load: the flood did not start: {said!r}")
        out["flooded"] = await run_phase(args, alive())
        flood.stdin.close()
        out["flood"] = json.loads(await asyncio.to_thread(flood.stdout.readline))
        flood.wait()
    for queue in queues:
        queue.put_nowait(None)
    await asyncio.gather(*tasks)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(main())
