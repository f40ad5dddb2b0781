#!/usr/bin/env python3
"""Build the `python-science` engine: componentize-py's CPython 3.14 component plus numpy and pandas.

Python 3 standard library only. Every step is idempotent (it is skipped when its stamp or output
is newer than its inputs), so a second run does nothing. Usage:

    python3 components/python-science/build.py [--work DIR] [--out FILE] [--jobs N] [step ...]

Steps, in order (naming some runs only those; `--upto STEP` runs the steps up to STEP): venv,
download, deb, extract, sysroot, compression-src, compression, numpy, pandas, component.
Defaults: --work /tmp/science-build, --out /tmp/science-out/python-science.wasm.
The two compression steps (compression.py) build the `_bz2` and `_lzma` modules that both CPython
profiles link in: xtask's stdlib build runs `--upto compression`.

Host requirements (Debian bookworm): clang-19, lld-19 (wasm-ld-19), llvm-19, zstd, dpkg-deb,
apt-get, libclang-rt-19-dev-wasm32, libc++-19-dev-wasm32 (apt-get install -y ...).

No registry host name is written here: PyPI files come through pip (pinned by sha256; with
--sdist-via-index the two sdists are fetched from the index pip is configured with, by sha256,
which avoids pip's native build of each sdist for its metadata), and the Debian mirror for the
newer suite is read from the machine's own apt sources at build time.
"""

import argparse
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# Read, not copied: the componentize-py pin (version and wheel sha256) is written once, in the
# stdlib engine's requirements file, and the profiles' package lists in profiles.json (which the
# app reads when componentize-py runs it).
REQUIREMENTS = REPO / "components/python/requirements.txt"
PROFILES = REPO / "components/python/forge/profiles.json"


def requirement_pin(path, name):
    """(version, sha256) of `name` in a pip requirements file: `name==VERSION` with one
    `--hash=sha256:...`, on one line or continued with a backslash."""
    text = path.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        m = re.match(rf"\s*{re.escape(name)}==(\S+)\s+--hash=sha256:([0-9a-f]{{64}})\s*$", line)
        if m:
            return m.group(1), m.group(2)
    raise SystemExit(f"{path}: no `{name}==VERSION --hash=sha256:...` line")


# ---------------------------------------------------------------------------------------------
# Pinned inputs: (name, version, sha256). Every download is checked against these.
# ---------------------------------------------------------------------------------------------
PYPI = {
    # The build tool: the stdlib engine's own pin, from components/python/requirements.txt (this
    # table is part of the venv step's recipe, so a new pin reruns it).
    "componentize-py": requirement_pin(REQUIREMENTS, "componentize-py"),
    # Build tools, installed into the build venv (wheels for CPython 3.11 / x86_64 Linux).
    "cython": ("3.3.1", "26a28e0ca5dffe9c7d69d1e3a0f78cb74f41b2b6b40771f620262a5d04862a00"),
    "ninja": ("1.13.2", "65a24341b5ac09fcadcc37082660be40a94174e51a937fabf6e2cae26225fa2c"),
    # pandas needs a newer meson than numpy's vendored 1.9.2 (which crashes on its subprojects).
    "meson": ("1.12.1", "930bc7542cbd9f57009e182fd014eba48cf1a0180a7b9006d2d32d8f168d8b02"),
}
PANDAS = ("pandas", "3.1.1", "05fed3e3b7c99b226f160e29d7d6cb7ef39638c758cbfe42b3f24ba34f04b859")
# Pure-Python run-time dependencies (wheels, unpacked into the pandas site dir).
PURE_WHEELS = {
    "python-dateutil": ("4.0.0", "a5e246f79eb80475e691bf93862cead98decd8a498cf53ba0516fcdc0f50dc1c"),
    "tzdata": ("2026.6", "0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec"),
}
# Source distribution (meson is numpy's own vendored fork, inside the sdist).
NUMPY = ("numpy", "2.4.6", "f3a3570c4a2a16746ac2c31a7c7c7b0c186b95ce902e33db6f28094ed7387dda")
# Only its wasm32-wasi libc headers are used (Debian's 2022 wasi-libc has no pthread.h). The
# manylinux x86_64 wheel is pinned and fetched on any machine (--platform).
ZIGLANG = ("ziglang", "0.17.1", "ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54",
           "manylinux_2_12_x86_64")
# Debian packages from the newer suite (only the headers are used). sid moves: when this exact
# version disappears from the mirror, update version and sha256 together.
DEBS = {
    "libpython3.14-dev": ("3.14.10-1", "amd64",
                          "ce226a5a09bd3739123b95c5a41688ee3110651e6b4f9b22973a27c7be2f64fa"),
}
DEB_SUITE = "sid"

# The wasm shared libraries carried (zstd-compressed) inside componentize-py's native module,
# recognised by a symbol each defines (name -> symbol).
BUNDLED_LIBS = {
    "libpython3.14.so": "Py_Initialize",
    "libc.so": "__main_void",
    "libc++.so": "_ZNSt3__222__libcpp_verbose_abortEPKcz",
    "libc++abi.so": "__cxa_demangle",
    "libwasi-emulated-mman.so": "mmap",
    "libwasi-emulated-process-clocks.so": "clock",
    "libwasi-emulated-getpid.so": "getpid",
    "libwasi-emulated-signal.so": "signal",
}

CLANG = "clang-19"
CLANGXX = "clang++-19"
WASM_LD = "wasm-ld-19"
LLVM_NM = "llvm-nm-19"
LLVM_AR = "llvm-ar-19"
TARGET = "wasm32-wasip1"
BUILTINS = "/usr/lib/llvm-19/lib/clang/19/lib/wasi/libclang_rt.builtins-wasm32.a"
LIBCXX_HEADERS = "/usr/lib/llvm-19/include/wasm32-wasi/c++/v1"

