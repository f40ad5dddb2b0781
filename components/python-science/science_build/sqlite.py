"""The `_sqlite3` extension module for both CPython profiles: the `sqlite-src` and `sqlite` steps.

componentize-py's CPython has a built-in `_sqlite3` whose SQLite locks a database with dot-files
(WASI has no file locks): a second connection to the same file in one run gets `database is
locked` even for a read, where native SQLite lets readers see the committed rows. These steps
build a `_sqlite3` that behaves as native SQLite does inside one process:

- `sqlite-src`: the SQLite amalgamation as the crates.io crate libsqlite3-sys ships it, fetched
  by `cargo fetch` (the machine's registry configuration and cargo's own checksum), checked
  against its pinned sha256 (pins.py: SQLITE_CRATE).
- `sqlite`: forge_sqlite3.c (the amalgamation with the `unix` VFS as default and its POSIX
  advisory locks answered in-process: a run is one process, so SQLite's own per-file lock table
  orders every connection of the run) and CPython's `Modules/_sqlite` (the python3.13 tarball of
  the compression steps, patched for 3.14's headers: patches/cpython-3.14-sqlite.patch) linked
  into `_sqlite3<EXT_SUFFIX>` in WORK/site-sqlite. SQLite's symbols are hidden, so the module
  never binds to the built-in SQLite of libpython.

components/python/preload.py imports this module in place of the built-in one. Both profiles'
components have WORK/site-sqlite on their path (build.py's `component` step and xtask's stdlib
build, which runs build.py `--upto sqlite`).
"""

import os
import shutil
import tarfile
import time
from pathlib import Path

from . import compression, toolchain
from .patching import apply_hunks, apply_patches, parse, patch_files
from .pins import CPYTHON_MODULE_FILES, SQLITE_CRATE
from .steps import Step, fresh_or_log, log, run, sha256, source_text, verify
from .sysroot import TARGET, WASI_DEFINES, sync_tree
from .toolchain import BUILTINS, CLANG, PY_INCLUDE

HERE = Path(__file__).resolve().parent
FORGE_SQLITE = HERE / "forge_sqlite3.c"
# The SQLite features of the module (as CPython's and Debian's builds enable them), without
# threads (WASI has none here) and without loadable extensions (no dlopen of a user's file).
SQLITE_FLAGS = ["-DSQLITE_DEFAULT_UNIX_VFS=\"unix\"", "-DSQLITE_THREADSAFE=0",
                "-DSQLITE_OMIT_LOAD_EXTENSION", "-DSQLITE_ENABLE_MATH_FUNCTIONS",
                "-DSQLITE_ENABLE_FTS3", "-DSQLITE_ENABLE_FTS3_PARENTHESIS", "-DSQLITE_ENABLE_FTS4",
                "-DSQLITE_ENABLE_FTS5", "-DSQLITE_ENABLE_RTREE", "-DSQLITE_ENABLE_COLUMN_METADATA",
                "-DSQLITE_ENABLE_DBSTAT_VTAB", "-DSQLITE_ENABLE_PERCENTILE"]
# What CPython's configure defines for the module when SQLite has it: Connection.serialize and
# .deserialize (PY_SQLITE_ENABLE_LOAD_EXTENSION stays off with the extension loader).
MODULE_FLAGS = ["-DPY_SQLITE_HAVE_SERIALIZE"]
# The amalgamation's files inside the crate.
AMALGAMATION = ("sqlite3/sqlite3.c", "sqlite3/sqlite3.h", "sqlite3/sqlite3ext.h")


def crate_path(c):
    name, version = SQLITE_CRATE[:2]
    return c.dl_compression / f"{name}-{version}.crate"


def cargo_fetch(c, name, version, dest):
    """dest <- the .crate of name==version, downloaded by `cargo fetch` from a throwaway package
    that depends on it alone (cargo checks the file against its registry index)."""
    scratch = c.work / "cargo-fetch"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    (scratch / "lib.rs").write_text("")
    # [workspace]: the scratch package is its own workspace, not a stray member of the checkout's
    (scratch / "Cargo.toml").write_text(
        f'[package]\nname = "forge-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n'
        f'{name} = {{ version = "={version}", default-features = false }}\n\n[workspace]\n')
    run([os.environ.get("CARGO", "cargo"), "fetch", "--quiet", "--manifest-path",
         scratch / "Cargo.toml"])
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    found = sorted(home.glob(f"registry/cache/*/{name}-{version}.crate"))
    if not found:
        raise SystemExit(f"sqlite-src: cargo fetch left no {name}-{version}.crate under "
                         f"{home}/registry/cache")
    partial = dest.with_suffix(".partial")
    shutil.copyfile(found[0], partial)
    os.replace(partial, dest)
    shutil.rmtree(scratch)


