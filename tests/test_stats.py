"""Statistics against known values; the comparison of runs is tests/test_compare_runs.py's."""

import math
import statistics

import pytest

from pagezero.results.points import is_rate, median_interval, relative_spread, spread, summarize

# summarize --------------------------------------------------------------------


def test_summarize_known_values():
    s = summarize([1, 2, 3, 4])
    assert s["n"] == 4
    assert s["mean"] == pytest.approx(2.5)
    assert s["stdev"] == pytest.approx(1.2909944, rel=1e-7)
    assert s["stdev_pct"] == pytest.approx(100 * 1.2909944 / 2.5, rel=1e-7)
    assert s["median"] == pytest.approx(2.5)
    assert (s["min"], s["max"]) == (1, 4)
    # t(0.975, 3) = 3.182446; half-width t * s / sqrt(4) = 2.0543
    half = 3.1824463 * 1.2909944 / 2
    assert half == pytest.approx(2.0543, abs=1e-4)
    assert s["ci_low"] == pytest.approx(2.5 - half, rel=1e-6)
    assert s["ci_high"] == pytest.approx(2.5 + half, rel=1e-6)
    assert s["confidence"] == 0.95


def test_summarize_other_confidence():
    # t(0.95, 3) = 2.353363
    s = summarize([1, 2, 3, 4], confidence=0.90)
    assert s["ci_high"] - s["mean"] == pytest.approx(2.353363 * 1.2909944 / 2, rel=1e-6)


def test_summarize_odd_count_median():
    s = summarize([5, 1, 3])
    assert s["median"] == 3
    assert s["mean"] == pytest.approx(3)


def test_summarize_one_sample():
    s = summarize([7.5])
    assert s["n"] == 1
    assert s["mean"] == s["median"] == s["min"] == s["max"] == 7.5
    assert s["stdev"] == 0 and s["stdev_pct"] == 0
    assert s["ci_low"] == s["ci_high"] == 7.5


@pytest.mark.parametrize("values", [[], ()])
def test_summarize_empty(values):
    with pytest.raises(ValueError, match="no samples to summarize"):
        summarize(values)


# find_knee and best_kernels: tests/test_advise.py, their first user.


@pytest.mark.parametrize("values", [[1.0, 3.0], [2.0, 4.0, 6.0, 8.0], [7.0], [0.0, 0.0]])
def test_spread_is_the_mean_and_the_sample_stdev_in_percent_of_it(values):
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    assert spread(values) == pytest.approx((mean, 100 * sd / mean if mean else 0.0))


def test_spread_of_nothing_is_none():
    assert spread([]) == (None, None)


# Rates averaged as time, worked by hand ----------------------------------------------


def test_a_rates_summary_is_taken_over_the_times():
    # 1, 2 and 3 GB/s are 1, 1/2 and 1/3 ns a byte: mean 11/18 ns, so the mean rate is
    # 18/11 GB/s; the times' sample stdev is 0.346944 ns (56.773% of their mean).
    s = summarize([1e9, 2e9, 3e9], unit="bytes/sec")
    assert s["mean"] == pytest.approx(18 / 11 * 1e9)
    assert s["mean"] == pytest.approx(statistics.harmonic_mean([1e9, 2e9, 3e9]))
    assert s["mean_kind"] == "harmonic"
    assert s["stdev_pct"] == pytest.approx(56.773, abs=1e-3)
    assert s["stdev"] == pytest.approx(18 / 11 * 1e9 * 0.56773, rel=1e-5)
    assert (s["median"], s["min"], s["max"]) == (2e9, 1e9, 3e9)
    # t(0.975, 2) = 4.302653: the times' interval reaches below 0, so no upper rate;
    # the lower rate is 1 over the interval's longest time, 11/18 + 4.302653 * 0.346944
    # / sqrt(3) ns a byte.
    assert s["ci_high"] == math.inf
    assert s["ci_low"] == pytest.approx(1e9 / (11 / 18 + 4.302653 * 0.346944 / 3**0.5), rel=1e-5)


def test_a_narrow_rates_interval_has_both_ends():
    # 9.9 and 10.1 GB/s: times 1/9.9 and 1/10.1 ns a byte, mean 0.1000100, stdev
    # 0.00141435; t(0.975, 1) = 12.706205.
    s = summarize([9.9e9, 10.1e9], unit="bytes/sec")
    half = 12.706205 * 0.00141435 / 2**0.5
    assert s["ci_low"] == pytest.approx(1e9 / (0.1000100 + half), rel=1e-5)
    assert s["ci_high"] == pytest.approx(1e9 / (0.1000100 - half), rel=1e-5)


def test_costs_and_unitless_values_are_averaged_as_they_are():
    for unit in ("cycles/byte", None):
        s = summarize([1.0, 2.0, 3.0], unit=unit)
        assert (s["mean"], s["mean_kind"]) == (2.0, "arithmetic")
        assert s["stdev_pct"] == pytest.approx(50.0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_summary_of_values_that_are_not_finite_is_refused(bad):
    with pytest.raises(ValueError, match="^samples must be finite numbers$"):
        summarize([1.0, bad])


@pytest.mark.parametrize("bad", [0.0, -1e9])
def test_a_rate_that_is_not_positive_cannot_be_averaged_as_time(bad):
    with pytest.raises(ValueError, match="^a rate must be positive to average it as time$"):
        summarize([1e9, bad], unit="bytes/sec")
    with pytest.raises(ValueError, match="^a rate must be positive"):
        relative_spread([1e9, bad], unit="bytes/sec")
    assert summarize([1.0, bad], unit="cycles/byte")["n"] == 2


@pytest.mark.parametrize(
    "values, unit, pct",
    [
        ([1e9, 2e9, 3e9], "bytes/sec", 56.773),  # of the times, as above
        ([1.0, 2.0, 3.0], "cycles/byte", 50.0),
        ([1.0, 2.0, 3.0], None, 50.0),
        ([5.0], None, 0.0),
        ([0.0, 0.0], None, 0.0),
        ([], None, 0.0),
    ],
)
def test_relative_spread(values, unit, pct):
    assert relative_spread(values, unit) == pytest.approx(pct, abs=1e-3)


def test_only_bytes_per_sec_is_a_rate():
    assert is_rate("bytes/sec")
    for unit in ("cycles/byte", "ns/line", None):
        assert not is_rate(unit)


def test_messages_in_full():
    with pytest.raises(ValueError, match="^no samples for an interval of the median$"):
        median_interval([])
    with pytest.raises(ValueError, match="^no samples to summarize$"):
        summarize([])


def test_a_mean_of_zero_has_no_relative_spread():
    assert summarize([0.0, 0.0], unit="cycles/byte")["stdev_pct"] == 0.0


def test_the_medians_interval_follows_the_confidence_asked():
    # Ten values: (x4, x7) covers the median with 1 - 2 P(B <= 3) = 0.65625 (B ~
    # Binomial(10, 1/2)), enough for 0.5; (x2, x9) 0.978515625 for 0.95.
    s = summarize([float(v) for v in range(1, 11)], confidence=0.5)
    assert (s["median_ci_low"], s["median_ci_high"], s["median_ci_level"]) == (4.0, 7.0, 0.65625)
    # A level met exactly counts: four values, (x2, x3) covers with 0.375.
    assert median_interval([1, 2, 3, 4], 0.375) == (2.0, 3.0, 0.375)
