"""A fleet run's pagezero process ends with the worker that started it
(pagezero/fleet/tether.py), here without a cluster: a stand-in worker process starts
the tether as fleet/tether.py run_command does, and is killed with SIGKILL while the command runs
(a memset of 4MB, 10 million loops: it cannot end first, however fast it clears)."""

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import TESTS_DIR
from helpers.children import default_stop_signals, finish, read_line, wait

from pagezero.fleet.tether import SESSION_GRACE_S, main

ENDLESS = ["mem", "memset", "-s", "4MB", "-l", "10000000", "--runs", "3"]

# The stand-in worker: starts the tether on a folder of the run's, prints its pid, waits.
WORKER = """
import os, subprocess, sys, time
folder = sys.argv[1]
tether = [sys.executable, "-m", "pagezero.fleet.tether", str(os.getpid()), folder, "--"]
proc = subprocess.Popen([*tether, *sys.argv[2:], "-o", os.path.join(folder, "out.json")])
print(proc.pid, flush=True)
time.sleep(600)
"""


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _argv(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def _wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_killed_worker_takes_its_run_with_it(tmp_path):
    folder = tmp_path / "pagezero-fleet-run"
    folder.mkdir()
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(folder), *ENDLESS],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,
    )
    try:
        tether = int(read_line(worker))
        _wait_until(lambda: _children(tether), 30, "the tether started nothing")
        (command,) = _children(tether)
        # Its command line is the tether's until it has exec'd pagezero.
        _wait_until(lambda: _argv(command)[1:3] == [b"-m", b"pagezero"], 30, _argv(command))
        worker.kill()  # SIGKILL: the worker can do nothing on its way out
        worker.wait()
        _wait_until(lambda: not _alive(command), 30, "the pagezero command outlived its worker")
        _wait_until(lambda: not _alive(tether), 30, "the tether outlived its worker")
        assert not folder.exists()  # the orphaned run's folder, removed
    finally:
        worker.kill()
        worker.wait()
        worker.stdout.close()


def test_the_worker_stop_signal_reaches_the_command_and_its_status_comes_back(tmp_path):
    # SIGINT to the tether (fleet/tether.py stop_runs) reaches pagezero, which stops as
    # after a Ctrl-C and exits 130, and the tether exits with its status.
    out = tmp_path / "out.json"
    tether = [sys.executable, "-m", "pagezero.fleet.tether", str(os.getpid()), str(tmp_path)]
    proc = subprocess.Popen(
        [*tether, "--", "mem", "memset", "-s", "64MB", "-l", "10000000", "-o", str(out)],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,  # the SIGINT it is sent is not ignored
    )
    try:
        _wait_until(lambda: _children(proc.pid), 30, "the tether started no pagezero")
        (command,) = _children(proc.pid)
        # Once the command measures (its loops in the C core), not while it imports.
        _wait_until(lambda: _has_mapped(command), 30, "pagezero did not start measuring")
        proc.send_signal(signal.SIGINT)
        _, stderr = finish(proc)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, stderr
    assert "interrupted by SIGINT" in stderr  # pagezero's own line: the signal reached it


def _has_mapped(pid):
    """Whether `pid` has 64MB or more of anonymous memory: the run's buffer, more than
    Python and pagezero take before it."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))
    except (OSError, StopIteration):
        return False
    return rss >= 64 << 10  # kB


def test_a_session_ends_its_command_when_its_input_closes():
    # As an SSH session's end closes the input of what it runs (fleet up's processes).
    # The command ignores SIGTERM, as a worker closing may wait for its run: SIGKILL
    # ends it after the grace.
    ignores_term = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    ignores_term += "print('ready', flush=True); time.sleep(600)"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagezero.fleet.tether", "--session", "--", "-c", ignores_term],
        cwd=TESTS_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,
    )
    try:
        assert read_line(proc) == "ready\n"
        (command,) = _children(proc.pid)
        proc.stdin.close()
        assert wait(proc, SESSION_GRACE_S + 30) == 128 + signal.SIGKILL
        assert not _alive(command)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


@pytest.mark.parametrize(
    "argv", [[], ["1", "folder"], ["1", "folder", "mem"], ["x", "f", "--", "mem"], ["--session"]]
)
def test_a_malformed_command_line_is_refused_with_its_usage(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("usage: python -m pagezero.fleet.tether")
