"""The `_bz2` and `_lzma` extension modules for both CPython profiles: the `compression-src` and
`compression` steps.

componentize-py's WASI CPython has `bz2.py` and `lzma.py` but not their C halves. These two
steps build them by the same clang route as numpy (the sysroot and the wasm-ld wrapper of the
`sysroot` step), as shared wasm modules that componentize-py links in when it finds them on a
`-p` path:

- `compression-src`: the upstream tarballs of bzip2, xz (liblzma) and CPython, fetched as Debian
  source packages' `.orig` tarballs from the machine's own Debian mirror (a private apt directory
  with a `deb-src` source for DEBIAN_SOURCE_SUITE; the mirror is read from /etc/apt, as for the
  `deb` step), each checked against its pinned sha256 (pins.py).
- `compression`: libbz2 and liblzma compiled to position-independent wasm32-wasip1 objects and
  linked statically into `_bz2<EXT_SUFFIX>` and `_lzma<EXT_SUFFIX>` with CPython's own
  `Modules/_bz2module.c` and `Modules/_lzmamodule.c`, in WORK/site-compression. The files are
  rewritten only when their bytes change, so an unchanged rebuild makes no component stale.

build.py's `component` step and xtask's stdlib build (`cargo xtask build --profile stdlib`, which
runs build.py `--upto compression`) both pass WORK/site-compression with `-p`.

CPython's module sources: Debian's mirror does not serve the python3.14 source package (its
`.dsc` and `.orig.tar.xz` answer 404, while the binary packages are there), so the modules come
from trixie's python3.13 3.13.5 tarball, with the one change 3.14's headers need
(patches/cpython-3.14-clinic.patch: the `varpos` argument `_PyArg_UnpackKeywords` gained in
3.14, in the Argument Clinic files). Both modules keep the same Python-level API in 3.14 (3.14's
`bz2.py`/`lzma.py` import the same names). When a 3.14 source tarball is obtainable, pin it in
CPYTHON_SOURCE and CPYTHON_MODULE_FILES and drop that patch.
"""

import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import time

from . import apt, toolchain
from .patching import apply_patches, apply_hunks, parse, patch_files
from .pins import (BZIP2_SOURCE, COMPRESSION_SOURCES, CPYTHON_MODULE_FILES, CPYTHON_SOURCE,
                   DEBIAN_SOURCE_SUITE, XZ_SOURCE)
from .steps import Step, fresh_or_log, log, run, sha256, source_text, verify
from .sysroot import TARGET, WASI_DEFINES, sync_tree
from .toolchain import BUILTINS, CLANG, LIBPYTHON, LLVM_AR, PY_INCLUDE

# libbz2 (bzip2's Makefile: OBJS of libbz2.a).
BZIP2_FILES = ["blocksort.c", "huffman.c", "crctable.c", "randtable.c", "compress.c",
               "decompress.c", "bzlib.c"]

# liblzma without threads (WASI has none here): every .c under src/liblzma except the table
# generators, the small-CRC variants and the multithreaded coders; plus tuklib_physmem.c
# (lzma_physmem). As src/liblzma/Makefile.am selects for `--disable-threads`.
LZMA_EXCLUDE = re.compile(r"(_tablegen|_consts_gen|crc(32|64)_small|outqueue|_mt|hardware_cputhreads)\.c$")
# config.h for liblzma (what configure would find for wasm32-wasip1 with --disable-threads):
# every check, filter and match finder; 32-bit size_t.
LZMA_CONFIG = {
    **{f"HAVE_CHECK_{c}": 1 for c in ("CRC32", "CRC64", "SHA256")},
    "HAVE_ENCODERS": 1, "HAVE_DECODERS": 1,
    **{f"HAVE_{d}_{f}": 1 for d in ("ENCODER", "DECODER")
       for f in ("LZMA1", "LZMA2", "DELTA", "X86", "POWERPC", "IA64", "ARM", "ARMTHUMB", "ARM64",
                 "SPARC", "RISCV")},
    **{f"HAVE_MF_{m}": 1 for m in ("HC3", "HC4", "BT2", "BT3", "BT4")},
    "HAVE_LZIP_DECODER": 1, "HAVE_MICROLZMA": 1,
    "HAVE_INTTYPES_H": 1, "HAVE_STDINT_H": 1, "HAVE_STDBOOL_H": 1, "HAVE__BOOL": 1,
    "HAVE_VISIBILITY": 1, "HAVE___BUILTIN_ASSUME_ALIGNED": 1, "HAVE___BUILTIN_BSWAPXX": 1,
    "TUKLIB_FAST_UNALIGNED_ACCESS": 1, "TUKLIB_SYMBOL_PREFIX": "lzma_",
    "SIZEOF_SIZE_T": 4, "NDEBUG": 1,
    "PACKAGE_NAME": '"XZ Utils"', "PACKAGE_BUGREPORT": '"xz@tukaani.org"',
    "PACKAGE_URL": '"https://tukaani.org/xz/"',
}


