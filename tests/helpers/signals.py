"""What the signal tests share: the stop signals with the shell's exit status for
each, the one line a stopped command prints, a process's children (the runs and
sweep workers a command starts), waiting until a measurement has begun (by the line
helpers/announce.py's benchmarks print) and until a process has done some work.

A process read here may end at any moment (a run that ends, a worker its sweep has
reaped): what reads /proc says so with ProcessEnded, never a FileNotFoundError."""

import os
import re
import signal
import time

from helpers.children import DEADLINE_S, finish, read_line

# The shell's status for a process ended by the signal: 128 + its number.
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


# A progress line (pagezero.runs.progress): "pagezero ...: ...; 3 s so far, about ...".
PROGRESS_LINE = re.compile(r"pagezero[\w ]*: .*; \d+ (s|min \d\d s|h \d\d min) so far, .*")


def check_one_line(err, pattern):
    """One line about the signal, matching `pattern`; besides it, only the
    "# ... skipped" notes and the progress lines."""
    assert "Traceback" not in err
    lines = [
        line
        for line in err.splitlines()
        if not line.startswith("# ") and not PROGRESS_LINE.fullmatch(line)
    ]
    assert len(lines) == 1, err
    assert re.fullmatch(pattern, lines[0]), err


class ProcessEnded(AssertionError):
    """The process asked about has ended and been reaped: /proc has no entry for it.
    (A child not yet waited for is a zombie, still there.)"""

    def __init__(self, pid):
        super().__init__(f"process {pid} has ended (no /proc/{pid})")
        self.pid = pid


def _read_proc(pid, name):
    try:
        with open(f"/proc/{pid}/{name}") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        raise ProcessEnded(pid) from None


def children(pid):
    """The pids of process `pid`'s children, from /proc; ProcessEnded once it is gone."""
    return [int(c) for c in _read_proc(pid, f"task/{pid}/children").split()]


def cpu_seconds(pid):
    """The CPU time process `pid` has had so far, all its threads (utime + stime of
    /proc/PID/stat, proc(5)); ProcessEnded once it is gone."""
    fields = _read_proc(pid, "stat").rsplit(")", 1)[1].split()  # after the command's name
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _output(proc):
    """What `proc` printed, once it has ended (communicate() on a live one would wait)."""
    return finish(proc) if proc.poll() is not None else "(still running)"


def measuring(proc, timeout=DEADLINE_S):
    """Wait until a benchmark of helpers/announce.py begins to measure, in `proc` or in
    one of its workers, reading `proc`'s stdout line by line (the other lines, a
    "ready", are skipped): the pid of the process measuring. The wait is for the line,
    not for a time: AssertionError if `proc` ends without printing it; the test fails
    with what it printed if the line has not come within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while line := read_line(proc, max(0.0, deadline - time.monotonic())):
        if line.startswith("measuring "):
            return int(line.split()[1])
    raise AssertionError(f"{proc.args} ended before measuring: {finish(proc)}")


def wait_for_cpu(proc, seconds, pid=None, timeout=60):
    """Wait until `pid` (by default `proc`, a Popen) has had `seconds` more CPU time
    than when called: so much work done, however busy the machine. A sleep of fixed
    length waits too little on a loaded machine (the process may not have run yet) and
    too long on a quiet one.

    A process that ends first fails the wait, saying so: wait on a process that cannot end
    before it is signalled (far more loops than can finish), once it has begun
    (`measuring`)."""
    pid = pid or proc.pid
    try:
        start, deadline = cpu_seconds(pid), time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"exited early: {_output(proc)}")
            if cpu_seconds(pid) - start >= seconds:
                return
            # A deadline, not a guess: the process is not getting the CPU at all.
            assert time.monotonic() < deadline, f"{pid} had under {seconds} s of CPU in {timeout} s"
            time.sleep(0.01)
    except ProcessEnded as e:
        raise AssertionError(
            f"{e}, before it had {seconds} s more of CPU: {_output(proc)}"
        ) from None
