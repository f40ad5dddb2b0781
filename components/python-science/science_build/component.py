"""The `component` step (componentize-py over the stdlib engine's app, with this profile and the
numpy, pandas and compression site folders) and the build manifest next to the component."""

import json
import subprocess
import sys
import time

from . import compression, sqlite, toolchain
from .pins import (DEB_SUITE, DEBS, NUMPY, PANDAS, PURE_WHEELS, PYPI, REQUIREMENTS, TZDATA,
                   ZIGLANG)
from .steps import Step, fresh_or_log, log, run, sha256
from .toolchain import REPO

SCIENCE = REPO / "components/python-science"
# Read, not copied: the profiles' package lists (the app reads them when componentize-py runs it).
PROFILES = REPO / "components/python/forge/profiles.json"
# Debian tools of the machine's own suite that the build uses, as toolchain.json lists them for
# the QuickJS and science routes (recorded in the manifest, not pinned: bookworm's versions only
# change with point releases).
HOST_DEBS = toolchain.DEBS["quickjs"] + toolchain.DEBS["science"]


def step_component(c):
    """componentize the stdlib engine's app (components/python) with this profile's
    `forge_profile` (app/) and the tzdata, numpy, pandas, compression (`_bz2`, `_lzma`) and sqlite
    (`_sqlite3`) site dirs on the path: one app, two profiles."""
    profile = SCIENCE / "app"
    # The app reads the componentize-py pin (describe's version) and the profile's packages
    # while componentize-py runs it: their text is part of the recipe, not only their mtime.
    step = Step(c.work, "component", [c.work / "stamps/pandas", c.site_compression, c.site_sqlite,
                                      c.site_tzdata, profile, REPO / "components/python", REPO / "wit"],
                [step_component, write_manifest, compression.manifest, sqlite.manifest, HOST_DEBS,
                 REQUIREMENTS.read_text(), PROFILES.read_text()])
    if fresh_or_log(step) and c.out.exists():
        return
    c.out.parent.mkdir(parents=True, exist_ok=True)
    partial = c.out.with_suffix(".wasm.partial")
    t0 = time.time()
    run([c.venv / "bin/componentize-py", "-d", REPO / "wit", "-w", "script-engine", "componentize",
         "app", "-p", REPO / "components/python", "-p", profile, "-p", c.site_tzdata, "-p", c.site,
         "-p", c.site_pandas, "-p", c.site_compression, "-p", c.site_sqlite, "-o", partial])
    partial.rename(c.out)
    log(f"component: {c.out} {c.out.stat().st_size / 1e6:.1f} MB in {time.time() - t0:.0f} s")
    write_manifest(c)
    step.done()


def write_manifest(c):
    """`<out>.manifest.json`: every pinned input and the host tools' versions, next to the
    component, so a build can be compared with another."""
    versions = {}
    for name in HOST_DEBS:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                             text=True)
        versions[name] = out.stdout.strip() if out.returncode == 0 else None
    manifest = {
        "component": {"file": c.out.name, "sha256": sha256(c.out), "bytes": c.out.stat().st_size},
        "sdists": {n: {"version": v, "sha256": h} for n, v, h in (NUMPY, PANDAS)},
        "wheels": {**{n: {"version": v, "sha256": h} for n, (v, h) in PYPI.items()},
                   **{n: {"version": v, "sha256": h} for n, (v, h) in PURE_WHEELS.items()},
                   TZDATA[0]: {"version": TZDATA[1], "sha256": TZDATA[2]},
                   ZIGLANG[0]: {"version": ZIGLANG[1], "sha256": ZIGLANG[2], "platform": ZIGLANG[3]}},
        "debs": {n: {"version": v, "arch": a, "sha256": h, "suite": DEB_SUITE}
                 for n, (v, a, h) in DEBS.items()},
        **compression.manifest(c),
        **sqlite.manifest(c),
        "host_debs": versions,
        "build_python": sys.version.split()[0],
    }
    path = c.out.with_name(c.out.stem + ".manifest.json")
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    log(f"manifest: {path}")
