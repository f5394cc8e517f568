"""The fleet on test hosts with their own addresses, over real SSH: `pagezero fleet up
--hosts` starts the scheduler and a worker per host through each host's OpenSSH server,
and `fleet run` / `fleet table` go through them from a client namespace
(tests/helpers/netns_hosts.py: network namespaces, veth links, a bridge). Then the
faults a real fleet meets: a host's link cut mid-run, a host with another pagezero, a
worker killed with SIGKILL. Root only (namespaces); CI runs them as root.

What makes a host different lives in its own PYTHONPATH folder, set by its sshd: the
metadata of an older pagezero (importlib.metadata reads it there, as it would an older
installation), or the sitecustomize.py of helpers/endless.py, which makes its runs last
until they are stopped however fast this machine measures. Nothing is asserted about
speed. The scheduler drops a worker 5 s after its last heartbeat (Dask's worker-ttl, set
for the test through `fleet up`'s environment, whose Dask configuration distributed
passes to the processes it starts), so that a cut link shows within seconds.
"""

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time

import pytest
from conftest import one_line_error
from helpers.children import default_stop_signals, finish, run, wait
from helpers.endless import SITECUSTOMIZE
from helpers.netns_hosts import NamespaceHosts, missing_tools

from pagezero.fleet.run import FLEET_FILE
from pagezero.results.resultset import load_folder

