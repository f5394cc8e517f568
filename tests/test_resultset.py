"""Sweeps and ResultSets.

Sweep mechanics are tested with a fake benchmark registered through
pagezero.runs.sweeps.register: it returns a synthetic Result at once and records
every call, so warm-up, repetitions, interleaving and Ctrl-C are checked
fast and deterministically. The real memset is used only where the real
thing matters (its checks, worker processes), at tiny sizes.
"""

import csv
import dataclasses
import functools
import json
import os
import re

import pytest
from helpers.fake_bench import GRID6, MACHINE, POINTS6, key, make_result, orders, registered_fake

import pagezero
from pagezero.results.resultset import SCHEMA, SCHEMA_VERSION, ResultSet
from pagezero.runs import sweeps


@pytest.fixture
def fake():
    with registered_fake() as f:
        yield f


# Sweeps -------------------------------------------------------------------------


@pytest.mark.parametrize("repeat, warmup", [(1, 0), (3, 1), (2, 2)])
def test_counts(fake, repeat, warmup):
    rs = pagezero.sweep("fake", GRID6, repeat=repeat, warmup=warmup)
    assert len(rs) == len(POINTS6) * repeat
    assert len(fake.calls) == len(POINTS6) * (repeat + warmup)  # warm-ups thrown away
    assert not rs.interrupted
    assert {run["process"] for run in rs.runs} == {0}
    assert rs.machine["cpu_model"] == pagezero.machine()["cpu_model"]


def test_warmup_comes_first(fake):
    pagezero.sweep("fake", GRID6, repeat=1, warmup=1)
    assert {key(c) for c in fake.calls[:6]} == POINTS6
    assert {key(c) for c in fake.calls[6:]} == POINTS6


def test_every_repetition_visits_every_point_once(fake):
    rs = pagezero.sweep("fake", GRID6, repeat=4, warmup=0)
    by_rep = orders(rs)
    assert sorted(by_rep) == [0, 1, 2, 3]
    for rep, order in by_rep.items():
        assert sorted(order) == sorted(POINTS6), rep


def test_order_is_shuffled_between_repetitions(fake):
    by_rep = orders(pagezero.sweep("fake", GRID6, repeat=3, warmup=0))
    assert len({tuple(o) for o in by_rep.values()}) >= 2


def test_order_is_deterministic(fake):
    first = orders(pagezero.sweep("fake", GRID6, repeat=3, warmup=0))
    second = orders(pagezero.sweep("fake", GRID6, repeat=3, warmup=0))
    assert first == second


def test_single_values_stand_for_lists(fake):
    rs = pagezero.sweep(
        "fake", {"function": "a", "size": 4096, "loops": [1, 3]}, repeat=1, warmup=0
    )
    assert sorted(r.params["loops"] for r in rs) == [1, 3]
    assert [r.loops for r in rs] == [r.params["loops"] for r in rs]


@pytest.mark.parametrize("interrupt_at, warmup, kept", [(5, 0, 4), (8, 1, 1), (1, 0, 0)])
def test_ctrl_c_keeps_what_ran(fake, interrupt_at, warmup, kept):
    fake.interrupt_at = interrupt_at
    rs = pagezero.sweep("fake", GRID6, repeat=3, warmup=warmup)
    assert rs.interrupted
    assert len(rs) == kept
    assert len(rs.runs) == kept
    assert len(fake.calls) == interrupt_at  # nothing ran after the interrupt


def test_unknown_parameter(fake):
    with pytest.raises(ValueError, match="sise") as e:
        pagezero.sweep("fake", {"sise": [4096]})
    message = str(e.value)
    assert "sise" in message
    for known in ("function", "size", "loops"):
        assert known in message
    assert fake.calls == []


@pytest.mark.parametrize(
    "grid, words",
    [
        ({}, "the grid is empty"),
        ({"size": []}, "grid parameter 'size' has no values"),
        ({"function": ["a"], "size": ()}, "grid parameter 'size' has no values"),
        (None, "the grid is empty"),
        ([("size", [4096])], "the grid is empty"),
    ],
    ids=repr,
)
def test_empty_grid(fake, grid, words):
    with pytest.raises(ValueError, match=words):
        pagezero.sweep("fake", grid)
    assert fake.calls == []


def test_bad_value_is_caught_before_anything_runs(fake):
    with pytest.raises(ValueError, match="size must be positive"):
        pagezero.sweep("fake", {"size": [4096, 8192, 0]}, repeat=1, warmup=0)
    assert fake.calls == []


@pytest.mark.parametrize(
    "kw",
    [{"repeat": 0}, {"repeat": 1.5}, {"repeat": True}, {"warmup": -1}, {"processes": 0}],
    ids=repr,
)
def test_bad_sweep_arguments(fake, kw):
    [(name, value)] = kw.items()
    with pytest.raises(ValueError, match=f"^{name} must be .*, not {value}$"):
        pagezero.sweep("fake", GRID6, **kw)
    assert fake.calls == []


def test_unknown_benchmark():
    with pytest.raises(ValueError, match="memset"):  # the message lists the known ones
        pagezero.sweep("nosuchbench", {"size": [4096]})


