"""The python-science profile: what `components/python/app.py` adds when the science build puts
this folder on componentize-py's path.

componentize-py snapshots the interpreter after the app's top level ran. Two consequences:
- only modules imported now exist at run time, and numpy and pandas import submodules lazily, so
  every submodule scripts may reach is imported here;
- package data files are not in the snapshot either, so the time zone database (the `tzdata`
  package, which `zoneinfo`, pandas and dateutil all read through `importlib.resources`) is read
  now into memory and served from there.
"""

import importlib
import importlib.resources.abc
import io
import os
import pkgutil
import sys

from forge import _runtime

ENGINE_ID = "python-science"

# What this profile adds to the standard library (the host's import scan picks the profile by
# these): `components/python/forge/profiles.json`, the one list, which xtask also publishes in
# engines.lock.
PACKAGES = tuple(_runtime.PROFILES[ENGINE_ID]["packages"])

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

import numpy  # noqa: E402
import zoneinfo  # noqa: E402,F401

VERSION = f"numpy {numpy.__version__}, pandas {sys.modules['pandas'].__version__}"


class _Node(importlib.resources.abc.Traversable):
    """A file or folder of package data held in memory."""

    def __init__(self, name, data=None, children=None):
        self._name = name
        self._data = data
        self._children = children

    @property
    def name(self):
        return self._name

    def is_dir(self):
        return self._children is not None

    def is_file(self):
        return self._data is not None

    def iterdir(self):
        if self._children is None:
            raise NotADirectoryError(self._name)
        return iter(list(self._children.values()))

    def joinpath(self, *parts):
        node = self
        for part in "/".join(str(p) for p in parts).split("/"):
            if part in ("", "."):
                continue
            children = node._children or {}
            node = children.get(part) or _Node(part)
        return node

    __truediv__ = joinpath

    def read_bytes(self):
        if self._data is None:
            raise (IsADirectoryError if self._children is not None else FileNotFoundError)(self._name)
        return self._data

    def read_text(self, encoding=None, errors=None):
        return self.read_bytes().decode(encoding or "utf-8", errors or "strict")

    def open(self, mode="r", *args, **kwargs):
        data = io.BytesIO(self.read_bytes())
        return data if "b" in mode else io.TextIOWrapper(data, *args, **kwargs)


def _read_tree(path, name):
    children = {}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name == "__pycache__" or entry.name.endswith((".py", ".pyc")):
            continue
        if entry.is_dir():
            children[entry.name] = _read_tree(entry.path, entry.name)
        else:
            with open(entry.path, "rb") as f:
                children[entry.name] = _Node(entry.name, data=f.read())
    return _Node(name, children=children)


class _MemoryResources:
    """A loader whose resource reader serves a package's data from memory."""

    def __init__(self, tree, original):
        self._tree = tree
        self._original = original

    def get_resource_reader(self, fullname):
        return self

    def files(self):
        return self._tree

    def __getattr__(self, name):
        return getattr(self._original, name)


def _serve_from_memory(top):
    """Reads `top`'s data files now and serves them to importlib.resources at run time."""
    tree = _read_tree(os.path.dirname(sys.modules[top].__file__), top)
    for name, module in list(sys.modules.items()):
        if name != top and not name.startswith(top + "."):
            continue
        node = tree
        for part in name.split(".")[1:]:
            node = node.joinpath(part)
        if not node.is_dir():
            continue
        loader = _MemoryResources(node, module.__spec__.loader)
        module.__spec__.loader = loader
        module.__loader__ = loader


_serve_from_memory("tzdata")
