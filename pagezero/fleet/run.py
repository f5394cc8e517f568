"""``pagezero fleet up|run|table`` (docs/fleet.rst): a Dask cluster over SSH, a pagezero command
on its chosen machines, recorded in DIR/fleet.json, and the machines' results side by side."""

import contextlib
import datetime
import json
import os
import queue
import re
import shlex
import socket
import sys
import time
import uuid

from pagezero._core import PagezeroError
from pagezero.files import atomic_write, writable_parent
from pagezero.fleet.tether import EVENT_TOPIC, now, run_command, stop_runs
from pagezero.fleet.worker import installed_version
from pagezero.interrupt import deferred
from pagezero.results.points import summarize_points
from pagezero.results.resultset import SCHEMA, ResultSet, load_folder
from pagezero.results.schema import read_json
from pagezero.runs.progress import Progress
from pagezero.store import format_value

__all__ = ["run_fleet", "command_argv", "connect", "benchmark_workers", "version_verdicts"]
__all__ += ["FleetError", "RESOURCE", "FILE_COMMANDS", "FOLDER_COMMANDS", "start_fleet"]
__all__ += ["FleetLog", "FLEET_FILE", "folder_name"]
__all__ += ["machine_sets", "table_rows", "format_table", "only_matching"]

RESOURCE = {"benchmark": 1}
# The commands whose -o is a results file, and those whose -o is a folder of them.
FILE_COMMANDS = ("memset", "memcpy", "mmap", "batch", "folio", "sweep")
FOLDER_COMMANDS = ("report",)
# How long Ctrl-C waits for interrupted runs to send back what they measured.
GRACE_S = 15
FLEET_FILE = "fleet.json"
FLEET_SCHEMA = "pagezero.fleet"
# A machine's status is its worst run's, in this order.
_WORST_FIRST = ("died", "failed", "interrupted", "cancelled", "running", "pending")
WORKER_HINT = "dask worker {} --nworkers 1 --nthreads 1 --resources benchmark=1 --name MACHINE"


class FleetError(PagezeroError):
    """A cluster unreachable or without benchmark=1 workers, or machines unfinished (exit 1)."""


def command_argv(argv):
    """``(argv, "file" or "folder")``: the command bare, and what its ``-o`` writes."""
    argv = [str(a) for a in argv]
    for word in ("--", "pagezero"):
        argv = argv[1:] if argv[:1] == [word] else argv
    if not argv:
        raise ValueError(
            "no pagezero command to run: put it after --, e.g. -- mem memset -s 1GB -l 10"
        )
    if any(t in ("-o", "--output") or t.startswith(("--output=", "-o")) for t in argv):
        raise ValueError("leave -o out of the command: each run writes under the fleet's -o DIR")
    return argv, "folder" if argv[0] in FOLDER_COMMANDS else "file"


def _probe(address, timeout):
    """FleetError unless a Dask scheduler answers at `address` (checked as one) in time."""
    import asyncio

    from distributed.comm import connect as dask_connect
    from distributed.comm.addressing import parse_address, parse_host_port

    expected = f"invalid --scheduler {address!r}: expected tcp://HOST:PORT"
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError as e:
        raise ValueError(f"{expected} ({e})") from None
    if scheme not in ("tcp", "tls") or not host or not 0 < port < 65536:
        raise ValueError(expected)
    # A plain connection first: refused or unresolved is said at once (distributed's retries).
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        why = "timed out" if isinstance(e, TimeoutError) else e.strerror or first_line(e)
        raise FleetError(f"cannot reach the Dask scheduler at {address}: {why}") from None

    # Then distributed's identity call, before any Client exists (one that failed to start
    # takes twice its timeout to close, then warns).
    async def identity():
        comm = await dask_connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await asyncio.wait_for(comm.read(), timeout)
        finally:
            comm.abort()

    try:
        answer = asyncio.run(identity())
    except Exception as e:  # OSError, a timeout, what a server of another kind sends
        raise FleetError(
            f"no Dask scheduler answers at {address}: {type(e).__name__}: {first_line(e)}"
        ) from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise FleetError(f"no Dask scheduler answers at {address} (it answers {answer!r:.60})")


