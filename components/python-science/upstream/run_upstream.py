"""Run a curated subset of numpy's and pandas' own test suites inside the python-science engine.

A forge script: `forge-host run run_upstream.py --engine python-science --input TESTKIT ...`,
where TESTKIT is the directory `components/python-science/testkit.py` assembles (pylib/: pytest
and its pure-Python dependencies; site/: the upstream test trees; stdlib/: standard-library
modules pytest needs that the engine's snapshot lacks; tzdata/: zone files, used only when the
engine has none; config/: the upstream pytest configs; upstream/: this script, selection.txt,
known-failures.txt, deselect.txt). See upstream/README.md.

Only modules imported when the component was built exist at run time; numpy and pandas are
such snapshotted packages whose `__path__` points at build-time directories that do not exist
here. The test trees are mirrored under site/ and each mirrored directory is appended to the
`__path__` of the package already loaded, so `numpy.linalg.tests.test_linalg`,
`pandas.tests...` and `pandas._testing` import from /input. pytest runs in-process, once for
numpy and once for pandas (each with its own upstream config), without the plugins that need
threads, a cache directory or file-descriptor capture.

The result (forge.result) stays small: counts per suite, the failed node ids, the failures not
listed in known-failures.txt ("unexpected"), the known failures that passed ("fixed"), and the
slowest tests. A full report (every outcome in run order, a short text for each failure and skip,
durations) is written to /output/upstream-report.json. A test that traps the instance ends the
run: /output/upstream-current-test.txt (published with --publish-on-error) then names it.

An optional input file `upstream-args.json` overrides what runs (for development):
{"select": ["numpy/fft/tests"], "suites": ["numpy"], "tb": "short", "extra": ["-x"]}.
"""

import json
import os
import re
import sys
import time

import forge

T0 = time.monotonic()


def find_kit():
    for name in sorted(os.listdir("/input")):
        d = os.path.join("/input", name)
        if os.path.isfile(os.path.join(d, "upstream", "selection.txt")):
            return d
    raise SystemExit("no test kit among the inputs (a directory holding upstream/selection.txt)")


KIT = find_kit()
CURRENT = "/output/upstream-current-test.txt"
SITE = os.path.join(KIT, "site")


def read_patterns(name):
    """Lines `PATTERN  # reason` (blank lines and comment lines skipped) -> [(pattern, reason)]."""
    out = []
    path = os.path.join(KIT, "upstream", name)
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            pattern, _, reason = line.partition(" #")
            out.append((pattern.strip(), reason.strip()))
    return out


def read_selection():
    """selection.txt: one pytest argument (path or node id under site/) per line; `extra:` lines
    only tell testkit.py what else to copy."""
    out = []
    for pattern, _ in read_patterns("selection.txt"):
        if not pattern.startswith("extra:"):
            out.append(pattern)
    return out


_PATTERNS = {}


def matches(nodeid, pattern):
    """`*` in a pattern matches any text; everything else is literal (node ids hold brackets)."""
    rx = _PATTERNS.get(pattern)
    if rx is None:
        rx = _PATTERNS[pattern] = re.compile(".*".join(re.escape(p) for p in pattern.split("*")))
    return rx.fullmatch(nodeid) is not None


# ---------------------------------------------------------------------------------------------
# import machinery: pylib, standard-library gaps, mirrored test trees
# ---------------------------------------------------------------------------------------------
def extend_package_paths(root):
    """Append each directory under `root` to the __path__ of the package of the same dotted name
    when that package is already loaded (snapshotted), so its missing submodules import from here."""
    added = 0
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            continue
        mod = sys.modules.get(rel.replace(os.sep, "."))
        path = getattr(mod, "__path__", None)
        if path is not None and dirpath not in path:
            try:
                path.append(dirpath)
                added += 1
            except AttributeError:  # a namespace path object: rebuild it as a list
                mod.__path__ = list(path) + [dirpath]
                added += 1
    return added


for _d in (os.path.join(KIT, "pylib"), os.path.join(KIT, "stdlib"), "/input/stdlib-all"):
    if os.path.isdir(_d) and _d not in sys.path:
        sys.path.append(_d)
        extend_package_paths(_d)
extend_package_paths(SITE)
sys.dont_write_bytecode = True  # /input is read-only; no .pyc next to the sources


class _Unavailable(type(sys)):
    """A stand-in for a standard-library module WASI CPython lacks (ctypes: no _ctypes; mmap).
    Some test modules import one at the top only for a few tests (numpy's test_dtype.py imports
    ctypes, test_multiarray.py mmap): with the stand-in the module imports, and the tests that
    use it fail with this AttributeError (listed in known-failures.txt)."""

    def __getattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name}: {self.__name__} is not available in this "
                             "engine (WASI CPython); this module is the test kit's stand-in")


for _name in ("ctypes", "mmap"):
    try:
        __import__(_name)
    except ImportError:
        sys.modules[_name] = _Unavailable(_name)

