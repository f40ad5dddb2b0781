"""`time.process_time()` counted from the start of the run.

WASI has no CPU clock: wasi-libc emulates the process clock as the monotonic clock since a start
it records when the interpreter starts. That moment came while componentize-py pre-initialised
the interpreter at build time, and the snapshot keeps it, while the host's monotonic clock starts
again at every run: the raw clock reads a large negative number. The process clocks here read
from the moment the run began (`restart`, called as each run starts) instead.
"""

import time

_raw_ns = time.process_time_ns
_raw_clock_gettime_ns = getattr(time, "clock_gettime_ns", None)
_raw_clock_gettime = getattr(time, "clock_gettime", None)
_PROCESS_CLOCKS = {getattr(time, name) for name in ("CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID")
                   if hasattr(time, name)}
_start_ns = 0


def restart():
    """The run starts now: the process clocks read 0 from here."""
    global _start_ns
    _start_ns = _raw_ns()


def process_time_ns():
    return max(0, _raw_ns() - _start_ns)


def process_time():
    return process_time_ns() / 1e9


def clock_gettime_ns(clock_id):
    if clock_id in _PROCESS_CLOCKS:
        return process_time_ns()
    return _raw_clock_gettime_ns(clock_id)


def clock_gettime(clock_id):
    if clock_id in _PROCESS_CLOCKS:
        return process_time()
    return _raw_clock_gettime(clock_id)


for _name, _function in [("process_time_ns", process_time_ns), ("process_time", process_time)]:
    _function.__doc__ = getattr(time, _name).__doc__
    setattr(time, _name, _function)
if _raw_clock_gettime_ns is not None and _raw_clock_gettime is not None:
    time.clock_gettime_ns = clock_gettime_ns
    time.clock_gettime = clock_gettime
del _name, _function
