"""The toolchain facts, read from the repository's toolchain.json (which xtask and pyodide-fetch
read too): the CPython version and ABI tag, the LLVM major version and the Debian packages of
each build route. `{llvm}` in a package's name stands for the LLVM major version."""

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FILE = REPO / "toolchain.json"


def _read():
    try:
        facts = json.loads(FILE.read_text())
        python, llvm = facts["python"], facts["llvm"]["major"]
        debs = {route: [name.replace("{llvm}", llvm) for name in names]
                for route, names in facts["debian"].items()}
        return python["version"], python["abi"], llvm, debs
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"{FILE}: {e!r}")


# "3.14", "cp314", "19", {"quickjs": [...], "science": [...]}
PYTHON, ABI, LLVM, DEBS = _read()


def tool(name):
    """An LLVM tool by its unversioned name: `clang` is `clang-19`."""
    return f"{name}-{LLVM}"


CLANG = tool("clang")
CLANGXX = tool("clang++")
WASM_LD = tool("wasm-ld")
LLVM_NM = tool("llvm-nm")
LLVM_AR = tool("llvm-ar")
LLVM_STRIP = tool("llvm-strip")
# Debian's LLVM layout (clang's resource dir is named by the major version alone).
BUILTINS = f"/usr/lib/llvm-{LLVM}/lib/clang/{LLVM}/lib/wasi/libclang_rt.builtins-wasm32.a"
LIBCXX_HEADERS = f"/usr/lib/llvm-{LLVM}/include/wasm32-wasi/c++/v1"
# What an extension links against, and where CPython's headers go in the sysroot.
LIBPYTHON = f"python{PYTHON}"
PY_INCLUDE = f"include/python{PYTHON}"