# hypothesis (numpy's and pandas' conftests import it) keeps its example database under the
# writable /work.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", "/work/.hypothesis")


def ensure_zoneinfo():
    """Time-zone data: the engine's own when it has it, else the kit's copy of the tzdata package.
    zoneinfo falls back to the `tzdata` package whatever TZPATH says (pandas' tests reset TZPATH),
    so the snapshotted tzdata modules (whose data files are not in the snapshot) are replaced by
    the kit's; dateutil.tz.gettz reads zone files from its TZPATHS list."""
    import zoneinfo
    try:
        zoneinfo.ZoneInfo("US/Pacific")
        return "engine"
    except zoneinfo.ZoneInfoNotFoundError:
        pass
    for name in [n for n in sys.modules if n == "tzdata" or n.startswith("tzdata.")]:
        del sys.modules[name]
    sys.path.insert(0, os.path.join(KIT, "tzdata"))
    import importlib
    importlib.invalidate_caches()
    import tzdata  # noqa: F401  (now the kit's)
    zoneinfo.ZoneInfo.clear_cache()
    zoneinfo.ZoneInfo("US/Pacific")
    try:
        import dateutil.tz.tz as dtz
        dtz.TZPATHS.insert(0, os.path.join(KIT, "tzdata", "tzdata", "zoneinfo"))
        dtz.gettz.cache_clear()
    except (ImportError, AttributeError):
        pass
    return "kit"


TZDATA = ensure_zoneinfo()

try:
    import pytest  # noqa: E402
except ImportError:
    # The engine reports any failed import as "package not available": keep the real cause.
    import traceback
    traceback.print_exc()
    raise


# ---------------------------------------------------------------------------------------------
# the collecting plugin
# ---------------------------------------------------------------------------------------------
class Collector:
    def __init__(self, suite, deselect, tb_chars):
        self.suite = suite
        self.deselect = deselect
        self.tb_chars = tb_chars
        self.outcomes = {}  # nodeid -> outcome
        self.details = {}  # nodeid -> short failure text
        self.durations = {}
        self.deselected = []
        self.fd_capture = []
        self.collect_errors = []

    def pytest_collection_modifyitems(self, session, config, items):
        keep, drop = [], []
        for item in items:
            # capfd/capfdbinary dup() the standard file descriptors, which WASI cannot: the
            # fixture's failure also breaks pytest's capture for every later test.
            fd_capture = {"capfd", "capfdbinary"} & set(getattr(item, "fixturenames", ()))
            if fd_capture:
                self.fd_capture.append(item.nodeid)
            if fd_capture or any(matches(item.nodeid, p) for p, _ in self.deselect):
                drop.append(item)
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            self.deselected.extend(i.nodeid for i in drop)
            items[:] = keep

    def pytest_runtest_logstart(self, nodeid, location):
        # A test that traps the instance ends the whole run: the last name written here (published
        # with --publish-on-error) says which one, for deselect.txt.
        try:
            with open(CURRENT, "w", encoding="utf-8") as f:
                f.write(nodeid + "\n")
        except OSError:
            pass

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(report.nodeid)
            self.outcomes[report.nodeid] = "error"
            self.details[report.nodeid] = str(report.longrepr)[-self.tb_chars:]

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        self.durations[nodeid] = self.durations.get(nodeid, 0.0) + report.duration
        xfail = hasattr(report, "wasxfail")
        if report.when == "call":
            if report.passed:
                outcome = "xpassed" if xfail else "passed"
            elif report.skipped:
                outcome = "xfailed" if xfail else "skipped"
            else:
                outcome = "failed"
            self.outcomes[nodeid] = outcome
        elif report.failed:  # setup or teardown error
            self.outcomes[nodeid] = "error"
        elif report.skipped and report.when == "setup":
            self.outcomes[nodeid] = "xfailed" if xfail else "skipped"
        if report.failed:
            self.details[nodeid] = (f"[{report.when}] " + str(report.longrepr))[-self.tb_chars:]
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.details[nodeid] = str(getattr(report, "wasxfail", "") or reason)[:300]


def suite_of(arg):
    return arg.split("/", 1)[0]


