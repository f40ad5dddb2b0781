"""The steps that fetch pinned inputs: `venv` (the build tools), `download` (sdists and wheels
through pip) and `deb` (Debian's CPython headers, from the newer suite).

No registry host name is written here: PyPI files come through pip (pinned by sha256; with
--sdist-via-index the two sdists are fetched from the index pip is configured with, by sha256,
which avoids pip's native build of each sdist for its metadata), and the Debian mirror is read
from the machine's own apt sources (apt.py)."""

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.parse
import urllib.request

from . import apt
from .pins import DEB_SUITE, DEBS, NUMPY, PANDAS, PURE_WHEELS, PYPI, TZDATA, ZIGLANG
from .steps import Step, fresh_or_log, log, run, sha256, verify


def requirements(path, pins):
    """A pip requirements file of (name, version, sha256) pins."""
    path.write_text("".join(f"{n}=={v} --hash=sha256:{h}\n" for n, v, h in pins))
    return path


def step_venv(c):
    """A build venv with pinned cython, ninja and componentize-py (never target/python-venv)."""
    step = Step(c.work, "venv", [], [step_venv, requirements, PYPI])
    if fresh_or_log(step) and (c.venv / "bin/python").exists():
        return
    if not (c.venv / "bin/python").exists():
        run([sys.executable, "-m", "venv", c.venv])
    req = requirements(c.work / "requirements-build.txt", [(n, v, h) for n, (v, h) in PYPI.items()])
    run([c.venv / "bin/pip", "install", "--quiet", "--disable-pip-version-check",
         "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", req])
    step.done()


def step_download(c):
    """numpy and pandas sdists, the pure-Python wheels (tzdata's too) and the ziglang wheel via
    pip, checked by sha256."""
    step = Step(c.work, "download", [], [step_download, requirements, fetch_from_pip_index, NUMPY,
                                         PANDAS, PURE_WHEELS, TZDATA, ZIGLANG])
    if fresh_or_log(step):
        return
    c.dl.mkdir(parents=True, exist_ok=True)
    pip = [c.venv / "bin/pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--require-hashes", "-d", c.dl]
    for sdist, pin in ((c.numpy_sdist(), NUMPY), (c.pandas_sdist(), PANDAS)):
        if sdist.exists() and sha256(sdist) == pin[2]:
            pass
        elif c.sdist_via_index:
            fetch_from_pip_index(c, *pin)
        else:
            # --no-binary NAME, not :all: (that would build the metadata hook's tools from
            # source). Slow: pip builds the sdist natively (meson-python has no metadata-only
            # hook) just to read its metadata; see NOTES.md and --sdist-via-index.
            req = requirements(c.work / f"requirements-{pin[0]}.txt", [pin])
            run(pip + ["--no-binary", pin[0], "-r", req])
        verify(sdist, pin[2])
    req = requirements(c.work / "requirements-pure.txt",
                       [(n, v, h) for n, (v, h) in PURE_WHEELS.items()] + [TZDATA])
    run(pip + ["--only-binary", ":all:", "-r", req])
    req = requirements(c.work / "requirements-zig.txt", [ZIGLANG[:3]])
    run(pip + ["--only-binary", ":all:", "--platform", ZIGLANG[3], "-r", req])
    verify(c.zig_wheel(), ZIGLANG[2])
    step.done()


def fetch_from_pip_index(c, name, version, digest):
    """Download the file of `name` whose sha256 is `digest` from the index pip is configured
    with (PIP_INDEX_URL, pip config, else pip's built-in default): no URL is written here, and
    no native build runs (unlike `pip download` of a meson-python sdist)."""
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
    part = dest.with_suffix(".part")
    with urllib.request.urlopen(url, context=ctx, timeout=600) as r, open(part, "wb") as out:
        shutil.copyfileobj(r, out)
    part.rename(dest)
    verify(dest, digest)


def deb_path(c, name):
    version, arch, _ = DEBS[name]
    return c.dl / f"{name}_{version}_{arch}.deb"


def step_deb(c):
    """libpythonX.Y-dev from Debian's newer suite, through a private apt directory."""
    step = Step(c.work, "deb", [], [step_deb, deb_path, *apt.RECIPE, DEBS, DEB_SUITE])
    if fresh_or_log(step):
        return
    opts = apt.private_apt(c.work / "apt", apt.mirror_stanza("deb", DEB_SUITE))
    run(["apt-get", "-q"] + opts + ["update"])
    c.dl.mkdir(parents=True, exist_ok=True)
    for name, (version, arch, digest) in DEBS.items():
        deb = deb_path(c, name)
        if not (deb.exists() and sha256(deb) == digest):
            run(["apt-get", "-q"] + opts + ["-o", f"APT::Architecture={arch}", "download",
                 f"{name}:{arch}={version}"], cwd=c.dl)
        verify(deb, digest)
    step.done()
