"""The `extract` step: the numpy sdist, zig's wasm32-wasi libc headers, Debian's CPython headers,
and the wasm shared libraries (and the standard library's sysconfigdata) carried inside
componentize-py's native module."""

import shutil
import subprocess
import tarfile
import zipfile

from .fetch import deb_path
from .pins import DEBS
from .steps import Step, fresh_or_log, run
from .toolchain import LLVM_NM, PYTHON

# The wasm shared libraries carried (zstd-compressed) inside componentize-py's native module,
# recognised by a symbol each defines (name -> symbol).
BUNDLED_LIBS = {
    f"libpython{PYTHON}.so": "Py_Initialize",
    "libc.so": "__main_void",
    "libc++.so": "_ZNSt3__222__libcpp_verbose_abortEPKcz",
    "libc++abi.so": "__cxa_demangle",
    "libwasi-emulated-mman.so": "mmap",
    "libwasi-emulated-process-clocks.so": "clock",
    "libwasi-emulated-getpid.so": "getpid",
    "libwasi-emulated-signal.so": "signal",
}
SYSCONFIGDATA = "_sysconfigdata__wasi_wasm32-wasi.py"


def carve_zstd(blob):
    """Yield each complete zstd frame found in blob (located by its magic number)."""
    magic = b"\x28\xb5\x2f\xfd"
    pos = 0
    while True:
        i = blob.find(magic, pos)
        if i < 0:
            return
        j = i + 4
        fhd = blob[j]
        j += 1
        ok = not (fhd >> 3) & 1
        single, checksum, dict_flag, fcs_flag = (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3, fhd >> 6
        j += (0 if single else 1) + [0, 1, 2, 4][dict_flag] + [1 if single else 0, 2, 4, 8][fcs_flag]
        while ok:
            if j + 3 > len(blob):
                ok = False
                break
            bh = blob[j] | blob[j + 1] << 8 | blob[j + 2] << 16
            j += 3
            typ, size = (bh >> 1) & 3, bh >> 3
            if typ == 3:
                ok = False
                break
            j += 1 if typ == 1 else size
            if bh & 1:
                break
        if ok and j <= len(blob):
            j += 4 if checksum else 0
            r = subprocess.run(["zstd", "-d", "-c", "-q"], input=blob[i:j], capture_output=True)
            if r.returncode == 0:
                yield r.stdout
                pos = j
                continue
        pos = i + 1


def extract_tar(path, dest):
    with tarfile.open(path) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(dest, filter="data")
        else:
            t.extractall(dest)


def step_extract(c):
    """Unpack the pinned inputs: sdist, zig libc headers, Debian headers, bundled wasm libs."""
    native = next((c.venv / "lib").glob("python3*/site-packages/componentize_py/componentize_py*.so"))
    step = Step(c.work, "extract", [c.numpy_sdist(), c.zig_wheel(), c.dl, native],
                [step_extract, carve_zstd, extract_tar, BUNDLED_LIBS])
    if fresh_or_log(step):
        return
    ex = c.work / "extract"
    if ex.exists():
        shutil.rmtree(ex)
    ex.mkdir(parents=True)
    extract_tar(c.numpy_sdist(), ex)
    # zig keeps headers shared by all musl targets in generic-musl and only wasi's own in
    # wasm-wasi-musl: the wasi sysroot is generic-musl overlaid with wasm-wasi-musl.
    with zipfile.ZipFile(c.zig_wheel()) as z:
        for sub in ("generic-musl", "wasm-wasi-musl"):
            prefix = f"ziglang/lib/libc/include/{sub}/"
            for n in z.namelist():
                if n.startswith(prefix) and not n.endswith("/"):
                    dest = ex / "zig-include" / sub / n[len(prefix):]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(z.read(n))
    for name in DEBS:
        run(["dpkg-deb", "-x", deb_path(c, name), ex / "deb"])
    libs = ex / "bundled"
    libs.mkdir()
    found = {}
    for k, data in enumerate(carve_zstd(native.read_bytes())):
        if data[:4] == b"\0asm":
            p = libs / f"blob{k:02d}.wasm"
            p.write_bytes(data)
            syms = subprocess.run([LLVM_NM, "--defined-only", "-j", p], capture_output=True,
                                  text=True).stdout.split()
            for lib, sym in BUNDLED_LIBS.items():
                if sym in syms and lib not in found and "_initialize" in syms:
                    # libc++abi also defines nothing of libc++'s; libc defines no Py_*.
                    if lib == "libc.so" and "Py_Initialize" in syms:
                        continue
                    found[lib] = p
                    break
        elif SYSCONFIGDATA.encode() in data[:1 << 20] or data[257:262] == b"ustar":
            p = libs / f"blob{k:02d}.tar"
            p.write_bytes(data)
            with tarfile.open(p) as t:
                if SYSCONFIGDATA in t.getnames():
                    t.extract(SYSCONFIGDATA, ex)
    missing = set(BUNDLED_LIBS) - set(found)
    if missing or not (ex / SYSCONFIGDATA).exists():
        raise SystemExit(f"componentize-py bundle: not found {sorted(missing)} / sysconfigdata")
    for lib, p in found.items():
        p.rename(libs / lib)
    step.done()
