"""What runs on a fleet's machines (docs/fleet.rst, "How a run ends with its worker"): each
run a fresh process under the tether, which ends with what started it."""

import contextlib
import ctypes
import datetime
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

__all__ = ["run_command", "stop_runs", "EVENT_TOPIC"]
__all__ += ["run", "hold_session", "main", "SESSION_GRACE_S"]

EVENT_TOPIC = "pagezero-fleet"
# The exit statuses of a command stopped by a signal: 128 + N, or -N when killed by it.
_STOPPED = (129, 130, 143, -signal.SIGINT, -signal.SIGTERM)

# The runs in progress here by task key, and those stop_runs() stopped (interrupted).
_running: dict[str, subprocess.Popen[str]] = {}
_stopped: set[str] = set()


def now():
    """fleet.json's time: ISO 8601, UTC, to the millisecond."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def _collect(path):
    """The files written at `path` (a file, or a tree but atomic writes' dot files), as bytes."""
    root = pathlib.Path(path)
    if root.is_file():
        return {root.name: root.read_bytes()}
    found = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return {str(p.relative_to(root)): p.read_bytes() for p in found}


def run_command(argv, output_kind, machine, run, key):
    """Run ``pagezero ARGV -o PATH`` here, `output_kind` ("file" or "folder") saying what
    -o writes; a dict of machine, run, kind, status ("ok", "interrupted", "failed"),
    returncode, error, start and end (ISO 8601), hostname, stdout, stderr and files."""
    start = now()
    started = dict(what="started", machine=machine, run=run, key=key, at=start)
    with contextlib.suppress(ImportError, ValueError):  # outside a worker: no one to tell
        from distributed import get_worker

        get_worker().log_event(EVENT_TOPIC, started)
    with tempfile.TemporaryDirectory(prefix="pagezero-fleet-") as tmp:
        out = os.path.join(tmp, "out.json" if output_kind == "file" else "out")
        # Through the tether: the command ends with this worker, however it ends.
        tether = [sys.executable, "-m", "pagezero.fleet.tether", str(os.getpid()), tmp, "--"]
        command, pipe = [*tether, *argv, "-o", out], subprocess.PIPE
        proc = subprocess.Popen(command, cwd=tmp, stdout=pipe, stderr=pipe, text=True)
        _running[key] = proc
        try:
            stdout, stderr = proc.communicate()
        finally:
            _running.pop(key, None)
        end = now()
        files = _collect(out) if os.path.exists(out) else {}
    status = "ok" if proc.returncode == 0 else "failed"
    if key in _stopped or proc.returncode in _STOPPED:
        status = "interrupted"
    if key in _stopped:
        _stopped.discard(key)
        stderr += "pagezero: error: stopped by Ctrl-C on the fleet's client\n"
    error = None
    if status != "ok":  # the last error line, else the last line, else the status
        lines = [line for line in stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("pagezero: error:")]
        error = (errors or lines or [f"exit status {proc.returncode}"])[-1]
        error = error.replace("pagezero: error: ", "", 1)
    result = dict(machine=machine, run=run, kind=output_kind, status=status, error=error)
    result.update(returncode=proc.returncode, start=start, end=end, hostname=socket.gethostname())
    return dict(result, stdout=stdout, stderr=stderr, files=files)


def stop_runs(keys):
    """SIGINT the runs of these task keys in progress here: each saves what it measured."""
    for key in keys:
        proc = _running.get(key)
        if proc is not None and proc.poll() is None:
            _stopped.add(key)
            proc.send_signal(signal.SIGINT)


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
    """Pass the stop signals on to `children` (a list, filled later); the signals received."""
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
    """Run ``pagezero COMMAND`` tied to the worker `parent`, removing `folder` if orphaned
    (docs/fleet.rst); its exit status, 128 + N after signal N."""
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
    """Whether the worker `parent` has ended; `told` (by SIGTERM): wait for its threads."""
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
    """Run ``python ARGV`` until it ends or `stdin` (default: this process's) closes, then
    SIGTERM it, SIGKILL after SESSION_GRACE_S; its exit status."""
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
