"""The `sysroot` step: a wasm32-wasip1 sysroot for clang (zig's libc headers, libc++ headers with
threads on, CPython's headers with a WASI pyconfig.h, the bundled shared libraries to link
against), the tool wrappers of wrappers/, and the meson cross file numpy and pandas build with."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from . import toolchain
from .extract import BUNDLED_LIBS, SYSCONFIGDATA
from .steps import Step, fresh_or_log, run, source_text
from .toolchain import (BUILTINS, CLANG, CLANGXX, LIBCXX_HEADERS, LIBPYTHON, LLVM_AR, LLVM_NM,
                        LLVM_STRIP, PY_INCLUDE, PYTHON, WASM_LD)

TARGET = "wasm32-wasip1"
HERE = Path(__file__).resolve().parent
WRAPPERS = HERE / "wrappers"
WRAPPER_FILES = [WRAPPERS / name for name in ("cross-python.sh", "wasm-ld.py", "sitecustomize.py")]
# C++ `throw` without wasm exception handling: the bundled libc++abi has no __cxa_throw (built
# without exceptions). C++ code is compiled with -fexceptions (throws become calls, catch blocks
# vanish) and linked with these, which report the exception and trap.
CXA_TRAP = HERE / "cxa_trap.c"
# The bundled libraries a meson probe is not linked against (the wasm-ld wrapper).
PROBE_LIBS = [f"-l{LIBPYTHON}", "-lc", "-lc++", "-lc++abi"]

PYCONFIG_LINE = re.compile(r"^(#define ([A-Za-z_][A-Za-z0-9_]*)(?: (.*))?|/\* #undef ([A-Za-z_][A-Za-z0-9_]*) \*/)$")


def make_pyconfig(template, variables):
    """pyconfig.h for CPython/WASI: Debian's header as the template, values from sysconfigdata."""
    out = []
    for line in template.splitlines():
        m = PYCONFIG_LINE.match(line)
        if not m:
            out.append(line)  # structure, comments and the indented `# define _GNU_SOURCE` block
            continue
        name = m.group(2) or m.group(4)
        value = variables.get(name, 0)
        if value in (0, None):
            out.append(f"/* #undef {name} */")
        else:
            out.append(f"#define {name} {value}")
    return "\n".join(out) + "\n"


def step_sysroot(c):
    """A wasm32-wasip1 sysroot: zig's libc headers, libc++ headers with threads on, Python
    headers with a WASI pyconfig.h, the bundled .so files to link against, and tool wrappers."""
    ex = c.work / "extract"
    step = Step(c.work, "sysroot", [c.work / "stamps/extract", LIBCXX_HEADERS],
                [step_sysroot, make_pyconfig, install_wrappers, install_template, sync_tree,
                 source_text(CXA_TRAP), *map(source_text, WRAPPER_FILES), TARGET,
                 PROBE_LIBS, toolchain.PYTHON, toolchain.LLVM])
    if fresh_or_log(step):
        return
    # Built beside the real one, then synced into it file by file: unchanged files keep their
    # mtime, so a rerun of this step does not make ninja recompile numpy and pandas.
    s = c.sysroot.with_name("sysroot.new")
    if s.exists():
        shutil.rmtree(s)
    shutil.copytree(ex / "zig-include/generic-musl", s / "include")
    shutil.copytree(ex / "zig-include/wasm-wasi-musl", s / "include", dirs_exist_ok=True)
    shutil.copytree(LIBCXX_HEADERS, s / "include/c++/v1")
    site = (s / "include/c++/v1/__config_site")
    text = site.read_text()
    text = text.replace("#define _LIBCPP_HAS_NO_THREADS\n", "/* threads on (wasi-sdk 33 libc++) */\n")
    text = text.replace("/* #undef _LIBCPP_HAS_THREAD_API_PTHREAD */", "#define _LIBCPP_HAS_THREAD_API_PTHREAD")
    site.write_text(text)
    # Python headers: Debian's, with pyconfig.h regenerated from the bundled sysconfigdata.
    pyinc = s / PY_INCLUDE
    shutil.copytree(ex / "deb/usr" / PY_INCLUDE, pyinc, symlinks=False)
    ns = {}
    exec((ex / SYSCONFIGDATA).read_text(), ns)
    variables = ns["build_time_vars"]
    if variables.get("VERSION") != PYTHON:
        raise SystemExit(f"componentize-py's CPython is {variables.get('VERSION')}, toolchain.json "
                         f"says {PYTHON}")
    template = (ex / f"deb/usr/include/x86_64-linux-gnu/python{PYTHON}/pyconfig.h").read_text()
    (pyinc / "pyconfig.h").unlink()
    (pyinc / "pyconfig.h").write_text(make_pyconfig(template, variables))
    lib = s / "lib" / TARGET
    lib.mkdir(parents=True)
    for name in BUNDLED_LIBS:
        shutil.copy2(ex / "bundled" / name, lib / name)
    shutil.copy2(ex / "bundled" / f"lib{LIBPYTHON}.so", lib / "libpython3.so")
    # libm, libdl, ... are part of WASI's libc.so: empty archives satisfy `-lm` and friends.
    for name in ("m", "dl", "rt", "pthread", "util"):
        run([LLVM_AR, "crs", lib / f"lib{name}.a"])
    # The exports of the bundled libraries: what an extension may import.
    exports = set()
    for name in BUNDLED_LIBS:
        exports.update(subprocess.run([LLVM_NM, "--defined-only", "-j", lib / name],
                                      capture_output=True, text=True, check=True).stdout.split())
    (s / "exports.txt").write_text("\n".join(sorted(exports)) + "\n")
    # A sysconfigdata for meson's python introspection (run by the build venv's CPython):
    # WASI values, with the include dir pointing at our headers; and a sitecustomize that
    # points sysconfig.get_paths() there too.
    cross_py = c.work / "cross-python"
    cross_py.mkdir(exist_ok=True)
    final_pyinc = c.sysroot / PY_INCLUDE
    variables = dict(variables, INCLUDEPY=str(final_pyinc), CONFINCLUDEPY=str(final_pyinc),
                     LIBPYTHON="")
    (cross_py / SYSCONFIGDATA).write_text(f"build_time_vars = {variables!r}\n")
    shutil.copyfile(WRAPPERS / "sitecustomize.py", cross_py / "sitecustomize.py")
    src = c.work / "cxa_trap.c"
    shutil.copyfile(CXA_TRAP, src)
    obj = c.work / "cxa_trap.o"
    run([CLANG, f"--target={TARGET}", f"--sysroot={s}", "-fPIC", "-O2", "-c", src, "-o", obj])
    run([LLVM_AR, "crs", lib / "libcxa_trap.a", obj])
    sync_tree(s, c.sysroot)
    shutil.rmtree(s)
    install_wrappers(c)
    step.done()


