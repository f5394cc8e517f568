"""ResultSet's rules (pagezero/results.py), each message in full: what a set keeps of
its runs, machine, interruption and lost workers, and why a file is refused."""

import json
import sys

import pytest

from pagezero.results.resultset import SCHEMA, SCHEMA_VERSION, Result, ResultSet

MACHINE = {"cpu_model": "Test CPU"}


def result(function="k", machine=MACHINE, **params):
    return Result(
        benchmark="memset",
        function=function,
        params={"size": 4096, **params},
        bytes_per_loop=4096,
        clock="ns",
        samples=[100, 200],
        machine=machine,
    )


def test_runs_say_repetition_and_process_and_a_pid_only_when_known():
    rs = ResultSet(
        [result(), result(), result()], [{}, {"process": 2, "pid": 77}, {"repetition": 1}]
    )
    assert [dict(r) for r in rs.runs] == [
        {"repetition": 0, "process": 0},
        {"repetition": 0, "process": 2, "pid": 77},
        {"repetition": 1, "process": 0},
    ]
    assert [dict(r) for r in ResultSet([result()]).runs] == [{"repetition": 0, "process": 0}]


def test_the_machine_is_the_first_results_unless_given():
    rs = ResultSet([result(machine={"cpu_model": "A"}), result(machine={"cpu_model": "B"})])
    assert dict(rs.machine) == {"cpu_model": "A"}
    assert dict(ResultSet([result()], machine={"cpu_model": "C"}).machine) == {"cpu_model": "C"}
    assert dict(ResultSet([]).machine) == {}


def test_interruption_build_and_lost_workers():
    rs = ResultSet([result()], interrupted=True, build={"pagezero": "1.0"})
    assert rs.interrupted == "unknown signal" and dict(rs.build) == {"pagezero": "1.0"}
    plain = ResultSet([result()], interrupted=False, build={})
    assert (plain.interrupted, plain.build, plain.lost) == (None, None, ())
    lost = [{"process": 1, "repetitions": 2, "reason": "killed"}]
    assert [dict(x) for x in ResultSet([], lost=lost).lost] == lost
    for bad in ({"process": 1}, [1], "x"):
        with pytest.raises(ValueError) as e:
            ResultSet([], lost=bad)
        assert str(e.value) == "lost is not a list of objects (the worker processes lost)"


def test_benchmarks_are_sorted_and_points_first_seen():
    a, b = result("a"), result("b")
    memcpy = Result(**(vars(result("c")) | {"benchmark": "memcpy"}))
    rs = ResultSet([b, a, memcpy, b])
    assert rs.benchmarks == ["memcpy", "memset"]
    assert [(first.function, len(all_)) for first, all_ in rs.points()] == [
        ("b", 2), ("a", 1), ("c", 1)
    ]  # fmt: skip
    [row] = ResultSet([a, a]).stats()
    assert (row["benchmark"], row["function"], row["label"], row["n"]) == (
        "memset", "a", "memset a size=4KB", 4
    )  # fmt: skip
    assert row["params"] == {"size": 4096} and row["unit"] == "bytes/sec"


