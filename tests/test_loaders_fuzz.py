"""Any JSON given to a loader or a command: a one-line error or a result, never a traceback.

Documents are made by Hypothesis from real ones (a file saved now, the
version 1, 2 and 3 fixtures) with values replaced by JSON of the wrong shape
(lists, objects, NaN, huge numbers, nesting) or removed, or by any JSON at all,
then read by ResultSet.load, folders and the store, and by every command that
reads a file as a user runs it: `compare` (files and folders), `plot`, `store
add`, `fleet table` (its fleet.json) and `sweep --grid` (in this process, so
that an exception that would be a traceback fails the test).
"""

import json
import os
import pathlib
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagezero.cli import main
from pagezero.results.points import summarize_points
from pagezero.results.resultset import Result, ResultSet, load_path

DATA = pathlib.Path(__file__).parent / "data"


def _fresh_document():
    rs = ResultSet(
        [
            Result(
                benchmark="memset",
                function="x86-64-stosb",
                params={"size": 1 << 20, "page": "4KB", "chunk": 0, "loops": 3, "value": 0},
                bytes_per_loop=1 << 20,
                clock="ns",
                samples=[100_000, 110_000, 90_000],
                machine={"cpu_model": "Test CPU", "hostname": "box"},
            )
        ],
        [{"repetition": 0, "process": 0}],
    )
    with tempfile.TemporaryDirectory() as d:
        rs.save(os.path.join(d, "r.json"))
        return (pathlib.Path(d) / "r.json").read_text()


BASES = [
    _fresh_document(),
    (DATA / "results_v1.json").read_text(),
    (DATA / "results_v2.json").read_text(),
    (DATA / "results_v3.json").read_text(),
]

JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.sampled_from([0, -1, 2**63])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.sampled_from(["4KB", "ns", "cycles", "memset", "32MB"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _mutated(data):
    doc = json.loads(data.draw(st.sampled_from(BASES)))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(_paths(doc))))
        junk = data.draw(JUNK)
        if not path:
            doc = junk
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = junk
    return json.dumps(doc)  # NaN and Infinity as Python writes them


def _exercise(rs):
    """What the commands read of a loaded set: none of it may fail."""
    rs.stats()
    summarize_points(rs)
    rs.table()
    for r in rs:
        r.label(), r.stats(), r.to_dict()


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


@SETTINGS
@given(data=st.data())
def test_load_gives_a_result_set_or_one_value_error(data):
    text = _mutated(data)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        pathlib.Path(path).write_text(text)
        try:
            rs = ResultSet.load(path)
        except ValueError as e:
            assert "\n" not in str(e) and str(e).startswith(path)
            return
        _exercise(rs)
        _exercise(load_path(d))  # the same file read as a folder


def _cli(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status in (0, 2), (status, err)
    if status == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("pagezero: error:"), err
    return status


@settings(SETTINGS, max_examples=40)
@given(data=st.data())
def test_compare_and_store_add_give_one_line(data, capsys):
    text = _mutated(data) if data.draw(st.booleans()) else json.dumps(data.draw(JUNK))
    with tempfile.TemporaryDirectory() as d:
        good, folder = os.path.join(d, "good.json"), os.path.join(d, "study")
        os.mkdir(folder)
        bad = os.path.join(folder, "bad.json")
        pathlib.Path(good).write_text(BASES[0])
        pathlib.Path(bad).write_text(text)
        _cli(["compare", good, bad], capsys)
        _cli(["compare", bad, good, "--format", "json"], capsys)
        _cli(["compare", folder, good], capsys)  # a report's or a study's folder
        _cli(["store", "add", bad, "--store", os.path.join(d, "s.db")], capsys)


@settings(SETTINGS, max_examples=25)
@given(fleet=JUNK)
def test_fleet_table_of_any_fleet_json_gives_one_line(fleet, capsys):
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "a"))
        pathlib.Path(d, "a", "r.json").write_text(BASES[0])
        pathlib.Path(d, "fleet.json").write_text(json.dumps(fleet))
        _cli(["fleet", "table", d], capsys)


@settings(SETTINGS, max_examples=25)
@given(grid=JUNK | st.dictionaries(st.sampled_from(["function", "chunk", "value", "page"]), JUNK))
def test_sweep_of_any_grid_file_gives_one_line(grid, capsys):
    # The size and loops are pinned small on the command line (-g overrides the
    # file), so a grid that passes every check runs in milliseconds.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "grid.json")
        pathlib.Path(path).write_text(json.dumps(grid))
        argv = ["sweep", "memset", "--grid", path, "-g", "size=4KB", "-g", "loops=1"]
        _cli([*argv, "-r", "1", "--warmup", "0", "-o", os.path.join(d, "out.json")], capsys)


@settings(SETTINGS, max_examples=15)
@given(data=st.data())
def test_plot_gives_one_line(data, capsys):
    text = _mutated(data)
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.json")
        pathlib.Path(bad).write_text(text)
        _cli(["plot", bad, "-o", os.path.join(d, "p")], capsys)


@pytest.mark.parametrize(
    "where, value",
    [
        (("results", 0, "type"), []),  # as a version 2 file's "type" could be
        (("results", 0, "samples"), [1, [2]]),
        (("results", 0, "params", "size"), []),
        (("results", 0, "bytes_per_loop"), 10**30),
        (("results", 0, "clock_hz"), float("nan")),
        (("results", 0, "run"), {"process": []}),
        (("machine",), {"hostname": ["a"]}),
        (("results", 0, "samples"), [0, 5, 7]),  # a loop below the clock's resolution
    ],
)
def test_known_shapes_exit_2_with_one_line(tmp_path, capsys, where, value):
    doc = json.loads(BASES[0])
    node = doc
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    good = tmp_path / "good.json"
    good.write_text(BASES[0])
    for argv in (
        ["compare", str(good), str(bad)],
        ["compare", str(bad), str(good)],
        ["plot", str(bad)],
    ):
        status = main(argv)
        err = capsys.readouterr().err
        if where[-1] == "type":
            assert status == 0  # "type" is not read since version 3: the file is fine
            continue
        assert status == 2 and len(err.strip().splitlines()) == 1, err
        assert str(bad) in err


@pytest.mark.parametrize(
    "fleet",
    [
        [],
        {"machines": {}},
        {"machines": [{"name": "a"}]},
        {"machines": [{"name": [], "folder": "a"}]},
    ],
)
def test_fleet_table_with_a_bad_record_exits_2(tmp_path, capsys, fleet):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "r.json").write_text(BASES[0])
    (tmp_path / "fleet.json").write_text(json.dumps(fleet))
    assert main(["fleet", "table", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "fleet.json" in err, err


@pytest.mark.parametrize("size", [None, "1GB", -1, True])
def test_plot_of_memset_results_without_a_size_in_bytes_exits_2(tmp_path, capsys, size):
    # Hypothesis found it: the x axis read params["size"] and died with a KeyError.
    doc = json.loads(BASES[0])
    for r in doc["results"]:
        if size is None:
            r["params"].pop("size", None)
        else:
            r["params"]["size"] = size
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["plot", str(bad), "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(bad) in err, err
