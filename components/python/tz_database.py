"""The IANA time zone database, in every Python profile: the pinned `tzdata` package (its wheel is
pinned by sha256 in components/python-science/science_build/pins.py, `TZDATA`, and unpacked by
build.py's `tzdata` step into WORK/site-tzdata, on both profiles' componentize-py path).

componentize-py snapshots the interpreter after the app's top level ran: only modules imported
now exist at run time, and package data files are not in the snapshot at all (no file system
holds them when a script runs). So, now, at build time:
- every `tzdata.*` package is imported (`zoneinfo` imports `tzdata.zoneinfo.Europe` to find
  `Europe/Paris`);
- the package's data files (about 600 zone files and the `zones` list: 0.5 MB) are read into memory, and
  each `tzdata.*` module gets a loader whose resource reader serves them.
`zoneinfo.ZoneInfo`, `zoneinfo.available_timezones()`, pandas (`tz_localize`, `tz_convert`,
`date_range(tz=...)`) and `dateutil.tz.gettz` all read the database through
`importlib.resources`, so they work offline, with nothing read at run time but memory.
"""

import importlib
import importlib.resources.abc
import io
import os
import pkgutil
import sys

import tzdata

VERSION = tzdata.__version__


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
    """A loader whose resource reader serves a package's data from memory (every other
    attribute is the original loader's)."""

    def __init__(self, tree, original):
        self._tree = tree
        self._original = original

    def get_resource_reader(self, fullname):
        return self

    def files(self):
        return self._tree

    def __getattr__(self, name):
        return getattr(self._original, name)


def serve_from_memory(top):
    """Imports every submodule of package `top` and reads its data files now; importlib.resources
    is served them from memory at run time."""
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(info.name)
    tree = _read_tree(os.path.dirname(package.__file__), top)
    served = 0
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
        served += 1
    return served


PACKAGES_SERVED = serve_from_memory("tzdata")