def connect(address, timeout=10):
    """A Dask client of the scheduler at `address` (``tcp://HOST:PORT``), else FleetError."""
    from distributed import Client

    _probe(address, timeout)
    try:
        # Its threads inherit the mask: Ctrl-C goes to the main thread, which can defer it.
        with deferred():
            return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise FleetError(f"cannot reach the Dask scheduler at {address}: {first_line(e)}") from None


def first_line(e):
    """An exception's first line, else its type's name."""
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def workers_now(client):
    """{address: info} of the scheduler's workers, asked now."""
    # Not scheduler_info(): its cache is also refreshed, without the workers, every 2 s by
    # the client's own loop, which can overwrite a fresh answer before it is returned.
    return client.sync(client.scheduler.identity, n_workers=-1)["workers"]


def benchmark_workers(client, address):
    """``({name: address} of the workers offering benchmark=1, all names)``, or FleetError."""
    workers, hint = workers_now(client), WORKER_HINT.format(address)
    if not workers:
        raise FleetError(f"the cluster at {address} has no workers; on each machine run: {hint}")
    usable = {
        str(info["name"]): addr
        for addr, info in workers.items()
        if (info.get("resources") or {}).get("benchmark", 0) >= 1
    }
    if not usable:
        raise FleetError(
            f"none of the {len(workers)} workers at {address} offers the resource "
            f"benchmark=1; start them as: {hint}"
        )
    return usable, sorted(str(info["name"]) for info in workers.values())


def choose(usable, names, machines):
    """The workers asked for (all usable ones without `machines`), name to address."""
    for name in [m for m in machines or () if m not in usable]:
        if name in names:
            raise ValueError(
                f"worker {name!r} offers no benchmark resource (start it with "
                f"--resources benchmark=1)"
            )
        raise ValueError(f"no worker named {name!r} in the cluster (workers: {', '.join(names)})")
    return {name: usable[name] for name in machines or sorted(usable)}


def version_verdicts(mine, theirs):
    """Machine name to None or why it is refused, from its version or the error reading it."""
    verdicts = dict.fromkeys(theirs)
    for name, version in theirs.items():
        if isinstance(version, BaseException):
            verdicts[name] = f"cannot read pagezero's version there: {version}"
        elif version != mine:
            verdicts[name] = (
                f"pagezero {version} there, {mine} here: install the same pagezero on every machine"
            )
    return verdicts


def _progress(stream, runs, total):
    """progress(machine, run, what) for run_fleet's `progress`."""
    if callable(stream) or stream is None:
        return stream or (lambda *_: None)
    progress = Progress("pagezero fleet run", total, stream)

    def show(name, run, text):
        say = progress.say if text == "started" else progress.step  # an end is a step
        say(f"{name}: run {run}/{runs} {text}")

    return show


