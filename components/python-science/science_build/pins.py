"""Every pinned input of the science build and its test kit, as data: (name, version, sha256)
and the like. Every download is checked against these. A step's recipe holds the pins it uses,
so a new pin reruns that step."""

import re

from .toolchain import PYTHON, REPO

# Read, not copied: the componentize-py pin (version and wheel sha256) is written once, in the
# stdlib engine's requirements file.
REQUIREMENTS = REPO / "components/python/requirements.txt"


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


# --- PyPI -------------------------------------------------------------------------------------
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
}
# Pure-Python packages the python-science profile imports at run time from the engines' library
# (the zip mounted at /python, stdlib.py), not from its snapshot: plotly's 1,416 graph_objs
# modules and its package data (plotly.js, templates) load when a script uses them, so a script
# that does not costs nothing. plotly needs narwhals and packaging.
LIBRARY_WHEELS = {
    "plotly": ("7.1.0", "dbb7fa18afce40d0a8e80d1bf162eceb3faa0ce5a77fe741ad09a74cf78f53f3"),
    "narwhals": ("2.29.0", "1c69b3dc30240f6e848c5a673cafc86affa44184ecce721e25b7194663ad10dc"),
    "packaging": ("26.4", "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"),
}
# The IANA time zone database, in every Python profile (the stdlib one too): the wheel is
# unpacked into WORK/site-tzdata (zones.py), which both profiles' components have on their path;
# the app's tz_database.py serves its zone files from memory.
TZDATA = ("tzdata", "2026.6", "0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec")
# Source distribution (meson is numpy's own vendored fork, inside the sdist).
NUMPY = ("numpy", "2.4.6", "f3a3570c4a2a16746ac2c31a7c7c7b0c186b95ce902e33db6f28094ed7387dda")
# Only its wasm32-wasi libc headers are used (Debian's 2022 wasi-libc has no pthread.h). The
# manylinux x86_64 wheel is pinned and fetched on any machine (--platform).
ZIGLANG = ("ziglang", "0.17.1", "ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54",
           "manylinux_2_12_x86_64")

# --- Debian -----------------------------------------------------------------------------------
# Packages from the newer suite (only the headers are used): package -> (version, arch, sha256).
# sid moves: when this exact version disappears from the mirror, update version and sha256
# together (a new CPython in toolchain.json needs a new pin here too).
DEBS = {
    f"libpython{PYTHON}-dev": ("3.14.10-1", "amd64",
                               "ce226a5a09bd3739123b95c5a41688ee3110651e6b4f9b22973a27c7be2f64fa"),
}
DEB_SUITE = "sid"

# Upstream tarballs for the compression steps: (Debian source package, upstream version, .orig
# file, sha256 of that file). The tarballs are the upstream releases as Debian keeps them; the
# Debian revision that lists the file is looked up at download time (a new revision of the same
# upstream release keeps the pin valid).
BZIP2_SOURCE = ("bzip2", "1.0.8", "bzip2_1.0.8.orig.tar.gz",
                "ab5a03176ee106d3f0fa90e381da478ddae405918153cca248e682cd0c4a2269")
XZ_SOURCE = ("xz-utils", "5.8.1", "xz-utils_5.8.1.orig.tar.xz",
             "0b54f79df85912504de0b14aec7971e3f964491af1812d83447005807513cd9e")
# CPython's module sources: Debian's mirror does not serve the python3.14 source package, so
# these are trixie's python3.13 (patched for 3.14's headers: patches/cpython-*.patch).
CPYTHON_SOURCE = ("python3.13", "3.13.5", "python3.13_3.13.5.orig.tar.xz",
                  "93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640")
COMPRESSION_SOURCES = (BZIP2_SOURCE, XZ_SOURCE, CPYTHON_SOURCE)
# Debian's stable release holds all three (its files stay on the mirror for years).
DEBIAN_SOURCE_SUITE = "trixie"
# SQLite for `_sqlite3` (sqlite.py): the amalgamation as the crates.io crate libsqlite3-sys
# ships it (its sqlite3/ folder), fetched through cargo: (crate, version, sha256 of the .crate,
# the SQLite release inside). Debian's sqlite3 source package holds the full tree, whose
# amalgamation needs Tcl to generate.
SQLITE_CRATE = ("libsqlite3-sys", "0.38.0",
                "a76001fb4daed01e5f2b518aac0b4dc592e7c734da63dbffcf0c64fa612a8d0c", "3.53.1")