@pytest.mark.parametrize(
    "grid, words",
    [
        ({"size": ["64KB", 0]}, "invalid size 0"),
        ({"size": ["64KB"], "chunk": ["128KB"]}, "invalid chunk '128KB': larger than the size"),
        ({"size": ["64KB"], "function": ["no-such-kernel"]}, "unknown clear kernel 'no-such"),
        ({"size": ["64KB"], "loops": [1, 0]}, "loops must be between 1 and .*, not 0"),
    ],
    ids=["size-0", "chunk>size", "kernel", "loops-0"],
)
def test_real_memset_checks_every_point_first(monkeypatch, grid, words):
    """The real memset's check refuses a bad point before the good ones run."""
    real = sweeps.BENCHMARKS["memset"]
    calls = []

    @functools.wraps(real.run)
    def counting(**params):
        calls.append(params)
        return real.run(**params)

    monkeypatch.setitem(sweeps.BENCHMARKS, "memset", dataclasses.replace(real, run=counting))
    with pytest.raises(ValueError, match=words):
        pagezero.sweep("memset", dict(grid, loops=grid.get("loops", [1])), repeat=1, warmup=0)
    assert calls == []


def test_worker_processes():
    rs = pagezero.sweep(
        "memset", {"function": "default", "size": "64KB", "loops": 1}, repeat=2, processes=2
    )
    assert len(rs) == 2
    assert sorted((run["repetition"], run["process"]) for run in rs.runs) == [(0, 0), (1, 1)]
    assert not rs.interrupted
    assert all(r.benchmark == "memset" and r.params["size"] == 64 << 10 for r in rs)
    assert rs.machine["caches"]


# ResultSet ------------------------------------------------------------------------


def small_set(interrupted=False):
    results = [
        make_result("a", 4096, (1000, 1100, 1200), loops=3),
        make_result("b", 8192, (2000, 2100, 2200), loops=3),
        make_result("a", 4096, (1050, 1150, 1250), loops=3),
    ]
    runs = [
        {"repetition": 0, "process": 0},
        {"repetition": 0, "process": 0},
        {"repetition": 1, "process": 1},
    ]
    return ResultSet(results, runs, MACHINE, interrupted=interrupted)


def test_table():
    rs = small_set()
    t = rs.table()
    assert len(t) == 9  # one row per sample
    assert t.dtype.names == (
        "benchmark",
        "function",
        "loops",
        "size",
        "repetition",
        "process",
        "loop",
        "measurement",
        "unit",
    )
    assert list(t["function"]) == ["a"] * 3 + ["b"] * 3 + ["a"] * 3
    assert list(t["loop"]) == [0, 1, 2] * 3
    assert list(t["repetition"]) == [0] * 6 + [1] * 3
    assert list(t["process"]) == [0] * 6 + [1] * 3
    assert set(t["unit"]) == {"bytes/sec"}
    assert t["measurement"][0] == pytest.approx(4096 / 1000e-9)
    assert t["size"].dtype.kind == "i"


def test_table_string_parameters():
    rs = ResultSet([make_result(page="4KB"), make_result(page="2MB", thp=None)])
    t = rs.table()
    assert list(t["page"]) == ["4KB", "4KB", "2MB", "2MB"]
    assert "thp" in t.dtype.names  # a parameter missing from some results still has a column


def test_stats_pool_repetitions():
    rows = small_set().stats()
    assert [(r["function"], r["n"]) for r in rows] == [("a", 6), ("b", 3)]


def test_to_csv(tmp_path):
    rs = small_set()
    path = tmp_path / "out.csv"
    rs.to_csv(str(path))
    assert os.listdir(tmp_path) == ["out.csv"]  # no temporary file left
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(rs.table().dtype.names)
    assert len(rows) == 1 + 9
    assert rows[1][:4] == ["fake", "a", "3", "4096"]


def test_round_trip(tmp_path):
    rs = small_set(interrupted="SIGINT")
    path = tmp_path / "rs.json"
    rs.save(str(path))
    assert os.listdir(tmp_path) == ["rs.json"]
    back = ResultSet.load(str(path))
    assert back.results == rs.results
    assert back.runs == rs.runs
    assert dict(back.machine) == MACHINE
    assert back.interrupted == "SIGINT"
    doc = json.loads(path.read_text())
    assert (doc["schema"], doc["version"]) == (SCHEMA, SCHEMA_VERSION)
    assert doc["machine"] == MACHINE
    assert "machine" not in doc["results"][0]  # stored once, at the top


def test_round_trip_of_a_sweep(fake, tmp_path):
    rs = pagezero.sweep("fake", GRID6, repeat=2, warmup=0)
    rs.save(str(tmp_path / "s.json"))
    back = ResultSet.load(str(tmp_path / "s.json"))
    assert back.results == rs.results and back.runs == rs.runs
    assert dict(back.machine) == dict(rs.machine)
    assert back.interrupted is None