def run_fleet(
    scheduler, command, out_dir, machines=None, runs=1, progress=None, timeout=10, poll_s=0.5
):
    """Run a pagezero command on machines of a fleet, each run written under `out_dir`.

    Parameters
    ----------
    scheduler : str
        The Dask scheduler's address (``tcp://HOST:8786``).
    command : list of str
        The pagezero command without ``-o``: ``["mem", "memset", "-s", "1GB"]``.
    out_dir : str
        A new folder: ``fleet.json`` and one folder per machine.
    machines : list of str, optional
        Worker names; by default every worker offering the ``benchmark`` resource.
    runs : int
        Runs per machine (at least 1), each a fresh process.
    progress : file or callable, optional
        A stream for a line per start and end of a run, or ``progress(machine, run, what)``.
    timeout, poll_s : float
        Seconds to wait for the scheduler; between checks for finished runs.

    Returns
    -------
    FleetLog
        What ran where, as saved in ``fleet.json``.

    Raises
    ------
    ValueError
        For a command, folder or machine name it cannot use, before anything is sent.
    FleetError
        For a cluster it cannot use.
    KeyboardInterrupt
        On Ctrl-C, after stopping the runs and writing what finished.
    """
    argv, kind = command_argv(command)
    if runs < 1:
        raise ValueError(f"--runs must be at least 1, not {runs}")
    writable_parent(out_dir, folder=True)
    if os.path.exists(os.path.join(out_dir, FLEET_FILE)):
        raise ValueError(f"{out_dir} already holds a fleet run; choose another folder")
    client = connect(scheduler, timeout)
    try:
        events = queue.Queue()
        client.subscribe_topic(EVENT_TOPIC, events.put)
        chosen = choose(*benchmark_workers(client, scheduler), machines)
        answers = client.run(installed_version, workers=list(chosen.values()), on_error="return")
        versions = {n: answers.get(a, RuntimeError("no answer")) for n, a in chosen.items()}
        verdicts = version_verdicts(installed_version(), versions)
        os.makedirs(out_dir, exist_ok=True)
        log = FleetLog(out_dir, scheduler, argv, runs, installed_version())
        futures = {}
        for name, address in chosen.items():
            log.add_machine(name, address, verdicts[name])
            where = dict(workers=[address], allow_other_workers=False, resources=RESOURCE)
            for run in range(1, runs + 1) if not verdicts[name] else ():
                key = f"pagezero-{folder_name(name)}-run{run}-{uuid.uuid4().hex[:8]}"
                # priority: a machine's runs in their order (not promised otherwise).
                args = (run_command, argv, kind, name, run, key)
                future = client.submit(*args, key=key, pure=False, priority=runs - run, **where)
                futures[future] = (name, run)
        log.save()
        show = _progress(progress, runs, len(futures))
        watch = _Watch(client, futures, chosen, log, events, show)
        try:
            watch.until_done(poll_s)
        except KeyboardInterrupt:
            watch.stop()
            log.save(ended=True, interrupted=True)
            raise
        log.save(ended=True)
        return log
    finally:
        client.close()