def step_sqlite_src(c):
    """The libsqlite3-sys crate (SQLite's amalgamation), sha256-checked."""
    name, version, digest, _ = SQLITE_CRATE
    step = Step(c.work, "sqlite-src", [], [step_sqlite_src, cargo_fetch, SQLITE_CRATE])
    crate = crate_path(c)
    have = crate.exists() and sha256(crate) == digest
    if fresh_or_log(step) and have:
        return
    if not have:
        c.dl_compression.mkdir(parents=True, exist_ok=True)
        cargo_fetch(c, name, version, crate)
    verify(crate, digest)
    step.done()


def extract_amalgamation(c, dest):
    """sqlite3.c, sqlite3.h and sqlite3ext.h from the pinned crate into dest."""
    dest.mkdir(parents=True)
    found = set()
    with tarfile.open(crate_path(c)) as t:
        for m in t.getmembers():
            rel = m.name.partition("/")[2]
            if m.isfile() and rel in AMALGAMATION:
                (dest / Path(rel).name).write_bytes(t.extractfile(m).read())
                found.add(rel)
    if found != set(AMALGAMATION):
        raise SystemExit(f"sqlite: {crate_path(c).name} lacks {sorted(set(AMALGAMATION) - found)}")


def step_sqlite(c):
    """`_sqlite3` for wasm32-wasip1, SQLite linked in, into WORK/site-sqlite."""
    step = Step(c.work, "sqlite",
                [c.work / "stamps/sqlite-src", c.work / "stamps/compression-src",
                 c.work / "stamps/sysroot", c.dl_compression],
                [step_sqlite, extract_amalgamation, compression.members,
                 compression.cpython_sources, compression.compile_all, compression.base_flags,
                 compression.link_extension, SQLITE_FLAGS, MODULE_FLAGS,
                 AMALGAMATION,
                 SQLITE_CRATE, source_text(FORGE_SQLITE), CPYTHON_MODULE_FILES, apply_patches,
                 apply_hunks, parse, patch_files, *map(source_text, patch_files("cpython")),
                 WASI_DEFINES, TARGET, BUILTINS, CLANG, toolchain.PYTHON, sync_tree])
    output = c.site_sqlite / f"_sqlite3{compression.wasi_ext_suffix(c)}"
    if fresh_or_log(step) and output.exists():
        return
    t0 = time.time()
    work = c.work / "sqlite"
    if work.exists():
        shutil.rmtree(work)
    src, obj = work / "src", work / "obj"
    obj.mkdir(parents=True)
    extract_amalgamation(c, src / "sqlite")
    shutil.copyfile(FORGE_SQLITE, src / "sqlite" / FORGE_SQLITE.name)
    compression.cpython_sources(c, src / "cpython")
    s = c.sysroot
    # hidden: the module's SQLite resolves inside the module, never to libpython's built-in one
    base = compression.base_flags(c) + ["-fvisibility=hidden"]
    module_dir = src / "cpython/Modules/_sqlite"
    py_flags = base + [f"-I{s / PY_INCLUDE}", f"-I{s / PY_INCLUDE / 'internal'}",
                       f"-I{src / 'sqlite'}", f"-I{module_dir}", *MODULE_FLAGS]
    units = [(src / "sqlite" / FORGE_SQLITE.name, obj / "sqlite3.o", base + SQLITE_FLAGS)]
    units += [(p, obj / f"_sqlite-{p.stem}.o", py_flags) for p in sorted(module_dir.glob("*.c"))]
    compression.compile_all(c.jobs, units)
    staged = work / "site"
    staged.mkdir()
    compression.link_extension(c, staged / output.name, [o for _, o, _ in units])
    c.site_sqlite.mkdir(parents=True, exist_ok=True)
    sync_tree(staged, c.site_sqlite)  # unchanged bytes keep their mtime
    shutil.rmtree(work)
    log(f"sqlite: {output.name} {output.stat().st_size // 1024} KiB in {time.time() - t0:.0f} s")
    step.done()


def manifest(c):
    """The pinned inputs of these steps, for the build manifest."""
    name, version, digest, release = SQLITE_CRATE
    return {"sqlite": {"crate": name, "version": version, "sha256": digest, "sqlite": release,
                       "flags": SQLITE_FLAGS + MODULE_FLAGS}}
