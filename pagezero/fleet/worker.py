"""What runs on a fleet's worker: one pagezero command in a fresh process.

Each run is `python -m pagezero <command> -o <temporary path>` with the
worker's own interpreter, in a temporary folder, so no two runs share a
process (the run is the unit) and nothing is left behind. The task returns
the files the command wrote, as bytes, with its start and end times on the
worker's clock; the client writes them. A command that fails is returned
with its error, never raised, so that what it wrote still comes back.

The functions here are sent to the worker by reference: the worker imports
pagezero.fleet.worker, from the pagezero installed there.
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

# The runs in progress on this worker, by task key, for stop_runs(), and the
# keys it stopped: however their process ended, they were interrupted.
_running: dict[str, subprocess.Popen[str]] = {}
_stopped: set[str] = set()


def installed_version():
    """The pagezero version installed on this machine (run on each worker).

    Returns
    -------
    str
        ``pagezero.__version__``: the installed distribution's metadata.
    """
    from pagezero import __version__

    return __version__


def _now():
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
            full = os.path.join(root, name)
            if name.startswith("."):
                continue  # an atomic write's leftover temporary file
            with open(full, "rb") as f:
                files[os.path.relpath(full, path)] = f.read()
    return files


def _error_line(returncode, stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("pagezero: error:")]
    text = (errors or lines or [f"exit status {returncode}"])[-1]
    return text.replace("pagezero: error: ", "", 1)


def run_command(argv, output_kind, machine, run, key):
    """Run ``pagezero ARGV -o PATH`` on this machine (a fleet task, run on a worker).

    Parameters
    ----------
    argv : list of str
        The command, without ``pagezero`` and ``-o``.
    output_kind : {"file", "folder"}
        What the command's ``-o`` writes.
    machine : str
        This worker's name, for the events and the result.
    run : int
        The run's index.
    key : str
        The Dask task key, which :func:`stop_runs` names it by.

    Returns
    -------
    dict
        ``machine``, ``run``, ``kind``, ``status`` (``"ok"``, ``"interrupted"`` or
        ``"failed"``), ``returncode``, ``error`` (the command's error line, or None),
        ``start`` and ``end`` (Unix time, s), ``hostname``, ``stdout``, ``stderr`` and
        ``files`` (name to bytes).
    """
    start = _now()
    _event(what="started", machine=machine, run=run, key=key, at=start)
    with tempfile.TemporaryDirectory(prefix="pagezero-fleet-") as tmp:
        out = os.path.join(tmp, "out.json" if output_kind == "file" else "out")
        proc = subprocess.Popen(
            [sys.executable, "-m", "pagezero", *argv, "-o", out],
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _running[key] = proc
        try:
            stdout, stderr = proc.communicate()
        finally:
            _running.pop(key, None)
        end = _now()
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
    _event(what="finished", machine=machine, run=run, key=key, at=end, status=status)
    return {
        "machine": machine,
        "run": run,
        "kind": output_kind,
        "status": status,
        "returncode": proc.returncode,
        "error": None if status == "ok" else _error_line(proc.returncode, stderr),
        "start": start,
        "end": end,
        "hostname": socket.gethostname(),
        "stdout": stdout,
        "stderr": stderr,
        "files": files,
    }


def stop_runs(keys):
    """Stop the runs of these task keys in progress on this machine, with SIGINT.

    pagezero saves what it measured, marked interrupted, and exits.

    Parameters
    ----------
    keys : iterable of str
        Dask task keys of :func:`run_command` calls.

    Returns
    -------
    list of str
        The keys whose process was signalled.
    """
    stopped = []
    for key in keys:
        proc = _running.get(key)
        if proc is not None and proc.poll() is None:
            _stopped.add(key)
            proc.send_signal(signal.SIGINT)
            stopped.append(key)
    return stopped