def _wait_any(futures, seconds, step=0.05):
    """Return when one of the futures is done, or after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not any(f.done() for f in futures):
        time.sleep(step)


class _Watch:
    """The runs in flight: their results written as they come, their starts shown."""

    def __init__(self, client, futures, chosen, log, events, show):
        self.client, self.futures, self.chosen = client, futures, chosen
        self.log, self.events, self.show = log, events, show
        self.pending, self.started = set(futures), set()

    def _drain(self):
        while not self.events.empty():  # the only reader: get() does not block
            _, msg = self.events.get()
            if msg.get("what") == "started":
                self.started.add(msg["key"])
                if self.log.started(msg["machine"], msg["run"], msg["at"]):
                    self.show(msg["machine"], msg["run"], "started")

    def _end(self, future, status, error, *times_and_files):
        self.pending.discard(future)
        name, run = self.futures[future]
        self.log.finished(name, run, status, error, *times_and_files)
        self.show(name, run, status + (f": {error}" if error else ""))

    def _collect(self, future):
        try:
            result = future.result()
        except Exception as e:  # the task failed: pagezero missing there, the scheduler lost
            return self._end(future, "failed", f"{type(e).__name__}: {first_line(e)}")
        files = self.log.write_run(result)
        self._end(future, result["status"], result["error"], result["start"], result["end"], files)

    def _give_up(self, future, status, error):
        with contextlib.suppress(OSError, TimeoutError):  # nothing left to cancel it on
            future.cancel()
        self._end(future, status, error)

    def until_done(self, poll_s):
        while self.pending:
            # Polled: distributed's wait() needs a default client, not a library's to set.
            _wait_any(self.pending, poll_s)
            for future in [f for f in self.pending if f.done()]:
                self._collect(future)
            self._drain()
            if not self.pending:
                break
            # A task tied to a worker that left would wait for it forever.
            try:
                alive = set(workers_now(self.client))
            except (OSError, TimeoutError) as e:  # the scheduler itself went away
                for future in list(self.pending):
                    self._give_up(future, "died", f"lost the scheduler: {e}")
                break
            for name in sorted({self.futures[f][0] for f in self.pending}):
                if self.chosen[name] not in alive:
                    self._lost(name)

    def _lost(self, name):
        """Give up the runs of machine `name`, whose worker left: the error names them."""
        lost = sorted((self.futures[f][1], f) for f in self.pending if self.futures[f][0] == name)
        runs = [run for run, _ in lost]
        what = "runs " + ", ".join(map(str, runs))
        if runs == list(range(runs[0], runs[-1] + 1)):  # one run, or consecutive ones
            what = f"run {runs[0]}" if len(runs) == 1 else f"runs {runs[0]}-{runs[-1]}"
        why = f"lost {what} of {self.log.doc['runs']}: the worker {name} at {self.chosen[name]}"
        for _, future in lost:
            self._give_up(future, "died", why + " left the cluster (machine down or worker killed)")

    def stop(self):
        """After Ctrl-C: cancel the runs not started, interrupt the others (GRACE_S)."""
        self._drain()
        for future in [f for f in self.pending if f.done()]:
            self._collect(future)
        running = [f for f in self.pending if f.key in self.started]
        for future in [f for f in self.pending if f.key not in self.started]:
            self._give_up(future, "cancelled", "cancelled by Ctrl-C before it started")
        # A second Ctrl-C, or a worker gone: keep what came back.
        with contextlib.suppress(KeyboardInterrupt, OSError):
            if running:
                addresses = sorted({self.chosen[self.futures[f][0]] for f in running})
                keys = [f.key for f in running]
                self.client.run(stop_runs, keys, workers=addresses, on_error="return")
                deadline = time.monotonic() + GRACE_S
                while time.monotonic() < deadline and not all(f.done() for f in running):
                    _wait_any(running, 0.5)
        for future in running:
            if future.done():
                self._collect(future)
            else:
                self._give_up(future, "interrupted", "interrupted by Ctrl-C; nothing came back")


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
    atomic_write(path, lambda f: f.buffer.write(data))  # bytes, beneath its text layer
    os.utime(path, (mtime, mtime))


class FleetLog:
    """A fleet run's ``fleet.json``, saved on every change; ``machines``: its entries in order."""

    def __init__(self, out_dir, scheduler, argv, runs, version):
        self.out_dir = out_dir
        self.doc = {"schema": FLEET_SCHEMA, "version": 1, "scheduler": scheduler}
        self.doc.update(command=["pagezero", *argv], runs=runs, pagezero=version)
        self.machines = []
        self.doc.update(started=now(), ended=None, interrupted=False, machines=self.machines)

    def add_machine(self, name, address, refused=None):
        """Add a machine: pending, or refused for the reason given (not run on)."""
        status = "refused" if refused else "pending"
        entry = dict(name=name, address=address, folder=folder_name(name), status=status)
        entry.update(error=refused, runs=[])
        self.machines.append(entry)

    def started(self, name, run, at):
        """Mark a run as running since `at`; False if its result came first."""
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
        """Write a run_command() result in ``DIR/<machine>/``; the paths, relative to DIR."""
        name, run = result["machine"], result["run"]
        base = os.path.join(self.out_dir, folder_name(name))
        mtime = datetime.datetime.fromisoformat(result["end"]).timestamp()
        written = []
        for rel, data in sorted(result["files"].items()):
            rel = os.path.normpath(rel)
            if rel.startswith("..") or os.path.isabs(rel):
                continue
            file = f"run-{run}.json" if result["kind"] == "file" else f"run-{run}/{rel}"
            path = os.path.join(base, file)
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
        path = os.path.join(self.out_dir, FLEET_FILE)
        with deferred():  # a Ctrl-C meanwhile comes after the file is whole and in place
            atomic_write(path, lambda f: (json.dump(self.doc, f, indent=1), f.write("\n")))