def test_results_with_another_machine_keep_it(tmp_path):
    other = dict(MACHINE, cpu_model="Other CPU")
    rs = ResultSet([make_result(), make_result(machine=other)], machine=MACHINE)
    rs.save(str(tmp_path / "m.json"))
    back = ResultSet.load(str(tmp_path / "m.json"))
    assert [r.machine["cpu_model"] for r in back] == ["Test CPU", "Other CPU"]


GOOD_ENTRY = make_result().to_dict()


def doc(**changes):
    d = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "machine": MACHINE,
        "interrupted": False,
        "results": [GOOD_ENTRY],
    }
    d.update(changes)
    return json.dumps(d)


@pytest.mark.parametrize(
    "content",
    [
        doc(version=SCHEMA_VERSION + 1),
        doc(version=0),
        doc(version="2"),
        doc(version=None),
        doc(schema="someone.else"),
        json.dumps({"version": SCHEMA_VERSION, "results": []}),
        doc(results={"a": 1}),
        doc(results=[1]),
        doc(results=[{"benchmark": "fake"}]),
        doc(results=[dict(GOOD_ENTRY, samples=[])]),
        doc(results=[dict(GOOD_ENTRY, samples=5)]),
        doc(results=[dict(GOOD_ENTRY, clock="sundial")]),
        doc(results=[dict(GOOD_ENTRY, run=[])]),
        json.dumps([1, 2, 3]),
        "",
        "this is not JSON",
        '{"schema": "pagezero.results", "version": 2, "resu',
        b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe garbage",
    ],
    ids=[
        "newer",
        "version-0",
        "version-str",
        "no-version",
        "wrong-schema",
        "no-schema",
        "results-dict",
        "result-int",
        "result-incomplete",
        "no-samples",
        "samples-int",
        "bad-clock",
        "run-list",
        "list",
        "empty",
        "text",
        "truncated",
        "binary",
    ],
)
def test_bad_files_are_refused(tmp_path, content):
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    # One line, naming the file at fault.
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: [^\n]+$"):
        ResultSet.load(str(path))


def test_missing_file(tmp_path):
    with pytest.raises(OSError):
        ResultSet.load(str(tmp_path / "nothing.json"))


@pytest.mark.parametrize("write", ["save", "to_csv"])
def test_files_are_readable_by_others(tmp_path, write):
    old = os.umask(0o022)
    try:
        path = str(tmp_path / "shared")
        getattr(small_set(), write)(path)
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o044 == 0o044


def test_failed_save_leaves_no_file(tmp_path):
    """A crash while writing (here: an unserialisable parameter) leaves no half file."""
    path = tmp_path / "rs.json"
    path.write_text("old")
    rs = ResultSet([make_result(odd=object())])
    with pytest.raises(TypeError):
        rs.save(str(path))
    assert os.listdir(tmp_path) == ["rs.json"]
    assert path.read_text() == "old"


def test_to_pandas():
    rs = small_set()
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            rs.to_pandas()
    else:
        df = rs.to_pandas()
        assert len(df) == len(rs.table())
        assert list(df.columns) == list(rs.table().dtype.names)


def test_resultset_needs_one_run_per_result():
    with pytest.raises(ValueError, match="one run description per result"):
        ResultSet([make_result(), make_result()], runs=[{}])


def test_empty_set_round_trip(tmp_path):
    rs = ResultSet([])
    rs.save(str(tmp_path / "e.json"))
    rs.to_csv(str(tmp_path / "e.csv"))
    assert len(ResultSet.load(str(tmp_path / "e.json"))) == 0
    assert (tmp_path / "e.csv").read_text().splitlines() == [
        "benchmark,function,repetition,process,loop,measurement,unit"
    ]


# Default sizes -----------------------------------------------------------------------

KB, MB = 1 << 10, 1 << 20


def test_default_sizes_are_dense_around_the_caches():
    info = {
        "caches": [
            {"level": 1, "type": "Data", "size_bytes": 48 * KB},
            {"level": 1, "type": "Instruction", "size_bytes": 32 * KB},
            {"level": 2, "type": "Unified", "size_bytes": 1 * MB},
            {"level": 3, "type": "Unified", "size_bytes": 32 * MB},
        ]
    }
    sizes = sweeps.default_sizes(info)
    assert sizes == sorted(set(sizes))
    assert sizes[0] == 4 * KB
    assert sizes[-1] >= 8 * 32 * MB  # beyond the LLC
    assert all(s % 4096 == 0 for s in sizes)
    for cache in (48 * KB, 1 * MB, 32 * MB):
        assert {cache // 2, cache * 3 // 4, cache, cache * 3 // 2, cache * 2} <= set(sizes)
    powers = [1 << s for s in range(12, sizes[-1].bit_length())]
    assert set(powers) <= set(sizes)


def test_default_sizes_bounds_and_no_caches():
    assert sweeps.default_sizes({"caches": []}, low="64KB", high="1MB") == [
        64 * KB,
        128 * KB,
        256 * KB,
        512 * KB,
        1 * MB,
    ]
    assert sweeps.default_sizes({"caches": []})[-1] >= 256 * MB  # a 32MB LLC is assumed
