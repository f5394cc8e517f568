"""Frozen results files, one per schema version, under tests/data/: written by hand
(v1, v2) or saved once by pagezero 0.1.0 (v3: a real faults() run and a real tsc
memset beside v2's results) and never regenerated. Each loads to the values
written here, and a v3 file saves back to the same JSON: a change to what a file
holds or how it is read fails here, not in a user's archive of old runs."""

import json
import os

import pytest

from pagezero.measure.policy import BatchResult, FolioResult
from pagezero.results.resultset import SCHEMA_VERSION, Result, ResultSet

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
GOLDEN = {1: "results_v1.json", 2: "results_v2.json", 3: "results_v3.json"}


def golden(version):
    return os.path.join(DATA, GOLDEN[version])


def test_there_is_a_frozen_file_for_every_schema_version():
    assert sorted(GOLDEN) == list(range(1, SCHEMA_VERSION + 1))
    for version, name in GOLDEN.items():
        with open(os.path.join(DATA, name)) as f:
            assert json.load(f)["version"] == version


def test_version_1_keeps_each_results_machine_and_gives_default_runs():
    rs = ResultSet.load(golden(1))
    assert [(r.benchmark, r.function, r.samples) for r in rs] == [
        ("memset", "x86-64-stosb", (52000000, 51000000, 53000000)),
        ("memcpy", "default", (900, 880)),
    ]
    assert dict(rs.machine) == {"cpu_model": "Old CPU", "kernel": "6.1.0"}
    assert [dict(run) for run in rs.runs] == [{"repetition": 0, "process": 0}] * 2
    assert not rs.interrupted
    stosb, copy = rs
    assert stosb.bytes_per_sec == pytest.approx(3 * 2**30 / 0.156)
    assert copy.cycles_per_byte == pytest.approx(1780 / 8192)


def test_version_3_loads_to_the_values_it_was_saved_with():
    rs = ResultSet.load(golden(3))
    assert [type(r) for r in rs] == [Result, BatchResult, FolioResult, Result, Result]
    assert rs.interrupted == "SIGINT"
    assert dict(rs.machine) == {"cpu_model": "Test CPU", "kernel": "6.12.0", "cpus_online": 4}
    memset, batch, folio, faults, tsc = rs
    assert memset.details["thread_bytes"] == (32768, 32768)
    assert batch.pass_worst_ns == (3100000, 3200000) and batch.worst_ms == 3.2
    assert folio.machine["cpu_model"] == "Other CPU" and folio.backing == "4KB"
    assert faults.benchmark == "mmap" and faults.samples == (3041040, 3163309)
    assert [p["kernel_page"] for p in faults.details["pages"]] == [4096, 4096]
    assert faults.details["latency"] is None
    assert tsc.clock == "tsc" and tsc.clock_hz == 2445334660.007979
    assert tsc.samples == (4655, 4312)
    assert tsc.cycles_per_byte == pytest.approx(8967 / 131072)
    assert [dict(run)["process"] for run in rs.runs] == [0, 0, 1, 2, 3]


def test_version_3_saves_back_to_the_same_json(tmp_path):
    with open(golden(3)) as f:
        frozen = json.load(f)
    ResultSet.load(golden(3)).save(str(tmp_path / "again.json"))
    with open(tmp_path / "again.json") as f:
        again = json.load(f)
    # Which pagezero and which build wrote a file are this build's, not the file's.
    for key in ("pagezero", "build"):
        frozen.pop(key)
        again.pop(key)
    assert again == frozen


@pytest.mark.parametrize("version", [1, 2])
def test_older_versions_save_as_the_current_one_and_load_back_equal(version, tmp_path):
    rs = ResultSet.load(golden(version))
    rs.save(str(tmp_path / "now.json"))
    back = ResultSet.load(str(tmp_path / "now.json"))
    assert back.results == rs.results and back.runs == rs.runs
    with open(tmp_path / "now.json") as f:
        assert json.load(f)["version"] == SCHEMA_VERSION