DEFAULT_PORT = 8786
# Without distributed's nanny: why in docs/fleet.rst.
WORKER_CLASS = "distributed.Worker"
REGISTER_TIMEOUT_S = 60


def start_fleet(
    hosts, scheduler_host=None, port=DEFAULT_PORT, connect_options=None, remote_python=None
):
    """Start a fleet over SSH: the scheduler on one host, a worker on every host.

    Parameters
    ----------
    hosts : list of str
        The machines, one worker each, named after the host.
    scheduler_host : str, optional
        Where the scheduler runs; by default the first host.
    port : int
        The scheduler's port, 0 to 65535.
    connect_options, remote_python : dict, str, optional
        asyncssh's connection options; the Python on the hosts.

    Returns
    -------
    distributed.deploy.spec.SpecCluster
        The running cluster, every worker registered; ``close()`` stops it.

    Raises
    ------
    ValueError
        For an empty host list, a host named twice, or a bad port.
    FleetError
        When asyncssh is missing, SSH or a process fails, or a worker does not join in 60 s.
    """
    hosts = [h.strip() for h in hosts if h and h.strip()]
    if not hosts:
        raise ValueError("--hosts needs at least one host name")
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"a host is named twice in --hosts: {','.join(hosts)}")
    if not 0 <= port <= 65535:
        raise ValueError(f"invalid --port {port}: expected 0..65535")
    from distributed.deploy.spec import SpecCluster
    from distributed.deploy.ssh import Scheduler, Worker

    tether = f"{shlex.quote(remote_python or sys.executable)} -m pagezero.fleet.tether --session --"
    ssh = {"connect_options": connect_options or {}, "remote_python": tether}

    def spec(cls, host, **options):
        return {"cls": cls, "options": dict(ssh, address=host, **options)}

    scheduler = spec(Scheduler, scheduler_host or hosts[0], kwargs=dict(port=port, dashboard=False))
    worker = dict(nthreads=1, resources=dict(RESOURCE))
    workers = {
        h: spec(Worker, h, worker_class=WORKER_CLASS, kwargs=dict(worker, name=h)) for h in hosts
    }
    try:
        with deferred():  # its threads keep the stop signals for the main thread (as connect)
            cluster = SpecCluster(workers, scheduler, name="pagezero-fleet")
    except ImportError as e:
        raise FleetError(f"fleet up needs asyncssh: pip install 'pagezero[fleet]' ({e})") from None
    except Exception as e:  # asyncssh's errors, OSError, "Worker failed to start"
        raise FleetError(f"cannot start the fleet over SSH: {first_line(e)}") from None
    try:
        # A worker starts before the scheduler knows it: ready for a run once all have joined.
        cluster.wait_for_workers(len(hosts), timeout=REGISTER_TIMEOUT_S)
    except (TimeoutError, OSError) as e:
        cluster.close()
        raise FleetError(
            f"the workers started but did not all join the scheduler within "
            f"{REGISTER_TIMEOUT_S} s: {e}"
        ) from None
    return cluster


