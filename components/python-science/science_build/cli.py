"""The step table and build.py's command line."""

import argparse
import os
from pathlib import Path

from . import compression, sqlite
from .component import step_component
from .extract import step_extract
from .fetch import step_deb, step_download, step_venv
from .packages import step_numpy, step_pandas
from .pins import NUMPY, PANDAS, TZDATA, ZIGLANG
from .stdlib import step_stdlib
from .sysroot import step_sysroot
from .zones import step_tzdata

STEPS = {"venv": step_venv, "download": step_download, "tzdata": step_tzdata, "deb": step_deb,
         "extract": step_extract, "stdlib": step_stdlib, "sysroot": step_sysroot,
         "compression-src": compression.step_compression_src,
         "compression": compression.step_compression, "sqlite-src": sqlite.step_sqlite_src,
         "sqlite": sqlite.step_sqlite, "numpy": step_numpy, "pandas": step_pandas,
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
        # the tzdata package (zones.py): on the path of both CPython profiles' components.
        self.site_tzdata = self.work / "site-tzdata"
        # _sqlite3 (sqlite.py): on the path of both CPython profiles' components.
        self.site_sqlite = self.work / "site-sqlite"
        # the pinned sources of the compression and sqlite steps
        self.dl_compression = self.work / "downloads-compression"

    def numpy_sdist(self):
        return self.dl / f"numpy-{NUMPY[1]}.tar.gz"

    def pandas_sdist(self):
        return self.dl / f"pandas-{PANDAS[1]}.tar.gz"

    def tzdata_wheel(self):
        found = sorted(self.dl.glob(f"{TZDATA[0]}-{TZDATA[1]}-*.whl"))
        return found[0] if found else self.dl / f"{TZDATA[0]}-{TZDATA[1]}.whl"

    def zig_wheel(self):
        found = sorted(self.dl.glob(f"ziglang-{ZIGLANG[1]}-*.whl"))
        return found[0] if found else self.dl / f"ziglang-{ZIGLANG[1]}.whl"


def main(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--work", default=os.environ.get("SCIENCE_WORK", "/tmp/science-build"))
    p.add_argument("--out", default="/tmp/science-out/python-science.wasm")
    p.add_argument("--venv", default=os.environ.get("SCIENCE_VENV", "/tmp/science-venv"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--sdist-via-index", action="store_true",
                   help="fetch sdists from pip's configured index by sha256 instead of "
                        "`pip download` (which builds the sdist natively to read its metadata)")
    p.add_argument("--upto", metavar="STEP", choices=list(STEPS),
                   help="run the steps up to and including STEP (the stdlib profile: sqlite)")
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
