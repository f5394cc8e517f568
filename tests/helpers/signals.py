"""What the signal tests share: the stop signals with the shell's exit status for
each, the one line a stopped command prints, and a process's children (the runs
and sweep workers a command starts)."""

import re
import signal

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
