"""The fleet on the loopback: a real `dask scheduler` and `dask worker`s, each
worker a machine named host-a, host-b, ..., started the documented way as
their own processes (so a test can kill one as a machine dies). Commands are
tiny (4KB memsets), except where a run must be in progress when a worker is
killed or Ctrl-C comes: those run on a worker of their own whose runs only the
interruption ends (helpers/endless.py), however fast this machine measures;
nothing is asserted about speed. `fleet up` fakes only the SSH connection:
its scheduler and workers are real processes here."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import TESTS_DIR, one_line_error, pagezero_cli, start_python
from helpers.children import DEADLINE_S, finish, give_up
from helpers.cli import run_cli as cli
from helpers.endless import worker_env

from pagezero.fleet.run import (
    FleetError,
    connect,
    format_table,
    machine_sets,
    run_fleet,
    version_verdicts,
    workers_now,
)
from pagezero.results.resultset import Result, ResultSet, load_folder

TINY = ["mem", "memset", "-s", "4KB", "-l", "2", "-f", "default"]
# A run that an endless worker (helpers/endless.py) makes last until it is stopped: 4KB
# page faults over 64MB, a loop milliseconds; elsewhere one loop, which ends.
FAULTS = ["mem", "mmap", "-s", "64MB", "-l", "1", "-f", "demand"]
STARTUP_S = 90


def _dask(*args, env=None, log=None):
    return subprocess.Popen(
        [sys.executable, "-m", "dask", *args],
        cwd=TESTS_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log or subprocess.DEVNULL,
        start_new_session=True,
    )  # its own group: killed as one machine


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def start_scheduler(folder):
    path = os.path.join(folder, "scheduler.json")
    proc = _dask(
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-dashboard",
        "--scheduler-file",
        path,
    )
    deadline = time.monotonic() + STARTUP_S
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, "dask scheduler did not start"
        try:  # until it is there and whole (the scheduler writes it in place)
            with open(path) as f:
                return proc, json.load(f)["address"]
        except (FileNotFoundError, ValueError, KeyError):
            time.sleep(0.1)


def start_workers(address, *names, threads=None, env=None):
    """The documented workers, started together: one process each, the benchmark
    resource, named after their machines; threads: {name: count} (default 1)."""
    procs = [
        _dask(
            "worker",
            address,
            "--nworkers",
            "1",
            "--nthreads",
            str((threads or {}).get(name, 1)),
            "--resources",
            "benchmark=1",
            "--name",
            name,
            "--no-dashboard",
            env=env,
        )
        for name in names
    ]
    client = connect(address)
    try:
        deadline = time.monotonic() + STARTUP_S
        while not set(names) <= {w["name"] for w in workers_now(client).values()}:
            assert all(p.poll() is None for p in procs) and time.monotonic() < deadline, (
                f"{names} did not start"
            )
            time.sleep(0.1)
    finally:
        client.close()
    return procs


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A scheduler with host-a and host-b. host-a has two threads: only the benchmark
    resource, not a lack of threads, keeps two of its runs from overlapping."""
    folder = str(tmp_path_factory.mktemp("fleet"))
    scheduler, address = start_scheduler(folder)
    procs = [scheduler]
    try:
        procs += start_workers(address, "host-a", "host-b", threads={"host-a": 2})
        yield address, dict(zip(("host-a", "host-b"), procs[1:]))
    finally:
        for proc in reversed(procs):
            _kill(proc)


def main_error(status, *args):
    """The one error line of `pagezero ARGS`, which must exit with `status`."""
    return one_line_error(cli(*args), status)


