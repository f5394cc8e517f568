"""SIGINT, SIGTERM and SIGHUP during a real memset, end to end.

The timed loops run in C with the GIL released; around them the binding
turns the three signals into a stop request the loops honour between two
chunks (csrc/stop.h), and the completed loops come back as a partial result.
Here a real process gets a real signal while it measures: the CLI must exit
with the shell's status for it, one line on stderr, the -o file holding the
completed loops marked interrupted; the Python API must raise Interrupted
carrying them. Stopping "within one loop" is checked by the loops kept, and
a run that never stops fails on the 60 s wait; how long a stop takes is a
figure of benchmarks/signal_stop.py, not an assertion here.
"""

import json
import os
import re
import signal
import time

import pytest
from conftest import run_python, start_python
from helpers.children import finish
from helpers.signals import STATUS, wait_for_cpu

import pagezero

# Far more loops than can finish: the signal always lands in the middle.
LOOPS = 1_000_000


def wait_until_measuring(proc, timeout=60):
    """Until the run's worker thread exists (every run has one, csrc/team.c),
    then until the process has had 0.3 s more of CPU, so that some loops complete
    before the signal even on a busy machine (mapping and touching 64MB takes tens
    of milliseconds, a 64MB loop milliseconds)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"exited early: {finish(proc)}")
        try:
            if len(os.listdir(f"/proc/{proc.pid}/task")) > 1:
                wait_for_cpu(proc, 0.3, timeout=timeout)
                return
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise AssertionError("the run never started measuring")


def signal_and_wait(proc, sig):
    """Send `sig`; (stdout, stderr, seconds from the signal to the exit)."""
    with proc:  # ended and its pipes closed, however the wait ends
        wait_until_measuring(proc)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = finish(proc)
        return out, err, time.monotonic() - sent


@pytest.mark.parametrize("sig", STATUS)
def test_cli_memset_stops_saves_and_exits_with_the_signals_status(sig, tmp_path):
    out = tmp_path / "run.json"
    proc = start_python(
        "-m",
        "pagezero",
        "mem",
        "memset",
        "-s",
        "64MB",
        "-l",
        str(LOOPS),
        "-o",
        str(out),
    )
    _, err, seconds = signal_and_wait(proc, sig)
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("# ")]
    assert len(lines) == 1, err
    m = re.fullmatch(
        # -f all (the default): the first kernel's loops, the others not begun.
        rf"pagezero: interrupted by {sig.name} after 0 of \d+ functions, {LOOPS} loops each, "
        rf"and (\d+) loops of default; "
        rf"saved to {re.escape(str(out))}",
        lines[0],
    )
    assert m, err
    done = int(m.group(1))
    assert 0 < done < LOOPS
    doc = json.loads(out.read_text())
    assert doc["interrupted"] in (True, sig.name)
    assert doc["results"][-1]["interrupted"] == sig.name
    loaded = pagezero.load_results(str(out))
    assert sum(r.loops for r in loaded) == done
    assert all(s > 0 for r in loaded for s in r.samples)


API = f"""
import sys
import pagezero
from pagezero.interrupt import signals_interrupt

try:
    # As the CLI does: SIGTERM and SIGHUP, like SIGINT, become Interrupted.
    with signals_interrupt():
        pagezero.memset(size="64MB", loops={LOOPS}, function="default", threads=int(sys.argv[1]))
except pagezero.Interrupted as e:
    p = e.partial  # a ResultSet of the run's completed loops
    print(e.signame, p[0].loops if p else 0, p.interrupted if p else None, flush=True)
    sys.exit(e.exit_status)
print("finished", flush=True)
"""


@pytest.mark.parametrize(
    "sig, threads", [(signal.SIGINT, 1), (signal.SIGTERM, 1), (signal.SIGHUP, 2)]
)
def test_api_memset_raises_interrupted_with_the_completed_loops(sig, threads):
    if threads > len(os.sched_getaffinity(0)):
        pytest.skip(f"needs {threads} CPUs")
    proc = start_python("-c", API, str(threads))
    out, err, seconds = signal_and_wait(proc, sig)
    assert proc.returncode == STATUS[sig], err
    name, loops, marked = out.split()
    assert name == sig.name and marked == sig.name
    assert 0 < int(loops) < LOOPS


DEFAULT_ACTION = f"""
import pagezero
pagezero.memset(size="64MB", loops={LOOPS}, function="default")
print("finished", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_left_to_its_default_action_still_ends_the_process(sig):
    # A library user who installed nothing: the C core's catch must not turn
    # SIGTERM into an exception (a traceback and exit 1); the process dies of it.
    proc = start_python("-c", DEFAULT_ACTION)
    out, err, seconds = signal_and_wait(proc, sig)
    assert proc.returncode == -sig, (proc.returncode, err)
    assert "Traceback" not in err and "finished" not in out


OVERLAPPING_RUNS = """
import os, signal, threading, time
import pagezero

# Run B starts after run A and ends after it: the handlers A's binding took
# over must still go back to the interpreter's when B, the last one, ends.
def run_b():
    pagezero.memset("1MB", loops=60000)

b = threading.Thread(target=run_b)

def run_a():
    pagezero.memset("1MB", loops=20000)

def sigterm_caught():
    # SigCgt (proc(5)): the signals with a handler. SIGTERM is SIG_DFL here until a
    # run's binding takes it over, which it does as the run begins.
    with open("/proc/self/status") as f:
        mask = next(int(l.split()[1], 16) for l in f if l.startswith("SigCgt:"))
    return mask >> (signal.SIGTERM - 1) & 1

a = threading.Thread(target=run_a)
a.start()
while not sigterm_caught():  # until run A has begun: then B starts
    time.sleep(0.001)
b.start()
a.join()
b.join()
print("both done", flush=True)
# SIG_DFL again: this must end the process, before kill() returns (a signal a process
# sends itself, unblocked, is delivered before kill returns: POSIX kill(2)).
os.kill(os.getpid(), signal.SIGTERM)
print("still alive")
"""


def test_overlapping_runs_give_the_signals_back():
    p = run_python("-c", OVERLAPPING_RUNS, timeout=120)
    assert "both done" in p.stdout, p.stderr
    assert "still alive" not in p.stdout
    assert p.returncode == -signal.SIGTERM, (p.returncode, p.stderr)


def test_the_c_entry_refuses_a_cycles_clock_over_threads():
    # Each thread's cycles count its own thread: a span over several is meaningless.
    with pytest.raises(ValueError, match="refused its arguments"):
        pagezero._core.bench_mem("clear", "default", 1 << 20, clock="cycles", threads=2)
