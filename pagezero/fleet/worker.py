"""What runs on a fleet's worker, imported from the pagezero installed there: each run
``python -m pagezero COMMAND -o TMP`` in a fresh process and temporary folder, through
:mod:`pagezero.fleet.tether`; the files written come back as bytes, a failure as its
error, never raised, so that what it wrote still comes back.
"""

from __future__ import annotations

import datetime
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile

__all__ = ["installed_version", "run_command", "stop_runs", "EVENT_TOPIC"]

EVENT_TOPIC = "pagezero-fleet"
# The exit statuses of a command stopped by a signal: 128 + N, or -N when killed by it.
_STOPPED = (129, 130, 143, -signal.SIGINT, -signal.SIGTERM)

# The runs in progress here by task key, and those stop_runs() stopped (interrupted).
_running: dict[str, subprocess.Popen[str]] = {}
_stopped: set[str] = set()


def installed_version():
    """``pagezero.__version__`` on this machine (run on each worker)."""
    from pagezero import __version__

    return __version__


def now():
    """The time as fleet.json writes it: ISO 8601, UTC, to the millisecond."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def _collect(path):
    """The files the command wrote at `path` (a file, or a folder's tree), as bytes."""
    root = pathlib.Path(path)
    if root.is_file():
        return {root.name: root.read_bytes()}
    # Dot files are left out: an atomic write's leftover temporary files.
    found = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return {str(p.relative_to(root)): p.read_bytes() for p in found}


def run_command(argv, output_kind, machine, run, key):
    """Run ``pagezero ARGV -o PATH`` here, `output_kind` ("file" or "folder") saying what
    -o writes; a dict of machine, run, kind, status ("ok", "interrupted", "failed"),
    returncode, error, start and end (ISO 8601), hostname, stdout, stderr and files."""
    start = now()
    started = dict(what="started", machine=machine, run=run, key=key, at=start)
    try:  # progress for the client's display; a run outside a worker has no one to tell
        from distributed import get_worker

        get_worker().log_event(EVENT_TOPIC, started)
    except (ImportError, ValueError):
        pass
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
    if key in _stopped:
        _stopped.discard(key)
        status = "interrupted"
        stderr += "pagezero: error: stopped by Ctrl-C on the fleet's client\n"
    elif proc.returncode in _STOPPED:
        status = "interrupted"
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
    """SIGINT the runs of these task keys in progress here (pagezero saves what it
    measured, marked interrupted)."""
    for key in keys:
        proc = _running.get(key)
        if proc is not None and proc.poll() is None:
            _stopped.add(key)
            proc.send_signal(signal.SIGINT)
