"""Processes a fleet starts on its machines, tied to what started them so that none
outlives it (docs/fleet.rst).

``python -m pagezero.fleet.tether PARENT FOLDER -- COMMAND``: ``python -m pagezero
COMMAND``, given SIGTERM when the worker (pid PARENT) ends, even killed outright (prctl
PR_SET_PDEATHSIG), and the worker's SIGINT, so that it stops as after any stop signal
(what it reserved given back); orphaned, the tether removes the run's FOLDER, whose
results nobody will read. The exit status is the command's (128 + N after signal N).

``python -m pagezero.fleet.tether --session -- ARGS``: ``python ARGS`` (the scheduler or a
worker of ``fleet up``) while this process's standard input is open, which an SSH
session's end closes however it comes (OpenSSH's server refuses the signal SSH could send
instead for root's sessions); then SIGTERM, and SIGKILL after SESSION_GRACE_S (a worker
closing waits for its run, which its SIGKILL then ends, above).
"""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

__all__ = ["run", "hold_session", "main", "SESSION_GRACE_S"]

# prctl(2): the signal this process gets when the thread that started it ends.
_PR_SET_PDEATHSIG = 1
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SESSION_GRACE_S = 5


def _end_with_parent():
    """SIGTERM to this process when its parent ends (kept across exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def _forwarding(children):
    """Pass the stop signals on to the running ones of `children` (a list, filled later);
    the signals received."""
    received = []

    def forward(signum, frame):
        received.append(signum)
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    return received


def _status(returncode):
    return 128 - returncode if returncode < 0 else returncode


def _start(argv, **kwargs):
    # preexec_fn is safe here: this process has one thread when it starts its child.
    return subprocess.Popen([sys.executable, *argv], preexec_fn=_end_with_parent, **kwargs)


def run(parent, folder, command):
    """Run ``pagezero COMMAND`` tied to `parent` (see the module's note); its exit status."""
    started = []
    received = _forwarding(started)
    _end_with_parent()
    if os.getppid() != parent:  # it ended before prctl() took effect
        received.append(signal.SIGTERM)
    if received:
        status = -received[0]
    else:
        started.append(_start(["-m", "pagezero", *command]))
        if received:  # a signal that came while the child was being started
            started[0].send_signal(received[0])
        status = started[0].wait()
    if _orphaned(parent, signal.SIGTERM in received):
        shutil.rmtree(folder, ignore_errors=True)
    return _status(status)


def _orphaned(parent, told, wait_s=2.0):
    """Whether the worker `parent` has ended (or is ending). `told`: a SIGTERM came, as the
    kernel sends when the worker's thread that started this process ends, which in a
    worker killed outright comes before all of its threads have gone: wait for them."""
    deadline = time.monotonic() + (wait_s if told else 0)
    while os.getppid() == parent:
        try:
            with open(f"/proc/{parent}/stat") as f:  # its state: R, S, Z (zombie)...
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except (OSError, IndexError):  # no such process
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def hold_session(argv, stdin=None):
    """Run ``python ARGV`` until it ends or `stdin` (default: this process's) reaches its
    end, then stop it (see the module's note); its exit status."""
    stdin = stdin or sys.stdin.buffer
    child = _start(argv, stdin=subprocess.DEVNULL)
    _forwarding([child])

    def watch():
        while stdin.read(65536):
            pass  # nothing is sent: only the end counts
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(SESSION_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()

    threading.Thread(target=watch, daemon=True).start()
    return _status(child.wait())


USAGE = (
    "usage: python -m pagezero.fleet.tether PARENT FOLDER -- COMMAND\n"
    "       python -m pagezero.fleet.tether --session -- ARGS"
)


def main(argv=None):
    """The command line: ``PARENT FOLDER -- COMMAND`` or ``--session -- ARGS``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["--session", "--"] and argv[2:]:
        return hold_session(argv[2:])
    if len(argv) >= 4 and argv[0].isdigit() and argv[2] == "--":
        return run(int(argv[0]), argv[1], argv[3:])
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
