"""The `stdlib` step: CPython's whole `Lib/`, as componentize-py bundles it (the tar beside the
wasm libraries that `extract` carves out), written to WORK/stdlib-src.zip for xtask to compile
inside the engine and publish beside it. Runs mount it read-only where the interpreter expects
its standard library, so a module the snapshot did not import still imports, with its source.

What needs a part of CPython that its WASI build lacks stays out (STDLIB_LEFT_OUT, which the
engine's import errors also read), and the build's sysconfig data is repaired (SYSCONFIG_FIXES)."""

import json
import shutil
import tarfile
import zipfile
from pathlib import Path

from .extract import SYSCONFIGDATA
from .steps import Step, fresh_or_log, log

# Top-level names of Lib/ left out, and why, under `left_out` (the one list: the engine's import
# errors read it too, and the C modules the build lacks, under `absent`).
WASI_FILE = Path(__file__).resolve().parents[2] / "python/forge/stdlib_wasi.json"

# The build passed configure `--build=$(config.guess)` with its newline, which cut CONFIG_ARGS
# before its closing quote (`shlex.split` fails on it, and with it `test.support`).
SYSCONFIG_FIXES = {
    "'--build=x86_64-pc-linux-gnu\"": "'--build=x86_64-pc-linux-gnu'\"",
}

FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def left_out():
    return json.loads(WASI_FILE.read_text())["left_out"]


def stdlib_tar(bundled):
    """The bundled tar that holds the standard library (the one with the sysconfig data)."""
    for tar in sorted(bundled.glob("*.tar")):
        with tarfile.open(tar) as t:
            if SYSCONFIGDATA in t.getnames():
                return tar
    raise SystemExit(f"no standard library tar in {bundled} (run the extract step)")


def repaired(name, data):
    if name.startswith(("_sysconfigdata_", "_sysconfig_vars_")):
        text = data.decode()
        for broken, fixed in SYSCONFIG_FIXES.items():
            text = text.replace(broken, fixed)
        return text.encode()
    return data


def step_stdlib(c):
    """Write c.work/stdlib-src.zip: Lib/ minus what WASI cannot use, sysconfig repaired."""
    tar = stdlib_tar(c.work / "extract" / "bundled")
    out = c.work / "stdlib-src.zip"
    step = Step(c.work, "stdlib", [tar, WASI_FILE],
                [step_stdlib, stdlib_tar, repaired, SYSCONFIG_FIXES, FIXED_TIME])
    if fresh_or_log(step) and out.exists():
        return
    skip = set(left_out())
    partial = out.with_suffix(".zip.partial")
    kept = 0
    with tarfile.open(tar) as t, zipfile.ZipFile(partial, "w") as z:
        members = sorted((m for m in t.getmembers() if m.isfile()), key=lambda m: m.name)
        for member in members:
            top = member.name.split("/")[0].removesuffix(".py")
            if top in skip or "/__pycache__/" in f"/{member.name}":
                continue
            data = repaired(member.name, t.extractfile(member).read())
            info = zipfile.ZipInfo(member.name, date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            kept += 1
    shutil.move(partial, out)
    log(f"stdlib: {kept} files of {tar.name} in {out} ({len(skip)} names left out)")
    step.done()
