"""Native CPython for CPython's own test suite in the test command (tests/cpython/README.md):
bench/cpu/native_cpython.py's sid interpreter, fetched through its private apt directory, with
two additions to its packages: the C libraries behind the extension modules the curated test
modules import (so that they run natively, where the baseline is taken), and Debian's
`libpython3.14-testsuite`, the suite itself, downloaded beside the others into DIR/debs/. The
xtask (xtask/src/cpython.rs) checks the suite's and the stdlib's packages against their pinned
sha256 before it extracts them. Idempotent, as native_cpython.py is.

Usage: cpython_native.py DIR     (prints the path of DIR/python3.14)
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench/cpu"))
import native_cpython  # noqa: E402  (the one copy of the apt steps)

# The libraries of _sqlite3, _bz2, _lzma, _uuid, _hashlib, _zstd and readline, from sid like
# the interpreter (the machine's own are older than sid's extension modules need).
LIBRARIES = ["libsqlite3-0", "libbz2-1.0", "liblzma5", "libuuid1", "libssl3t64", "libzstd1",
             "libncursesw6", "libtinfo6", "libreadline8t64"]
SUITE = "libpython3.14-testsuite"
# What must import natively for the curated modules to be tested there at all.
PROBE = "import _sqlite3, _bz2, _lzma, _uuid, _hashlib, _decimal, _ctypes, _zstd, pyexpat, zlib"


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    dest = Path(sys.argv[1]).resolve()
    native_cpython.PACKAGES = native_cpython.PACKAGES + LIBRARIES + [SUITE]
    # native_cpython.py keeps a DIR whose interpreter runs; one fetched without the suite is
    # fetched again.
    if not any((dest / "debs").glob(f"{SUITE}_*.deb")):
        (dest / "python3.14").unlink(missing_ok=True)
    sys.argv = [sys.argv[0], str(dest)]
    native_cpython.main()
    wrapper = dest / "python3.14"
    probe = subprocess.run([str(wrapper), "-c", PROBE], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(f"{wrapper} lacks an extension module of the suite: {probe.stderr}")


if __name__ == "__main__":
    main()
