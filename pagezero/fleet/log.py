"""DIR/fleet.json and each machine's folder: what a fleet run wrote, and how it went.

fleet.json lists the machines with their command, status, and per run the
start and end times on that machine's clock and the error if any; it is
rewritten (atomically) after every change, so it is true at any moment,
also after Ctrl-C. Each run's files go to DIR/<machine>/run-N.json (or the
folder run-N/ for a report), with the worker's name added to the machine
metadata as "fleet_name", and the command's output in run-N.log.
"""

import datetime
import json
import os
import re

from pagezero.interrupt import deferred
from pagezero.results.resultset import SCHEMA, atomic_write

__all__ = ["FleetLog", "FLEET_FILE", "folder_name"]

FLEET_FILE = "fleet.json"
FLEET_SCHEMA = "pagezero.fleet"

# A machine's status is its worst run's, in this order.
_WORST_FIRST = ("died", "failed", "interrupted", "cancelled", "running", "pending")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def folder_name(machine):
    """A worker's name as a folder name: Dask allows any text, a folder does not.

    Parameters
    ----------
    machine : str
        The worker's name.

    Returns
    -------
    str
        A name safe as one path component.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(machine)).strip("._")
    return name or "machine"


def _annotated(data, machine):
    """A results file's bytes with the worker's name in its machine metadata."""
    try:
        doc = json.loads(data)
    except ValueError:
        return data
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return data
    for holder in [doc] + [r for r in doc.get("results", ()) if isinstance(r, dict)]:
        if isinstance(holder.get("machine"), dict):
            holder["machine"]["fleet_name"] = machine
    return (json.dumps(doc, indent=1) + "\n").encode()


def _write_bytes(path, data, mtime):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    os.utime(path, (mtime, mtime))


class FleetLog:
    """A fleet run's ``fleet.json``: the command, each machine and each of its runs.

    Saved afresh (atomically, stop signals held) on every change, so that the file
    says how far a run got even when it is stopped.

    Parameters
    ----------
    out_dir : str
        The fleet run's folder.
    scheduler : str
        The Dask scheduler's address.
    argv : list of str
        The command, without ``pagezero``.
    runs : int
        Runs per machine.
    version : str
        pagezero's version on the client (every machine must run the same).
    """

    def __init__(self, out_dir, scheduler, argv, runs, version):
        self.out_dir = out_dir
        self.doc = {
            "schema": FLEET_SCHEMA,
            "version": 1,
            "scheduler": scheduler,
            "command": ["pagezero", *argv],
            "runs": runs,
            "pagezero": version,
            "started": _now(),
            "ended": None,
            "interrupted": False,
            "machines": [],
        }
        self._by_name = {}

    @property
    def machines(self):
        """The machines' entries (name, address, folder, status, error, runs), in order."""
        return self.doc["machines"]

    def add_machine(self, name, address, refused=None):
        """Add a machine: pending, or refused with the reason (not run on).

        Parameters
        ----------
        name, address : str
            The worker's name and address.
        refused : str, optional
            Why the machine is not run on (another pagezero version, ...).
        """
        entry = {
            "name": name,
            "address": address,
            "folder": folder_name(name),
            "status": "refused" if refused else "pending",
            "error": refused,
            "runs": [],
        }
        self.machines.append(entry)
        self._by_name[name] = entry

    def started(self, name, run, at):
        """Mark a run as running.

        Parameters
        ----------
        name : str
            The machine.
        run : int
            The run's index.
        at : str
            When it started (ISO 8601).

        Returns
        -------
        bool
            False if it had finished already: events and results travel separately, so
            a start can be heard of after the end.
        """
        entry, r = self._run(name, run)
        if r["status"] != "pending":
            return False
        r.update(status="running", start=at)
        self._update(entry)
        return True

    def _run(self, name, run):
        entry = self._by_name[name]
        for r in entry["runs"]:
            if r["run"] == run:
                return entry, r
        r = {
            "run": run,
            "status": "pending",
            "start": None,
            "end": None,
            "error": None,
            "files": [],
        }
        entry["runs"].append(r)
        entry["runs"].sort(key=lambda x: x["run"])
        return entry, r

    def finished(self, name, run, status, error=None, start=None, end=None, files=()):
        """Record how a run ended, and save.

        Parameters
        ----------
        name : str
            The machine.
        run : int
            The run's index.
        status : str
            ``"ok"``, ``"failed"``, ``"interrupted"`` or ``"cancelled"``.
        error : str, optional
            The run's error line.
        start, end : str, optional
            When it started and ended (ISO 8601); `end` defaults to now.
        files : iterable of str
            Its files, relative to the fleet's folder.
        """
        entry, r = self._run(name, run)
        r.update(status=status, error=error, files=list(files))
        r["start"] = start or r["start"]
        r["end"] = end or r["end"] or (_now() if status != "cancelled" else None)
        self._update(entry)

    def write_run(self, result):
        """Write the files of one finished run under ``DIR/<machine>/``.

        Results files get the worker's name in their machine metadata; the command's
        output goes to ``run-N.log``. A file name that would leave the machine's folder
        is skipped.

        Parameters
        ----------
        result : dict
            What :func:`pagezero.fleet.worker.run_command` returned.

        Returns
        -------
        list of str
            The paths written, relative to the fleet's folder.
        """
        name, run = result["machine"], result["run"]
        base = os.path.join(self.out_dir, folder_name(name))
        mtime = datetime.datetime.fromisoformat(result["end"]).timestamp()
        written = []
        for rel, data in sorted(result["files"].items()):
            rel = os.path.normpath(rel)
            if rel.startswith("..") or os.path.isabs(rel):
                continue  # never outside the machine's folder
            if result["kind"] == "file":
                path = os.path.join(base, f"run-{run}.json")
            else:
                path = os.path.join(base, f"run-{run}", rel)
            if path.endswith(".json"):
                data = _annotated(data, name)
            _write_bytes(path, data, mtime)
            written.append(os.path.relpath(path, self.out_dir))
        out = result["stdout"]
        if out and not out.endswith("\n"):
            out += "\n"
        log = f"$ {' '.join(self.doc['command'])} -o ...\n{out}{result['stderr']}"
        _write_bytes(os.path.join(base, f"run-{run}.log"), log.encode(), mtime)
        return written

    def _update(self, entry):
        if entry["status"] == "refused":
            return
        statuses = [r["status"] for r in entry["runs"]]
        statuses += ["pending"] * (self.doc["runs"] - len(statuses))
        worst = next((s for s in _WORST_FIRST if s in statuses), "ok")
        entry["status"] = worst
        entry["error"] = next((r["error"] for r in entry["runs"] if r["error"]), None)
        self.save()

    def save(self, ended=False, interrupted=None):
        """Write ``fleet.json`` atomically, stop signals held until it is in place.

        Parameters
        ----------
        ended : bool
            Record the end time (now).
        interrupted : bool, optional
            Record whether the fleet run was stopped.
        """
        if ended:
            self.doc["ended"] = _now()
        if interrupted is not None:
            self.doc["interrupted"] = interrupted
        with deferred():  # a Ctrl-C meanwhile comes after the file is whole and in place
            atomic_write(
                os.path.join(self.out_dir, FLEET_FILE),
                lambda f: (json.dump(self.doc, f, indent=1), f.write("\n")),
            )
