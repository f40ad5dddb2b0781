"""The standard library modules imported before the snapshot, so that runs start with them.

componentize-py snapshots the interpreter after the app's top level ran. Every run also mounts
the whole standard library, compiled, read-only at `/python` (xtask/src/stdlib.rs), so any other
module imports too, only not for free: this list is what people doing data work, text
processing and scripting import most. Each import is guarded so that a module the WASI build
lacks (ssl, ctypes, ...; forge/stdlib_wasi.json says why) does not break the build. (`bz2` and
`lzma` are there in both profiles: their C halves are built by
components/python-science/science_build/compression.py; `_sqlite3` by its sqlite.py.)
"""

import importlib
import pkgutil
import sys

MODULES = """
    __future__ abc argparse array ast base64 binascii bisect builtins calendar cmath codecs
    collections collections.abc colorsys configparser contextlib contextvars copy copyreg csv
    dataclasses datetime decimal difflib dis email email.message email.mime.text email.parser
    email.policy email.utils encodings encodings.aliases encodings.ascii encodings.base64_codec
    encodings.cp1252 encodings.cp437 encodings.hex_codec encodings.idna encodings.latin_1
    encodings.punycode encodings.raw_unicode_escape encodings.unicode_escape encodings.utf_16
    encodings.utf_16_be encodings.utf_16_le encodings.utf_32 encodings.utf_8 encodings.utf_8_sig
    enum errno filecmp fileinput fnmatch fractions functools gc getopt gettext glob graphlib
    gzip hashlib heapq hmac html html.entities html.parser http http.client http.cookies
    importlib importlib.abc importlib.machinery importlib.metadata importlib.resources
    importlib.util inspect io ipaddress itertools json json.decoder json.encoder keyword
    linecache locale logging logging.handlers math mimetypes numbers opcode operator optparse
    os os.path pathlib pickle pkgutil platform plistlib posixpath pprint queue quopri random re
    reprlib sched secrets select selectors shelve shlex shutil signal socket socketserver sqlite3
    stat statistics string stringprep struct subprocess sys sysconfig tabnanny tarfile tempfile
    textwrap threading time timeit token tokenize tomllib trace traceback types typing
    unicodedata unittest unittest.mock urllib urllib.error urllib.parse urllib.request
    urllib.response uuid warnings wave weakref xml xml.dom xml.dom.minidom xml.etree
    xml.etree.ElementTree xml.parsers.expat xml.sax xml.sax.saxutils zipfile zipimport zlib
    zoneinfo asyncio concurrent.futures ssl ctypes lzma bz2 dbm readline curses
    compression compression.bz2 compression.gzip compression.lzma compression.zlib
""".split()

MODULES += ["_ast_unparse", "tracemalloc", "doctest"]  # ast.unparse imports the first lazily

def _own_sqlite():
    """`_sqlite3` from the path, in place of the interpreter's built-in one: the built-in SQLite
    locks a database file for one connection at a time (WASI has no file locks, so it uses its
    dot-file scheme), and a second connection in the same run gets `database is locked`. The
    one built by components/python-science/science_build/sqlite.py orders every connection
    of the run in-process, as native SQLite does inside one process. (A build without it on the
    path keeps the built-in one; tests/cli/stdlib.rs's two-connection case fails then.)"""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("_sqlite3")
    if spec is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["_sqlite3"] = module


_own_sqlite()

# The modules of the list this build could not import (the compression cases check it is
# neither bz2 nor lzma).
MISSING = []
for _name in MODULES:
    try:
        importlib.import_module(_name)
    except Exception:  # noqa: BLE001 - any failure means "not in this build"
        MISSING.append(_name)
del _name

# Packages of the standard library import some of their submodules lazily, on first use
# (`importlib.metadata._adapters` when a package reads its entry points, as networkx does):
# every submodule of these packages is imported now, so that first use finds it.
WHOLE_PACKAGES = """
    importlib email json xml http urllib collections concurrent logging compression
    zoneinfo sqlite3 unittest wsgiref dbm
""".split()
for _package in WHOLE_PACKAGES:
    try:
        _path = importlib.import_module(_package).__path__
    except Exception:  # noqa: BLE001
        continue
    for _info in pkgutil.walk_packages(_path, _package + ".", onerror=lambda _name: None):
        if ".test" in _info.name or "._test" in _info.name:
            continue
        try:
            importlib.import_module(_info.name)
        except Exception:  # noqa: BLE001 - a submodule this build cannot have (e.g. Windows')
            pass
del _package, _path

# Every codec (`str.encode("utf-7")`, `"cp1251"`, ...): a codec is found by importing
# `encodings.<name>` on first use, which works only for modules in the snapshot. Those that
# cannot exist here (Windows' mbcs, oem) are simply left out.
for _info in pkgutil.iter_modules(importlib.import_module("encodings").__path__):
    try:
        importlib.import_module("encodings." + _info.name)
    except Exception:  # noqa: BLE001
        pass
del _info

# componentize-py's CPython build passed configure `--build=...` with a trailing newline, which cut
# the recorded CONFIG_ARGS before its closing quote (`shlex.split` fails on it, and with it
# `test.support`). The copy of the module mounted at run time is repaired by the build (the
# `stdlib` step of components/python-science); the one the snapshot holds, here.
import sysconfig  # noqa: E402

_data = sys.modules.get(sysconfig._get_sysconfigdata_name())  # noqa: SLF001
for _vars in (getattr(_data, "build_time_vars", None), getattr(sysconfig, "_CONFIG_VARS", None)):
    _args = (_vars or {}).get("CONFIG_ARGS")
    if isinstance(_args, str) and _args.count("'") % 2:
        _vars["CONFIG_ARGS"] = _args + "'"
del _data, _vars, _args
