# Call several tools at once: forge.gather begins every call, then waits for them all, so the
# host runs them concurrently (up to --max-concurrency). Failures are ordinary exceptions.
# Run: forge-host run examples/concurrent-tools.py
import time

import forge

started = time.monotonic()
results = forge.gather([("sleep", {"ms": 200}) for _ in range(4)])
elapsed_ms = round((time.monotonic() - started) * 1000)

echoed = forge.call("echo", {"hello": "tools"})
try:
    forge.call("fail", {"message": "expected failure"})
except forge.ToolError as error:
    failure = {"code": error.code, "message": error.message}

forge.result({"slept": results, "elapsed_ms": elapsed_ms, "echo": echoed, "failure": failure,
              "catalog": [tool["name"] for tool in forge.tools()]})