def orig_path(c, pin):
    return c.dl_compression / pin[2]


def debian_source(c, opts, pin):
    """Download the .orig file of `pin` with `apt-get source --download-only` from the private
    deb-src source (the Debian revision is the one whose file list holds the pinned sha256)."""
    package, version, filename, digest = pin
    shown = subprocess.run(["apt-cache"] + opts + ["showsrc", "--only-source", package],
                           capture_output=True, text=True)
    revisions = []
    for stanza in re.split(r"\n\s*\n", shown.stdout):
        m = re.search(r"^Version: (\S+)$", stanza, re.M)
        if m:
            revisions.append(m.group(1))
            if re.search(rf"^ {digest} \d+ {re.escape(filename)}$", stanza, re.M):
                break
    else:
        raise SystemExit(
            f"compression-src: Debian {DEBIAN_SOURCE_SUITE} lists no {package} {version} source holding "
            f"{filename} with sha256 {digest} (versions listed: {', '.join(revisions) or 'none'}; "
            f"apt-cache: {shown.stderr.strip() or 'ok'}). Pin a version the mirror has "
            f"(science_build/pins.py, NOTES.md).")
    fetch = c.work / "apt-src/fetch"
    if fetch.exists():
        shutil.rmtree(fetch)
    fetch.mkdir(parents=True)
    run(["apt-get", "-q"] + opts + ["source", "--download-only", "--only-source",
                                   f"{package}={revisions[-1]}"], cwd=fetch)
    got = fetch / filename
    if not got.exists():
        raise SystemExit(f"compression-src: apt-get source {package}={revisions[-1]} gave no {filename}")
    verify(got, digest)
    os.replace(got, orig_path(c, pin))
    shutil.rmtree(fetch)


def step_compression_src(c):
    """bzip2, xz and CPython tarballs, as Debian .orig files, sha256-checked."""
    step = Step(c.work, "compression-src", [],
                [step_compression_src, debian_source, *apt.RECIPE, COMPRESSION_SOURCES,
                 DEBIAN_SOURCE_SUITE])
    have = lambda pin: orig_path(c, pin).exists() and sha256(orig_path(c, pin)) == pin[3]
    if fresh_or_log(step) and all(have(p) for p in COMPRESSION_SOURCES):
        return
    c.dl_compression.mkdir(parents=True, exist_ok=True)
    missing = [p for p in COMPRESSION_SOURCES if not have(p)]
    if missing:
        opts = apt.private_apt(c.work / "apt-src", apt.mirror_stanza("deb-src", DEBIAN_SOURCE_SUITE))
        run(["apt-get", "-q"] + opts + ["update"])
        for pin in missing:
            debian_source(c, opts, pin)
    for pin in COMPRESSION_SOURCES:
        verify(orig_path(c, pin), pin[3])
    step.done()


def members(c, pin, wanted):
    """(path below the top folder, bytes) of the files of pin's tarball that `wanted` keeps."""
    with tarfile.open(orig_path(c, pin)) as t:
        for m in t.getmembers():
            top, _, rel = m.name.partition("/")
            if m.isfile() and wanted(rel):
                yield rel, t.extractfile(m).read()