def test_a_command_runs_on_every_machine(fleet, tmp_path):
    out = str(tmp_path / "run")
    log = run_fleet(fleet[0], ["--", *TINY], out)
    assert [(m["name"], m["status"]) for m in log.machines] == [("host-a", "ok"), ("host-b", "ok")]
    with open(os.path.join(out, "fleet.json")) as f:
        doc = json.load(f)
    assert doc["command"] == ["pagezero", *TINY] and doc["ended"] and not doc["interrupted"]
    for m in doc["machines"]:
        (run,) = m["runs"]
        assert run["files"] == [f"{m['name']}/run-1.json"] and run["start"] < run["end"]
        rs = load_folder(os.path.join(out, m["name"]))
        assert rs.machine["fleet_name"] == m["name"]  # its name in the fleet
        assert rs.machine["hostname"] == os.uname().nodename  # and the machine's metadata
        assert [r.params["size"] for r in rs] == [4096]
        assert os.path.exists(os.path.join(out, m["name"], "run-1.log"))
    text = "\n".join(format_table(*machine_sets(out)))
    assert "host-a" in text and "host-b" in text and "size=4KB" in text

    compared = cli("compare", os.path.join(out, "host-a"), os.path.join(out, "host-b"))
    assert compared.returncode == 0, compared.stderr
    assert "size=4KB" in compared.stdout
    assert "several machines" in main_error(2, "compare", out, os.path.join(out, "host-b"))
    assert "no measured point has all of 'size=8KB'" in main_error(
        2, "fleet", "table", out, "--match", "size=8KB"
    )


def test_runs_on_one_machine_never_overlap(fleet, tmp_path):
    # Two clients at once, two runs each, all on host-a (two threads, one benchmark unit).
    logs = {}

    def client(i):
        logs[i] = run_fleet(
            fleet[0], TINY, str(tmp_path / f"c{i}"), machines=["host-a"], runs=2, poll_s=0.1
        )

    threads = [threading.Thread(target=client, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans = sorted(
        (r["start"], r["end"]) for log in logs.values() for m in log.machines for r in m["runs"]
    )
    ends = [
        (r["status"], r["error"]) for log in logs.values() for m in log.machines for r in m["runs"]
    ]
    assert len(spans) == 4 and all(status == "ok" for status, _ in ends), ends
    for (_, end), (next_start, _) in zip(spans, spans[1:]):
        assert end <= next_start, spans


def test_live_workers_are_asked_not_read_from_a_cache_the_client_refreshes(fleet):
    # distributed's client refreshes scheduler_info()'s cache without the workers on a
    # timer; at 1 ms that timer overwrites a fresh answer often. Every ask must see both.
    import dask

    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}):
        client = connect(fleet[0])
    try:
        for _ in range(300):
            assert {"host-a", "host-b"} <= {w["name"] for w in workers_now(client).values()}
    finally:
        client.close()


def test_a_machine_with_another_pagezero_is_refused(fleet, tmp_path):
    # Metadata of an older pagezero first on that worker's path: importlib.metadata
    # reads it there, as it would an older installation.
    fake = tmp_path / "old" / "pagezero-0.0.1.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: pagezero\nVersion: 0.0.1\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "old"))
    (old,) = start_workers(fleet[0], "host-old", env=env)
    try:
        out = str(tmp_path / "run")
        log = run_fleet(fleet[0], TINY, out, machines=["host-b", "host-old"])
    finally:
        _kill(old)
    status = {m["name"]: m for m in log.machines}
    assert status["host-b"]["status"] == "ok"
    assert status["host-old"]["status"] == "refused"
    assert "pagezero 0.0.1 there" in status["host-old"]["error"]
    assert status["host-old"]["runs"] == [] and not os.path.exists(os.path.join(out, "host-old"))


def test_version_verdicts():
    verdicts = version_verdicts("1.0", {"a": "1.0", "b": "0.9", "c": ImportError("no pagezero")})
    assert verdicts["a"] is None
    assert "0.9 there, 1.0 here" in verdicts["b"]
    assert "no pagezero" in verdicts["c"]