def _fleet_entries(path):
    """{name: (folder, status, error)} of each machine fleet.json lists."""
    doc = read_json(path)
    machines = doc.get("machines", []) if isinstance(doc, dict) else None
    if not isinstance(machines, list):
        raise ValueError(f"{path}: not a fleet run's record (no list of machines)")
    entries = {}
    for m in machines:
        if not (isinstance(m, dict) and all(isinstance(m.get(k), str) for k in ("name", "folder"))):
            raise ValueError(f"{path}: a machine without a name and a folder")
        folder = m["folder"]
        if not folder or folder in (".", "..") or "/" in folder or "\0" in folder:
            where = os.path.dirname(path) or "."
            raise ValueError(
                f"{path}: machine {m['name']!r}'s folder must be a name in {where}, not {folder!r}"
            )
        if m["name"] in entries:
            raise ValueError(f"{path}: machine {m['name']!r} is listed twice")
        # A hand-edited status or error as text (None stays None).
        status, error = (None if m.get(k) is None else str(m[k]) for k in ("status", "error"))
        entries[m["name"]] = (folder, status, error)
    return entries


def machine_sets(fleet_dir):
    """``([(machine name, ResultSet)], a line per machine without results)`` of a fleet run's
    folder (or any folder of machine folders), in fleet.json's order, else by name; or
    ValueError."""
    path = os.path.join(fleet_dir, FLEET_FILE)
    if os.path.exists(path):
        entries = _fleet_entries(path)
    elif os.path.isdir(fleet_dir):
        names = [n for n in os.listdir(fleet_dir) if os.path.isdir(os.path.join(fleet_dir, n))]
        entries = {name: (name, None, None) for name in sorted(names)}
    else:
        raise ValueError(f"{fleet_dir}: no such folder")
    sets, notes = [], []
    for name, (folder, status, error) in entries.items():
        try:
            sets.append((name, load_folder(os.path.join(fleet_dir, folder))))
        except ValueError as e:
            why = str(e)  # why its folder holds no results, unless its run went wrong
            if status and status != "ok":
                why = status + (f": {error}" if error else "")
            notes.append(f"{name}: no results ({why})")
    if not sets:
        raise ValueError(
            f"{fleet_dir}: no machine's results under it"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    return sets, notes


def only_matching(sets, words):
    """`sets` with only the results whose label has all of `words`; ValueError for none."""
    words = set(words.split())
    kept = []
    for name, rs in sets:
        pairs = [(r, run) for r, run in zip(rs.results, rs.runs) if words <= set(r.label().split())]
        if pairs:
            results, runs = zip(*pairs)
            kept.append((name, ResultSet(results, [dict(run) for run in runs], dict(rs.machine))))
    if not kept:
        raise ValueError(f"no measured point has all of {' '.join(sorted(words))!r} in its label")
    return kept


def table_rows(sets):
    """Per point of (machine name, ResultSet) pairs a dict of ``label``, ``unit`` and
    ``machines``: name to its :func:`pagezero.results.points.point_summary`, or None."""
    rows, names = {}, [name for name, _ in sets]
    for name, rs in sets:
        for key, (first, summary) in summarize_points(rs).items():
            empty = {"label": first.label(), "unit": first.unit, "machines": dict.fromkeys(names)}
            rows.setdefault(key, empty)["machines"][name] = summary
    return list(rows.values())


def _cell(summary):
    if summary is None:
        return "-"
    mark = "" if summary["spread_of"] == "runs" else "*"
    value = format_value(summary["median"], summary["unit"])
    return f"{value} +-{summary['spread_pct']:.1f}%{mark}"


def format_table(sets, notes=()):
    """The table of :func:`table_rows` as lines, the machines above it, `notes` below."""
    names = [name for name, _ in sets]
    machines = [
        f"{n}: {rs.machine.get('cpu_model', '?')}, {rs.machine.get('kernel_release', '?')}"
        for n, rs in sets
    ]
    header = ["point", *names]
    body = [[row["label"], *(_cell(row["machines"][n]) for n in names)] for row in table_rows(sets)]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    text = [" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + body]
    rule = "-+-".join("-" * w for w in widths)
    legend = (
        "median rate over runs (GB/s = 10^9 bytes/s), +- the stdev of the runs' "
        "medians; * one run: the stdev of its loops instead"
    )
    return [*machines, "", text[0], rule, *text[1:], "", legend, *notes]
