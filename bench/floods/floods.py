"""Floods for `cargo xtask bench`: 1 GiB pushed through each of stdout, stderr, `text()`,
`progress()` and tool responses by one `forge-host run`, with the process's peak resident memory
(the operating system's own accounting, from wait4) and its wall time.

    floods.py FORGE_HOST DATA_DIR

prints one flat JSON object of numbers (MiB, seconds).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
CHUNKS = 1024  # 1024 chunks of (about) 1 MiB: 1 GiB

FLOODS = {
    "stdout": f"const s = 'x'.repeat({MIB - 1});\nfor (let i = 0; i < {CHUNKS}; i++) console.log(s);\nreturn 1;\n",
    "stderr": f"const s = 'x'.repeat({MIB - 1});\nfor (let i = 0; i < {CHUNKS}; i++) console.error(s);\nreturn 1;\n",
    "text": f"const s = 'x'.repeat({MIB - 16});\nlet refused = 0;\nfor (let i = 0; i < {CHUNKS}; i++) {{ try {{ text(s); }} catch (e) {{ refused++; }} }}\nreturn refused;\n",
    "progress": f"const s = 'x'.repeat({MIB});\nfor (let i = 0; i < {CHUNKS}; i++) progress(s, i, {CHUNKS});\nreturn 1;\n",
    "tool_responses": f"const s = 'x'.repeat({MIB - 64});\nlet bytes = 0;\nfor (let i = 0; i < {CHUNKS}; i++) bytes += (await tools.echo({{s}})).s.length;\nreturn bytes;\n",
}


def main():
    forge, data = sys.argv[1], sys.argv[2]
    out = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, source in FLOODS.items():
            script = os.path.join(scratch, f"flood_{name}.js")
            with open(script, "w") as f:
                f.write(source)
            began = time.monotonic()
            child = subprocess.Popen(
                [forge, "run", script, "--json", "--timeout", "600s", "--max-tool-calls", "2000",
                 "--data-dir", data],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=scratch,
            )
            report = child.stdout.read()
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.monotonic() - began
            report = json.loads(report)
            if report.get("status") != "succeeded":
                raise SystemExit(f"the {name} flood did not succeed: {report.get('error')}")
            out[f"flood_{name}_peak_rss_mib"] = usage.ru_maxrss / 1024
            out[f"flood_{name}_seconds"] = seconds
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
