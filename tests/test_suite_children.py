"""The suite's own children (conftest.start_python): a test that leaves one running, or
its pipes open, is failed, not the test that runs when the collector finds the file
(issue 25: an "unclosed file" ResourceWarning under filterwarnings = error failed
test_compare_plot and test_advise_ties, which start no child)."""

import os
import signal

import pytest
from conftest import TESTS_DIR, close_left_children, run_python, start_python
from helpers.children import finish, read_line, wait
from helpers.signals import ProcessEnded, children, cpu_seconds


def test_a_child_waited_for_but_not_closed_is_found_and_closed():
    proc = start_python("-c", "print('done')")
    wait(proc)  # waited, as the signal tests' finally did, but its pipes still open
    assert proc.left_open()
    assert close_left_children() == [proc]
    assert proc.stdout.closed and proc.stderr.closed and not proc.left_open()


def test_leaving_the_with_ends_a_running_child_and_closes_its_pipes():
    with pytest.raises(RuntimeError):
        with start_python("-c", "import time; time.sleep(600)") as proc:
            raise RuntimeError("a test that fails while its child runs")
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout.closed and proc.stderr.closed
    assert close_left_children() == []


def test_a_process_that_has_ended_says_so():
    # A run's process, reaped by the command that started it, while a test waits on it:
    # an error that says so, not FileNotFoundError (issue 25's '/proc/<pid>/stat').
    with start_python("-c", "pass") as proc:
        finish(proc)
    with pytest.raises(ProcessEnded, match=rf"process {proc.pid} has ended"):
        cpu_seconds(proc.pid)
    with pytest.raises(ProcessEnded):
        children(proc.pid)


# A child that prints a line, then a part of one and a line on stderr, then hangs.
HANGS = """
import sys, time
print("started", flush=True)
print("half a line", end="", flush=True)
print("said on stderr", file=sys.stderr, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("wait", ["read_line", "finish"])
def test_a_wait_on_a_hung_child_fails_at_its_deadline_with_what_it_printed(wait):
    with start_python("-c", HANGS) as proc:
        assert read_line(proc) == "started\n"
        with pytest.raises(pytest.fail.Exception) as failed:
            (read_line if wait == "read_line" else finish)(proc, 1)
    message = str(failed.value)
    deadline = "no line in 1 s" if wait == "read_line" else "still running after 1 s"
    assert message.startswith(f"{deadline}: ") and "(exit -9)" in message
    assert "--- its stdout ---\nhalf a line\n" in message
    assert "--- its stderr ---\nsaid on stderr\n" in message
    assert proc.returncode == -signal.SIGKILL  # killed, not left to run


@pytest.mark.parametrize("ignored", [signal.SIGINT, signal.SIGHUP])
def test_a_child_started_by_a_suite_that_ignores_a_stop_signal_can_be_stopped(ignored):
    # As under `nohup` (SIGHUP ignored) or a script's `pytest &` (SIGINT ignored): the
    # child has the signal at its default action, blocked or not in this process.
    before = signal.signal(ignored, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [ignored])
    try:
        code = "import signal, sys; print(signal.getsignal(int(sys.argv[1])), flush=True)"
        with start_python("-c", code, str(int(ignored))) as proc:
            out, _ = finish(proc)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [ignored])
        signal.signal(ignored, before)
    # Python's own handler for SIGINT (set only where SIGINT was not ignored); SIG_DFL else.
    expected = signal.default_int_handler if ignored == signal.SIGINT else signal.SIG_DFL
    assert out.strip() == str(expected)


def test_a_hung_test_fails_with_its_stack_under_xdist(tmp_path):
    # pyproject.toml's pytest-timeout settings, on xdist workers: the hung test fails with
    # its stack (the line it hung on) and the session ends.
    (tmp_path / "test_hangs.py").write_text(
        "import time\n\n\ndef test_hangs():\n    time.sleep(600)\n"
    )
    pyproject = os.path.join(os.path.dirname(TESTS_DIR), "pyproject.toml")
    args = ["-c", pyproject, "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-n", "2"]
    proc = run_python("-m", "pytest", *args, "-o", "timeout=3", "test_hangs.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Timeout (>3.0s)" in proc.stdout and "time.sleep(600)" in proc.stdout, proc.stdout
    assert "1 failed" in proc.stdout