def sync_tree(src, dst):
    """Make dst hold what src holds, rewriting only the files whose bytes differ."""
    src, dst = Path(src), Path(dst)
    wanted = set()
    for root, _, files in os.walk(src):
        for name in files:
            rel = Path(root, name).relative_to(src)
            wanted.add(rel)
            target = dst / rel
            if target.is_file() and not target.is_symlink() and \
                    target.read_bytes() == (src / rel).read_bytes():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() or target.is_symlink():
                target.unlink()
            shutil.copy2(src / rel, target)
    for root, _, files in os.walk(dst):
        for name in files:
            if Path(root, name).relative_to(dst) not in wanted:
                Path(root, name).unlink()


def install_template(src, dest, values):
    """Copy the wrapper `src` to `dest` (executable) with each @NAME@ replaced by values[NAME]."""
    text = src.read_text()
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise SystemExit(f"{src}: no value for {sorted(set(left))}")
    dest.write_text(text)
    dest.chmod(0o755)


def install_wrappers(c):
    """WORK/bin/cross-python (python for meson: the host CPython with the WASI sysconfig) and
    WORK/bin/wasm-ld (the linker wrapper), from wrappers/."""
    b = c.work / "bin"
    b.mkdir(exist_ok=True)
    py = c.venv / "bin/python"
    install_template(WRAPPERS / "cross-python.sh", b / "cross-python",
                     {"PYTHON": py, "CROSS_PYTHONPATH": c.work / "cross-python",
                      "PY_INCLUDE": c.sysroot / PY_INCLUDE})
    install_template(WRAPPERS / "wasm-ld.py", b / "wasm-ld",
                     {"PYTHON": py, "WASM_LD": shutil.which(WASM_LD),
                      "EXPORTS": c.sysroot / "exports.txt", "PROBE_LIBS": " ".join(PROBE_LIBS)})


# The same defines for every C file compiled against the sysroot (the cross file, compression).
WASI_DEFINES = ["-D_WASI_EMULATED_SIGNAL", "-D_WASI_EMULATED_MMAN",
                "-D_WASI_EMULATED_PROCESS_CLOCKS", "-D_WASI_EMULATED_GETPID"]


def cross_file(c):
    """The meson cross file numpy and pandas build with (the `numpy` step writes it)."""
    s = c.sysroot
    target = [f"--target={TARGET}", f"--sysroot={s}"]
    common = ["-fPIC", *WASI_DEFINES, f"-I{s / PY_INCLUDE}"]
    link = ["-shared", "-nostartfiles", "-nodefaultlibs", f"-fuse-ld={c.work / 'bin/wasm-ld'}",
            "-Wl,--experimental-pic", f"-L{s / 'lib' / TARGET}", f"-l{LIBPYTHON}", "-lc",
            BUILTINS]
    cpp_link = link[:-1] + ["-lcxa_trap", "-lc++", "-lc++abi", BUILTINS]
    q = lambda xs: "[" + ", ".join(repr(str(x)) for x in xs) + "]"
    return f"""[binaries]
c = {q([CLANG] + target)}
cpp = {q([CLANGXX] + target)}
ar = {q([LLVM_AR])}
nm = {q([LLVM_NM])}
strip = '{LLVM_STRIP}'
python = {q([c.work / 'bin/cross-python'])}
python3 = {q([c.work / 'bin/cross-python'])}
cython = {q([c.venv / 'bin/cython'])}
pkg-config = 'false'

[built-in options]
c_args = {q(common)}
cpp_args = {q(common + ['-fexceptions'])}
c_link_args = {q(link)}
cpp_link_args = {q(cpp_link)}

[properties]
needs_exe_wrapper = true
longdouble_format = 'IEEE_QUAD_LE'

[host_machine]
system = 'wasi'
cpu_family = 'wasm32'
cpu = 'wasm32'
endian = 'little'
"""
