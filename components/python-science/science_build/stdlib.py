"""The `stdlib` step: CPython's whole `Lib/`, as componentize-py bundles it (the tar beside the
wasm libraries that `extract` carves out), written to WORK/stdlib-src.zip for xtask to compile
inside the engine and publish beside it. Runs mount it read-only where the interpreter expects
its standard library, so a module the snapshot did not import still imports, with its source.

What needs a part of CPython that its WASI build lacks stays out (STDLIB_LEFT_OUT, which the
engine's import errors also read), and the build's sysconfig data is repaired (SYSCONFIG_FIXES).

The pinned wheels of LIBRARY_WHEELS (plotly and what it needs) go under the profile's library
folder (`library.folder` in components/python/forge/profiles.json), which the python-science
profile puts on sys.path: their modules are compiled with the rest and import at run time. What
only Jupyter uses is left out (LIBRARY_LEFT_OUT), and patches/plotly-*.patch apply."""

import json
import shutil
import tarfile
import zipfile
from pathlib import Path

from .extract import SYSCONFIGDATA
from .patching import apply_hunks, parse, patch_files
from .pins import LIBRARY_WHEELS
from .fetch import requirements
from .steps import Step, fresh_or_log, log, run, sha256, source_text, verify

# Top-level names of Lib/ left out, and why, under `left_out` (the one list: the engine's import
# errors read it too, and the C modules the build lacks, under `absent`).
WASI_FILE = Path(__file__).resolve().parents[2] / "python/forge/stdlib_wasi.json"

# The build passed configure `--build=$(config.guess)` with its newline, which cut CONFIG_ARGS
# before its closing quote (`shlex.split` fails on it, and with it `test.support`).
SYSCONFIG_FIXES = {
    "'--build=x86_64-pc-linux-gnu\"": "'--build=x86_64-pc-linux-gnu'\"",
}

FIXED_TIME = (1980, 1, 1, 0, 0, 0)

# The profiles' table, read for the library folder's name (the engine reads the same entry).
PROFILES_FILE = Path(__file__).resolve().parents[2] / "python/forge/profiles.json"

# Files of the library wheels that only Jupyter uses (the FigureWidget bundle and the JupyterLab
# extension, about 15 MB): path prefixes inside a wheel. A wheel's `.data` folder (files for
# sys.prefix, here JupyterLab's) is left out too.
LIBRARY_LEFT_OUT = ("plotly/labextension/", "plotly/package_data/widgetbundle.js")


def library_folder():
    """The folder of the zip that holds the library wheels' files (below the /python mount)."""
    profiles = json.loads(PROFILES_FILE.read_text())
    return profiles["python-science"]["library"]["folder"]


def library_wheels(c):
    """{name: wheel} of LIBRARY_WHEELS in WORK/downloads-library (a folder of their own: the
    `extract` step watches the other downloads), fetched by pip with their hashes when missing."""
    folder = c.work / "downloads-library"
    folder.mkdir(parents=True, exist_ok=True)

    def found(name, version, digest):
        return next((w for w in sorted(folder.glob(f"{name}-{version}-*.whl"))
                     if sha256(w) == digest), None)

    if any(found(n, v, h) is None for n, (v, h) in LIBRARY_WHEELS.items()):
        req = requirements(c.work / "requirements-library.txt",
                           [(n, v, h) for n, (v, h) in LIBRARY_WHEELS.items()])
        run([c.venv / "bin/pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--require-hashes", "--only-binary", ":all:", "-d", folder, "-r", req])
    wheels = {}
    for name, (version, digest) in LIBRARY_WHEELS.items():
        wheel = found(name, version, digest)
        if wheel is None:
            raise SystemExit(f"stdlib: pip gave no {name} {version} wheel with sha256 {digest}")
        verify(wheel, digest)
        wheels[name] = wheel
    return wheels


def library_files(c):
    """(path in the zip, bytes) of every kept file of the library wheels, patched."""
    folder = library_folder()
    edits = {}
    for patch in patch_files("plotly"):
        for rel, hunks in parse(patch).items():
            edits.setdefault(rel, []).append((patch.name, hunks))
    applied = set()
    for name, path in sorted(library_wheels(c).items()):
        with zipfile.ZipFile(path) as wheel:
            for member in sorted(wheel.namelist()):
                if member.endswith("/") or member.startswith(LIBRARY_LEFT_OUT) \
                        or member.split("/")[0].endswith(".data"):
                    continue
                data = wheel.read(member)
                for patch_name, hunks in edits.get(member, []):
                    data = apply_hunks(f"{patch_name}: {member}", data.decode(), hunks).encode()
                    applied.add(member)
                yield f"{folder}/{member}", data
    if set(edits) - applied:
        raise SystemExit(f"stdlib: patches name files no library wheel has: {sorted(set(edits) - applied)}")


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
    step = Step(c.work, "stdlib", [tar, WASI_FILE, PROFILES_FILE],
                [step_stdlib, stdlib_tar, repaired, SYSCONFIG_FIXES, FIXED_TIME, library_folder,
                 library_wheels, library_files, requirements, LIBRARY_WHEELS, LIBRARY_LEFT_OUT,
                 *map(source_text, patch_files("plotly"))])
    if fresh_or_log(step) and out.exists():
        return
    skip = set(left_out())
    partial = out.with_suffix(".zip.partial")
    kept = library = 0

    def add(z, name, data):
        info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, data)

    with tarfile.open(tar) as t, zipfile.ZipFile(partial, "w") as z:
        members = sorted((m for m in t.getmembers() if m.isfile()), key=lambda m: m.name)
        for member in members:
            top = member.name.split("/")[0].removesuffix(".py")
            if top in skip or "/__pycache__/" in f"/{member.name}":
                continue
            add(z, member.name, repaired(member.name, t.extractfile(member).read()))
            kept += 1
        for name, data in library_files(c):
            add(z, name, data)
            library += 1
    shutil.move(partial, out)
    log(f"stdlib: {kept} files of {tar.name} and {library} of the library wheels in {out} "
        f"({len(skip)} names left out)")
    step.done()
