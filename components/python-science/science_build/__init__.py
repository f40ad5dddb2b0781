"""The steps of the `python-science` build (build.py is its command line).

Modules, in the order the steps use them:

- toolchain: the CPython version and ABI tag, the LLVM major version and the Debian packages,
  read from the repository's toolchain.json (one edit there upgrades them all).
- pins: every pinned input (name, version, sha256), as data.
- steps: the step runner (a stamp per step, keyed by its recipe), logging and hashing helpers.
- apt: a private apt directory on the machine's own Debian mirror.
- fetch: the `venv`, `download` and `deb` steps.
- zones: the `tzdata` step (the time zone database both profiles carry).
- extract: the `extract` step (sdists, zig's libc headers, the Debian headers, and the wasm
  libraries carved out of componentize-py's native module).
- sysroot: the `sysroot` step, its tool wrappers (wrappers/) and the meson cross file.
- compression: the `compression-src` and `compression` steps (`_bz2`, `_lzma`).
- sqlite: the `sqlite-src` and `sqlite` steps (`_sqlite3` with in-process locks).
- patching: applies the unified diffs of patches/.
- packages: the `numpy` and `pandas` steps.
- component: the `component` step and the build manifest.
- cli: the step table and the command line.
"""
