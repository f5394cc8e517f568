"""Benchmarks that say when they begin to measure, for the tests that signal a real
command at a chosen moment: an event to wait for, where a guessed duration (a sleep,
some CPU seconds "past the imports") waits too little on a slow machine and ends the
wrong phase.

A signal test's child runs `python -c ANNOUNCING ARGS`: pagezero's command line with
the benchmarks of `NAMES` replaced by the functions below, which print
``measuring PID`` on stdout (flushed; once a process) and then measure as the real one
does. A sweep's or --runs' workers import them by module and name (pagezero.runs.workers), from this
folder, and print on the same stdout, which they inherit: helpers/signals.measuring()
reads the line.
"""

import inspect
import os

from pagezero.measure import fault, mem
from pagezero.runs import workers
from pagezero.runs.workers import BENCHMARKS, register

# The child: `python -c ANNOUNCING [--later-runs-loops N] ARGS` (run from tests/, whose
# helpers/ it imports; tests/conftest.py start_python).
ANNOUNCING = """
import sys
from helpers.announce import announcing
from pagezero.cli import main
args = announcing(sys.argv[1:])
print("ready", flush=True)
sys.exit(main(args))
"""


_announced = False


def _announce():
    # Once a process: a sweep of a million points would fill the pipe nobody reads.
    global _announced
    if not _announced:
        _announced = True
        print(f"measuring {os.getpid()}", flush=True)


# Set in the environment (any value), every fault run's first loop takes 100 times as
# long as it did: what a VM's host does to a first touch of guest memory since boot, on
# any machine, for the tests of what the warm-up rule (measure/mem.py, warming_runs) leaves out.
SLOW_FIRST_LOOP = "ANNOUNCE_SLOW_FIRST_LOOP"


def _first_loop_slowed(bench_fault):
    def slowed(*args, **kwargs):
        raw = bench_fault(*args, **kwargs)
        if not raw["wall"]:
            return raw
        slow = [(s[0] * 100, *s[1:]) for s in (raw["wall"], *raw["threads"])]
        return dict(raw, wall=slow[0], threads=tuple(slow[1:]))

    return slowed


def faults(**params):
    _announce()
    real = fault._core.bench_fault
    if os.environ.get(SLOW_FIRST_LOOP):
        fault._core.bench_fault = _first_loop_slowed(real)
    try:
        return fault.faults(**params)
    finally:
        fault._core.bench_fault = real


def memset(**params):
    _announce()
    return mem.memset(**params)


NAMES = {"mmap": faults, "memset": memset}
# The real one's parameters, which the command line reads (not functools.wraps: its
# module and name would have the workers import the real one).
for _run, _real in ((faults, fault.faults), (memset, mem.memset)):
    _run.__signature__ = inspect.signature(_real)


def _later_runs_loops(loops):
    """Every worker but the first (process 0) measures `loops` loops: a first run that
    ends, then runs that last until a signal ends them (with far more loops than can
    finish), however fast this machine measures."""
    run_worker = workers._run_worker

    def with_loops(spec, tmp):
        if spec["process"] > 0:
            spec = {**spec, "points": [{**p, "loops": loops} for p in spec["points"]]}
        return run_worker(spec, tmp)

    workers._run_worker = with_loops


def announcing(args):
    """Register the announcing benchmarks (each with its real one's check); `args`
    without the options for this module (``--later-runs-loops N``)."""
    for name, run in NAMES.items():
        register(name, run, BENCHMARKS[name].check)
    if args[:1] == ["--later-runs-loops"]:
        _later_runs_loops(int(args[1]))
        args = args[2:]
    return args
