"""numpy, pandas and every submodule scripts may reach (componentize-py: only modules imported at
build time exist at run time, and both packages import submodules lazily)."""

import importlib
import pkgutil

import numpy  # noqa: F401  (app.py reads numpy.__version__)

SKIP = (".tests", ".conftest", "._pyinstaller", ".f2py", ".distutils", "numpy.testing._private.extbuild",
        "pandas.io.clipboard", "pandas.util._test_decorators", "pandas._testing", "pandas.conftest")
MISSING = []
IMPORTED = 0


def _walk(top):
    global IMPORTED
    pkg = importlib.import_module(top)
    for info in pkgutil.walk_packages(pkg.__path__, top + ".", onerror=lambda n: MISSING.append((n, "walk"))):
        name = info.name
        if any(s in name for s in SKIP):
            continue
        try:
            importlib.import_module(name)
            IMPORTED += 1
        except Exception as e:  # noqa: BLE001
            MISSING.append((name, repr(e)[:200]))


for _top in ("numpy", "pandas", "dateutil"):
    try:
        _walk(_top)
    except Exception as e:  # noqa: BLE001
        MISSING.append((_top, repr(e)[:200]))
import zoneinfo  # noqa: E402,F401
PANDAS_ERROR = None
