# Compiles a wheel's modules into a zip that holds the wheel's files and, beside each `.py`, its
# `.pyc` (hash-based and unchecked: the zip itself is pinned by sha256 in the lock), for
# zipimport to load instead of compiling the source at every run. `MOUNT` (set above this) is
# where runs will mount the zip, so that tracebacks name the file a module came from. The zip
# is written with fixed times, so the same wheel and engine give the same bytes.
import importlib._bootstrap_external as bootstrap
import importlib.util
import sys
import zipfile

import forge

FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def entry(name, external_attr=0o644 << 16):
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.external_attr = external_attr
    info.compress_type = zipfile.ZIP_STORED
    return info


(wheel,) = [i["path"] for i in forge.inputs()]
modules = 0
skipped = []
with zipfile.ZipFile(wheel) as source, zipfile.ZipFile("/output/bytecode.zip", "w") as out:
    names = set(source.namelist())
    for info in source.infolist():
        if info.is_dir():
            continue
        data = source.read(info)
        out.writestr(entry(info.filename, info.external_attr or 0o644 << 16), data)
        if not info.filename.endswith(".py") or info.filename + "c" in names:
            continue
        try:
            code = compile(data, f"{MOUNT}/{info.filename}", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            skipped.append(info.filename)
            continue
        pyc = bootstrap._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
        out.writestr(entry(info.filename + "c"), pyc)
        modules += 1

forge.result(
    {"cache_tag": sys.implementation.cache_tag, "modules": modules, "skipped": skipped}
)
