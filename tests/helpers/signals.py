"""What the signal tests share: the stop signals with the shell's exit status for
each, the one line a stopped command prints, a process's children (the runs and
sweep workers a command starts), and waiting until a process has done some work."""

import os
import re
import signal
import time

# The shell's status for a process ended by the signal: 128 + its number.
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def check_one_line(err, pattern):
    """One line about the signal, matching `pattern`; besides it, only the
    "# ... skipped" notes."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("# ")]
    assert len(lines) == 1, err
    assert re.fullmatch(pattern, lines[0]), err


def children(pid):
    """The pids of process `pid`'s children, from /proc."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def cpu_seconds(pid):
    """The CPU time process `pid` has had so far, all its threads (utime + stime of
    /proc/PID/stat, proc(5))."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # after the command's name
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_cpu(proc, seconds, pid=None, timeout=60):
    """Wait until `pid` (by default `proc`, a Popen) has had `seconds` more CPU time
    than when called: so much work done, however busy the machine. A sleep of fixed
    length waits too little on a loaded machine (the process may not have run yet) and
    too long on a quiet one."""
    pid = pid or proc.pid
    start, deadline = cpu_seconds(pid), time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"exited early: {proc.communicate()}")
        if cpu_seconds(pid) - start >= seconds:
            return
        assert time.monotonic() < deadline, f"{pid} had under {seconds} s of CPU in {timeout} s"
        time.sleep(0.01)
