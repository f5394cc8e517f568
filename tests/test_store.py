"""The results store: add, re-add, history, migration, atomicity, and the faults
that must each be one line (corrupt, foreign, newer, read-only), through the
API and as a user runs it (`python -m pagezero store ...`). Results are made
here with known samples, so every median is known; nothing is measured."""

import json
import os
import shutil
import sqlite3
import threading

import pytest
from conftest import one_line_error
from conftest import pagezero_cli as cli

import pagezero.store as store_module
from pagezero.results.resultset import Result, ResultSet
from pagezero.store import SCHEMA_VERSION, Store, StoreError, default_path

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "store")
LABEL = "memset default chunk=0 page=4KB size=4KB thp=false value=0"
V1_HASH = "11d656f5fe9a786e32e9e7bc3091fc5b385bedece87bdb3b56bb7c9c4499b5d1"


def make_results(
    path, samples_per_run, host="box", kernel="6.1.0", mtime=None, function="default", size=4096
):
    """A results file of one memset point, one Result per run (process) of `samples_per_run`."""
    machine = {"hostname": host, "cpu_model": "Test CPU", "kernel_release": kernel}
    params = {"size": size, "page": "4KB", "chunk": 0, "loops": 2, "thp": False, "value": 0}
    results = [
        Result(
            benchmark="memset",
            function=function,
            params=params,
            bytes_per_loop=size,
            clock="ns",
            samples=s,
            machine=machine,
        )
        for s in samples_per_run
    ]
    ResultSet(results, [{"process": i} for i in range(len(results))], machine).save(path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def v1_store(tmp_path):
    path = str(tmp_path / "v1.sqlite")
    with open(os.path.join(DATA, "v1.sql")) as f:
        db = sqlite3.connect(path)
        db.executescript(f.read())
        db.close()
    return path


def test_default_path_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == str(tmp_path / "pagezero" / "results.sqlite")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == str(
        tmp_path / "home" / ".local" / "share" / "pagezero" / "results.sqlite"
    )


def test_add_is_idempotent_by_content(tmp_path):
    a = make_results(str(tmp_path / "a.json"), [[100, 200]])
    copy = str(tmp_path / "copy-of-a.json")
    shutil.copy(a, copy)
    with Store(str(tmp_path / "s.sqlite"), create=True) as s:
        first = s.add([a])
        again = s.add([a, copy])
        assert [status for _, status, _ in first] == ["added"]
        assert [status for _, status, _ in again] == ["already stored", "already stored"]
        assert {set_id for _, _, set_id in first + again} == {1}
        assert len(s.list()) == 1
    journal = sqlite3.connect(str(tmp_path / "s.sqlite")).execute("PRAGMA journal_mode")
    assert journal.fetchone()[0] == "wal"


def test_history_of_one_point_in_time_order(tmp_path):
    # Three result sets of one point, added out of time order; the second ran twice.
    make_results(str(tmp_path / "march.json"), [[100, 100]], mtime=1772000000)
    make_results(str(tmp_path / "january.json"), [[200, 200]], mtime=1768000000)
    make_results(
        str(tmp_path / "february.json"), [[400, 400], [100, 100]], mtime=1770000000, kernel="6.2.0"
    )
    make_results(str(tmp_path / "other.json"), [[50, 50]], function="generic")
    with Store(str(tmp_path / "s.sqlite"), create=True) as s:
        s.add([str(tmp_path)])
        rows = s.history(function="default", size="4KB", page="4kb")
        assert [r["median"] for r in rows] == pytest.approx(
            [4096 / 200e-9, (4096 / 400e-9 + 4096 / 100e-9) / 2, 4096 / 100e-9]
        )
        assert [r["spread_of"] for r in rows] == ["loops", "runs", "loops"]
        assert rows[1]["runs"] == 2 and rows[1]["spread_pct"] > 50
        assert all(r["label"] == LABEL for r in rows)
        assert rows[0]["measured_at"] < rows[1]["measured_at"] < rows[2]["measured_at"]
        assert len(s.history(kernel="6.2.0")) == 1
        assert s.history(machine="nobody") == []
        assert len(s.history()) == 4


def test_an_interrupted_add_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    db = str(tmp_path / "s.sqlite")
    with Store(db, create=True) as s:
        s.add([make_results(str(tmp_path / "first.json"), [[100, 100]])])
    before = sqlite3.connect(db).execute("SELECT COUNT(*) FROM points").fetchone()
    calls = []
    real = store_module._insert_points

    def interrupted_on_the_second(db_, set_id, rows):
        calls.append(set_id)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as Ctrl-C half-way through an add
        real(db_, set_id, rows)

    monkeypatch.setattr(store_module, "_insert_points", interrupted_on_the_second)
    more = [make_results(str(tmp_path / f"more{i}.json"), [[100 + i, 100]]) for i in range(3)]
    with Store(db) as s, pytest.raises(KeyboardInterrupt):
        s.add(more)
    assert len(calls) == 2
    with Store(db) as s:
        assert len(s.list()) == 1
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM points").fetchone() == before


def test_concurrent_writers_wait_for_each_other(tmp_path):
    db = str(tmp_path / "s.sqlite")
    Store(db, create=True).close()
    files = [make_results(str(tmp_path / f"r{i}.json"), [[100 + i, 100]]) for i in range(8)]
    errors = []

    def writer(paths):
        try:
            with Store(db) as s:
                for p in paths:
                    s.add([p])
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(files[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store(db) as s:
        assert len(s.list()) == 8


def test_migration_from_schema_1(tmp_path):
    path = v1_store(tmp_path)
    with Store(path) as s:
        (row,) = s.history()
        # Version 1's point was summarised over all four loops; version 2 over the two runs.
        assert row["runs"] == 2 and row["spread_of"] == "runs"
        first_run = (4096 / 100e-9 + 4096 / 200e-9) / 2
        assert row["median"] == pytest.approx((first_run + 4096 / 150e-9) / 2)
        assert s.list()[0]["machine_name"] == "old-box"
        # The migrated store still knows the document by its content.
        with open(str(tmp_path / "old.json"), "w") as f:
            f.write(sqlite3.connect(path).execute("SELECT document FROM result_sets").fetchone()[0])
        assert s.add([str(tmp_path / "old.json")])[0][1] == "already stored"
        assert s.add([make_results(str(tmp_path / "new.json"), [[100, 100]])])[0][1] == "added"
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM pagezero_store").fetchone() == (SCHEMA_VERSION,)
    assert db.execute("SELECT content_hash FROM result_sets WHERE id = 1").fetchone() == (V1_HASH,)


def test_newer_corrupt_foreign_and_read_only_stores_are_refused(tmp_path):
    newer = str(tmp_path / "newer.sqlite")
    Store(newer, create=True).close()
    sqlite3.connect(newer, isolation_level=None).execute("UPDATE pagezero_store SET version = 99")
    with pytest.raises(StoreError, match="schema version 99 is newer than this pagezero's"):
        Store(newer)

    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"not a database at all " * 300)
    with pytest.raises(StoreError, match="not a pagezero store"):
        Store(str(corrupt))

    foreign = str(tmp_path / "foreign.sqlite")
    sqlite3.connect(foreign, isolation_level=None).execute("CREATE TABLE songs (title TEXT)")
    with pytest.raises(StoreError, match="not a pagezero store"):
        Store(foreign)

    with pytest.raises(StoreError, match="no store there yet"):
        Store(str(tmp_path / "missing.sqlite"))


def test_read_only_store(tmp_path):
    db = str(tmp_path / "s.sqlite")
    with Store(db, create=True) as s:
        s.add([make_results(str(tmp_path / "a.json"), [[100, 100]])])
    os.chmod(db, 0o444)
    try:
        with Store(db) as s:
            assert len(s.list()) == 1  # reading still works
            with pytest.raises(StoreError, match="read-only"):
                s.add([make_results(str(tmp_path / "b.json"), [[200, 100]])])
        proc = cli("store", "add", str(tmp_path / "b.json"), "--store", db)
        assert "read-only" in one_line_error(proc, 1)
    finally:
        os.chmod(db, 0o644)
    with Store(db) as s:
        assert len(s.list()) == 1


# The command line --------------------------------------------------------


def test_cli_add_list_history_export(tmp_path):
    db = str(tmp_path / "s.sqlite")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "fleet.json").write_text(json.dumps({"schema": "pagezero.fleet"}))
    for i, when in enumerate((1768000000, 1770000000, 1772000000)):
        make_results(str(folder / f"r{i}.json"), [[100 * (i + 1), 100]], mtime=when)
    proc = cli("store", "add", str(folder), "--store", db)
    assert proc.returncode == 0, proc.stderr
    assert "3 added, 0 already stored" in proc.stdout
    proc = cli("store", "add", str(folder / "r0.json"), "--store", db)
    assert "0 added, 1 already stored" in proc.stdout

    listing = cli("store", "list", "--store", db)
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 3
    assert "box" in listing.stdout and "6.1.0" in listing.stdout and "memset" in listing.stdout

    history = cli(
        "store",
        "history",
        "--store",
        db,
        "--function",
        "default",
        "--size",
        "4KB",
        "--plot",
        str(tmp_path / "h"),
    )
    assert history.returncode == 0, history.stderr
    lines = history.stdout.splitlines()
    assert lines[0] == LABEL
    assert [line.split()[0][:10] for line in lines[2:5]] == [
        "2026-01-09",
        "2026-02-02",
        "2026-02-25",
    ]
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"

    out = str(tmp_path / "all.csv")
    assert cli("store", "export", "--store", db, "-o", out).returncode == 0
    with open(out) as f:
        assert len(f.read().splitlines()) == 4
    exported = json.loads(cli("store", "export", "--store", db, "--format", "json").stdout)
    assert [d["set"] for d in exported] == [1, 2, 3]
    assert all(d["schema"] == "pagezero.results" for d in exported)


def test_cli_faults_are_one_line(tmp_path):
    assert "no store there yet" in one_line_error(
        cli("store", "list", "--store", tmp_path / "none.sqlite"), 1
    )
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"\0garbage" * 600)
    assert "not a pagezero store" in one_line_error(cli("store", "list", "--store", corrupt), 1)
    not_results = tmp_path / "x.json"
    not_results.write_text("{}")
    db = tmp_path / "s.sqlite"
    assert "not a pagezero results file" in one_line_error(
        cli("store", "add", not_results, "--store", db), 2
    )
    assert not db.exists()  # nothing half-made for a refused add
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no pagezero results files" in one_line_error(
        cli("store", "add", empty, "--store", db), 2
    )
    make_results(str(tmp_path / "a.json"), [[100, 100]])
    assert cli("store", "add", tmp_path / "a.json", "--store", db).returncode == 0
    assert "no stored point matches" in one_line_error(
        cli("store", "history", "--store", db, "--function", "nothing"), 2
    )


