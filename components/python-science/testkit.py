#!/usr/bin/env python3
"""Assemble the test kit that runs numpy's and pandas' own tests inside the python-science engine.

Python 3 standard library only. Usage:

    python3 components/python-science/testkit.py --work WORK --venv VENV --out DIR

WORK is build.py's work dir (WORK/site: installed numpy with its tests; WORK/site-pandas: pandas
with pandas/tests; WORK/extract: the numpy and pandas sdists, for the pytest configs and any test
file meson does not install, and componentize-py's standard-library tar). VENV is build.py's
venv (its pip fetches the pinned wheels). DIR gets:

  pylib/     pytest and its pure-Python dependencies (pinned wheels, sha256-checked, unpacked)
  stdlib/    standard-library modules pytest or the tests import that the engine's snapshot lacks
  site/      the selected upstream test trees (mirrors of numpy/... and pandas/... paths)
  tzdata/    the tzdata package build.py installed, zone files included (used only when the
             engine serves no zone data itself)
  config/    numpy's pytest.ini and pandas' pyproject.toml (their pytest settings)
  upstream/  run_upstream.py, selection.txt, known-failures.txt, deselect.txt (copied from here)

Run it with: forge-host run DIR/upstream/run_upstream.py --engine python-science --input DIR
--memory 1GiB --timeout 10m --json (tests/cli/upstream.rs does; see upstream/README.md).
Idempotent: DIR/.stamp holds a hash of this script, the upstream/ files and the build's numpy,
pandas and extract stamps; a second run does nothing.

No registry host name is written here: the wheels come through the venv's pip (its configured
index), pinned by version and sha256.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

# The science build's package (this folder is on sys.path): its hashing helper, the pinned
# wheels (science_build/pins.py) and the CPython version (toolchain.json).
from science_build.pins import TESTKIT_WHEELS as WHEELS
from science_build.steps import sha256
from science_build.toolchain import PYTHON

HERE = Path(__file__).resolve().parent

# The pinned wheels are pure-Python (py3-none-any), fetched for the engine's CPython with these
# pip options, so the same file on any machine.
PIP_PLATFORM = ["--platform", "any", "--python-version", PYTHON, "--implementation", "py", "--abi", "none"]

# Standard-library modules (from componentize-py's own stdlib tar, so the exact sources)
# that pytest, hypothesis or the selected tests import and that the engine's snapshot lacks.
# A module already in the snapshot wins (it is in sys.modules, and stdlib/ is last on sys.path).
STDLIB = [
    "doctest.py", "pdb.py", "bdb.py", "cmd.py", "code.py", "codeop.py", "rlcompleter.py", "_pyrepl/",
    "_ast_unparse.py", "tracemalloc.py",
]

# Always copied besides the selected test files (paths under the site dirs).
ALWAYS = [
    "numpy/conftest.py",
    "pandas/conftest.py",
    "pandas/_testing",
    "pandas/util/_test_decorators.py",
]

UPSTREAM_FILES = ["run_upstream.py", "selection.txt", "known-failures.txt", "deselect.txt"]


def log(msg):
    print(f"[testkit {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def version_of(path, pattern):
    m = re.search(pattern, Path(path).read_text())
    if not m:
        raise SystemExit(f"no version in {path}")
    return m.group(1)


class Kit:
    def __init__(self, a):
        self.work = Path(a.work).resolve()
        self.venv = Path(a.venv).resolve()
        self.out = Path(a.out).resolve()
        self.upstream = Path(a.upstream).resolve()
        self.site = self.work / "site"
        self.site_pandas = self.work / "site-pandas"
        for p in (self.site / "numpy", self.site_pandas / "pandas"):
            if not p.is_dir():
                raise SystemExit(f"{p} is missing: run build.py (numpy and pandas steps) first")
        self.numpy_version = version_of(self.site / "numpy/version.py", r'version = "([^"]+)"')
        self.pandas_version = version_of(self.site_pandas / "pandas/_version_meson.py",
                                         r'__version__\s*=\s*"([^"]+)"')
        self.numpy_sdist = self.work / "extract" / f"numpy-{self.numpy_version}"
        self.pandas_sdist = self.work / "extract" / f"pandas-{self.pandas_version}"
        self.dl = self.work / "testkit-downloads"

    def roots(self, rel):
        """Where a path under site/ comes from: the installed tree first, then the sdist (test
        data files are not installed by meson)."""
        top = rel.split("/", 1)[0]
        if top == "numpy":
            return [self.site, self.numpy_sdist]
        if top == "pandas":
            return [self.site_pandas, self.pandas_sdist]
        raise SystemExit(f"selection: {rel} is neither under numpy/ nor pandas/")

    def key(self):
        h = hashlib.sha256()
        h.update(Path(__file__).read_bytes())
        h.update(repr((WHEELS, PIP_PLATFORM)).encode() + b"\0")
        for name in UPSTREAM_FILES:
            p = self.upstream / name
            h.update(name.encode() + b"\0" + (p.read_bytes() if p.exists() else b"") + b"\0")
        for p in (self.site / "numpy/version.py", self.site_pandas / "pandas/_version_meson.py",
                  self.work / "stamps/numpy", self.work / "stamps/pandas", self.work / "stamps/extract",
                  self.work / "stamps/tzdata"):
            h.update(f"{p}:{p.stat().st_mtime if p.exists() else 0}\0".encode())
        return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------------------------
def fetch_wheels(k):
    """The pinned wheels in WORK/testkit-downloads, via the venv's pip (--require-hashes)."""
    k.dl.mkdir(parents=True, exist_ok=True)
    wanted = {}
    missing = []
    for name, (version, digest) in WHEELS.items():
        stem = name.replace("-", "_")
        found = [p for p in k.dl.glob(f"{stem}-{version}-*.whl") if sha256(p) == digest]
        if found:
            wanted[name] = found[0]
        else:
            missing.append(name)
    if missing:
        req = k.dl / "requirements.txt"
        req.write_text("".join(f"{n}=={WHEELS[n][0]} --hash=sha256:{WHEELS[n][1]}\n" for n in missing))
        cmd = [str(k.venv / "bin/pip"), "download", "--quiet", "--disable-pip-version-check", "--no-deps",
               "--only-binary", ":all:", *PIP_PLATFORM, "--require-hashes", "-r", str(req), "-d", str(k.dl)]
        log("$ " + " ".join(cmd))
        subprocess.run(cmd, check=True)
        for name in missing:
            version, digest = WHEELS[name]
            found = [p for p in k.dl.glob(f"{name.replace('-', '_')}-{version}-*.whl") if sha256(p) == digest]
            if not found:
                raise SystemExit(f"{name} {version}: no wheel with sha256 {digest} after pip download")
            wanted[name] = found[0]
    return wanted


