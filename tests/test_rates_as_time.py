"""Rates aggregate as time does; loops shorter than a clock tick; the median's
own interval in `sweep`'s lines (results/points.py, cli/analysis.py)."""

import re
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagezero.cli.analysis import _print_stats
from pagezero.results.points import median_interval, point_summary, relative_spread, summarize
from pagezero.results.resultset import Result, ResultSet

SIZE = 1 << 20


def run(samples, clock="ns"):
    return Result(
        benchmark="memset",
        function="k",
        params={"size": SIZE, "loops": len(samples)},
        bytes_per_loop=SIZE,
        clock=clock,
        samples=samples,
    )


def test_a_result_states_total_bytes_over_total_time():
    # The run prints bytes_per_sec (total over total); its stats must agree.
    r = run([100_000, 200_000, 100_000, 400_000])
    s = r.stats()
    assert s["mean"] == pytest.approx(r.bytes_per_sec)
    assert s["mean_kind"] == "harmonic"
    assert s["mean"] < statistics.fmean(r.rates)  # the arithmetic mean says more


def test_pooled_runs_of_unequal_loops_weigh_by_time():
    # Three slow loops in one run, twenty fast ones in another: the point's
    # mean is its total bytes over its total time, not the loops' average rate.
    a, b = run([300_000] * 3), run([100_000] * 20)
    (row,) = ResultSet([a, b]).stats()
    total = SIZE * 23 / ((3 * 300_000 + 20 * 100_000) / 1e9)
    assert row["mean"] == pytest.approx(total)
    assert row["mean_kind"] == "harmonic"


def test_costs_keep_the_arithmetic_mean():
    s = summarize([1.0, 3.0], unit="cycles/byte")
    assert (s["mean"], s["mean_kind"]) == (2.0, "arithmetic")
    assert run([3000, 1000], clock="cycles").stats()["mean"] == pytest.approx(2000 / SIZE)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=40))
def test_rate_mean_is_total_over_total_and_inside_its_interval(samples):
    r = run(samples)
    s = r.stats()
    assert s["mean"] == pytest.approx(r.bytes_per_sec, rel=1e-9)
    assert s["ci_low"] <= s["mean"] * (1 + 1e-9) and s["mean"] <= s["ci_high"] * (1 + 1e-9)
    assert s["min"] <= s["median"] <= s["max"]
    assert s["median_ci_low"] <= s["median"] <= s["median_ci_high"]


def test_zero_ticks_are_refused_with_the_reason():
    # timeval counts whole microseconds: a small clear can take 0 of them.
    # Before, the rate was infinite and stats() died with AttributeError.
    with pytest.raises(
        ValueError, match=r"1 of 3 loops .* took 0 ticks.*one tick of the timeval clock"
    ):
        run([0, 1, 2], clock="timeval")
    with pytest.raises(ValueError, match="0 ticks"):
        Result.from_dict(run([5, 6]).to_dict() | {"samples": [0, 0]})


@pytest.mark.parametrize("n, level", [(1, 0.0), (2, 0.5), (5, 0.9375), (6, 0.96875)])
def test_median_interval_levels(n, level):
    low, high, got = median_interval(range(n))
    assert got == pytest.approx(level)
    assert (low, high) == (0, n - 1)


def test_median_interval_narrows_with_n():
    low, high, level = median_interval(range(100))
    assert level >= 0.95 and 0 < low < 49.5 < high < 99
    assert (low, high) == (39, 60)  # the sign test's ranks 40 and 61 of 100


def test_sweep_prints_an_interval_that_holds_its_median(capsys):
    # 15 fast loops, 5 slow: the mean's interval lies below the median.
    r = run([100_000] * 15 + [1_000_000] * 5)
    _print_stats(ResultSet([r]))
    line = capsys.readouterr().out.strip()
    m = re.search(r"median ([\d.]+) GB/s .*CI[^\d]*([\d.]+)\.\.([\d.]+)", line)
    assert m, line
    median, low, high = map(float, m.groups())
    assert low <= median <= high


def test_sweep_line_for_one_loop(capsys):
    _print_stats(ResultSet([run([100_000])]))
    assert "one loop: no interval" in capsys.readouterr().out


def test_spread_of_rates_is_the_spread_of_their_times():
    rates = [SIZE / 1e-4, SIZE / 3e-4]
    assert relative_spread(rates, "bytes/sec") == pytest.approx(
        100 * statistics.stdev([1e-4, 3e-4]) / 2e-4
    )
    one = point_summary([rates], "bytes/sec")
    assert one["spread_pct"] == pytest.approx(relative_spread(rates, "bytes/sec"))


def test_summarize_refuses_infinite_values():
    with pytest.raises(ValueError, match="finite"):
        summarize([1.0, float("inf")], unit="bytes/sec")


def test_a_thread_below_the_clock_is_refused():
    # Its rate over the run would be infinite: thread_spread() died on it.
    with pytest.raises(ValueError, match="a thread .* took 0 ticks in every loop"):
        Result(
            benchmark="memset",
            function="k",
            params={"size": SIZE},
            bytes_per_loop=SIZE,
            clock="timeval",
            samples=[3, 2],
            details={"thread_samples": [[3, 2], [0, 0]], "thread_bytes": [SIZE // 2] * 2},
        )


def test_a_slowdown_stays_a_slowdown():
    # Two very fast loops among slow ones: the arithmetic mean of the rates
    # rises while the time per byte grew by more than a quarter.
    base = summarize([1.0] * 10, unit="bytes/sec")
    new_rates = [10.0] * 2 + [1 / 1.4] * 18
    new = summarize(new_rates, unit="bytes/sec")
    assert statistics.fmean(new_rates) > base["mean"]  # what an average of rates says
    assert new["mean"] == pytest.approx(20 / (2 * 0.1 + 18 * 1.4))  # total over total
    assert new["mean"] < base["mean"]
