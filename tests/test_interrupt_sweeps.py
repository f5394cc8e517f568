"""A stop signal during a sweep: the points measured before it are kept, with the
completed loops of the point it cut short, marked, saved with -o, and the
command exits with the shell's status for the signal.

In this process on a fake benchmark (tests/helpers/fake_bench.py), then with
real signals into a `pagezero sweep` subprocess: between points, inside an
mmap point (whose C loops take the signal: csrc/stop.h), and through a worker
process.
"""

import os
import re
import signal
import threading

import pytest
from conftest import start_python
from helpers.announce import ANNOUNCING
from helpers.children import finish
from helpers.fake_bench import GRID6, key, point_key, registered_fake
from helpers.signals import STATUS, check_one_line, measuring, wait_for_cpu

import pagezero

# Sweeps in this process --------------------------------------------------------------


@pytest.fixture
def fake_bench():
    """test_resultset's Fake benchmark, registered as "fake"."""
    with registered_fake() as f:
        yield f


@pytest.mark.parametrize("interrupt_at, warmup, kept", [(5, 0, 5), (8, 1, 2), (3, 1, 0)])
def test_a_stop_signal_keeps_the_loops_of_the_point_it_cut_short(
    fake_bench, interrupt_at, warmup, kept
):
    fake_bench.interrupt_at, fake_bench.signum = interrupt_at, signal.SIGTERM
    rs = pagezero.sweep("fake", GRID6, repeat=3, warmup=warmup)
    assert rs.interrupted == "SIGTERM"  # the signal, not "SIGINT"
    assert len(rs) == len(rs.runs) == kept
    if kept:
        # The cut point's completed loop, in the repetition it belongs to.
        cut = rs.results[-1]
        assert cut.samples == (7,) and cut.interrupted == "SIGTERM"
        assert point_key(cut) == key(fake_bench.calls[-1])
        assert rs.runs[-1] == {"repetition": 0, "process": 0, "pid": os.getpid()}
        assert all(r.interrupted is None for r in rs.results[:-1])
    # A warm-up cut short keeps nothing: its loops were to be thrown away.


def test_a_sweep_leaves_no_thread_behind(fake_bench):
    # tqdm starts a monitor thread for any bar, a disabled one too, and leaves it
    # running: the sweep's bar asks for none.
    from tqdm import tqdm

    if tqdm.monitor is not None:  # one that tqdm used elsewhere started
        tqdm.monitor.exit()
        tqdm.monitor = None
    before = set(threading.enumerate())
    pagezero.sweep("fake", GRID6, repeat=1, warmup=0, progress=False)
    assert set(threading.enumerate()) <= before


# Real signals, in a subprocess ----------------------------------------------------


@pytest.mark.parametrize("sig", STATUS)
def test_a_signal_stops_a_sweep_between_points(sig, tmp_path):
    out = tmp_path / "sweep.json"
    # Far more runs than can finish: the signal always comes in the middle.
    args = ["sweep", "memset", "-g", "function=default", "-g", "size=64KB,128KB"]
    args += ["-g", "loops=1", "--warmup", "0", "-r", "1000000", "-o", str(out)]
    status, err = stopped_sweep(args, sig)
    assert status == STATUS[sig], err
    check_one_line(
        err,
        rf"pagezero: interrupted by {sig.name} after \d+ of 2000000 runs; "
        rf"saved to {re.escape(str(out))}",
    )
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted in (True, sig.name)
    assert len(rs) == int(err.split(" after ")[1].split()[0])


# mmap points of 4MB faults, far more loops than can finish (hours each): a point ends
# only by the signal, which lands inside it, where the C loops take it (csrc/stop.h).
LONG_LOOPS = 10_000_000
LONG_POINTS = [
    "sweep",
    "mmap",
    "-g",
    "function=demand",
    "-g",
    "size=4MB",
    "-g",
    f"loops={LONG_LOOPS}",
    "--warmup",
    "0",
    "-r",
    "2",
]


def stopped_sweep(args, sig, to_worker=False):
    """Run the sweep CLI with `args` (its benchmarks announcing, helpers/announce.py), send
    `sig` once the measuring process (the sweep, or its worker) has begun to measure and
    had 0.3 s more CPU, inside its loops, to the sweep or to that worker alone; (exit
    status, stderr)."""
    with start_python("-c", ANNOUNCING, *args) as proc:
        pid = measuring(proc)
        assert (pid != proc.pid) == ("--processes" in args)
        wait_for_cpu(proc, 0.3, pid=pid)
        os.kill(pid if to_worker else proc.pid, sig)
        _, err = finish(proc)
    return proc.returncode, err


def check_cut_point(out, sig, err, kept):
    """The sweep's file: `kept` runs, the last the cut point's completed loops, marked."""
    check_one_line(
        err,
        rf"pagezero: interrupted by {sig.name} after {kept} of 2 runs; "
        rf"saved to {re.escape(str(out))}",
    )
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted == sig.name and len(rs) == kept
    cut = rs.results[-1]
    assert cut.interrupted == sig.name and 0 < cut.loops < LONG_LOOPS
    assert len(cut.details["pages"]) == cut.loops


@pytest.mark.parametrize("sig", STATUS)
def test_a_signal_inside_a_sweep_point_keeps_its_completed_loops(sig, tmp_path):
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep([*LONG_POINTS, "-o", str(out)], sig)
    assert status == STATUS[sig], err
    check_cut_point(out, sig, err, kept=1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_a_sweep_worker_alone_stops_the_sweep(sig, tmp_path):
    # A supervisor or a user who kills the busy process, the worker: the sweep
    # keeps what the worker measured and stops, with the worker's signal.
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep(
        [*LONG_POINTS, "--processes", "2", "-o", str(out)], sig, to_worker=True
    )
    assert status == STATUS[sig], err
    check_cut_point(out, sig, err, kept=1)


def test_a_signal_to_the_sweep_reaches_its_worker_once(tmp_path):
    # The sweep passes the signal on to the worker (a session of its own, out of
    # reach of the terminal's Ctrl-C) and waits until it has saved.
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep([*LONG_POINTS, "--processes", "2", "-o", str(out)], signal.SIGINT)
    assert status == 130, err
    check_cut_point(out, signal.SIGINT, err, kept=1)