def test_cli_run_table_and_store(fleet, tmp_path, capsys):
    from pagezero.cli import main

    out = tmp_path / "run"
    store = tmp_path / "s.sqlite"
    proc = cli(
        "fleet",
        "run",
        "--scheduler",
        fleet[0],
        "-o",
        out,
        "--runs",
        "2",
        "--store",
        store,
        "--",
        *TINY,
    )
    assert proc.returncode == 0, proc.stderr
    assert "host-a: ok, 2/2 runs ok" in proc.stdout and "host-b: ok, 2/2 runs ok" in proc.stdout
    # Progress on stderr (not a terminal here): a line per run ended, with the time left
    # for all four (and one per start seen before its end).
    ended = [x for x in proc.stderr.splitlines() if ": run " in x and " ok; " in x]
    assert len(ended) == 4 and all(x.startswith("pagezero fleet run: host-") for x in ended)
    assert "left" in ended[0] and ended[-1].endswith("finishing")
    capsys.readouterr()
    assert main(["fleet", "table", str(out), "--plot", str(tmp_path / "side")]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[3].split() == ["point", "|", "host-a", "|", "host-b"]
    assert table[5].startswith("memset default") and table[5].count("+-") == 2
    assert (tmp_path / "side.png").exists()
    assert main(["store", "list", "--store", str(store)]) == 0
    assert capsys.readouterr().out.count("host-") == 4  # two machines, two runs each
    assert main(["fleet", "table", str(out), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert {m: s["runs"] for m, s in row["machines"].items()} == {"host-a": 2, "host-b": 2}
    os.chmod(store, 0o444)
    try:  # a store that cannot take the results is refused before anything runs
        assert "read-only" in main_error(
            1,
            "fleet",
            "run",
            "--scheduler",
            fleet[0],
            "-o",
            tmp_path / "again",
            "--store",
            store,
            "--",
            *TINY,
        )
    finally:
        os.chmod(store, 0o644)
    assert not (tmp_path / "again").exists()


def test_cli_refuses_before_sending(fleet, tmp_path):
    out = tmp_path / "run"
    base = ["fleet", "run", "--scheduler", fleet[0], "-o", out, "--"]
    assert "pagezero would refuse" in main_error(2, *base, "mem", "memset", "--bogus")
    assert "invalid size" in main_error(2, *base, "mem", "memset", "-s", "4XB")
    assert "writes no results" in main_error(2, *base, "kernels")
    assert "leave -o out" in main_error(2, *base, *TINY, "-o", "x.json")
    assert "no pagezero command" in main_error(2, *base)
    assert "must be a positive integer" in main_error(
        2, "fleet", "run", "--scheduler", fleet[0], "-o", out, "--runs", "0", "--", *TINY
    )
    assert "no worker named 'host-z'" in main_error(
        2,
        "fleet",
        "run",
        "--scheduler",
        fleet[0],
        "-o",
        out,
        "--machines",
        "host-z",
        "--",
        *TINY,
    )
    assert not out.exists()  # nothing written for a refused run


def test_cli_cluster_faults(tmp_path):
    unreachable = cli(
        "fleet",
        "run",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--timeout",
        "1",
        "-o",
        tmp_path / "run",
        "--",
        *TINY,
    )
    assert "cannot reach the Dask scheduler" in one_line_error(unreachable, 1)
    scheduler, address = start_scheduler(str(tmp_path))
    try:
        assert "has no workers" in main_error(
            1, "fleet", "run", "--scheduler", address, "-o", tmp_path / "run", "--", *TINY
        )
    finally:
        _kill(scheduler)
    assert "no such folder" in main_error(2, "fleet", "table", tmp_path / "none")


def test_fleet_error_is_a_pagezero_error():
    import pagezero

    assert issubclass(FleetError, pagezero.PagezeroError)


def test_ctrl_c_cancels_what_has_not_finished_and_keeps_what_has(fleet, tmp_path):
    # Its first run ends; the second lasts until the Ctrl-C, so the last two are still
    # waiting when it comes, however fast the first two would have run.
    env = worker_env(tmp_path / "endless", after_first=True)
    (endless,) = start_workers(fleet[0], "host-e", env=env)
    try:
        ctrl_c_after_the_first_run(fleet[0], tmp_path / "run")
    finally:
        _kill(endless)


def ctrl_c_after_the_first_run(address, out):
    with start_python(
        "-m",
        "pagezero",
        "fleet",
        "run",
        "--scheduler",
        address,
        "-o",
        str(out),
        "--machines",
        "host-e",
        "--runs",
        "4",
        "--",
        *FAULTS,
    ) as proc:
        deadline = time.monotonic() + DEADLINE_S
        while True:  # until the first run is in: then Ctrl-C
            if proc.poll() is not None or time.monotonic() > deadline:
                give_up(proc, "no run of the fleet came back ok")
            try:
                with open(out / "fleet.json") as f:
                    runs = json.load(f)["machines"][0]["runs"]
            except (OSError, ValueError, IndexError):
                runs = []
            if any(r["status"] == "ok" for r in runs):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = finish(proc)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    with open(out / "fleet.json") as f:
        doc = json.load(f)
    assert doc["interrupted"] and doc["ended"]
    runs = doc["machines"][0]["runs"]
    assert runs[0]["status"] == "ok" and (out / "host-e" / "run-1.json").exists()
    assert runs[-1]["status"] == "cancelled"
    assert {r["status"] for r in runs} <= {"ok", "interrupted", "cancelled"}


def test_a_killed_worker_is_reported_and_the_others_kept(fleet, tmp_path):
    # host-d's run lasts until its worker is killed (helpers/endless.py): it cannot
    # end before the kill, however fast it would have run; host-a's ends.
    address, _ = fleet
    (doomed,) = start_workers(address, "host-d", env=worker_env(tmp_path / "endless"))

    def kill_when_it_starts(machine, run, what):
        if machine == "host-d" and what == "started":
            _kill(doomed)

    out = str(tmp_path / "run")
    try:
        log = run_fleet(
            address,
            FAULTS,
            out,
            machines=["host-a", "host-d"],
            poll_s=0.1,
            progress=kill_when_it_starts,
        )
    finally:
        _kill(doomed)
    status = {m["name"]: m for m in log.machines}
    assert status["host-a"]["status"] == "ok"
    assert status["host-d"]["status"] == "died"
    assert "left the cluster" in status["host-d"]["error"]
    assert len(load_folder(os.path.join(out, "host-a"))) == 1
    assert not os.path.exists(os.path.join(out, "host-d", "run-1.json"))
    with open(os.path.join(out, "fleet.json")) as f:
        assert {m["name"]: m["status"] for m in json.load(f)["machines"]} == {
            "host-a": "ok",
            "host-d": "died",
        }


def test_commands_are_checked_with_pagezero_own_parser(tmp_path, capsys):
    from pagezero.cli import main
    from pagezero.fleet.run import command_argv

    assert command_argv(["--", "pagezero", *TINY]) == (TINY, "file")
    assert command_argv(["report", "--quick"]) == (["report", "--quick"], "folder")
    # Checked before anything is sent: a command that passes goes on to the scheduler.
    base = ["fleet", "run", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "1"]
    base += ["-o", str(tmp_path / "run"), "--"]
    for good in (TINY, ["sweep", "memset", "-g", "size=4KB"], ["report", "--quick"]):
        assert "cannot reach the Dask scheduler" in main_error(1, *base, *good)
    for bad, why in (
        (["mem", "memset", "-h"], "prints help"),
        (["info"], "writes no results"),
        (["advise", "--quick"], "writes no results"),
        (["nonsense"], "pagezero would refuse"),
        (["mem", "mmap", "-p", "3MB"], "invalid page size"),
        (["batch", "--output=x"], "leave -o out"),
    ):
        capsys.readouterr()
        assert main([*base, *bad]) == 2
        out, err = capsys.readouterr()
        assert why in err and out == ""  # -h's help went nowhere
    assert not (tmp_path / "run").exists()


def test_machines_with_many_samples_compare(tmp_path, capsys):
    # A report's points can pool hundreds of loops; comparing two machines' folders
    # of them overflowed in the Mann-Whitney floor (2.0 / C(n1+n2, n1)).
    from pagezero.cli import main
    from pagezero.results.resultset import Result, ResultSet

    for name, tick in (("a", 100), ("b", 101)):
        machine = {"hostname": name}
        r = Result(
            benchmark="memset",
            function="default",
            params={"size": 4096},
            bytes_per_loop=4096,
            clock="ns",
            samples=[tick + i % 7 for i in range(600)],
            machine=machine,
        )
        (tmp_path / name).mkdir()
        ResultSet([r], machine=machine).save(str(tmp_path / name / "run-1.json"))
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "size=4KB" in capsys.readouterr().out


def test_a_signal_just_after_a_file_is_renamed_into_place_stays_a_signal(tmp_path, monkeypatch):
    # fleet.json is rewritten after every change, so a Ctrl-C often lands inside a
    # save; one landing just after the rename came out as FileNotFoundError (exit 1).
    import pagezero.files as results  # atomic_write lives in pagezero.files

    real_replace = os.replace

    def replace_then_interrupted(src, dst):
        real_replace(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(results.os, "replace", replace_then_interrupted)
    path = tmp_path / "fleet.json"
    with pytest.raises(KeyboardInterrupt):
        results.atomic_write(str(path), lambda f: f.write("{}\n"))
    assert path.read_text() == "{}\n" and os.listdir(tmp_path) == ["fleet.json"]


# No scheduler listens there: a command that gets past the checks says so instead.
NOWHERE = ["fleet", "run", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "1"]


@pytest.mark.parametrize(
    "command, why",
    [
        (["mem", "memset", "-s", "4KB", "-l", "-5"], "loops must be between 1 and"),
        (["mem", "memset", "-s", "4KB", "-k", "8KB"], "invalid chunk '8KB': larger than the size"),
        (
            ["mem", "memset", "-s", "4KB", "--offset", "5000"],
            "offset must be between 0 and 4095, not 5000",
        ),
        (["mem", "memset", "-s", "4KB", "-t", "0"], "threads must be at least 1, not 0"),
        (["mem", "memcpy", "-c", "--clock", "tsc"], "-c/--cycles and --clock tsc contradict"),
        (["mem", "mmap", "-s", "5KB"], "not a whole number of 4KB pages"),
        (["mem", "mmap", "-f", "bogus"], "unknown workload 'bogus'"),
        (["mem", "mmap", "-f", "populate", "--latency"], "no fault to time on its own"),
        (["mem", "mmap", "--headroom", "-c"], "--headroom compares rates"),
        (["batch", "-s", "4MB", "-b", "3XB"], "invalid batch '3XB'"),
        (["folio", "--fault-index", "999"], "fault index 999 is outside the folio"),
        (["report", "--quick", "--runs", "0"], "runs must be a positive int, not 0"),
    ],
)
def test_a_value_every_machine_would_refuse_is_refused_here(command, why, tmp_path):
    # As a local run refuses it (exit 2), before the scheduler is asked anything.
    out = tmp_path / "run"
    line = main_error(2, *NOWHERE, "-o", out, "--", *command)
    assert why in line and "pagezero would refuse" in line
    here = main_error(2, *command, "-o", tmp_path / "here.json")  # the same words
    assert line.endswith(here.removeprefix("pagezero: error: "))
    assert not out.exists()


def test_a_node_no_machine_has_is_refused_here(tmp_path):
    # Locally the words are this machine's nodes; no machine has a node -1.
    line = main_error(2, *NOWHERE, "-o", tmp_path / "run", "--", "mem", "memset", "--node", "-1")
    assert "node must be a NUMA node's number (0 or more), not -1" in line


@pytest.mark.parametrize(
    "command",
    [
        ["mem", "memset", "-s", "1GB", "-t", "100000"],  # CPUs this machine lacks
        ["mem", "memset", "-s", "4KB", "--node", "7", "--cpu-node", "7"],  # nodes likewise
        ["mem", "memset", "-s", "4KB", "-f", "arm64-dczva"],  # another architecture's kernel
        ["batch", "-s", "4MB", "--kernel", "arm64-dczva"],
        ["mem", "mmap", "-s", "1GB", "-p", "1GB", "--reserve"],  # hugepages
    ],
)
def test_what_depends_on_the_running_machine_is_left_to_it(command, tmp_path):
    line = main_error(1, *NOWHERE, "-o", tmp_path / "run", "--", *command)
    assert "cannot reach the Dask scheduler" in line


def _garbage_server():
    """A TCP server on the loopback that answers anything with bytes no Dask comm sends."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return  # closed
            with conn:
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return server


def test_a_malformed_or_unreachable_scheduler_is_one_line_at_once(tmp_path):
    # In a fresh process, which must exit without distributed's Client.__del__ warning.
    # --timeout 600: a refused connection is said at once, never waited on until then.
    base = ["fleet", "run", "--timeout", "600", "-o", tmp_path / "run"]
    command = ["--", *TINY]
    for address, status, why in (
        ("bogus", 2, "invalid --scheduler 'bogus': expected tcp://HOST:PORT"),
        ("http://127.0.0.1:8786", 2, "expected tcp://HOST:PORT"),
        ("tcp://127.0.0.1:notaport", 2, "expected tcp://HOST:PORT"),
        ("tcp://127.0.0.1:9", 1, "cannot reach the Dask scheduler at tcp://127.0.0.1:9: "),
    ):
        proc = pagezero_cli(*base, "--scheduler", address, *command)
        assert why in one_line_error(proc, status)
    server = _garbage_server()
    try:
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        proc = pagezero_cli(*base, "--scheduler", address, *command)
    finally:
        server.close()
    assert f"no Dask scheduler answers at {address}" in one_line_error(proc, 1)
    assert not (tmp_path / "run").exists()


def _fleet_dir(tmp_path, doc):
    """A fleet run's folder: machine a's results, and `doc` as its fleet.json."""
    folder = tmp_path / "fleet"
    (folder / "a").mkdir(parents=True)
    machine = {"hostname": "a"}
    r = Result(
        benchmark="memset",
        function="default",
        params={"size": 4096},
        bytes_per_loop=4096,
        clock="ns",
        samples=[100, 101, 102],
        machine=machine,
    )
    ResultSet([r], machine=machine).save(str(folder / "a" / "run-1.json"))
    (folder / "fleet.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return folder


@pytest.mark.parametrize(
    "doc, why",
    [
        ("not json", "not JSON"),
        ("[" * 100000, "nested too deeply"),
        ([], "no list of machines"),
        ({"machines": {"a": "a"}}, "no list of machines"),
        ({"machines": [["a", "a"]]}, "a machine without a name and a folder"),
        ({"machines": [{"name": 1, "folder": "a"}]}, "a machine without a name and a folder"),
        ({"machines": [{"name": "a", "folder": "../../etc"}]}, "folder must be a name in"),
        ({"machines": [{"name": "a", "folder": "/etc"}]}, "folder must be a name in"),
        ({"machines": [{"name": "a", "folder": ""}]}, "folder must be a name in"),
        ({"machines": [{"name": "a", "folder": "a"}] * 2}, "machine 'a' is listed twice"),
    ],
)
def test_fleet_table_on_a_malformed_fleet_json_is_one_line(doc, why, tmp_path):
    folder = _fleet_dir(tmp_path, doc)
    for fmt in ("default", "json"):
        assert why in main_error(2, "fleet", "table", folder, "--format", fmt)


def test_fleet_table_says_why_a_machine_shows_no_results(tmp_path):
    # Hand-edited: b's folder holds a file pagezero cannot read, c's status is not text.
    doc = {"machines": [{"name": n, "folder": n} for n in "abc"]}
    doc["machines"][2]["status"] = 5
    folder = _fleet_dir(tmp_path, doc)
    (folder / "b").mkdir()
    (folder / "b" / "run-1.json").write_text('{"schema": "pagezero.results", "results": 5}')
    table = cli("fleet", "table", folder)
    assert table.returncode == 0, table.stderr
    b, c = table.stdout.splitlines()[-2:]
    assert b.startswith("b: no results (") and "run-1.json: results schema version" in b
    assert c == "c: no results (5)"