def unpack_wheels(wheels, dest):
    dest.mkdir(parents=True)
    for name, whl in sorted(wheels.items()):
        with zipfile.ZipFile(whl) as z:
            z.extractall(dest)
    log(f"pylib: {len(wheels)} wheels unpacked")


def copy_stdlib(k, dest):
    bundled = k.work / "extract" / "bundled"
    tars = sorted(bundled.glob("*.tar"))
    for t in tars:
        with tarfile.open(t) as tf:
            names = set(tf.getnames())
            if "doctest.py" not in names:
                continue
            dest.mkdir(parents=True)
            members = [m for m in tf.getmembers()
                       if any(m.name == s or m.name.startswith(s.rstrip("/") + "/") for s in STDLIB)]
            missing = [s for s in STDLIB if not any(m.name == s or m.name.startswith(s.rstrip("/") + "/")
                                                    for m in members)]
            if missing:
                raise SystemExit(f"{t}: no {missing}")
            for m in members:
                if m.isfile():
                    target = dest / m.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with tf.extractfile(m) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
            log(f"stdlib: {len(STDLIB)} entries from {t.name}")
            return
    raise SystemExit(f"no standard-library tar (holding doctest.py) in {bundled}: run build.py extract")


def read_selection(k):
    """(test paths, extra paths) from upstream/selection.txt."""
    tests, extra = [], []
    for line in (k.upstream / "selection.txt").read_text().splitlines():
        line = line.partition(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("extra:"):
            extra.append(line[len("extra:"):].strip())
        else:
            tests.append(line.split("::", 1)[0])
    return tests, extra


def is_test_module(name):
    return name.startswith("test_") and name.endswith(".py")


def holds_tests(d):
    return any(is_test_module(f) for _, _, files in os.walk(d) for f in files)


def copy_file(src, dst):
    if dst.exists():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def copy_tree(src, dst):
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith((".pyc", ".so")):
                continue
            s = Path(root) / f
            copy_file(s, dst / s.relative_to(src))


def copy_site(k, site):
    tests, extra = read_selection(k)
    wanted = set()
    for rel in tests + extra + ALWAYS:
        rel = rel.rstrip("/")
        found = False
        for root in k.roots(rel):
            src = root / rel
            if not src.exists():
                continue
            found = True
            if src.is_dir():
                copy_tree(src, site / rel)
            else:
                copy_file(src, site / rel)
                if is_test_module(src.name):
                    # The test's neighbours: helpers, conftest, data files and data dirs (not
                    # the sibling test modules, nor subdirectories holding tests).
                    for entry in src.parent.iterdir():
                        if entry.name == "__pycache__" or is_test_module(entry.name):
                            continue
                        if entry.is_dir():
                            if not holds_tests(entry):
                                copy_tree(entry, (site / rel).parent / entry.name)
                        elif not entry.name.endswith((".pyc", ".so", ".pyx", ".pxd")):
                            copy_file(entry, (site / rel).parent / entry.name)
            wanted.add(rel)
        if not found:
            raise SystemExit(f"selection: {rel} not found under {k.roots(rel)}")
        # Package markers and conftest.py files of every ancestor (pytest finds the package
        # root and the conftests through them).
        parts = rel.split("/")
        for i in range(1, len(parts)):
            anc = "/".join(parts[:i])
            for name in ("__init__.py", "conftest.py"):
                for root in k.roots(rel):
                    if (root / anc / name).exists():
                        copy_file(root / anc / name, site / anc / name)
                        break
    n = sum(1 for _ in site.rglob("*") if _.is_file())
    log(f"site: {len(wanted)} selected paths, {n} files")


def copy_tzdata(k, dest):
    """The tzdata package build.py installed, zone files included (run_upstream.py imports this
    copy only when the engine serves no zone data itself)."""
    src = k.work / "site-tzdata" / "tzdata"
    if not src.is_dir():
        raise SystemExit(f"{src} is missing: run build.py (tzdata step) first")
    shutil.copytree(src, dest / "tzdata", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    n = sum(1 for f in dest.rglob("*") if f.is_file())
    log(f"tzdata: {n} files")


def copy_configs(k, config):
    (config / "numpy").mkdir(parents=True)
    (config / "pandas").mkdir(parents=True)
    shutil.copy2(k.numpy_sdist / "pytest.ini", config / "numpy" / "pytest.ini")
    shutil.copy2(k.pandas_sdist / "pyproject.toml", config / "pandas" / "pyproject.toml")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default=os.environ.get("SCIENCE_WORK", "/tmp/science-build"))
    p.add_argument("--venv", default=os.environ.get("SCIENCE_VENV", "/tmp/science-venv"))
    p.add_argument("--out", required=True)
    p.add_argument("--upstream", default=str(HERE / "upstream"),
                   help="the folder holding run_upstream.py, selection.txt, known-failures.txt and "
                        "deselect.txt (default: upstream/ beside this script)")
    a = p.parse_args()
    k = Kit(a)
    key = k.key()
    stamp = k.out / ".stamp"
    if stamp.exists() and stamp.read_text().strip() == key:
        log(f"{k.out}: up to date")
        return
    t0 = time.monotonic()
    wheels = fetch_wheels(k)
    tmp = k.out.with_name(k.out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    unpack_wheels(wheels, tmp / "pylib")
    copy_stdlib(k, tmp / "stdlib")
    copy_site(k, tmp / "site")
    copy_tzdata(k, tmp / "tzdata")
    copy_configs(k, tmp / "config")
    (tmp / "upstream").mkdir()
    for name in UPSTREAM_FILES:
        if (k.upstream / name).exists():
            shutil.copy2(k.upstream / name, tmp / "upstream" / name)
    (tmp / ".stamp").write_text(key + "\n")
    shutil.rmtree(k.out, ignore_errors=True)
    tmp.rename(k.out)
    size = sum(f.stat().st_size for f in k.out.rglob("*") if f.is_file())
    log(f"{k.out}: numpy {k.numpy_version}, pandas {k.pandas_version}, {size / 1e6:.1f} MB, "
        f"{time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
