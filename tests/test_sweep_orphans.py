"""A sweep killed outright (SIGKILL, the OOM killer) cannot pass a stop signal
on to its worker: the worker stops by itself, and takes the dead sweep's
temporary folder with it."""

import os
import signal
import subprocess
import sys
import time

from conftest import TESTS_DIR

# A sweep whose one worker would clear 64MB a million times over.
SWEEP = """
import pagezero
pagezero.sweep("memset", {"size": ["64MB"], "loops": [1000000]}, repeat=2, warmup=0,
               processes=2, progress=False)
"""


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return 0


def _wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_worker_ends_with_its_sweep_and_leaves_no_folder(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    sweep = subprocess.Popen([sys.executable, "-c", SWEEP], cwd=TESTS_DIR, env=env)
    workers = []
    try:
        assert _wait_for(lambda: _children(sweep.pid), 60), "the sweep started no worker"
        workers = _children(sweep.pid)
        (worker,) = workers
        # Once the worker is measuring (its stop signals unblocked before), kill the
        # sweep: a run's worker thread (csrc/team.c; the worker's imports start none)
        # says it measures, where a sleep guessed how long the imports take.
        assert _wait_for(lambda: os.listdir(tmp_path), 10)
        assert _wait_for(lambda: _threads(worker) > 1, 60), "the worker never measured"
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()
        assert _wait_for(lambda: not _alive(worker), 30), "the worker outlived its sweep"
        assert _wait_for(lambda: not os.listdir(tmp_path), 10), os.listdir(tmp_path)
    finally:
        for pid in [sweep.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