NUMPY_MESON_OPTIONS = [
    "-Dblas=none", "-Dlapack=none", "-Dallow-noblas=true",
    "-Ddisable-svml=true", "-Ddisable-highway=true", "-Ddisable-intel-sort=true",
    "-Ddisable-threading=true", "-Ddisable-optimization=true",
    "-Dcpu-baseline=none", "-Dcpu-dispatch=none",
]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def log(msg):
    print(f"[science {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd, **kw):
    log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(path, expected):
    got = sha256(path)
    if got != expected:
        raise SystemExit(f"sha256 mismatch for {path}: got {got}, pinned {expected}")


def mtime(path):
    """Newest mtime under path (0 when missing)."""
    p = Path(path)
    if not p.exists():
        return 0.0
    newest = p.stat().st_mtime
    if p.is_dir():
        for root, dirs, files in os.walk(p):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except FileNotFoundError:
                    pass
    return newest


class Step:
    """A stamp file per step. The stamp holds a hash of the step's recipe (the source of the
    functions and the constants it uses): the step is fresh when the recipe is unchanged and the
    stamp is newer than all its inputs. Editing one step reruns that step and what follows it,
    not the whole build."""

    def __init__(self, work, name, inputs, recipe=()):
        self.stamp = work / "stamps" / name
        self.inputs = list(inputs)
        self.name = name
        h = hashlib.sha256()
        for part in recipe:
            text = inspect.getsource(part) if callable(part) else repr(part)
            h.update(text.encode() + b"\0")
        self.key = h.hexdigest()

    def fresh(self):
        if not self.stamp.exists() or self.stamp.read_text().strip() != self.key:
            return False
        built = self.stamp.stat().st_mtime
        return all(mtime(i) <= built for i in self.inputs)

    def done(self):
        self.stamp.parent.mkdir(parents=True, exist_ok=True)
        self.stamp.write_text(self.key + "\n")


def fresh_or_log(step):
    if step.fresh():
        log(f"{step.name}: up to date")
        return True
    log(f"{step.name}: building")
    return False


# ---------------------------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------------------------
def step_venv(c):
    """A build venv with pinned cython, ninja and componentize-py (never target/python-venv)."""
    step = Step(c.work, "venv", [], [step_venv, PYPI])
    if fresh_or_log(step) and (c.venv / "bin/python").exists():
        return
    if not (c.venv / "bin/python").exists():
        run([sys.executable, "-m", "venv", c.venv])
    req = c.work / "requirements-build.txt"
    req.write_text("".join(f"{n}=={v} --hash=sha256:{h}\n" for n, (v, h) in PYPI.items()))
    run([c.venv / "bin/pip", "install", "--quiet", "--disable-pip-version-check",
         "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", req])
    step.done()


def step_download(c):
    """numpy sdist and ziglang wheel via pip, checked by sha256."""
    step = Step(c.work, "download", [], [step_download, fetch_from_pip_index, NUMPY, PANDAS, PURE_WHEELS, ZIGLANG])
    if fresh_or_log(step):
        return
    c.dl.mkdir(parents=True, exist_ok=True)
    pip = [c.venv / "bin/pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--require-hashes", "-d", c.dl]
    if c.numpy_sdist().exists() and sha256(c.numpy_sdist()) == NUMPY[2]:
        pass
    elif c.sdist_via_index:
        fetch_from_pip_index(c, NUMPY[0], NUMPY[1], NUMPY[2])
    else:
        req = c.work / "requirements-numpy.txt"
        req.write_text(f"{NUMPY[0]}=={NUMPY[1]} --hash=sha256:{NUMPY[2]}\n")
        # --no-binary numpy, not :all: (that would build the metadata hook's tools from source).
        # Slow: pip builds the sdist natively (meson-python has no metadata-only hook) just to
        # read its metadata; see NOTES.md and --sdist-via-index.
        run(pip + ["--no-binary", NUMPY[0], "-r", req])
    for sdist, pin in ((c.pandas_sdist(), PANDAS),):
        if sdist.exists() and sha256(sdist) == pin[2]:
            pass
        elif c.sdist_via_index:
            fetch_from_pip_index(c, pin[0], pin[1], pin[2])
        else:
            req = c.work / f"requirements-{pin[0]}.txt"
            req.write_text(f"{pin[0]}=={pin[1]} --hash=sha256:{pin[2]}\n")
            run(pip + ["--no-binary", pin[0], "-r", req])
        verify(sdist, pin[2])
    req = c.work / "requirements-pure.txt"
    req.write_text("".join(f"{n}=={v} --hash=sha256:{h}\n" for n, (v, h) in PURE_WHEELS.items()))
    run(pip + ["--only-binary", ":all:", "-r", req])
    req = c.work / "requirements-zig.txt"
    req.write_text(f"{ZIGLANG[0]}=={ZIGLANG[1]} --hash=sha256:{ZIGLANG[2]}\n")
    run(pip + ["--only-binary", ":all:", "--platform", ZIGLANG[3], "-r", req])
    verify(c.numpy_sdist(), NUMPY[2])
    verify(c.zig_wheel(), ZIGLANG[2])
    step.done()


def fetch_from_pip_index(c, name, version, digest):
    """Download the file of `name` whose sha256 is `digest` from the index pip is configured
    with (PIP_INDEX_URL, pip config, else pip's built-in default): no URL is written here, and
    no native build runs (unlike `pip download` of a meson-python sdist)."""
    import json
    import ssl
    import urllib.request

    py = str(c.venv / "bin/python")
    index = os.environ.get("PIP_INDEX_URL")
    if not index:
        r = subprocess.run([py, "-m", "pip", "config", "get", "global.index-url"],
                           capture_output=True, text=True)
        index = r.stdout.strip() if r.returncode == 0 else ""
    if not index:
        index = subprocess.run([py, "-c", "from pip._internal.models.index import PyPI; "
                                "print(PyPI.simple_url)"], capture_output=True, text=True,
                               check=True).stdout.strip()
    cafile = os.environ.get("PIP_CERT") or None
    ctx = ssl.create_default_context(cafile=cafile)
    req = urllib.request.Request(f"{index.rstrip('/')}/{name}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
        files = json.load(r)["files"]
    match = [f for f in files if f.get("hashes", {}).get("sha256") == digest]
    if not match:
        raise SystemExit(f"{name} {version}: no file with sha256 {digest} on the pip index")
    f = match[0]
    url = urllib.parse.urljoin(f"{index.rstrip('/')}/{name}/", f["url"])
    dest = c.dl / f["filename"]
    log(f"fetch {f['filename']} from pip's index")
    with urllib.request.urlopen(url, context=ctx, timeout=600) as r, open(dest.with_suffix(".part"), "wb") as out:
        shutil.copyfileobj(r, out)
    dest.with_suffix(".part").rename(dest)
    verify(dest, digest)


def apt_mirrors():
    """The Debian archive URIs the machine's own apt sources name (deb822 and one-line files)."""
    uris = []
    for f in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", f.read_text()):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
            if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                continue
            suites = fields.get("suites", "").split()
            if any(s.endswith("-security") for s in suites):
                continue
            for uri in fields.get("uris", "").split():
                uris.append((uri, fields.get("signed-by")))
    lists = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*.list"))
    for f in lists:
        if not f.exists():
            continue
        for line in f.read_text().splitlines():
            m = re.match(r"\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m and not m.group(3).endswith("-security"):
                uris.append((m.group(2), None))
    if not uris:
        raise SystemExit("no Debian archive found in /etc/apt/sources.list.d/*.sources or sources.list")
    return uris


def mirror_stanza(types, suite):
    """A deb822 source for `suite` (main) on the machine's own Debian mirror (apt_mirrors)."""
    uri, signed_by = apt_mirrors()[0]
    stanza = f"Types: {types}\nURIs: {uri}\nSuites: {suite}\nComponents: main\n"
    if signed_by:
        stanza += f"Signed-By: {signed_by}\n"
    return stanza


def private_apt(apt, stanza):
    """apt-get options for a private apt directory `apt` whose one source is `stanza`: its own
    sources, lists, state and cache; the system apt config is never touched."""
    for d in ["etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d", "state/lists/partial",
              "cache/archives/partial"]:
        (apt / d).mkdir(parents=True, exist_ok=True)
    (apt / "etc/sources.list").write_text("")
    (apt / "etc/sources.list.d/science.sources").write_text(stanza)
    opts = []
    for k, v in [("Dir::Etc::sourcelist", apt / "etc/sources.list"),
                 ("Dir::Etc::sourceparts", apt / "etc/sources.list.d"),
                 ("Dir::Etc::preferencesparts", apt / "etc/preferences.d"),
                 ("Dir::Etc::preferences", apt / "etc/preferences"),
                 ("Dir::State", apt / "state"), ("Dir::State::status", apt / "state/status"),
                 ("Dir::Cache", apt / "cache"), ("Debug::NoLocking", "1"),
                 ("APT::Sandbox::User", "root")]:
        opts += ["-o", f"{k}={v}"]
    (apt / "state/status").touch()
    return opts


def step_deb(c):
    """libpython3.14-dev from Debian's newer suite, through a private apt directory."""
    step = Step(c.work, "deb", [], [step_deb, apt_mirrors, mirror_stanza, private_apt, DEBS,
                                    DEB_SUITE])
    if fresh_or_log(step):
        return
    opts = private_apt(c.work / "apt", mirror_stanza("deb", DEB_SUITE))
    run(["apt-get", "-q"] + opts + ["update"])
    c.dl.mkdir(parents=True, exist_ok=True)
    for name, (version, arch, digest) in DEBS.items():
        deb = c.dl / f"{name}_{version}_{arch}.deb"
        if not (deb.exists() and sha256(deb) == digest):
            run(["apt-get", "-q"] + opts + ["-o", f"APT::Architecture={arch}", "download",
                 f"{name}:{arch}={version}"], cwd=c.dl)
        verify(deb, digest)
    step.done()


def carve_zstd(blob):
    """Yield each complete zstd frame found in blob (located by its magic number)."""
    magic = b"\x28\xb5\x2f\xfd"
    pos = 0
    while True:
        i = blob.find(magic, pos)
        if i < 0:
            return
        j = i + 4
        fhd = blob[j]
        j += 1
        ok = not (fhd >> 3) & 1
        single, checksum, dict_flag, fcs_flag = (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3, fhd >> 6
        j += (0 if single else 1) + [0, 1, 2, 4][dict_flag] + [1 if single else 0, 2, 4, 8][fcs_flag]
        while ok:
            if j + 3 > len(blob):
                ok = False
                break
            bh = blob[j] | blob[j + 1] << 8 | blob[j + 2] << 16
            j += 3
            typ, size = (bh >> 1) & 3, bh >> 3
            if typ == 3:
                ok = False
                break
            j += 1 if typ == 1 else size
            if bh & 1:
                break
        if ok and j <= len(blob):
            j += 4 if checksum else 0
            r = subprocess.run(["zstd", "-d", "-c", "-q"], input=blob[i:j], capture_output=True)
            if r.returncode == 0:
                yield r.stdout
                pos = j
                continue
        pos = i + 1


def step_extract(c):
    """Unpack the pinned inputs: sdist, zig libc headers, Debian headers, bundled wasm libs."""
    native = next((c.venv / "lib").glob("python3*/site-packages/componentize_py/componentize_py*.so"))
    step = Step(c.work, "extract", [c.numpy_sdist(), c.zig_wheel(), c.dl, native],
                [step_extract, carve_zstd, BUNDLED_LIBS])
    if fresh_or_log(step):
        return
    ex = c.work / "extract"
    if ex.exists():
        shutil.rmtree(ex)
    ex.mkdir(parents=True)
    with tarfile.open(c.numpy_sdist()) as t:
        t.extractall(ex, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(ex)
    # zig keeps headers shared by all musl targets in generic-musl and only wasi's own in
    # wasm-wasi-musl: the wasi sysroot is generic-musl overlaid with wasm-wasi-musl.
    with zipfile.ZipFile(c.zig_wheel()) as z:
        for sub in ("generic-musl", "wasm-wasi-musl"):
            prefix = f"ziglang/lib/libc/include/{sub}/"
            for n in z.namelist():
                if n.startswith(prefix) and not n.endswith("/"):
                    dest = ex / "zig-include" / sub / n[len(prefix):]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(z.read(n))
    for name, (version, arch, _) in DEBS.items():
        run(["dpkg-deb", "-x", c.dl / f"{name}_{version}_{arch}.deb", ex / "deb"])
    libs = ex / "bundled"
    libs.mkdir()
    found = {}
    for k, data in enumerate(carve_zstd(native.read_bytes())):
        if data[:4] == b"\0asm":
            p = libs / f"blob{k:02d}.wasm"
            p.write_bytes(data)
            syms = subprocess.run([LLVM_NM, "--defined-only", "-j", p], capture_output=True,
                                  text=True).stdout.split()
            for lib, sym in BUNDLED_LIBS.items():
                if sym in syms and lib not in found and "_initialize" in syms:
                    # libc++abi also defines nothing of libc++'s; libc defines no Py_*.
                    if lib == "libc.so" and "Py_Initialize" in syms:
                        continue
                    found[lib] = p
                    break
        elif b"_sysconfigdata__wasi_wasm32-wasi.py" in data[:1 << 20] or data[257:262] == b"ustar":
            p = libs / f"blob{k:02d}.tar"
            p.write_bytes(data)
            with tarfile.open(p) as t:
                names = t.getnames()
                if "_sysconfigdata__wasi_wasm32-wasi.py" in names:
                    t.extract("_sysconfigdata__wasi_wasm32-wasi.py", ex)
    missing = set(BUNDLED_LIBS) - set(found)
    if missing or not (ex / "_sysconfigdata__wasi_wasm32-wasi.py").exists():
        raise SystemExit(f"componentize-py bundle: not found {sorted(missing)} / sysconfigdata")
    for lib, p in found.items():
        p.rename(libs / lib)
    step.done()


PYCONFIG_LINE = re.compile(r"^(#define ([A-Za-z_][A-Za-z0-9_]*)(?: (.*))?|/\* #undef ([A-Za-z_][A-Za-z0-9_]*) \*/)$")


def make_pyconfig(template, variables):
    """pyconfig.h for CPython/WASI: Debian's header as the template, values from sysconfigdata."""
    out = []
    for line in template.splitlines():
        m = PYCONFIG_LINE.match(line)
        if not m:
            out.append(line)  # structure, comments and the indented `# define _GNU_SOURCE` block
            continue
        name = m.group(2) or m.group(4)
        value = variables.get(name, 0)
        if value in (0, None):
            out.append(f"/* #undef {name} */")
        else:
            out.append(f"#define {name} {value}")
    return "\n".join(out) + "\n"


def step_sysroot(c):
    """A wasm32-wasip1 sysroot: zig's libc headers, libc++ headers with threads on, Python
    headers with a WASI pyconfig.h, the bundled .so files to link against, and tool wrappers."""
    ex = c.work / "extract"
    step = Step(c.work, "sysroot", [c.work / "stamps/extract", LIBCXX_HEADERS],
                [step_sysroot, make_pyconfig, write_wrappers, sync_tree, CXA_TRAP, TARGET])
    if fresh_or_log(step):
        return
    # Built beside the real one, then synced into it file by file: unchanged files keep their
    # mtime, so a rerun of this step does not make ninja recompile numpy and pandas.
    s = c.sysroot.with_name("sysroot.new")
    if s.exists():
        shutil.rmtree(s)
    shutil.copytree(ex / "zig-include/generic-musl", s / "include")
    shutil.copytree(ex / "zig-include/wasm-wasi-musl", s / "include", dirs_exist_ok=True)
    shutil.copytree(LIBCXX_HEADERS, s / "include/c++/v1")
    site = (s / "include/c++/v1/__config_site")
    text = site.read_text()
    text = text.replace("#define _LIBCPP_HAS_NO_THREADS\n", "/* threads on (wasi-sdk 33 libc++) */\n")
    text = text.replace("/* #undef _LIBCPP_HAS_THREAD_API_PTHREAD */", "#define _LIBCPP_HAS_THREAD_API_PTHREAD")
    site.write_text(text)
    # Python headers: Debian's, with pyconfig.h regenerated from the bundled sysconfigdata.
    pyinc = s / "include/python3.14"
    shutil.copytree(ex / "deb/usr/include/python3.14", pyinc, symlinks=False)
    ns = {}
    exec((ex / "_sysconfigdata__wasi_wasm32-wasi.py").read_text(), ns)
    variables = ns["build_time_vars"]
    template = (ex / "deb/usr/include/x86_64-linux-gnu/python3.14/pyconfig.h").read_text()
    (pyinc / "pyconfig.h").unlink()
    (pyinc / "pyconfig.h").write_text(make_pyconfig(template, variables))
    lib = s / "lib" / TARGET
    lib.mkdir(parents=True)
    for name in BUNDLED_LIBS:
        shutil.copy2(ex / "bundled" / name, lib / name)
    shutil.copy2(ex / "bundled/libpython3.14.so", lib / "libpython3.so")
    # libm, libdl, ... are part of WASI's libc.so: empty archives satisfy `-lm` and friends.
    for name in ("m", "dl", "rt", "pthread", "util"):
        run([LLVM_AR, "crs", lib / f"lib{name}.a"])
    # The exports of the bundled libraries: what an extension may import.
    exports = set()
    for name in BUNDLED_LIBS:
        exports.update(subprocess.run([LLVM_NM, "--defined-only", "-j", lib / name],
                                      capture_output=True, text=True, check=True).stdout.split())
    (s / "exports.txt").write_text("\n".join(sorted(exports)) + "\n")
    # A sysconfigdata for meson's python introspection (run by the build venv's CPython):
    # WASI values, with the include dir pointing at our headers.
    cross_py = c.work / "cross-python"
    cross_py.mkdir(exist_ok=True)
    final_pyinc = c.sysroot / "include/python3.14"
    variables = dict(variables, INCLUDEPY=str(final_pyinc), CONFINCLUDEPY=str(final_pyinc),
                     LIBPYTHON="")
    (cross_py / "_sysconfigdata__wasi_wasm32-wasi.py").write_text(
        f"build_time_vars = {variables!r}\n")
    # sitecustomize: meson also reads sysconfig.get_paths()['include'], computed from the
    # running (host) interpreter; point it at the WASI headers too.
    (cross_py / "sitecustomize.py").write_text(
        "import os, sysconfig\n"
        "_inc = os.environ.get('SCIENCE_PY_INCLUDE')\n"
        "if _inc:\n"
        "    _get_paths = sysconfig.get_paths\n"
        "    def get_paths(*a, **k):\n"
        "        p = dict(_get_paths(*a, **k))\n"
        "        p['include'] = p['platinclude'] = _inc\n"
        "        return p\n"
        "    sysconfig.get_paths = get_paths\n")
    # C++ `throw` without wasm exception handling: the bundled libc++abi has no __cxa_throw
    # (built without exceptions). C++ code is compiled with -fexceptions (throws become calls,
    # catch blocks vanish) and linked with these, which report the exception and trap.
    src = c.work / "cxa_trap.c"
    src.write_text(CXA_TRAP)
    obj = c.work / "cxa_trap.o"
    run([CLANG, f"--target={TARGET}", f"--sysroot={s}", "-fPIC", "-O2", "-c", src, "-o", obj])
    run([LLVM_AR, "crs", lib / "libcxa_trap.a", obj])
    sync_tree(s, c.sysroot)
    shutil.rmtree(s)
    write_wrappers(c)
    step.done()


def sync_tree(src, dst):
    """Make dst hold what src holds, rewriting only the files whose bytes differ."""
    src, dst = Path(src), Path(dst)
    wanted = set()
    for root, _, files in os.walk(src):
        for name in files:
            rel = Path(root, name).relative_to(src)
            wanted.add(rel)
            target = dst / rel
            if target.is_file() and not target.is_symlink() and \
                    target.read_bytes() == (src / rel).read_bytes():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() or target.is_symlink():
                target.unlink()
            shutil.copy2(src / rel, target)
    for root, _, files in os.walk(dst):
        for name in files:
            if Path(root, name).relative_to(dst) not in wanted:
                Path(root, name).unlink()


CXA_TRAP = r"""
#include <stdio.h>
#include <stdlib.h>
struct type_info { void *vtable; const char *name; };
char *__cxa_demangle(const char *mangled, char *buf, unsigned long *n, int *status);
void *__cxa_allocate_exception(unsigned long size) { return calloc(1, size + 64); }
void __cxa_free_exception(void *p) { free(p); }
__attribute__((noreturn)) void __cxa_throw(void *obj, struct type_info *tinfo, void (*dest)(void *)) {
    (void)obj; (void)dest;
    const char *mangled = tinfo && tinfo->name ? tinfo->name : "?";
    int status = -1;
    char *name = __cxa_demangle(mangled, 0, 0, &status);
    /* The host puts this line into the ISOLATE_FAILURE message. */
    fprintf(stderr, "forge: a native extension threw a C++ exception (%s), which this engine "
            "cannot catch; the instance stopped\n", status == 0 && name ? name : mangled);
    fflush(stderr);
    __builtin_trap();
}
"""


def write_wrappers(c):
    b = c.work / "bin"
    b.mkdir(exist_ok=True)
    py = c.venv / "bin/python"
    # python for meson: host CPython with the WASI sysconfig (also runs numpy's generators).
    (b / "cross-python").write_text(
        "#!/bin/sh\n"
        f"export _PYTHON_SYSCONFIGDATA_NAME=_sysconfigdata__wasi_wasm32-wasi\n"
        f"export PYTHONPATH={c.work / 'cross-python'}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        f"export SCIENCE_PY_INCLUDE={c.sysroot / 'include/python3.14'}\n"
        f"exec {py} \"$@\"\n")
    # wasm-ld wrapper: drops --start-group/--end-group and clang's `--entry _initialize`, and
    # fails a link whose output imports a function no bundled library exports (so meson's
    # has_function probes answer truthfully).
    (b / "wasm-ld").write_text(f"""#!{py}
import subprocess, sys
args, out, skip = [], None, False
argv = sys.argv[1:]
i = 0
while i < len(argv):
    a = argv[i]
    if a in ("--start-group", "--end-group", "--eh-frame-hdr", "--as-needed", "--no-as-needed",
             "--allow-shlib-undefined", "--no-undefined") or a.startswith("--hash-style="):
        i += 1; continue
    if a in ("--start-group", "--end-group"):
        i += 1; continue
    if a == "--entry" and i + 1 < len(argv) and argv[i + 1] == "_initialize":
        i += 2; continue
    if a == "-o" and i + 1 < len(argv):
        out = argv[i + 1]
    args.append(a); i += 1
if out is not None and out.endswith("output.exe"):
    # a meson probe: keep main (hidden by default, so garbage-collected with what it calls)
    # and do not link the bundled .so files (wasm-ld makes a signature mismatch against a
    # shared library an error, and probes declare `char f(void)`): the undefined symbols are
    # checked against the exports below instead.
    args = [a for a in args if a not in ("-lpython3.14", "-lc", "-lc++", "-lc++abi")]
    args += ["--export-if-defined=main", "--unresolved-symbols=import-dynamic"]
r = subprocess.run(["{shutil.which(WASM_LD)}"] + args)
if r.returncode != 0 or out is None:
    sys.exit(r.returncode)
exports = set(open("{c.sysroot / 'exports.txt'}").read().split())
def imports(path):
    # (module, name, kind) of each import of a wasm module
    d = open(path, "rb").read()
    def leb(i):
        r = s = 0
        while True:
            b = d[i]; i += 1
            r |= (b & 0x7f) << s; s += 7
            if b < 0x80:
                return r, i
    def name(i):
        n, i = leb(i)
        return d[i:i + n].decode(), i + n
    i = 8
    while i < len(d):
        sid = d[i]; size, i = leb(i + 1); end = i + size
        if sid == 2:
            count, i = leb(i)
            for _ in range(count):
                mod, i = name(i); field, i = name(i); kind = d[i]; i += 1
                if kind == 0:
                    _, i = leb(i)
                elif kind == 1:
                    i += 1; flags = d[i]; i += 1; _, i = leb(i)
                    if flags & 1: _, i = leb(i)
                elif kind == 2:
                    flags = d[i]; i += 1; _, i = leb(i)
                    if flags & 1: _, i = leb(i)
                elif kind == 3:
                    i += 2
                else:
                    i += 2
                yield mod, field, kind
        elif sid == 7:
            count, i = leb(i)
            for _ in range(count):
                field, i = name(i); kind = d[i]; _, i = leb(i + 1)
                yield "<export>", field, kind
        i = end
table = list(imports(out))
own = set(f for m, f, k in table if m == "<export>")  # GOT entries for the module's own symbols
undef = [f for m, f, k in table if ((m == "env" and k == 0) or m in ("GOT.func", "GOT.mem"))
         and f not in own]
missing = [s for s in undef if s not in exports and not s.startswith("PyInit_")]
if missing:
    import os
    os.unlink(out)
    sys.stderr.write("wasm-ld wrapper: undefined symbols not exported by the bundled libraries: "
                     + " ".join(missing[:20]) + "\\n")
    sys.exit(1)
""")
    for f in ("cross-python", "wasm-ld"):
        (b / f).chmod(0o755)


def cross_file(c):
    s = c.sysroot
    target = [f"--target={TARGET}", f"--sysroot={s}"]
    common = ["-fPIC",
              "-D_WASI_EMULATED_SIGNAL", "-D_WASI_EMULATED_MMAN", "-D_WASI_EMULATED_PROCESS_CLOCKS",
              "-D_WASI_EMULATED_GETPID", f"-I{s / 'include/python3.14'}"]
    link = ["-shared", "-nostartfiles", "-nodefaultlibs", f"-fuse-ld={c.work / 'bin/wasm-ld'}",
            "-Wl,--experimental-pic", f"-L{s / 'lib' / TARGET}", "-lpython3.14", "-lc",
            BUILTINS]
    cpp_link = link[:-1] + ["-lcxa_trap", "-lc++", "-lc++abi", BUILTINS]
    q = lambda xs: "[" + ", ".join(repr(str(x)) for x in xs) + "]"
    return f"""[binaries]
c = {q([CLANG] + target)}
cpp = {q([CLANGXX] + target)}
ar = {q([LLVM_AR])}
nm = {q([LLVM_NM])}
strip = 'llvm-strip-19'
python = {q([c.work / 'bin/cross-python'])}
python3 = {q([c.work / 'bin/cross-python'])}
cython = {q([c.venv / 'bin/cython'])}
pkg-config = 'false'

[built-in options]
c_args = {q(common)}
cpp_args = {q(common + ['-fexceptions'])}
c_link_args = {q(link)}
cpp_link_args = {q(cpp_link)}

[properties]
needs_exe_wrapper = true
longdouble_format = 'IEEE_QUAD_LE'

[host_machine]
system = 'wasi'
cpu_family = 'wasm32'
cpu = 'wasm32'
endian = 'little'
"""


# C functions numpy registers with a calling convention whose arity differs from their
# definition. Native ABIs ignore the extra argument; wasm checks the signature of every indirect
# call and traps ("indirect call type mismatch"), so `copy.copy(np.float64(1.5))` would stop the
# instance. Found by running numpy's own tests in the engine (upstream/), then by scanning numpy's
# C sources for every METH_NOARGS/METH_KEYWORDS function, getter and setter whose definition has
# fewer parameters than its convention (these five are all of them in 2.4.6); each edit adds the
# unused parameter CPython passes.
NUMPY_PATCHES = {
    "numpy/_core/src/multiarray/scalartypes.c.src": [  # METH_NOARGS: (self, NULL)
        ("gentype___copy__(PyObject *self)\n",
         "gentype___copy__(PyObject *self, PyObject *NPY_UNUSED(args))\n")],
    "numpy/_core/src/umath/_scaled_float_dtype.c": [  # METH_NOARGS: (self, NULL)
        ("sfloat___reduce__(PyArray_SFloatDescr *self)\n",
         "sfloat___reduce__(PyArray_SFloatDescr *self, PyObject *NPY_UNUSED(args))\n")],
    "numpy/_core/src/multiarray/convert_datatype.c": [  # METH_VARARGS | METH_KEYWORDS
        ("_get_castingimpl(PyObject *NPY_UNUSED(module), PyObject *args)\n",
         "_get_castingimpl(PyObject *NPY_UNUSED(module), PyObject *args,\n"
         "                 PyObject *NPY_UNUSED(kwargs))\n")],
    "numpy/_core/src/multiarray/array_converter.c": [  # getter: (self, closure)
        ("array_converter_get_scalar_input(PyArrayArrayConverterObject *self)\n",
         "array_converter_get_scalar_input(PyArrayArrayConverterObject *self,\n"
         "                                 void *NPY_UNUSED(closure))\n")],
    "numpy/_core/src/multiarray/array_method.c": [  # getter: (self, closure)
        ("boundarraymethod__supports_unaligned(PyBoundArrayMethodObject *self)\n",
         "boundarraymethod__supports_unaligned(PyBoundArrayMethodObject *self,\n"
         "                                     void *NPY_UNUSED(closure))\n")],
    # np.save/np.load on a path dup() the file descriptor for fromfile/tofile; WASI has no dup.
    # Treated as a plain file object, the file is read and written through Python instead.
    "numpy/lib/_format_impl.py": [
        ("def isfileobj(f):\n",
         "def isfileobj(f):\n"
         "    import sys  # forge: WASI's os.dup() fails (ENOTSUP)\n"
         "    if sys.platform == \"wasi\":\n"
         "        return False\n")],
    "numpy/_core/src/multiarray/convert_datatype.h": [
        ("_get_castingimpl(PyObject *NPY_UNUSED(module), PyObject *args);",
         "_get_castingimpl(PyObject *NPY_UNUSED(module), PyObject *args,\n"
         "                 PyObject *NPY_UNUSED(kwargs));")],
}


def apply_patches(root, patches, pristine=None):
    """Applies (old, new) edits to files under root, starting from `pristine(rel)` when given
    (so an earlier version of a patch is undone) or else from the file as it is; an edit already
    applied is skipped, one whose text is gone fails the build (the pinned source changed). A
    file whose patched text is unchanged is not rewritten and keeps its mtime."""
    for rel, edits in patches.items():
        path = root / rel
        current = path.read_text()
        text = pristine(rel) if pristine else current
        for old, new in edits:
            if new in text:
                continue
            if old not in text:
                raise SystemExit(f"patch no longer applies: {rel}: {old.strip()}")
            text = text.replace(old, new, 1)
        if text != current:
            path.write_text(text)


def step_numpy(c):
    """numpy with its vendored meson, through the cross file; installed into c.site."""
    src = c.work / "extract" / f"numpy-{NUMPY[1]}"
    step = Step(c.work, "numpy", [c.work / "stamps/sysroot"],
                [step_numpy, cross_file, NUMPY_MESON_OPTIONS, NUMPY_PATCHES, apply_patches])
    if fresh_or_log(step):
        return
    # From the sdist's own text, so that ninja recompiles only files whose patched text changed.
    with tarfile.open(c.numpy_sdist()) as t:
        apply_patches(src, NUMPY_PATCHES,
                      lambda rel: t.extractfile(f"numpy-{NUMPY[1]}/{rel}").read().decode())
    cf = c.work / "cross.ini"
    cf.write_text(cross_file(c))
    build = c.work / "numpy-build"
    env = dict(os.environ, PATH=f"{c.venv / 'bin'}:{os.environ['PATH']}")
    t0 = time.time()
    if not (build / "build.ninja").exists():
        if build.exists():
            shutil.rmtree(build)
        run([c.venv / "bin/python", src / "vendored-meson/meson/meson.py", "setup", build, src,
             "--cross-file", cf, "--prefix=/", "--buildtype=release", "-Db_ndebug=if-release",
             "--python.platlibdir=/site", "--python.purelibdir=/site"] + NUMPY_MESON_OPTIONS, env=env)
    run([c.venv / "bin/ninja", "-C", build, f"-j{c.jobs}"], env=env)
    if c.site.exists():
        shutil.rmtree(c.site)
    run([c.venv / "bin/python", src / "vendored-meson/meson/meson.py", "install", "-C", build,
         "--destdir", c.work / "install", "--no-rebuild", "--quiet"], env=env)
    shutil.move(str(c.work / "install/site"), c.site)
    shutil.rmtree(c.work / "install")
    log(f"numpy: built in {time.time() - t0:.0f} s")
    step.done()


PANDAS_PATCH_MMAP = ("try:\n    import mmap\nexcept ImportError:  # forge: WASI CPython has no mmap\n"
                     "    import types as _types\n\n    class _NoMmap:\n        forge_stand_in = True\n\n"
                     "    mmap = _types.SimpleNamespace(mmap=_NoMmap, ACCESS_READ=1)\n")
PANDAS_PATCH_CTYPES = ("try:\n    import ctypes\nexcept ImportError:  # forge: WASI CPython has no "
                       "_ctypes\n    ctypes = None\n")
PANDAS_PATCH_MEMORY_MAP = (
    "    memory_map &= hasattr(handle, \"fileno\") or isinstance(handle, str)\n",
    "    memory_map &= hasattr(handle, \"fileno\") or isinstance(handle, str)\n"
    "    # forge: no mmap on WASI: read_csv(memory_map=True) reads the file instead\n"
    "    memory_map &= not getattr(mmap.mmap, \"forge_stand_in\", False)\n")
PANDAS_PATCHES = {
    "pandas/errors/__init__.py": [("\nimport ctypes\n", "\n" + PANDAS_PATCH_CTYPES)],
    "pandas/core/interchange/from_dataframe.py": [("\nimport ctypes\n", "\n" + PANDAS_PATCH_CTYPES)],
    "pandas/io/common.py": [("\nimport mmap\n", "\n" + PANDAS_PATCH_MMAP), PANDAS_PATCH_MEMORY_MAP],
    "pandas/io/parsers/readers.py": [("\nimport mmap\n", "\n" + PANDAS_PATCH_MMAP)],
    "pandas/io/excel/_openpyxl.py": [("\nimport mmap\n", "\n" + PANDAS_PATCH_MMAP)],
}


def step_pandas(c):
    """pandas with PyPI meson, through the same cross file; plus its pure-Python deps."""
    step = Step(c.work, "pandas", [c.work / "stamps/numpy", c.pandas_sdist(), c.dl],
                [step_pandas, PANDAS_PATCHES, apply_patches])
    if fresh_or_log(step):
        return
    src = c.work / "extract" / f"pandas-{PANDAS[1]}"
    if not src.exists():
        with tarfile.open(c.pandas_sdist()) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(c.work / "extract", filter="data")
            else:
                t.extractall(c.work / "extract")
    # The cross python is the host CPython: pandas' meson.build asks `import numpy` for the
    # include dir, and generate_version.py imports versioneer. Stand-ins for both; numpy's .pxd
    # next to the stand-in so that Cython's `from numpy cimport ...` works.
    stub = c.work / "pandas-stub"
    (stub / "numpy").mkdir(parents=True, exist_ok=True)
    (stub / "numpy/__init__.py").write_text(
        f"def get_include():\n    return {str(c.site / 'numpy/_core/include')!r}\n")
    for pxd in ("__init__.pxd", "__init__.cython-30.pxd"):
        shutil.copy2(c.site / "numpy" / pxd, stub / "numpy" / pxd)
    (stub / "versioneer.py").write_text(
        "def get_version():\n    raise RuntimeError('the sdist ships _version_meson.py')\n")
    env = dict(os.environ, PATH=f"{c.venv / 'bin'}:{os.environ['PATH']}", PYTHONPATH=str(stub))
    build = c.work / "pandas-build"
    t0 = time.time()
    if not (build / "build.ninja").exists():
        if build.exists():
            shutil.rmtree(build)
        run([c.venv / "bin/meson", "setup", build, src, "--cross-file", c.work / "cross.ini",
             "--prefix=/", "--buildtype=release", "-Db_ndebug=if-release",
             "--python.platlibdir=/site", "--python.purelibdir=/site"], env=env)
    run([c.venv / "bin/ninja", "-C", build, f"-j{c.jobs}"], env=env)
    inst = c.work / "install-pandas"
    for d in (inst, c.site_pandas):
        if d.exists():
            shutil.rmtree(d)
    run([c.venv / "bin/meson", "install", "-C", build, "--destdir", inst, "--no-rebuild",
         "--quiet"], env=env)
    shutil.move(str(inst / "site"), c.site_pandas)
    shutil.rmtree(inst)
    apply_patches(c.site_pandas, PANDAS_PATCHES)
    for name, (version, _) in PURE_WHEELS.items():
        whl = next(c.dl.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(whl) as z:
            z.extractall(c.site_pandas)
    log(f"pandas: built in {time.time() - t0:.0f} s")
    step.done()


def step_component(c):
    """componentize the stdlib engine's app (components/python) with this profile's
    `forge_profile` (app/) and the numpy, pandas and compression (`_bz2`, `_lzma`) site dirs on
    the path: one app, two profiles."""
    profile = HERE / "app"
    # The app reads the componentize-py pin (describe's version) and the profile's packages
    # while componentize-py runs it: their text is part of the recipe, not only their mtime.
    step = Step(c.work, "component", [c.work / "stamps/pandas", c.site_compression, profile,
                                      REPO / "components/python", REPO / "wit"],
                [step_component, write_manifest, compression.manifest, HOST_DEBS, REQUIREMENTS.read_text(),
                 PROFILES.read_text()])
    if fresh_or_log(step) and c.out.exists():
        return
    c.out.parent.mkdir(parents=True, exist_ok=True)
    partial = c.out.with_suffix(".wasm.partial")
    t0 = time.time()
    run([c.venv / "bin/componentize-py", "-d", REPO / "wit", "-w", "script-engine", "componentize",
         "app", "-p", REPO / "components/python", "-p", profile, "-p", c.site, "-p", c.site_pandas,
         "-p", c.site_compression, "-o", partial])
    partial.rename(c.out)
    log(f"component: {c.out} {c.out.stat().st_size / 1e6:.1f} MB in {time.time() - t0:.0f} s")
    write_manifest(c)
    step.done()


# Debian tools of the machine's own suite that the build uses (recorded, not pinned: bookworm's
# versions only change with point releases).
HOST_DEBS = ["clang-19", "lld-19", "llvm-19", "libclang-rt-19-dev-wasm32", "libc++-19-dev-wasm32",
             "libc++abi-19-dev-wasm32", "zstd"]


def write_manifest(c):
    """`<out>.manifest.json`: every pinned input and the host tools' versions, next to the
    component, so a build can be compared with another."""
    import json
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
                   ZIGLANG[0]: {"version": ZIGLANG[1], "sha256": ZIGLANG[2], "platform": ZIGLANG[3]}},
        "debs": {n: {"version": v, "arch": a, "sha256": h, "suite": DEB_SUITE}
                 for n, (v, a, h) in DEBS.items()},
        **compression.manifest(c),
        "host_debs": versions,
        "build_python": sys.version.split()[0],
    }
    path = c.out.with_name(c.out.stem + ".manifest.json")
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    log(f"manifest: {path}")


# compression.py imports this module as `build` (also when it runs as the script).
sys.modules.setdefault("build", sys.modules[__name__])
import compression  # noqa: E402

STEPS = {"venv": step_venv, "download": step_download, "deb": step_deb, "extract": step_extract,
         "sysroot": step_sysroot, "compression-src": compression.step_compression_src,
         "compression": compression.step_compression, "numpy": step_numpy, "pandas": step_pandas,
         "component": step_component}


class Config:
    def __init__(self, a):
        self.work = Path(a.work).resolve()
        self.out = Path(a.out).resolve()
        self.jobs = a.jobs
        self.sdist_via_index = a.sdist_via_index
        self.venv = Path(a.venv).resolve()
        self.dl = self.work / "downloads"
        self.sysroot = self.work / "sysroot"
        self.site = self.work / "site"
        self.site_pandas = self.work / "site-pandas"
        # _bz2 and _lzma (compression.py): on the path of both CPython profiles' components.
        self.site_compression = self.work / "site-compression"
        self.dl_compression = self.work / "downloads-compression"

    def numpy_sdist(self):
        return self.dl / f"numpy-{NUMPY[1]}.tar.gz"

    def pandas_sdist(self):
        return self.dl / f"pandas-{PANDAS[1]}.tar.gz"

    def zig_wheel(self):
        found = sorted(self.dl.glob(f"ziglang-{ZIGLANG[1]}-*.whl"))
        return found[0] if found else self.dl / f"ziglang-{ZIGLANG[1]}.whl"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default=os.environ.get("SCIENCE_WORK", "/tmp/science-build"))
    p.add_argument("--out", default="/tmp/science-out/python-science.wasm")
    p.add_argument("--venv", default=os.environ.get("SCIENCE_VENV", "/tmp/science-venv"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--sdist-via-index", action="store_true",
                   help="fetch sdists from pip's configured index by sha256 instead of "
                        "`pip download` (which builds the sdist natively to read its metadata)")
    p.add_argument("--upto", metavar="STEP", choices=list(STEPS),
                   help="run the steps up to and including STEP (the stdlib profile: compression)")
    p.add_argument("steps", nargs="*", help="some of: " + " ".join(STEPS))
    a = p.parse_args()
    unknown = [s for s in a.steps if s not in STEPS]
    if unknown:
        p.error(f"unknown steps {unknown}")
    if a.upto and a.steps:
        p.error("name steps or --upto, not both")
    names = list(STEPS)
    steps = a.steps or (names[:names.index(a.upto) + 1] if a.upto else names)
    c = Config(a)
    c.work.mkdir(parents=True, exist_ok=True)
    for name in steps:
        STEPS[name](c)


if __name__ == "__main__":
    main()
