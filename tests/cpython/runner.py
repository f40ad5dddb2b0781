"""Runs one module of CPython's own test suite with unittest and reports every test's outcome.

The same file runs on both sides of tests/cpython (see README.md there): natively, as
`python3.14 runner.py SUITE MODULE [SKIP_FILE]`, and inside the engine, where forge-host runs it
as the script and its request is the input file `/input/request.json`
({"suite": "/input/<folder>", "module": "test_json", "skip": [...], "ran": [...]}). SUITE is the
folder that holds the suite's `test/` package; MODULE a module or package of it (`test_json`). SKIP
lists test ids that are not run at all on this side (they would hang or stop the run; each has its
reason in known-failures.txt), and are reported as `stopped`. RAN (the engine only) lists the ids an
earlier run of the module reported before a test stopped it: this run goes on with the others.

Each event is one line on file descriptor 1, written with os.write so that no test's redirection of
sys.stdout hides it, and prefixed so that nothing a test prints is mistaken for one:

    \x1ecpython-suite ["start", ID]
    \x1ecpython-suite ["end", ID, OUTCOME, MILLISECONDS, DETAIL]
    \x1ecpython-suite ["done", TESTS, SECONDS]

OUTCOME is pass, fail, error, skip, xfail (an expected failure) or xpass (an unexpected success);
DETAIL the exception's last line or the skip's reason. A run that the engine stops (time, memory)
still leaves the lines before it, so the caller knows which test was running.
"""

import json
import os
import sys
import time
import traceback
import unittest

PREFIX = b"\x1ecpython-suite "
# When a test has several results (its subtests), the worst one stands.
RANK = {"skip": 0, "pass": 1, "xfail": 1, "xpass": 2, "fail": 3, "error": 3}


def emit(*event):
    line = PREFIX + json.dumps(list(event)).encode("utf-8", "backslashreplace") + b"\n"
    while line:
        line = line[os.write(1, line):]


def last_line(err):
    try:
        text = traceback.format_exception_only(err[0], err[1])[-1].strip()
    except Exception as e:  # a broken __str__ of the test's own exception
        text = f"{err[0].__name__} (unprintable: {e!r})"
    return text[:300]


class Recorder(unittest.TestResult):
    """Keeps each test id's worst outcome, and says when a test starts and ends."""

    def __init__(self):
        super().__init__()
        self.outcomes = {}
        self.started = {}

    def note(self, test, outcome, detail=""):
        # A class's or module's fixture that fails or skips has no start: it is its own entry.
        if isinstance(test, unittest.suite._ErrorHolder):
            self.outcomes[test.id()] = (outcome, detail)
            emit("end", test.id(), outcome, 0, detail)
            return
        test = getattr(test, "test_case", test)  # a subtest counts for its test
        key = test.id()
        old = self.outcomes.get(key)
        if old is None or RANK[outcome] > RANK[old[0]]:
            self.outcomes[key] = (outcome, detail)

    def startTest(self, test):
        super().startTest(test)
        self.started[test.id()] = time.monotonic()
        emit("start", test.id())

    def stopTest(self, test):
        super().stopTest(test)
        key = test.id()
        outcome, detail = self.outcomes.get(key, ("pass", ""))
        millis = int((time.monotonic() - self.started.pop(key, time.monotonic())) * 1000)
        emit("end", key, outcome, millis, detail)

    def addSuccess(self, test):
        self.note(test, "pass")

    def addFailure(self, test, err):
        self.note(test, "fail", last_line(err))

    def addError(self, test, err):
        self.note(test, "error", last_line(err))

    def addSkip(self, test, reason):
        self.note(test, "skip", str(reason)[:300])

    def addExpectedFailure(self, test, err):
        self.note(test, "xfail")

    def addUnexpectedSuccess(self, test):
        self.note(test, "xpass", "unexpected success")

    def addSubTest(self, test, subtest, err):
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.note(test, "fail" if failed else "error", f"{subtest.id()}: {last_line(err)}")


def without(suite, skip, ran=frozenset()):
    """`suite` without the tests whose ids are in `skip` (reported as stopped) and in `ran`
    (an earlier run of the module reported them: left out silently)."""
    kept = unittest.TestSuite()
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            kept.addTest(without(item, skip, ran))
        elif item.id() in skip:
            emit("end", item.id(), "stopped", 0, "not run on this side (known-failures.txt)")
        elif item.id() not in ran:
            kept.addTest(item)
    return kept


def run(suite_dir, module, skip=(), ran=()):
    started = time.monotonic()
    sys.path.insert(0, suite_dir)
    import test
    import test.support

    where = os.path.dirname(os.path.dirname(os.path.abspath(test.__file__)))
    if os.path.abspath(where) != os.path.abspath(suite_dir):
        raise SystemExit(f"the test package comes from {where}, not the suite at {suite_dir}")
    # As `python -m test` without `-u`: no optional resource (cpu, network, largefile, ...).
    test.support.use_resources = []
    suite = unittest.defaultTestLoader.loadTestsFromName(f"test.{module}")
    suite = without(suite, set(skip), frozenset(ran))
    result = Recorder()
    suite.run(result)
    seconds = round(time.monotonic() - started, 3)
    emit("done", len(result.outcomes), seconds)
    return {"module": module, "tests": len(result.outcomes), "seconds": seconds}


def main():
    try:
        import forge
    except ImportError:
        forge = None
    if forge is not None:
        with open("/input/request.json") as f:
            request = json.load(f)
        forge.result(run(request["suite"], request["module"], request.get("skip", []),
                         request.get("ran", [])))
        return
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    # sid's interpreter runs through sid's dynamic loader (bench/cpu/native_cpython.py): the
    # tests that start `sys.executable` must start that wrapper, not the bare binary.
    if os.environ.get("FORGE_CPYTHON_EXECUTABLE"):
        sys.executable = os.environ["FORGE_CPYTHON_EXECUTABLE"]
    skip = []
    if len(sys.argv) == 4:
        with open(sys.argv[3]) as f:
            skip = json.load(f)
    run(sys.argv[1], sys.argv[2], skip)


if __name__ == "__main__":
    main()
