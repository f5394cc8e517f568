"""What runs on a fleet's worker: one pagezero command in a fresh process.

Each run is ``python -m pagezero COMMAND -o TMP`` in a temporary folder (the run is the
unit, nothing is left behind), started through :mod:`pagezero.fleet.tether` so that it
ends when the worker does, even killed outright; the files written come back as bytes,
a failure with its error, never raised, so that what it wrote still comes back. The
worker imports this module from the pagezero installed there.
"""

from __future__ import annotations

import datetime
import os
import signal
import socket
import subprocess
import sys
import tempfile

__all__ = ["installed_version", "run_command", "stop_runs", "EVENT_TOPIC"]

EVENT_TOPIC = "pagezero-fleet"

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


def _event(**msg):
    """Progress for the client's display; a run outside a worker has no one to tell."""
    try:
        from distributed import get_worker

        get_worker().log_event(EVENT_TOPIC, msg)
    except (ImportError, ValueError):
        pass


def _collect(path):
    """The files the command wrote at `path` (a file, or a folder's tree), as bytes."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return {os.path.basename(path): f.read()}
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            if name.startswith("."):
                continue  # an atomic write's leftover temporary file
            with open(os.path.join(root, name), "rb") as f:
                files[os.path.relpath(f.name, path)] = f.read()
    return files


def _error_line(returncode, stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("pagezero: error:")]
    text = (errors or lines or [f"exit status {returncode}"])[-1]
    return text.replace("pagezero: error: ", "", 1)


def run_command(argv, output_kind, machine, run, key):
    """Run ``pagezero ARGV -o PATH`` here, `output_kind` ("file" or "folder") saying what
    -o writes; a dict of machine, run, kind, status ("ok", "interrupted", "failed"),
    returncode, error, start and end (ISO 8601), hostname, stdout, stderr and files."""
    start = now()
    _event(what="started", machine=machine, run=run, key=key, at=start)
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
    if key in _stopped:
        _stopped.discard(key)
        status = "interrupted"
        stderr += "pagezero: error: stopped by Ctrl-C on the fleet's client\n"
    elif proc.returncode == 0:
        status = "ok"
    elif proc.returncode in (130, 143, 129, -signal.SIGINT, -signal.SIGTERM):
        status = "interrupted"
    else:
        status = "failed"
    error = None if status == "ok" else _error_line(proc.returncode, stderr)
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
