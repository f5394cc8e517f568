"""A stop signal during --runs: the runs measured before it are kept, with the
completed loops of the run it cut short, saved with -o, and the command exits
with the shell's status for the signal."""

import os
import re
import signal
import time

import pytest
from conftest import start_python
from helpers.signals import STATUS, children, wait_for_cpu

import pagezero

LOOPS = 300  # of 4MB faults: a run lasts a second or more


def second_run_started(proc, timeout=120):
    """Wait until the first run's process has ended and the second's has begun;
    the second's pid."""
    first, deadline = None, time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        kids = children(proc.pid)
        if kids and first is None:
            first = kids[0]
        elif kids and kids[0] != first:
            return kids[0]
        time.sleep(0.01)
    raise AssertionError(f"the second run never started: {proc.communicate()}")


# 0: while the second run's interpreter starts, before its handlers are in place
# (it is started with the signals held, so none ends it with a traceback);
# 0.6: once the second run has had 0.6 s of CPU, into its loops past its imports,
# usually (between runs keeps the same).
@pytest.mark.parametrize(
    "sig, cpu", [(signal.SIGINT, 0), (signal.SIGTERM, 0.6), (signal.SIGHUP, 0.6)]
)
def test_a_signal_in_the_second_run_keeps_the_first(sig, cpu, tmp_path):
    out = tmp_path / "runs.json"
    proc = start_python(
        "-m",
        "pagezero",
        "mem",
        "mmap",
        "-s",
        "4MB",
        "-f",
        "demand",
        "-l",
        str(LOOPS),
        "--runs",
        "3",
        "-o",
        str(out),
    )
    try:
        second = second_run_started(proc)
        if cpu:
            wait_for_cpu(proc, cpu, pid=second)
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err
    m = re.search(
        rf"^pagezero: interrupted by {sig.name} after (\d+) of {3 * LOOPS} loops; "
        rf"saved to {re.escape(str(out))}$",
        err,
        re.M,
    )
    assert m, err
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted == sig.name
    # The runs in order from the first; on a quiet machine a run can end before the
    # wait does, and the signal then cuts the third: every run before the cut one whole.
    processes = [run["process"] for run in rs.runs]
    assert processes == list(range(len(processes))) and len(processes) <= 3
    *whole, last = rs.results
    assert all(r.loops == LOOPS and r.interrupted is None for r in whole)
    assert rs.results[0].loops == LOOPS and rs.results[0].interrupted is None
    assert sum(r.loops for r in rs) == int(m.group(1))
    # The cut run: its completed loops, marked (or whole, when the signal came between runs).
    assert last.interrupted == sig.name or last.loops == LOOPS


def test_a_signal_as_a_sweep_worker_starts_keeps_the_earlier_workers(tmp_path):
    # The sweep passes the signal on at once; the worker, still importing
    # pagezero, takes it once its handlers are in place: no traceback, and the
    # first worker's repetition is kept.
    out = tmp_path / "sweep.json"
    proc = start_python(
        "-m",
        "pagezero",
        "sweep",
        "mmap",
        "-g",
        "function=demand",
        "-g",
        "size=4MB",
        "-g",
        f"loops={LOOPS}",
        "--warmup",
        "0",
        "-r",
        "2",
        "--processes",
        "2",
        "-o",
        str(out),
    )
    try:
        second_run_started(proc)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted == "SIGINT"
    assert [run["process"] for run in rs.runs][:1] == [0] and rs.results[0].loops == LOOPS
