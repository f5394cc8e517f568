"""A test's child that does not count on its parent, and every wait on one with a deadline.

The suite may be started with the stop signals ignored (`nohup` ignores SIGHUP; a script's
background job, `pytest &`, starts with SIGINT ignored) and with stdin closed. An ignored
signal stays ignored across exec, and pagezero rightly keeps one ignored: a child that a
test signals would then never stop. So the children a test signals start with SIGINT,
SIGTERM and SIGHUP at their default action and unblocked (`default_stop_signals`, Popen's
preexec_fn: restore_signals covers only SIGPIPE, SIGXFZ and SIGXFSZ), and with stdin on
/dev/null; the tests that signal their own process set the handlers a shell's Python
has (`stop_signals_as_usual`).

A wait on a child (a line it prints, its exit) ends at a deadline, failing the test with
what the child printed, rather than hanging the suite: `read_line` and `finish`.
"""

import os
import select
import signal
import subprocess
import time

import pytest

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Long enough for a loaded 2-core machine to start an interpreter and measure; far
# shorter than pytest-timeout's per-test limit (pyproject.toml), which ends any other hang.
DEADLINE_S = 120


def default_stop_signals():
    """Popen's preexec_fn: the stop signals at their default action and unblocked in the
    child, whatever its parent (this suite, started by nohup or a script) had."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@pytest.fixture
def stop_signals_as_usual():
    """For a test that signals its own process: SIGINT raising KeyboardInterrupt, SIGTERM
    and SIGHUP at their default action, as in a Python started from a shell (under
    nohup or in the background, the suite has some ignored); put back afterwards."""
    usual = {signal.SIGINT: signal.default_int_handler}
    before = {sig: signal.signal(sig, usual.get(sig, signal.SIG_DFL)) for sig in STOP_SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def give_up(proc, why, stdout_so_far=b""):
    """Kill `proc`, collect what it printed (a few seconds at most: a grandchild may hold
    the pipes), and fail the test saying `why` with that output."""
    if proc.poll() is None:
        proc.kill()
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired as e:
        out, err = e.output, e.stderr
    out = _text(stdout_so_far) + _text(getattr(proc, "_unread", b"")) + _text(out)
    pytest.fail(
        f"{why}: {proc.args!r} (exit {proc.returncode})\n"
        f"--- its stdout ---\n{out}\n--- its stderr ---\n{_text(err)}",
        pytrace=False,
    )


def read_line(proc, timeout=DEADLINE_S):
    """The next line `proc` prints on its stdout (a pipe), "" once it has closed it; the
    test fails with what the child printed when none comes within `timeout` seconds.

    Reads the pipe itself (what follows the line is kept for the next call and for
    `finish`): the text wrapper's readline() would buffer past the line where select()
    cannot see it."""
    fd, unread = proc.stdout.fileno(), getattr(proc, "_unread", b"")
    deadline = time.monotonic() + timeout
    while b"\n" not in unread:
        left = deadline - time.monotonic()
        if left <= 0:
            proc._unread = b""
            give_up(proc, f"no line in {timeout:g} s", unread)
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc._unread = b""
                return unread.decode()
            unread += chunk
    line, _, proc._unread = unread.partition(b"\n")
    return line.decode() + "\n"


def finish(proc, timeout=DEADLINE_S):
    """Wait for `proc` to end: (stdout, stderr) as text (None for a stream not piped),
    stdout with what `read_line` read past its last line; the test fails with what the
    child printed when it has not ended within `timeout` seconds."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        give_up(proc, f"still running after {timeout:g} s")
    unread, proc._unread = getattr(proc, "_unread", b""), b""
    if unread:
        out = unread.decode() + (out or "")
    return out, err


def wait(proc, timeout=DEADLINE_S):
    """Wait for `proc` (its output not piped, or not wanted) to end: its exit status; the
    test fails, after killing it, when it has not ended within `timeout` seconds."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        give_up(proc, f"still running after {timeout:g} s")


def run(args, timeout=DEADLINE_S, **kwargs):
    """subprocess.run(args) for a child that does not count on its parent (stdin on
    /dev/null, the stop signals at their default action), its output captured as text:
    the CompletedProcess; the test fails with what the child printed when it has not
    ended within `timeout` seconds. `kwargs` go to Popen."""
    options = {"stdin": subprocess.DEVNULL, "preexec_fn": default_stop_signals, **kwargs}
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options
    ) as proc:
        out, err = finish(proc, timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
