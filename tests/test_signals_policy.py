"""SIGINT, SIGTERM and SIGHUP end `pagezero batch` and `pagezero folio` as a user sees it.

Each command is started in a subprocess with far more loops than can finish,
gets the signal once its first loop is done, and must exit with the shell's status
for that signal (130, 143, 129), one line on stderr and no traceback, its -o
file holding the loops completed, marked interrupted. The time from the
signal to the exit is not asserted (benchmarks/signal_stop.py measures it);
a run that never stops fails on the 60 s wait.
"""

import os
import re
import select
import time

import pytest
from conftest import start_python
from helpers.children import DEADLINE_S, finish, give_up, read_line
from helpers.signals import STATUS

import pagezero
from pagezero.measure.policy import BatchResult, FolioResult

# A run that says when it is about to start, with every signal at its default
# action (a background job of a non-interactive shell would ignore SIGINT).
RUN = """
import signal, sys
from pagezero.cli import main
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL if s != signal.SIGINT else signal.default_int_handler)
print("ready", flush=True)
sys.exit(main(sys.argv[1:]))
"""

COMMANDS = {
    # 8 batches of 8MB a pass: a pass takes milliseconds, 100000 of them minutes.
    "batch": (["batch", "-s", "64MB", "-b", "8MB", "-l", "100000"], BatchResult, "loops"),
    # Each loop reads a scrub buffer of twice the LLC: 100000 loops take minutes.
    "folio": (
        ["folio", "-p", "2MB", "--strategy", "sequential", "-l", "100000"],
        FolioResult,
        "loops",
    ),
}


def interrupt(args, sig, out):
    """Run `pagezero args -o out`, send `sig` once its first loop is done (the test
    build's PAGEZERO_LOOP_DONE_FD says so, a byte on a pipe): the process, its stderr
    and the seconds from the signal to its exit."""
    done_r, done_w = os.pipe()
    env = dict(os.environ, PAGEZERO_LOOP_DONE_FD=str(done_w))
    try:
        with start_python("-c", RUN, *args, "-o", str(out), env=env, pass_fds=[done_w]) as proc:
            os.close(done_w)
            done_w = None
            assert read_line(proc).strip() == "ready"
            # The event, or the child's end (read() gives b"" once no one holds the pipe);
            # the deadline only keeps a hung child from hanging the suite.
            if not select.select([done_r], [], [], DEADLINE_S)[0]:
                give_up(proc, f"no loop done in {DEADLINE_S} s")
            assert os.read(done_r, 1) == b"1", finish(proc)
            assert proc.poll() is None, finish(proc)
            sent = time.monotonic()
            proc.send_signal(sig)
            _, err = finish(proc)
            return proc, err, time.monotonic() - sent
    finally:
        os.close(done_r)
        if done_w is not None:
            os.close(done_w)


@pytest.mark.parametrize("sig", list(STATUS), ids=lambda s: s.name)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_signal_ends_the_policy_command_and_keeps_the_completed_loops(command, sig, tmp_path):
    args, cls, unit = COMMANDS[command]
    out = tmp_path / f"{command}.json"
    proc, err, seconds = interrupt(args, sig, out)
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    m = re.fullmatch(
        rf"pagezero: interrupted by {sig.name} after (\d+) of 100000 {unit}; "
        rf"saved to {re.escape(str(out))}",
        lines[0],
    )
    assert m, err
    done = int(m.group(1))
    assert 0 < done < 100000
    results = pagezero.load_results(str(out))
    assert len(results) == 1
    r = results[0]
    assert r.interrupted == sig.name
    assert len(r.samples) == done
    assert cls.from_dict(r.to_dict()).loops == done
