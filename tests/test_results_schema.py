"""Saved results across schema versions: files written by older pagezero
(literal fixtures under tests/data/, not made by today's to_dict()) still
load, results are extended one way (a class registered by benchmark name),
and version 3 files say which pagezero and which build made them, and which
signal stopped a run."""

import json
import os

import pytest

import pagezero
from pagezero import _core
from pagezero.measure.policy import BatchResult, FolioResult
from pagezero.results import result
from pagezero.results.resultset import SCHEMA_VERSION, Result, ResultSet, result_type
from pagezero.system.machine import build_info

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    return ResultSet.load(os.path.join(DATA, name))


def test_version_1_file_loads():
    rs = load("results_v1.json")
    assert [type(r) for r in rs] == [Result, Result]
    memset, memcpy = rs
    assert memset.label() == "memset x86-64-stosb chunk=0 page=4KB size=1GB thp=false value=0"
    assert memcpy.clock_hz == 2.4e9 and memcpy.samples == (900, 880)
    assert dict(rs.machine) == {"cpu_model": "Old CPU", "kernel": "6.1.0"}
    assert rs.interrupted is None and rs.build is None
    assert all(r.interrupted is None for r in rs)


def test_version_2_file_loads_each_benchmark_as_its_class():
    rs = load("results_v2.json")
    memset, batch, folio = rs
    assert type(memset) is Result and memset.details["cold_method"] == "clflushopt"
    assert memset.params["threads"] == 2 and memset.details["cpus"] == (0, 1)
    assert type(batch) is BatchResult
    assert batch.worst_ms == 3.2 and batch.pass_worst_ns == (3100000, 3200000)
    assert type(folio) is FolioResult
    assert folio.touch_ns_per_line == 1250 / 192 and folio.backing == "4KB"
    assert folio.machine["cpu_model"] == "Other CPU"
    assert batch.machine["cpu_model"] == "Test CPU"
    assert [dict(r) for r in rs.runs] == [
        {"repetition": 1, "process": 0},
        {"repetition": 0, "process": 0},
        {"repetition": 0, "process": 1},
    ]
    # Version 2 said only whether a study was interrupted, not by what.
    assert rs.interrupted == "unknown signal"


@pytest.mark.parametrize("name", ["results_v1.json", "results_v2.json"])
def test_old_files_round_trip_through_version_3(name, tmp_path):
    rs = load(name)
    rs.save(str(tmp_path / "v3.json"))
    doc = json.loads((tmp_path / "v3.json").read_text())
    assert doc["version"] == SCHEMA_VERSION == 3
    assert all("type" not in e for e in doc["results"])
    back = ResultSet.load(str(tmp_path / "v3.json"))
    assert back.results == rs.results and back.runs == rs.runs
    assert back.interrupted == rs.interrupted


def test_version_3_keys_extra_fields_by_benchmark(tmp_path):
    rs = load("results_v2.json")
    rs.save(str(tmp_path / "v3.json"))
    entries = json.loads((tmp_path / "v3.json").read_text())["results"]
    assert "batch" in entries[1] and "folio" in entries[2]
    assert entries[1]["batch"]["batch_ns"]["typical_worst"] == 3150000


def test_files_record_pagezero_version_and_build(tmp_path):
    rs = load("results_v1.json")
    rs.save(str(tmp_path / "v3.json"))
    doc = json.loads((tmp_path / "v3.json").read_text())
    assert doc["pagezero"] == pagezero.__version__
    build = getattr(_core, "BUILD", None)
    assert doc["build"] == (dict(build) if build else None)
    # A file read back keeps what made it, not what reads it.
    back = ResultSet.load(str(tmp_path / "v3.json"))
    assert back.build["pagezero"] == doc["pagezero"]


def test_build_info_reads_the_extension_build_when_it_has_one(monkeypatch):
    monkeypatch.setattr(_core, "BUILD", {"compiler": "cc 1.0", "flags": "-O2"}, raising=False)
    assert build_info()["build"] == {"compiler": "cc 1.0", "flags": "-O2"}
    monkeypatch.delattr(_core, "BUILD")
    assert build_info()["build"] is None


def make(interrupted=None):
    return Result(
        benchmark="memset",
        function="generic",
        params={"size": 4096},
        bytes_per_loop=4096,
        clock="ns",
        samples=[10, 11],
        interrupted=interrupted,
    )


def test_an_interrupted_result_says_by_which_signal(tmp_path):
    rs = ResultSet([make("SIGTERM"), make()], interrupted="SIGTERM")
    rs.save(str(tmp_path / "i.json"))
    back = ResultSet.load(str(tmp_path / "i.json"))
    assert back.interrupted == "SIGTERM"
    assert [r.interrupted for r in back] == ["SIGTERM", None]
    assert "interrupted" not in make().to_dict()


def test_results_extend_by_benchmark_name_not_class_name(monkeypatch):
    monkeypatch.setattr(result, "_RESULT_TYPES", dict(result._RESULT_TYPES))

    @result_type("test-bench")
    class Renamed(Result):
        pass

    d = make().to_dict()
    d["benchmark"] = "test-bench"
    d["test-bench"] = {}
    assert type(Result.from_dict(d)) is Renamed
    # A class name in a file decides nothing.
    d = dict(make().to_dict(), type="BatchResult")
    assert type(Result.from_dict(d)) is Result


def test_a_registered_result_without_its_fields_is_a_clear_error():
    with open(os.path.join(DATA, "results_v2.json")) as f:
        d = json.load(f)["results"][1]
    del d["batch"]
    with pytest.raises(ValueError, match="not a pagezero result"):
        Result.from_dict(d)
