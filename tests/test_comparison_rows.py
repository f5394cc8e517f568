"""compare()'s rows from result sets whose figures are worked out by hand: one loop of
1000 bytes in 1000 ns is 1e9 bytes/sec, so each run's rate is known exactly and every
field of a row (centre, spread between runs, pooled loops, change) can be checked."""

import pytest

from pagezero.analysis.compare import compare
from pagezero.analysis.significance import METHOD
from pagezero.results.resultset import Result, ResultSet


def side(runs, function="k"):
    """One point: per run (process) its loops' samples, in ns for 1000 bytes."""
    results, described = [], []
    for process, loops in enumerate(runs):
        for repetition, ns in enumerate(loops):
            results.append(
                Result(
                    benchmark="memset",
                    function=function,
                    params={"size": 1000, "loops": 1},
                    bytes_per_loop=1000,
                    clock="ns",
                    samples=[ns],
                )
            )
            described.append({"repetition": repetition, "process": process})
    return ResultSet(results, described)


# Base: runs at 1, 2 and 1 GB/s (the first run twice, its repetitions pooled);
# new: 2, 2 and 2.5 GB/s.
BASE = side([[1000, 1000], [500], [1000]])
NEW = side([[500], [500], [400]])


def test_a_row_by_hand():
    [row] = compare(BASE, NEW)
    assert row["label"] == "memset k size=1000B"
    assert (row["unit"], row["study"]) == ("bytes/sec", None)
    b = row["base"]
    assert (b["center"], b["runs"], b["spread_of"], b["n"]) == (1e9, 3, "runs", 4)
    # Between runs, as times per byte 1, 0.5 and 1 ns: stdev 0.288675 of mean 0.83333.
    assert b["spread_pct"] == pytest.approx(34.641, abs=1e-3)
    # All four loops as time: 4000 bytes in 3500 ns.
    assert b["mean"] == pytest.approx(4000 / 3500e-9)
    [c] = row["changes"]
    assert (c["center"], c["n"], c["runs"], c["method"]) == (2e9, 3, [3, 3], METHOD)
    assert c["change_pct"] == pytest.approx(100.0)
    assert c["mean"] == pytest.approx(3000 / 1400e-9)  # 3000 bytes in 1400 ns
    # Times 0.5, 0.5 and 0.4 ns a byte: stdev 0.057735 of mean 0.46667.
    assert c["spread_pct"] == pytest.approx(12.372, abs=1e-3)


def test_one_run_spreads_over_its_loops():
    [row] = compare(side([[1000, 500]]), NEW)
    assert (row["base"]["runs"], row["base"]["spread_of"]) == (1, "loops")
    assert row["base"]["center"] == pytest.approx(1.5e9)


def test_a_study_is_named_when_all_of_a_points_results_come_from_one():
    [row] = compare(BASE, NEW, sources=["a.json"] * 4)
    assert row["study"] == "a.json"
    [row] = compare(BASE, NEW, sources=["a.json", "b.json", "a.json", "a.json"])
    assert row["study"] is None


def test_a_point_the_other_lacks_and_rows_in_the_bases_order():
    base = ResultSet([*side([[1000]], "z"), *side([[1000]], "a")], [{}, {}])
    rows = compare(base, side([[500]], "a"))
    assert [r["label"].split()[1] for r in rows] == ["z", "a"]
    assert rows[0]["changes"] == [None] and rows[1]["changes"][0]["change_pct"] == 100.0


def test_a_set_sharing_no_point_is_named():
    with pytest.raises(ValueError) as e:
        compare(BASE, ResultSet([]))
    assert str(e.value) == (
        "nothing to compare: the base measured memset, the other nothing, with no point in common"
    )


def test_sets_with_nothing_in_common_say_what_each_measured():
    both = ResultSet([*BASE, Result(**(vars(BASE.results[0]) | {"benchmark": "memcpy"}))])
    with pytest.raises(ValueError) as e:
        compare(ResultSet([]), both)
    assert str(e.value) == (
        "nothing to compare: the base measured nothing, the other memcpy, memset, "
        "with no point in common"
    )
    with pytest.raises(ValueError) as e:
        compare(both, ResultSet([]))
    assert str(e.value) == (
        "nothing to compare: the base measured memcpy, memset, the other nothing, "
        "with no point in common"
    )


def test_compare_needs_another_set():
    with pytest.raises(ValueError) as e:
        compare(BASE)
    assert str(e.value) == "compare needs a base and at least one other result set"