HOSTS = ("host-a", "host-b", "host-c")
# The command, on one kernel (-f all's eleven would take most of a minute here).
MEMSET = ["mem", "memset", "-s", "64MB", "-l", "5", "--runs", "3", "-f", "default"]
START_S = 90
# A lost worker leaves the scheduler 5 s after its last heartbeat (default: 5 minutes).
FAST_LOSS = {"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "5s"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    why = missing_tools()
    if why:
        pytest.skip(why)
    with NamespaceHosts(tmp_path_factory.mktemp("hosts"), HOSTS) as hosts:
        yield hosts


def _lines(stream, into):
    for line in stream:
        into.put(line)
    into.put(None)


@contextlib.contextmanager
def fleet_up(lab, *names, env=None):
    """`pagezero fleet up --hosts NAMES` in the client namespace, until it says how to use
    the fleet: yields (scheduler address, its lines). Stopped with SIGINT on the way out,
    whatever happened; anything left on the hosts is then ended."""
    command = lab.client_command("fleet", "up", "--hosts", ",".join(names))
    proc = subprocess.Popen(
        command,
        env=dict(lab.client_env(), **(env or {})),
        cwd=lab.home,  # not the checkout, whose unbuilt pagezero/ `python -m` would import
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_stop_signals,  # the SIGINT that stops it is not ignored
    )
    lines, err = queue.Queue(), []
    readers = [
        threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True),
        threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        said, deadline = [], time.monotonic() + START_S
        while not said or not said[-1].startswith("run:"):
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            assert line is not None, f"fleet up did not start: {said} {''.join(err)}"
            said.append(line.rstrip("\n"))
        address = said[0].removeprefix("scheduler: ")
        yield address, said, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for reader in readers:
            reader.join(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
        lab.end_processes(names)


def client(lab, *argv, timeout=180):
    """`pagezero ARGV` in the client namespace, run to its end."""
    return run(lab.client_command(*argv), timeout, env=lab.client_env(), cwd=lab.home)


def start_client(lab, *argv):
    return subprocess.Popen(
        lab.client_command(*argv),
        env=lab.client_env(),
        cwd=lab.home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,
    )


def _fleet_doc(out):
    try:
        with open(os.path.join(out, FLEET_FILE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _runs_of(out, name):
    doc = _fleet_doc(out) or {"machines": []}
    return next((m["runs"] for m in doc["machines"] if m["name"] == name), [])


def _wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _wait_until_empty(lab, names, seconds=30):
    """Until no process but sshd's listener is left on these hosts."""

    def left():
        return {name: lab.commands(name) for name in names if lab.commands(name)}

    _wait_until(lambda: not left(), seconds, f"left on the hosts: {left()}")


def _runs(command, module):
    """Whether command line `command` runs ``PYTHON -m MODULE`` (`module`: the module and the
    start of its arguments), whatever the interpreter's file name (python, python3,
    python3.11): its first ``-m``, so a session tether (``PYTHON -m pagezero.fleet.tether
    --session -- -m MODULE ...``) is not the process it starts."""
    return command.partition(" -m ")[2].startswith(module)


# A worker: the scheduler's address its first argument (the scheduler's is --spec).
DASK_WORKER = "distributed.cli.dask_spec tcp://"


def _dask_workers(lab, name):
    return [p for p, c in lab.commands(name).items() if _runs(c, DASK_WORKER)]


def _pagezero_commands(lab, name):
    return {p: c for p, c in lab.commands(name).items() if _runs(c, "pagezero ")}


@contextlib.contextmanager
def host_python(host, files):
    """Files ({name: text}) in `host`'s PYTHONPATH folder while the block runs."""
    paths = []
    try:
        for name, text in files.items():
            path = os.path.join(host.python_dir, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        yield
    finally:
        for path in paths:
            os.remove(path)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(path))  # a dist-info folder


def endless(folder):
    """helpers/endless.py's sitecustomize.py for a host: its runs last until stopped."""
    os.makedirs(folder, exist_ok=True)
    mark = os.path.join(folder, "first-run-started")
    return {"sitecustomize.py": SITECUSTOMIZE.format(mark=mark, after_first=False)}


OLD_PAGEZERO = {
    "pagezero-0.0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: pagezero\nVersion: 0.0.1\n"
}


def test_fleet_up_run_table_and_a_cut_link(lab, tmp_path):
    # One fleet for both (starting one is most of the time here): first every host's
    # results, side by side; then host-c's runs last until its link is cut mid-run.
    hosts = lab.hosts
    with fleet_up(lab, *HOSTS, env=FAST_LOSS) as (address, said, up):
        # The scheduler on the first host, at its own address: not this machine's loopback.
        assert said[0] == f"scheduler: tcp://{hosts['host-a'].address}:8786"
        assert said[1] == "workers: host-a, host-b, host-c (benchmark=1 each)"
        out = str(tmp_path / "run")
        run = client(lab, "fleet", "run", "--scheduler", address, "-o", out, "--", *MEMSET)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines()[:3] == [f"{n}: ok, 1/1 runs ok" for n in HOSTS]
        doc = _fleet_doc(out)
        for m, name in zip(doc["machines"], HOSTS):
            # Each worker at its host's address, reached through the host's own link.
            assert m["name"] == name and m["address"].startswith(f"tcp://{hosts[name].address}:")
            rs = load_folder(os.path.join(out, name))
            assert rs.machine["fleet_name"] == name
            assert len(rs) == 3 and len(rs.runs) == 3  # memset's --runs 3: three processes
            assert {(r.function, r.params["size"]) for r in rs} == {("default", 64 << 20)}
        table = client(lab, "fleet", "table", out)
        assert table.returncode == 0, table.stderr
        header = next(line for line in table.stdout.splitlines() if line.startswith("point"))
        assert header.split() == ["point", "|", "host-a", "|", "host-b", "|", "host-c"]

        # Each command is a fresh Python: host-c's next ones read the sitecustomize.py.
        # The link mended whatever happens: the module's other tests use host-c.
        try:
            with host_python(hosts["host-c"], endless(tmp_path / "endless")):
                cut_mid_run(lab, address, str(tmp_path / "cut"))
        finally:
            lab.mend("host-c")
        up.send_signal(signal.SIGINT)
        assert wait(up, 60) == 0
        # fleet up stopped its scheduler and workers: nothing of theirs is left on the
        # hosts (host-c's worker ended when it lost the scheduler).
        _wait_until_empty(lab, HOSTS)


def cut_mid_run(lab, address, out):
    argv = ["fleet", "run", "--scheduler", address, "-o", out, "--runs", "2", "--", *MEMSET]
    with start_client(lab, *argv) as proc:
        try:
            _wait_until(
                lambda: any(r["status"] == "running" for r in _runs_of(out, "host-c")),
                120,
                "host-c's run did not start",
            )
            lab.cut("host-c")
            stdout, stderr = finish(proc)
        finally:
            proc.kill()
    assert proc.returncode == 1, stderr
    lines = stdout.splitlines()
    assert lines[:2] == ["host-a: ok, 2/2 runs ok", "host-b: ok, 2/2 runs ok"]
    assert lines[2].startswith("host-c: died, 0/2 runs ok (lost runs 1-2 of 2: the worker host-c")
    # Less the progress lines ("pagezero fleet run: ..."): the error is one line.
    error = [x for x in stderr.strip().splitlines() if not x.startswith("pagezero fleet run:")]
    assert error == [
        "pagezero: error: 1 of 3 machines did not finish: host-c died; the others' results are kept"
    ]
    doc = _fleet_doc(out)  # whole and valid, as every rewrite of it
    status = {m["name"]: m for m in doc["machines"]}
    assert [r["status"] for r in status["host-a"]["runs"]] == ["ok", "ok"]
    assert [r["status"] for r in status["host-c"]["runs"]] == ["died", "died"]
    assert "left the cluster" in status["host-c"]["error"] and doc["ended"]
    assert len(load_folder(os.path.join(out, "host-a"))) == 6
    assert not os.path.exists(os.path.join(out, "host-c"))
    table = client(lab, "fleet", "table", out)
    assert table.returncode == 0, table.stderr
    assert "host-c: no results (died: lost runs 1-2 of 2: " in table.stdout
    # A scheduler on the host cut off: one line, not distributed's retries and warnings.
    cut_off = f"tcp://{lab.hosts['host-c'].address}:8786"
    argv = ["fleet", "run", "--scheduler", cut_off, "--timeout", "2", "-o", out + "-2"]
    unreachable = client(lab, *argv, "--", *MEMSET)
    assert f"cannot reach the Dask scheduler at {cut_off}: " in one_line_error(unreachable, 1)


def test_another_pagezero_is_refused_and_a_killed_worker_leaves_nothing_running(lab, tmp_path):
    # host-c has another pagezero: refused by name. host-b's run lasts until its worker
    # is killed with SIGKILL: its pagezero command ends with it, its folder removed.
    hosts = lab.hosts
    with (
        host_python(hosts["host-b"], endless(tmp_path / "endless")),
        host_python(hosts["host-c"], OLD_PAGEZERO),
        fleet_up(lab, "host-b", "host-c") as (address, _, up),
    ):
        out = str(tmp_path / "run")
        argv = ["fleet", "run", "--scheduler", address, "-o", out, "--", *MEMSET]
        with start_client(lab, *argv) as proc:
            try:
                _wait_until(
                    lambda: _pagezero_commands(lab, "host-b"), 120, "no pagezero run on host-b"
                )
                assert [n for n in os.listdir(hosts["host-b"].tmp_dir) if n.startswith("pagezero-")]
                workers = _dask_workers(lab, "host-b")
                assert len(workers) == 1, lab.commands("host-b")
                (worker,) = workers
                os.kill(worker, signal.SIGKILL)
                _wait_until(
                    lambda: not _pagezero_commands(lab, "host-b"),
                    30,
                    f"left running on host-b: {_pagezero_commands(lab, 'host-b')}",
                )
                stdout, stderr = finish(proc)
            finally:
                proc.kill()
        assert not [n for n in os.listdir(hosts["host-b"].tmp_dir) if n.startswith("pagezero-")]
        # fleet up itself killed outright: its SSH sessions end, and with them all it
        # started on the hosts (fleet/tether.py's session mode).
        os.killpg(up.pid, signal.SIGKILL)
        _wait_until_empty(lab, ["host-b", "host-c"])
    assert proc.returncode == 1, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith("host-b: died, 0/1 runs ok (lost run 1 of 1: the worker host-b")
    assert lines[1].startswith("host-c: refused, 0/1 runs ok (pagezero 0.0.1 there, ")
    assert "host-b died; host-c refused" in stderr


def test_fleet_up_with_a_host_it_cannot_reach_is_one_line_and_leaves_nothing(lab):
    # An address on the hosts' link that no host has: SSH cannot connect; host-a's
    # scheduler, started first, is stopped with the rest.
    nowhere = lab.bridge_address.rsplit(".", 1)[0] + ".99"
    up = client(lab, "fleet", "up", "--hosts", f"host-a,{nowhere}")
    line = one_line_error(up, 1)
    assert line.startswith("pagezero: error: cannot start the fleet over SSH: ")
    assert nowhere in line and up.stdout == ""  # as the connection's error names it
    _wait_until_empty(lab, ["host-a"])
