"""DIR/fleet.json and each machine's folder (docs/fleet.rst): what a fleet run wrote and how
it went, fleet.json rewritten atomically after every change (true at any moment, also
after Ctrl-C); DIR/<machine>/run-N.json (run-N/ for a report), the worker's name added to
the machine metadata as "fleet_name", and the command's output in run-N.log.
"""

import datetime
import json
import os
import re

from pagezero.fleet.worker import now
from pagezero.interrupt import deferred
from pagezero.results.resultset import SCHEMA, atomic_write

__all__ = ["FleetLog", "FLEET_FILE", "folder_name"]

FLEET_FILE = "fleet.json"
FLEET_SCHEMA = "pagezero.fleet"

# A machine's status is its worst run's, in this order.
_WORST_FIRST = ("died", "failed", "interrupted", "cancelled", "running", "pending")


def folder_name(machine):
    """A worker's name as one path component: Dask allows any text, a folder does not."""
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
    """A fleet run's ``fleet.json``: the command, each machine and each of its runs, saved
    afresh on every change; ``machines`` lists the machines' entries (name, address,
    folder, status, error, runs) in order."""

    def __init__(self, out_dir, scheduler, argv, runs, version):
        self.out_dir = out_dir
        self.doc = {"schema": FLEET_SCHEMA, "version": 1, "scheduler": scheduler}
        self.doc.update(command=["pagezero", *argv], runs=runs, pagezero=version)
        self.machines = []  # the entries, in order
        self.doc.update(started=now(), ended=None, interrupted=False, machines=self.machines)

    def add_machine(self, name, address, refused=None):
        """Add a machine: pending, or refused for the reason given (not run on)."""
        status = "refused" if refused else "pending"
        entry = dict(name=name, address=address, folder=folder_name(name), status=status)
        entry.update(error=refused, runs=[])
        self.machines.append(entry)

    def started(self, name, run, at):
        """Mark a run as running since `at`; False if it had finished already (events and
        results travel apart, so a start can be heard of after the end)."""
        entry, r = self._run(name, run)
        if r["status"] != "pending":
            return False
        r.update(status="running", start=at)
        self._update(entry)
        return True

    def _run(self, name, run):
        entry = next(m for m in self.machines if m["name"] == name)
        r = next((r for r in entry["runs"] if r["run"] == run), None)
        if r is None:
            r = dict(run=run, status="pending", start=None, end=None, error=None, files=[])
            entry["runs"] = sorted(entry["runs"] + [r], key=lambda x: x["run"])
        return entry, r

    def finished(self, name, run, status, error=None, start=None, end=None, files=()):
        """Record how a run ended (`end` by default now; `files` relative to the folder)."""
        entry, r = self._run(name, run)
        r.update(status=status, error=error, files=list(files))
        r["start"] = start or r["start"]
        r["end"] = end or r["end"] or (now() if status != "cancelled" else None)
        self._update(entry)

    def write_run(self, result):
        """Write what a run_command() returned under ``DIR/<machine>/``; the paths written,
        relative to the folder (a name that would leave the machine's folder is skipped)."""
        name, run = result["machine"], result["run"]
        base = os.path.join(self.out_dir, folder_name(name))
        mtime = datetime.datetime.fromisoformat(result["end"]).timestamp()
        written = []
        for rel, data in sorted(result["files"].items()):
            rel = os.path.normpath(rel)
            if rel.startswith("..") or os.path.isabs(rel):
                continue  # never outside the machine's folder
            path = os.path.join(
                base, f"run-{run}.json" if result["kind"] == "file" else f"run-{run}/{rel}"
            )
            if path.endswith(".json"):
                data = _annotated(data, name)
            _write_bytes(path, data, mtime)
            written.append(os.path.relpath(path, self.out_dir))
        out = result["stdout"]
        out += "\n" if out and not out.endswith("\n") else ""
        log = f"$ {' '.join(self.doc['command'])} -o ...\n{out}{result['stderr']}"
        _write_bytes(os.path.join(base, f"run-{run}.log"), log.encode(), mtime)
        return written

    def _update(self, entry):
        if entry["status"] == "refused":
            return
        statuses = [r["status"] for r in entry["runs"]]
        statuses += ["pending"] * (self.doc["runs"] - len(statuses))
        entry["status"] = next((s for s in _WORST_FIRST if s in statuses), "ok")
        entry["error"] = next((r["error"] for r in entry["runs"] if r["error"]), None)
        self.save()

    def save(self, ended=False, interrupted=None):
        """Write ``fleet.json`` atomically, stop signals held until it is in place."""
        if ended:
            self.doc["ended"] = now()
        if interrupted is not None:
            self.doc["interrupted"] = interrupted
        with deferred():  # a Ctrl-C meanwhile comes after the file is whole and in place
            atomic_write(
                os.path.join(self.out_dir, FLEET_FILE),
                lambda f: (json.dump(self.doc, f, indent=1), f.write("\n")),
            )
