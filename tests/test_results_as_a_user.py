"""The result a user holds, used as a user would: a ResultSet made by hand or loaded from a
golden file gives its rate, its runs by index, a repr of one line and a summary."""

import os
import statistics

import pytest

import pagezero
from pagezero import Result, ResultSet
from pagezero.measure.policy import BatchResult

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "results_v3.json")
GB = 1 << 30
MACHINE = {"cpu_model": "Made-up CPU 9000", "hostname": "bench-host", "caches": []}


def run(samples, clock="ns", size=GB):
    """One memset of `size` bytes a loop, as a run in a fresh process gives it."""
    params = {"size": size, "page": "4KB", "loops": len(samples)}
    return Result("memset", "x86-64-stosb", params, size, clock, samples, machine=MACHINE)


def three_runs():
    samples = ([17_000_000, 16_000_000, 18_000_000], [16_500_000, 16_400_000], [16_200_000] * 2)
    return ResultSet([run(s) for s in samples], [{"repetition": 0, "process": i} for i in range(3)])


def test_the_rate_is_the_median_of_the_runs_medians():
    r = three_runs()
    medians = [statistics.median(GB / (s / 1e9) for s in result.samples) for result in r]
    assert r.bytes_per_sec == pytest.approx(statistics.median(medians))


def test_runs_by_index_and_iteration():
    r = three_runs()
    assert len(r) == 3
    assert isinstance(r[0], Result) and r[0].samples == (17_000_000, 16_000_000, 18_000_000)
    assert r[-1] is list(r)[2]
    tail = r[1:]
    assert isinstance(tail, ResultSet) and list(tail) == list(r)[1:]
    assert [run["process"] for run in tail.runs] == [1, 2]


def test_the_repr_is_one_line_with_the_rate_in_gb_per_s_of_10_to_the_9():
    r = three_runs()
    assert (
        repr(r) == f"<ResultSet memset x86-64-stosb 1GB: {r.bytes_per_sec / 1e9:.2f} GB/s, 3 runs>"
    )
    assert (
        repr(r[0])
        == f"<Result memset x86-64-stosb 1GB: {r[0].bytes_per_sec / 1e9:.2f} GB/s, 3 loops>"
    )


def test_machine_facts_are_behind_an_attribute_not_in_the_repr():
    r = three_runs()
    assert r.machine["cpu_model"] == r[0].machine["cpu_model"] == "Made-up CPU 9000"
    for text in (repr(r), repr(r[0]), str(r[0]), r.summary()):
        assert "Made-up CPU" not in text and "bench-host" not in text


def test_the_summary_gives_the_point_its_rate_the_spread_between_runs_and_how_many():
    r = three_runs()
    (line,) = r.summary().splitlines()
    assert line.startswith("memset x86-64-stosb size=1GB page=4KB ")
    assert f" {r.bytes_per_sec / 1e9:.2f} GB/s +- " in line
    assert line.endswith("% between runs, 3 runs")


def test_one_run_gives_the_spread_between_its_loops():
    r = ResultSet([run([1_000_000, 1_100_000])])
    assert r.summary().endswith("% between loops, 1 run")
    assert repr(r).endswith(" GB/s, 1 run>")


def test_a_cycles_run_has_no_bytes_per_sec_and_says_cycles_per_byte():
    r = ResultSet([run([4096, 4096], clock="cycles", size=4096)])
    assert r.bytes_per_sec is None
    assert repr(r) == "<ResultSet memset x86-64-stosb 4KB: 1 cycles/byte, 1 run>"
    assert repr(r[0]) == "<Result memset x86-64-stosb 4KB: 1 cycles/byte, 2 loops>"


def test_a_golden_file_loads_to_a_set_a_user_can_read():
    r = ResultSet.load(GOLDEN)
    assert repr(r) == "<ResultSet 5 points, 5 results, 4 runs, interrupted by SIGINT>"
    with pytest.raises(ValueError, match="one point; this set holds 5"):
        _ = r.bytes_per_sec
    memset = r[0]
    assert r[:1].bytes_per_sec == pytest.approx(statistics.median(memset.rates))
    assert repr(memset) == "<Result memset x86-64-stosb 64KB: 16.18 GB/s, 2 loops>"
    lines = r.summary().splitlines()
    assert len(lines) == 6 and lines[-1] == "interrupted by SIGINT"
    assert lines[0].startswith("memset x86-64-stosb size=64KB page=4KB ")
    assert " 16.18 GB/s +- " in lines[0]
    assert [line.split()[0] for line in lines[:5]] == ["memset", "batch", "folio", "mmap", "memset"]


def test_every_result_of_a_golden_file_has_a_short_repr_without_its_machine():
    for result in ResultSet.load(GOLDEN):
        text = repr(result)
        assert "\n" not in text and len(text) < 100
        assert "Test CPU" not in text and "Other CPU" not in text and "machine" not in text
    batch = ResultSet.load(GOLDEN)[1]
    assert isinstance(batch, BatchResult) and repr(batch).startswith("<BatchResult batch ")


def test_a_measurement_of_several_runs():
    r = pagezero.memset(size="64KB", loops=2, runs=2)
    assert r.bytes_per_sec > 0
    assert len(r) == 2 and all(isinstance(x, Result) for x in r)
    assert repr(r).startswith("<ResultSet memset ") and repr(r).endswith(" 2 runs>")
    assert r.summary().endswith("between runs, 2 runs")