def test_a_run_is_a_process_not_a_repetition(tmp_path):
    from pagezero.results.points import summarize_points
    from pagezero.results.resultset import load_folder

    machine = {"hostname": "box"}
    params = {"size": 4096, "page": "4KB", "chunk": 0}
    results = [
        Result(
            benchmark="memset",
            function="default",
            params=params,
            bytes_per_loop=4096,
            clock="ns",
            samples=s,
            machine=machine,
        )
        for s in ([100, 100], [200, 200])
    ]
    one_process = ResultSet(results, [{"repetition": 0}, {"repetition": 1}], machine)
    ((_, summary),) = summarize_points(one_process).values()
    assert (summary["runs"], summary["spread_of"]) == (1, "loops")
    two = ResultSet(results, [{"process": 0}, {"process": 1}], machine)
    ((_, summary),) = summarize_points(two).values()
    assert (summary["runs"], summary["spread_of"]) == (2, "runs")
    # Two files of a folder are two processes, though each file calls its own process 0.
    folder = tmp_path / "machine"
    folder.mkdir()
    for i, r in enumerate(results):
        ResultSet([r], [{"process": 0}], machine).save(str(folder / f"run-{i}.json"))
    ((_, summary),) = summarize_points(load_folder(str(folder))).values()
    assert summary["runs"] == 2 and summary["median"] == pytest.approx(
        (4096 / 100e-9 + 4096 / 200e-9) / 2
    )