def run_suite(suite, args_in, deselect, opts):
    collector = Collector(suite, deselect, opts.get("tb_chars", 1500))
    config = {
        "numpy": os.path.join(KIT, "config", "numpy", "pytest.ini"),
        "pandas": os.path.join(KIT, "config", "pandas", "pyproject.toml"),
    }[suite]
    args = [
        "-c", config, "--rootdir", SITE,
        # The upstream addopts (-l -ra / --capture=no --durations=30) are replaced: no fd capture
        # (WASI has no dup2), no local-variable dumps.
        "-o", "addopts=--strict-markers",
        "-p", "no:cacheprovider",  # writes .pytest_cache beside the (read-only) rootdir
        "-p", "no:faulthandler",  # needs a real stderr fd and a watchdog thread
        "-p", "no:pastebin",  # network
        "--capture=sys", "--continue-on-collection-errors",
        "-o", "log_file=/work/pytest.log",  # the default (os.devnull) does not exist in WASI
        # Without it pytest names its temp root after os.getuid(), which WASI lacks.
        f"--basetemp=/work/pytest-tmp-{suite}",
        f"--tb={opts.get('tb', 'short')}",
        "-q", "--no-header", "-W", "ignore::pytest.PytestUnraisableExceptionWarning",
        # pytest 9.2 deprecates what numpy 2.4's tests still do (iterators given to parametrize);
        # the upstream configs turn every warning into an error.
        "-W", "ignore::pytest.PytestRemovedIn10Warning",
    ]
    if suite == "pandas":
        # The pandas sdist ships no test data files (pandas/tests/io/**/data): the tests that
        # read one are skipped ("Could not find file"), as upstream's option allows.
        args += ["--no-strict-data-files"]
    args += opts.get("extra", [])
    args += [os.path.join(SITE, a) for a in args_in]
    t0 = time.monotonic()
    code = pytest.main(args, plugins=[collector])
    return collector, int(code), time.monotonic() - t0


def main():
    opts = {}
    for name in os.listdir("/input"):
        if name == "upstream-args.json":
            with open(os.path.join("/input", name), encoding="utf-8") as f:
                opts = json.load(f)
    selection = opts.get("select") or read_selection()
    deselect = read_patterns("deselect.txt")
    known = read_patterns("known-failures.txt")
    suites = opts.get("suites") or ["numpy", "pandas"]
    os.chdir("/work")

    results = {}
    all_outcomes, all_details, all_durations = {}, {}, {}
    deselected = []
    for suite in suites:
        args = [a for a in selection if suite_of(a) == suite]
        if not args:
            continue
        collector, code, wall = run_suite(suite, args, deselect, opts)
        counts = {}
        for outcome in collector.outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        results[suite] = {"exit_code": code, "seconds": round(wall, 1), "deselected": len(collector.deselected),
                          "deselected_capfd": len(collector.fd_capture),
                          **counts}
        all_outcomes.update(collector.outcomes)
        all_details.update(collector.details)
        all_durations.update(collector.durations)
        deselected.extend(collector.deselected)

    failures = sorted(n for n, o in all_outcomes.items() if o in ("failed", "error"))
    unexpected = [n for n in failures if not any(matches(n, p) for p, _ in known)]
    # pytest's own trouble (internal error 3, usage error 4, nothing collected 5) is unexpected too.
    unexpected += [f"{suite}: pytest exit code {r['exit_code']}" for suite, r in results.items()
                   if r["exit_code"] not in (0, 1)]
    fixed, unmatched = [], []
    for pattern, _ in known:
        hit = [n for n in all_outcomes if matches(n, pattern)]
        if not hit:
            unmatched.append(pattern)
        elif all(all_outcomes[n] in ("passed", "xpassed") for n in hit):
            fixed.append(pattern)
    total = {k: sum(r.get(k, 0) for r in results.values())
             for k in ("passed", "failed", "skipped", "xfailed", "xpassed", "error")}
    slowest = sorted(all_durations.items(), key=lambda kv: -kv[1])[:10]

    report = {"outcomes": all_outcomes, "details": all_details, "deselected": deselected,
              "durations": {k: round(v, 3) for k, v in all_durations.items()}}
    try:
        os.remove(CURRENT)
    except OSError:
        pass
    try:
        with open("/output/upstream-report.json", "w", encoding="utf-8") as f:
            json.dump(report, f, indent=0)  # outcomes in run order
    except OSError as e:
        print(f"could not write the full report: {e}", file=sys.stderr)

    cap = opts.get("cap", 100)
    # Development aid: with a whole standard library given as input `stdlib-all`, name the
    # modules taken from it (testkit.py's STDLIB list must then hold them).
    from_all = sorted(n for n, m in list(sys.modules.items())
                      if (getattr(m, "__file__", None) or "").startswith("/input/stdlib-all/"))
    forge.result({
        "passed": total["passed"], "failed": total["failed"], "skipped": total["skipped"],
        "xfailed": total["xfailed"], "xpassed": total["xpassed"], "errors": total["error"],
        "deselected": len(deselected),
        "suites": results,
        "failures": failures[:cap], "failures_total": len(failures),
        "unexpected": unexpected[:cap], "unexpected_total": len(unexpected),
        "fixed": fixed, "known_unmatched": unmatched[:cap],
        "slowest": [[n, round(d, 2)] for n, d in slowest],
        "seconds": round(time.monotonic() - T0, 1),
        "tzdata": TZDATA,
        **({"stdlib_all_used": from_all} if from_all else {}),
    })


main()