def test_a_saved_file_keeps_only_other_machines_in_its_results(tmp_path):
    rs = ResultSet([result(), result(machine={"cpu_model": "B"})], [{}, {"process": 1}])
    rs.save(tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    assert text.endswith("}\n") and text.startswith('{\n "schema"')
    doc = json.loads(text)
    assert (doc["schema"], doc["version"], doc["interrupted"]) == (SCHEMA, SCHEMA_VERSION, None)
    assert list(doc) == ["schema", "version", "pagezero", "build", "machine", "interrupted",
                         "results"]  # fmt: skip
    assert "machine" not in doc["results"][0]
    assert doc["results"][1]["machine"] == {"cpu_model": "B"}
    assert [e["run"] for e in doc["results"]] == [
        {"repetition": 0, "process": 0}, {"repetition": 0, "process": 1}
    ]  # fmt: skip
    lost = [{"process": 3, "repetitions": [0], "reason": "killed"}]
    ResultSet([], lost=lost).save(tmp_path / "l.json")
    assert json.loads((tmp_path / "l.json").read_text())["lost"] == lost


def write(tmp_path, doc):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("version", [0, SCHEMA_VERSION + 1, "3", None])
def test_a_version_not_known_is_named(tmp_path, version):
    path = write(tmp_path, {"schema": SCHEMA, "version": version, "results": []})
    with pytest.raises(ValueError) as e:
        ResultSet.load(path)
    assert str(e.value) == (
        f"{path}: results schema version {version!r} is not one this pagezero understands "
        f"(1..{SCHEMA_VERSION})"
    )


@pytest.mark.parametrize("version", [1, SCHEMA_VERSION])
def test_the_first_and_last_versions_load(tmp_path, version):
    entry = result().to_dict()
    path = write(tmp_path, {"schema": SCHEMA, "version": version, "results": [entry]})
    [back] = ResultSet.load(path)
    assert back == result()


def test_another_schema_is_not_a_results_file(tmp_path):
    path = write(tmp_path, {"schema": "other", "version": 1, "results": []})
    with pytest.raises(ValueError) as e:
        ResultSet.load(path)
    assert str(e.value) == f"{path}: not a pagezero results file"


def test_a_bad_result_is_named_by_its_place(tmp_path):
    good = result().to_dict()
    path = write(
        tmp_path,
        {"schema": SCHEMA, "version": 3, "results": [good, dict(good, clock="sundial")]},
    )
    with pytest.raises(ValueError) as e:
        ResultSet.load(path)
    assert str(e.value) == f"{path}: result 2: unknown clock 'sundial'"


def test_a_file_without_a_top_machine_keeps_each_results(tmp_path):
    entry = result(machine={"cpu_model": "own"}).to_dict()
    path = write(tmp_path, {"schema": SCHEMA, "version": 1, "results": [entry]})
    rs = ResultSet.load(path)
    assert dict(rs.results[0].machine) == {"cpu_model": "own"}
    assert rs.build is None
    del entry["machine"]
    top = write(tmp_path, {"schema": SCHEMA, "version": 2, "machine": MACHINE, "results": [entry],
                           "pagezero": "0.9", "interrupted": "SIGINT"})  # fmt: skip
    rs = ResultSet.load(top)
    assert dict(rs.results[0].machine) == MACHINE
    assert (dict(rs.build), rs.interrupted) == ({"pagezero": "0.9"}, "SIGINT")


def test_one_run_per_result_in_full():
    with pytest.raises(ValueError) as e:
        ResultSet([result(), result()], [{}])
    assert str(e.value) == "one run description per result is needed"


def test_a_set_keeps_the_build_it_was_loaded_with(tmp_path):
    rs = ResultSet([result()], build={"pagezero": "0.1", "build": None})
    rs.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["pagezero"], doc["build"]) == ("0.1", None)


def test_lost_workers_load_back(tmp_path):
    lost = [{"process": 3, "repetitions": 2, "reason": "killed"}]
    ResultSet([result()], lost=lost).save(tmp_path / "l.json")
    assert [dict(x) for x in ResultSet.load(tmp_path / "l.json").lost] == lost


class FakePandas:
    """Stands for pandas: records what DataFrame was given."""

    @staticmethod
    def DataFrame(table):  # noqa: N802 (pandas' name)
        return ("frame", table)


def test_to_pandas_hands_the_table_to_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", FakePandas)
    rs = ResultSet([result()])
    kind, table = rs.to_pandas()
    assert kind == "frame" and table.tolist() == rs.table().tolist()


def test_to_pandas_without_pandas_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError) as e:
        ResultSet([result()]).to_pandas()
    assert str(e.value) == "to_pandas() needs pandas: pip install pandas"
