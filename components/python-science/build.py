#!/usr/bin/env python3
"""Build the `python-science` engine: componentize-py's CPython component plus numpy and pandas.

Python 3 standard library only. Every step is idempotent (it is skipped when its stamp or output
is newer than its inputs), so a second run does nothing. Usage:

    python3 components/python-science/build.py [--work DIR] [--out FILE] [--jobs N] [step ...]

Steps, in order (naming some runs only those; `--upto STEP` runs the steps up to STEP): venv,
download, tzdata, deb, extract, stdlib, sysroot, compression-src, compression, sqlite-src, sqlite,
numpy, pandas, component.
Defaults: --work /tmp/science-build, --out /tmp/science-out/python-science.wasm.
The two compression steps (science_build/compression.py) build the `_bz2` and `_lzma` modules
and the two sqlite steps (science_build/sqlite.py) the `_sqlite3` module that both CPython
profiles link in, and the `tzdata` step (science_build/zones.py) unpacks the time zone database
both carry: xtask's stdlib build runs `--upto sqlite`.

The steps live in the science_build package beside this file (its __init__ lists the modules):
the pins are data in science_build/pins.py, the CPython version, LLVM major version and Debian
packages come from the repository's toolchain.json, the tool wrappers are files in
science_build/wrappers/ and the source patches unified diffs in science_build/patches/.

Host requirements (Debian bookworm): the packages toolchain.json lists for the quickjs and
science routes (clang, llvm, lld, the wasm32 libclang-rt, libc++ and libc++abi, zstd), dpkg-deb
and apt-get (`cargo xtask build` installs the packages).

No registry host name is written here: PyPI files come through pip (pinned by sha256; with
--sdist-via-index the two sdists are fetched from the index pip is configured with, by sha256,
which avoids pip's native build of each sdist for its metadata), and the Debian mirror for the
newer suite is read from the machine's own apt sources at build time.
"""

from science_build.cli import main

if __name__ == "__main__":
    main(__doc__.splitlines()[0])
