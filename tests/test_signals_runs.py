"""A stop signal during --runs: the runs measured before it are kept, with the
completed loops of the run it cut short, saved with -o, and the command exits
with the shell's status for the signal."""

import os
import re
import signal
import time

import pytest
from conftest import start_python
from helpers.announce import ANNOUNCING, SLOW_FIRST_LOOP
from helpers.children import finish
from helpers.faults import loops_run
from helpers.signals import STATUS, children, measuring, wait_for_cpu

import pagezero

LOOPS = 30  # of 4MB faults: the first run's, which ends
# The later runs': far more than can finish (hours), so that the signal is the only way
# they end, however fast the machine (helpers/announce.py).
LATER_LOOPS = 10_000_000

COMMAND = [
    *["-c", ANNOUNCING, "--later-runs-loops", str(LATER_LOOPS)],
    *["mem", "mmap", "-s", "4MB", "-f", "demand", "-l", str(LOOPS), "--runs", "3"],
]


def second_run_started(proc, first, timeout=120):
    """Once the first run (`first`, its pid) has measured, wait until the command has
    started the next run's process: its pid. The next run lasts until signalled, so it
    cannot come and go unseen; the timeout only ends a wait on a command that hangs."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        kids = [pid for pid in children(proc.pid) if pid != first]
        if kids:
            return kids[0]
        time.sleep(0.005)
    raise AssertionError(f"the second run never started: {proc.poll()}")


# 0: as the second run's interpreter starts, before its handlers are in place (it is
# started with the signals held, so none ends it with a traceback); 0.3: once it has
# begun to measure and had 0.3 s more CPU, inside its loops. slow_first: each run's first
# loop a hundred times as slow (helpers/announce.py), as a freshly booted VM's often is,
# so that the warm-up rule leaves it out: the loops run still count it.
@pytest.mark.parametrize(
    "sig, cpu, slow_first",
    [
        (signal.SIGINT, 0, False),
        (signal.SIGTERM, 0.3, False),
        (signal.SIGHUP, 0.3, False),
        (signal.SIGTERM, 0.3, True),
    ],
)
def test_a_signal_in_the_second_run_keeps_the_first(sig, cpu, slow_first, tmp_path):
    out = tmp_path / "runs.json"
    env = dict(os.environ, **({SLOW_FIRST_LOOP: "1"} if slow_first else {}))
    with start_python(*COMMAND, "-o", str(out), env=env) as proc:
        first = measuring(proc)
        if cpu:
            second = measuring(proc)
            assert second != first  # two runs, two processes
            wait_for_cpu(proc, cpu, pid=second)
        else:
            second_run_started(proc, first)
        os.kill(proc.pid, sig)
        _, err = finish(proc)
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
    # The first run whole; the second, which only the signal ends, cut short: its
    # completed loops, marked (none yet, when the signal came as it began).
    first_run, *cut = rs.results
    # Whole: the loops its rate counts and those the warm-up rule left out.
    assert loops_run(first_run) == LOOPS and first_run.interrupted is None
    if slow_first:
        assert first_run.details["warmup"]["loops"] == 1, "the slowed first loop, left out"
    assert [run["process"] for run in rs.runs] == list(range(1 + len(cut)))
    assert len(cut) <= 1 and all(r.interrupted == sig.name and r.loops < LATER_LOOPS for r in cut)
    if cpu:
        assert cut and cut[0].loops > 0, "0.3 s of CPU inside the second run's loops"
    assert sum(loops_run(r) for r in rs) == int(m.group(1))


def test_a_signal_as_a_sweep_worker_starts_keeps_the_earlier_workers(tmp_path):
    # The sweep passes the signal on at once; the worker, still importing
    # pagezero, takes it once its handlers are in place: no traceback, and the
    # first worker's repetition is kept.
    out = tmp_path / "sweep.json"
    command = [*COMMAND[:4], "sweep", "mmap", "-g", "function=demand", "-g", "size=4MB"]
    command += ["-g", f"loops={LOOPS}", "--warmup", "0", "-r", "2", "--processes", "2"]
    with start_python(*command, "-o", str(out)) as proc:
        second_run_started(proc, measuring(proc))
        os.kill(proc.pid, signal.SIGINT)
        _, err = finish(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted == "SIGINT"
    assert [run["process"] for run in rs.runs][:1] == [0] and loops_run(rs.results[0]) == LOOPS