def extract_sources(c, dest):
    """The members the build uses, from the pinned tarballs, into dest/{bzip2,xz,cpython}."""
    bz2_dir, xz_dir = dest / "bzip2", dest / "xz"
    for rel, data in members(c, BZIP2_SOURCE, lambda r: r in BZIP2_FILES or r in
                             ("bzlib.h", "bzlib_private.h", "LICENSE")):
        (bz2_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (bz2_dir / rel).write_bytes(data)
    for rel, data in members(c, XZ_SOURCE, lambda r: r.startswith(("src/liblzma/", "src/common/"))
                             or r == "COPYING.0BSD"):
        (xz_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (xz_dir / rel).write_bytes(data)
    if not (bz2_dir / "bzlib.c").exists() or not (xz_dir / "src/liblzma/api/lzma.h").exists():
        raise SystemExit("compression: the pinned tarballs lack bzlib.c/lzma.h")
    cpython_sources(c, dest / "cpython")


def cpython_sources(c, py_dir):
    """CPython's module files (CPYTHON_MODULE_FILES, each checked against its pin) into py_dir,
    patched for the engine's CPython (patches/cpython-*.patch). The `sqlite` step uses it too."""
    found = set()
    for rel, data in members(c, CPYTHON_SOURCE, lambda r: r in CPYTHON_MODULE_FILES):
        digest = CPYTHON_MODULE_FILES[rel]
        if digest is not None and hashlib.sha256(data).hexdigest() != digest:
            raise SystemExit(f"sha256 mismatch for {CPYTHON_SOURCE[2]}:{rel}: pinned {digest}")
        (py_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (py_dir / rel).write_bytes(data)
        found.add(rel)
    missing = set(CPYTHON_MODULE_FILES) - found
    if missing:
        raise SystemExit(f"compression: {CPYTHON_SOURCE[2]} lacks {sorted(missing)}")
    apply_patches(py_dir, patch_files("cpython"))


def compile_all(jobs, units):
    """Compile (source, object, flags) units, `jobs` at a time; the first failure stops the
    build with the compiler's command and message."""
    def one(unit):
        src, obj, flags = unit
        cmd = [CLANG] + flags + ["-c", str(src), "-o", str(obj)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"compression: compiling {src} failed:\n$ {' '.join(cmd)}\n{r.stderr}")
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for _ in pool.map(one, units):
            pass


def base_flags(c):
    """The clang flags of every unit of an extension module: position-independent wasm32-wasip1
    against the sysroot, NDEBUG as in CPython's release builds, and no work-dir paths in the
    output (the same bytes from any checkout)."""
    return [f"--target={TARGET}", f"--sysroot={c.sysroot}", "-fPIC", "-O2", "-DNDEBUG",
            *WASI_DEFINES, f"-ffile-prefix-map={c.work}=/science-build"]


def link_extension(c, output, inputs):
    """Links objects and archives into the shared wasm module `output`, through the wasm-ld
    wrapper (every import checked against what libpython and libc export)."""
    s = c.sysroot
    run([CLANG, f"--target={TARGET}", f"--sysroot={s}", "-shared", "-nostartfiles",
         "-nodefaultlibs", f"-fuse-ld={c.work / 'bin/wasm-ld'}", "-Wl,--experimental-pic",
         f"-L{s / 'lib' / TARGET}", "-o", output, *inputs, f"-l{LIBPYTHON}", "-lc", BUILTINS])


def step_compression(c):
    """`_bz2` and `_lzma` for wasm32-wasip1, libbz2 and liblzma linked in, into
    WORK/site-compression (componentize-py links them in from a `-p` path)."""
    step = Step(c.work, "compression",
                [c.work / "stamps/compression-src", c.work / "stamps/sysroot", c.dl_compression],
                [step_compression, members, extract_sources, cpython_sources, compile_all, base_flags,
                 link_extension,
                 BZIP2_FILES, LZMA_EXCLUDE.pattern,
                 LZMA_CONFIG, CPYTHON_MODULE_FILES, apply_patches, apply_hunks, parse, patch_files,
                 *map(source_text, patch_files("cpython")), WASI_DEFINES, TARGET, BUILTINS, CLANG,
                 LLVM_AR, toolchain.PYTHON, sync_tree])
    ext_suffix = wasi_ext_suffix(c)
    outputs = [c.site_compression / f"{name}{ext_suffix}" for name in ("_bz2", "_lzma")]
    if fresh_or_log(step) and all(o.exists() for o in outputs):
        return
    t0 = time.time()
    work = c.work / "compression"
    if work.exists():
        shutil.rmtree(work)
    src, obj = work / "src", work / "obj"
    obj.mkdir(parents=True)
    extract_sources(c, src)
    s = c.sysroot
    base = base_flags(c)
    lzma = src / "xz/src/liblzma"
    (src / "xz/config.h").write_text("".join(f"#define {k} {v}\n" for k, v in LZMA_CONFIG.items()))
    lzma_flags = base + ["-DHAVE_CONFIG_H", f"-I{src / 'xz'}", f"-I{src / 'xz/src/common'}"] + \
        [f"-I{lzma / d}" for d in ("api", "common", "check", "lz", "rangecoder", "lzma", "delta",
                                  "simple")]
    py_flags = base + [f"-I{s / PY_INCLUDE}", f"-I{s / PY_INCLUDE / 'internal'}"]
    # per module: its library's units, then the CPython module itself (last)
    units = {"_bz2": [(src / "bzip2" / f, obj / f"bz2-{f[:-2]}.o", base + ["-D_FILE_OFFSET_BITS=64"])
                      for f in BZIP2_FILES]
                     + [(src / "cpython/Modules/_bz2module.c", obj / "_bz2module.o",
                         py_flags + [f"-I{src / 'bzip2'}"])],
             "_lzma": [(p, obj / ("lzma-" + "-".join(p.relative_to(src / "xz/src").with_suffix(".o").parts)),
                        lzma_flags)
                       for p in sorted(lzma.rglob("*.c")) if not LZMA_EXCLUDE.search(p.name)]
                      + [(src / "xz/src/common/tuklib_physmem.c", obj / "lzma-tuklib_physmem.o", lzma_flags),
                         (src / "cpython/Modules/_lzmamodule.c", obj / "_lzmamodule.o",
                          py_flags + [f"-I{lzma / 'api'}"])]}
    compile_all(c.jobs, [u for group in units.values() for u in group])
    staged = work / "site"
    staged.mkdir()
    for name, group in units.items():
        # the library as an archive (only what the module uses is linked), then the module
        module, library = group[-1][1], obj / f"lib{name[1:]}.a"
        run([LLVM_AR, "crs", library.name] + [o.name for _, o, _ in group[:-1]], cwd=obj)
        link_extension(c, staged / f"{name}{ext_suffix}", [module, library])
    c.site_compression.mkdir(parents=True, exist_ok=True)
    sync_tree(staged, c.site_compression)  # unchanged bytes keep their mtime
    shutil.rmtree(work)
    sizes = ", ".join(f"{o.name} {o.stat().st_size // 1024} KiB" for o in outputs)
    log(f"compression: {sizes} in {time.time() - t0:.0f} s")
    step.done()


def wasi_ext_suffix(c):
    """EXT_SUFFIX of componentize-py's CPython (from its sysconfigdata, carved by `extract`)."""
    data = c.work / "extract/_sysconfigdata__wasi_wasm32-wasi.py"
    m = re.search(r"'EXT_SUFFIX': '([^']+)'", data.read_text()) if data.exists() else None
    if not m:
        raise SystemExit(f"compression: no EXT_SUFFIX in {data}: run build.py extract first")
    if f".cpython-{toolchain.ABI[2:]}-" not in m.group(1):  # cp314: .cpython-314-wasm32-wasi.so
        raise SystemExit(f"compression: EXT_SUFFIX {m.group(1)} is not of toolchain.json's "
                         f"ABI {toolchain.ABI}")
    return m.group(1)


def manifest(c):
    """The pinned inputs of these steps, for the build manifest."""
    return {
        "debian_sources": {p[0]: {"upstream_version": p[1], "file": p[2], "sha256": p[3],
                                  "suite": DEBIAN_SOURCE_SUITE} for p in COMPRESSION_SOURCES},
        "cpython_module_files": {rel: digest for rel, digest in CPYTHON_MODULE_FILES.items() if digest},
    }