# The CPython files used, each pinned too (path below the tarball's top folder -> sha256).
CPYTHON_MODULE_FILES = {
    "Modules/_bz2module.c": "cf68ee3c58044133b9ad32783d490528dc82a4691142a9e3088398baca750dfc",
    "Modules/clinic/_bz2module.c.h": "6a6f8fc933b6f0e14506017cc75012c52dd119092f79dfebc82f33b42d252098",
    "Modules/_lzmamodule.c": "21651e7f12759df5c4877a379303a7291862a5f2c7b95eea17113b7bff1bf500",
    "Modules/clinic/_lzmamodule.c.h": "fe9e21991ca6b3111a1e0d81c3a3a544d7a40a720d5773d900698318d91153af",
    # `_sqlite3` (sqlite.py): every file of Modules/_sqlite.
    "Modules/_sqlite/blob.c":
        "e39ab1a5b181f2e9dd7dff3161ea67dc55ca36644d3dc448d40382cca9ab9283",
    "Modules/_sqlite/blob.h":
        "77f52bcf9bedbab40b83f74ffc3ac66b9f99dd29ab98655a40b56094494f38bc",
    "Modules/_sqlite/clinic/_sqlite3.connect.c.h":
        "db02aac386a9cdbe0a606e7e969e19a7074c314dd29d5eb25cd268ab4ae81006",
    "Modules/_sqlite/clinic/blob.c.h":
        "27d959a1169a8f1f61095caa3b981e6654ebefb84a49b753ea6119007f22833c",
    "Modules/_sqlite/clinic/connection.c.h":
        "76fc728e2889d9912ced3fcf435850cf052ba6776d5ebdebbf61fd1bc3704393",
    "Modules/_sqlite/clinic/cursor.c.h":
        "7e0f2eb3521c65773fc87a57bd9dc30e8e48e5e1d031e9a1d654fee8df683258",
    "Modules/_sqlite/clinic/module.c.h":
        "bf48384efc6506cc2d287ff292ecd53eefa87f737d2a8546e230d669a2f24cd7",
    "Modules/_sqlite/clinic/row.c.h":
        "adf59b4d8b2bc367307a69eb84941056a37f154792ff25f810b1cf2c65b46134",
    "Modules/_sqlite/connection.c":
        "19924ddc8eae3107cafbecbb090a1a1106c0f19c9f7e1e93427e0c95f3a51d97",
    "Modules/_sqlite/connection.h":
        "7e670783b112ffa14a786a9f4ec80ae5bf7c31a36a5083f77945b999a964849b",
    "Modules/_sqlite/cursor.c":
        "0b84b2eae1b3d643a8941be0b09d3721952c0233738ad5006b7e67907af2ed51",
    "Modules/_sqlite/cursor.h":
        "1d8d1e286d5f40d33dee2c03f48c8f035980e07e954f5f0ce37a60be76b7d4bc",
    "Modules/_sqlite/microprotocols.c":
        "2b43a7620580175f5641c149619a1e0c0d8e3185ab7dced9748e6f089862b879",
    "Modules/_sqlite/microprotocols.h":
        "79351f98f9d7920d32177051a3e1b26b5879cb5ee4666d1ab2248e2f17bf6aa4",
    "Modules/_sqlite/module.c":
        "27141b03ae973464be03fff4333fe02c0eb0ce89028bfea11c27532cd10645bc",
    "Modules/_sqlite/module.h":
        "c532015b859040a89504ebfb87039a37a0a0d09039c7ad3cdcb5c13329874c26",
    "Modules/_sqlite/prepare_protocol.c":
        "2fc1312d910f069d9c6201623a8d0e8d45fae88c451cf1b406a4cd519480f258",
    "Modules/_sqlite/prepare_protocol.h":
        "b946edd60ad6c10a781ea75976027172438ad73b18b195a8938f02f26a84a332",
    "Modules/_sqlite/row.c":
        "9597c2139eae3758682de537a5a3e4385e12f01a2f7f9b4aae6cf34e966d3209",
    "Modules/_sqlite/row.h":
        "c67300a037cfc5cff4796bed8536e5c3ec05efb13f96471b3569f14c2e7bc576",
    "Modules/_sqlite/statement.c":
        "eee3f2fda3f57f9ec3d2bd38022ee6d03687713911777956a024660b073e17fa",
    "Modules/_sqlite/statement.h":
        "8bdecee7cd144ac720adadb42c2f696fb2ffcf055f0ef4695b83c708724cb5cb",
    "Modules/_sqlite/util.c":
        "928166217bd3f5240522c02cee2029f09eb76066c5423b86c0b824430645335f",
    "Modules/_sqlite/util.h":
        "abeca82e3ce8378c9fd44f262c5a75e0fb09a8cbf15ab3c186ec1c0bdc234538",
    "LICENSE": None,  # not compiled; kept next to the sources
}

# --- the test kit (testkit.py) ----------------------------------------------------------------
# Pure-Python wheels (py3-none-any), fetched with `pip download --platform any --python-version
# PYTHON --implementation py --abi none`, so the same file on any machine.
TESTKIT_WHEELS = {
    "pytest": ("9.2.0", "07acdcf88ec174f907dc01af70bf52d49b014bbab03faeeade31c96b18c2e588"),
    "pluggy": ("1.7.0", "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec"),
    "iniconfig": ("2.3.1", "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7"),
    "packaging": ("26.4", "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"),
    # pytest >= 8.4 requires pygments (terminal highlighting of tracebacks).
    "pygments": ("2.21.0", "2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9"),
    # numpy's conftest.py imports hypothesis, pandas' tests use it. 6.155.7 is the last release
    # with a pure-Python wheel (later ones carry a compiled `hypothesis._native`).
    "hypothesis": ("6.155.7", "9f634bdb1f9e9b8ab6ba09431cf2deedb750c96978125a6fb3c5a0f6c6db4131"),
    "sortedcontainers": ("2.4.0", "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0"),
}
