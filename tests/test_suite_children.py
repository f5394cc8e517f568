"""The suite's own children (conftest.start_python): a test that leaves one running, or
its pipes open, is failed, not the test that runs when the collector finds the file
(issue 25: an "unclosed file" ResourceWarning under filterwarnings = error failed
test_compare_plot and test_advise_ties, which start no child)."""

import signal

import pytest
from conftest import close_left_children, start_python
from helpers.signals import ProcessEnded, children, cpu_seconds


def test_a_child_waited_for_but_not_closed_is_found_and_closed():
    proc = start_python("-c", "print('done')")
    proc.wait()  # waited, as the signal tests' finally did, but its pipes still open
    assert proc.left_open()
    assert close_left_children() == [proc]
    assert proc.stdout.closed and proc.stderr.closed and not proc.left_open()


def test_leaving_the_with_ends_a_running_child_and_closes_its_pipes():
    with pytest.raises(RuntimeError):
        with start_python("-c", "import signal; signal.pause()") as proc:
            raise RuntimeError("a test that fails while its child runs")
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout.closed and proc.stderr.closed
    assert close_left_children() == []


def test_a_process_that_has_ended_says_so():
    # A run's process, reaped by the command that started it, while a test waits on it:
    # an error that says so, not FileNotFoundError (issue 25's '/proc/<pid>/stat').
    with start_python("-c", "pass") as proc:
        proc.communicate()
    with pytest.raises(ProcessEnded, match=rf"process {proc.pid} has ended"):
        cpu_seconds(proc.pid)
    with pytest.raises(ProcessEnded):
        children(proc.pid)
