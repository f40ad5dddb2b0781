"""The `numpy` and `pandas` steps: each sdist built by meson through the cross file (sysroot.py)
into its own site folder, patched for WASI (patches/numpy-*.patch, patches/pandas-*.patch)."""

import os
import shutil
import tarfile
import time
import zipfile

from .extract import extract_tar
from .patching import apply_patches, apply_hunks, parse, patch_files
from .pins import NUMPY, PANDAS, PURE_WHEELS
from .steps import Step, fresh_or_log, log, run, source_text
from .sysroot import cross_file

NUMPY_MESON_OPTIONS = [
    "-Dblas=none", "-Dlapack=none", "-Dallow-noblas=true",
    "-Ddisable-svml=true", "-Ddisable-highway=true", "-Ddisable-intel-sort=true",
    "-Ddisable-threading=true", "-Ddisable-optimization=true",
    "-Dcpu-baseline=none", "-Dcpu-dispatch=none",
]
# What applying patches/ means (part of both steps' recipes).
PATCHING = (apply_patches, apply_hunks, parse, patch_files)


def fresh_build_dir(build):
    """True when meson must set `build` up (no build.ninja yet); a half-made one is removed."""
    if (build / "build.ninja").exists():
        return False
    if build.exists():
        shutil.rmtree(build)
    return True


def step_numpy(c):
    """numpy with its vendored meson, through the cross file; installed into c.site."""
    src = c.work / "extract" / f"numpy-{NUMPY[1]}"
    patches = patch_files("numpy")
    step = Step(c.work, "numpy", [c.work / "stamps/sysroot"],
                [step_numpy, fresh_build_dir, cross_file, NUMPY_MESON_OPTIONS, *PATCHING,
                 *map(source_text, patches)])
    if fresh_or_log(step):
        return
    # From the sdist's own text, so that ninja recompiles only files whose patched text changed.
    with tarfile.open(c.numpy_sdist()) as t:
        apply_patches(src, patches,
                      lambda rel: t.extractfile(f"numpy-{NUMPY[1]}/{rel}").read().decode())
    cf = c.work / "cross.ini"
    cf.write_text(cross_file(c))
    build = c.work / "numpy-build"
    env = dict(os.environ, PATH=f"{c.venv / 'bin'}:{os.environ['PATH']}")
    t0 = time.time()
    if fresh_build_dir(build):
        run([c.venv / "bin/python", src / "vendored-meson/meson/meson.py", "setup", build, src,
             "--cross-file", cf, "--prefix=/", "--buildtype=release", "-Db_ndebug=if-release",
             "--python.platlibdir=/site", "--python.purelibdir=/site"] + NUMPY_MESON_OPTIONS, env=env)
    run([c.venv / "bin/ninja", "-C", build, f"-j{c.jobs}"], env=env)
    if c.site.exists():
        shutil.rmtree(c.site)
    run([c.venv / "bin/python", src / "vendored-meson/meson/meson.py", "install", "-C", build,
         "--destdir", c.work / "install", "--no-rebuild", "--quiet"], env=env)
    shutil.move(str(c.work / "install/site"), c.site)
    shutil.rmtree(c.work / "install")
    log(f"numpy: built in {time.time() - t0:.0f} s")
    step.done()


def pandas_stand_ins(c):
    """The cross python is the host CPython: pandas' meson.build asks `import numpy` for the
    include dir, and generate_version.py imports versioneer. Stand-ins for both (a folder for
    PYTHONPATH); numpy's .pxd next to the stand-in so that Cython's `from numpy cimport ...`
    works."""
    stub = c.work / "pandas-stub"
    (stub / "numpy").mkdir(parents=True, exist_ok=True)
    (stub / "numpy/__init__.py").write_text(
        f"def get_include():\n    return {str(c.site / 'numpy/_core/include')!r}\n")
    for pxd in ("__init__.pxd", "__init__.cython-30.pxd"):
        shutil.copy2(c.site / "numpy" / pxd, stub / "numpy" / pxd)
    (stub / "versioneer.py").write_text(
        "def get_version():\n    raise RuntimeError('the sdist ships _version_meson.py')\n")
    return stub


def step_pandas(c):
    """pandas with PyPI meson, through the same cross file; plus its pure-Python deps."""
    patches = patch_files("pandas")
    step = Step(c.work, "pandas", [c.work / "stamps/numpy", c.pandas_sdist(), c.dl],
                [step_pandas, pandas_stand_ins, fresh_build_dir, *PATCHING,
                 *map(source_text, patches)])
    if fresh_or_log(step):
        return
    src = c.work / "extract" / f"pandas-{PANDAS[1]}"
    if not src.exists():
        extract_tar(c.pandas_sdist(), c.work / "extract")
    stub = pandas_stand_ins(c)
    env = dict(os.environ, PATH=f"{c.venv / 'bin'}:{os.environ['PATH']}", PYTHONPATH=str(stub))
    build = c.work / "pandas-build"
    t0 = time.time()
    if fresh_build_dir(build):
        run([c.venv / "bin/meson", "setup", build, src, "--cross-file", c.work / "cross.ini",
             "--prefix=/", "--buildtype=release", "-Db_ndebug=if-release",
             "--python.platlibdir=/site", "--python.purelibdir=/site"], env=env)
    run([c.venv / "bin/ninja", "-C", build, f"-j{c.jobs}"], env=env)
    inst = c.work / "install-pandas"
    for d in (inst, c.site_pandas):
        if d.exists():
            shutil.rmtree(d)
    run([c.venv / "bin/meson", "install", "-C", build, "--destdir", inst, "--no-rebuild",
         "--quiet"], env=env)
    shutil.move(str(inst / "site"), c.site_pandas)
    shutil.rmtree(inst)
    apply_patches(c.site_pandas, patches)
    for name, (version, _) in PURE_WHEELS.items():
        whl = next(c.dl.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(whl) as z:
            z.extractall(c.site_pandas)
    log(f"pandas: built in {time.time() - t0:.0f} s")
    step.done()
