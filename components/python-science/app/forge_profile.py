"""The python-science profile: what `components/python/app.py` adds when the science build puts
this folder on componentize-py's path.

componentize-py snapshots the interpreter after the app's top level ran. Two consequences:
- only modules imported now exist at run time, and numpy and pandas import submodules lazily, so
  every submodule scripts may reach is imported here;
- package data files are not in the snapshot either: the time zone database (the `tzdata`
  package, which `zoneinfo`, pandas and dateutil all read through `importlib.resources`) is read
  into memory and served from there by the app's `tz_database`, in every profile.

plotly is the exception (`library` in profiles.json): too large to snapshot whole (its
graph_objs alone are 1,416 modules) and full of package data (plotly.js, templates), it imports
at run time from the engines' library, compiled, like a standard module the snapshot did not
import.
"""

import importlib
import os
import pkgutil
import sys

from forge import _runtime

ENGINE_ID = "python-science"

# What this profile adds to the standard library (the host's import scan picks the profile by
# these): `components/python/forge/profiles.json`, the one list, which xtask also publishes in
# engines.lock.
PROFILE = _runtime.PROFILES[ENGINE_ID]

# The packages that import at run time from the engines' library instead (plotly and what it
# needs): their files are in the standard library's zip, in `library.folder`, mounted read-only
# with it where the standard library is (xtask/src/stdlib.rs): at PYTHONHOME, where
# componentize-py puts `Lib/` itself (sys.prefix; not os.__file__'s folder: os is frozen, and
# names a lib/python3.X that does not exist). Only this profile looks there.
LIBRARY = os.path.join(sys.prefix, PROFILE["library"]["folder"])
PACKAGES = tuple(p for p in PROFILE["packages"] if p not in PROFILE["library"]["packages"])

SKIP = (".tests", ".conftest", "._pyinstaller", ".f2py", ".distutils", "numpy.testing._private.extbuild",
        "pandas.io.clipboard", "pandas.util._test_decorators", "pandas._testing", "pandas.conftest")

# (module, why) for every submodule that did not import; shown by the build's smoke report.
MISSING = []


def _import_all(top):
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + ".",
                                      onerror=lambda name: MISSING.append((name, "walk"))):
        if any(s in info.name for s in SKIP):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as error:  # noqa: BLE001 - optional dependencies (pyarrow, numba...)
            MISSING.append((info.name, repr(error)[:200]))


for _top in PACKAGES:
    _import_all(_top)

# After the snapshot's own packages, so that the library never shadows them. The folder is not
# there while the snapshot is taken; the finder that caches its (empty) listing reads it again
# when a run finds it mounted.
sys.path.append(LIBRARY)

import numpy  # noqa: E402
import zoneinfo  # noqa: E402,F401

VERSION = f"numpy {numpy.__version__}, pandas {sys.modules['pandas'].__version__}"
