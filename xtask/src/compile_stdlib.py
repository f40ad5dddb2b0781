# Runs inside the Python engine (`forge-host run`, from xtask/src/stdlib.rs): compiles every module
# of the standard library zip given as the input, for the CPython that will import it, and writes
# /output/python-stdlib.zip: each file as it was, and beside each module its bytecode in
# `__pycache__/`, as a directory on sys.path wants it. The bytecode is hash-based and unchecked
# (the zip is pinned by sha256 in engines.lock, and its tree is mounted read-only), and names
# `/python/...`, where runs mount the tree, so tracebacks and `inspect` find the source. Fixed
# times and sorted names: the same zip and engine give the same bytes.
import importlib._bootstrap_external as bootstrap
import importlib.util
import sys
import zipfile

import forge

MOUNT = "/python"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def entry(name):
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


(source_zip,) = [i["path"] for i in forge.inputs()]
modules = 0
skipped = []
with zipfile.ZipFile(source_zip) as source, zipfile.ZipFile("/output/python-stdlib.zip", "w") as out:
    for name in sorted(source.namelist()):
        if name.endswith("/"):
            continue
        data = source.read(name)
        out.writestr(entry(name), data)
        if not name.endswith(".py"):
            continue
        try:
            code = compile(data, f"{MOUNT}/{name}", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            # Lib's own bad-syntax test data, were it here: imported, it fails as it would.
            skipped.append(name)
            continue
        pyc = bootstrap._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
        cached = importlib.util.cache_from_source(f"{MOUNT}/{name}")
        out.writestr(entry(cached.removeprefix(MOUNT + "/")), pyc)
        modules += 1

forge.result({
    "cache_tag": sys.implementation.cache_tag,
    "version": sys.version.split()[0],
    "modules": modules,
    "skipped": skipped,
})
