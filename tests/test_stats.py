"""Statistics against known values, and the comparison of two sets of samples
on synthetic data drawn from a seeded random.Random (so every run sees the
same numbers)."""

import math
import random
import statistics

import pytest

from pagezero.analysis.stats import (
    IMPROVEMENT,
    NOT_SIGNIFICANT,
    REGRESSION,
    compare_samples,
    higher_is_better,
    min_p_value,
    spread,
)
from pagezero.results.summary import is_rate, median_interval, relative_spread, summarize

RATE = 10e9  # bytes/sec


def samples(n, mean=RATE, noise=0.001, seed=1):
    """n values around `mean` with a relative gaussian noise of `noise`."""
    rng = random.Random(seed)
    return [mean * (1 + rng.gauss(0, noise)) for _ in range(n)]


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


# min_p_value ----------------------------------------------------------------


@pytest.mark.parametrize(
    "n1, n2, p",
    [
        (3, 3, 0.1),
        (5, 5, 2 / 252),
        (8, 20, 2 / math.comb(28, 8)),
        (1, 1, 1.0),
        (0, 5, 1.0),
    ],
)
def test_min_p_value(n1, n2, p):
    assert min_p_value(n1, n2) == pytest.approx(p)


# compare_samples --------------------------------------------------------------


@pytest.mark.parametrize("factor, marker", [(0.90, REGRESSION), (1.10, IMPROVEMENT)])
def test_clear_change_is_flagged(factor, marker):
    base = samples(15, seed=1)
    new = samples(15, mean=RATE * factor, seed=2)
    c = compare_samples(base, new, unit="bytes/sec")
    assert c["marker"] == marker
    assert c["change_pct"] == pytest.approx(100 * (factor - 1), abs=0.2)
    assert c["p_value"] < 0.01
    assert c["note"] is None


def test_noise_beyond_the_threshold_is_not_flagged():
    # Two draws of one distribution whose noise (8%) makes their means differ by
    # more than the 2% threshold: only the significance test stands between them
    # and a "(R)" or "(I)", and it must answer "~" every time.
    decided = 0
    for seed in range(40):
        base = samples(8, noise=0.08, seed=1000 + 2 * seed)
        new = samples(8, noise=0.08, seed=1001 + 2 * seed)
        c = compare_samples(base, new)
        if abs(c["change_pct"]) > 2:
            assert c["marker"] == NOT_SIGNIFICANT, (seed, c)
            assert c["p_value"] >= 0.01
            decided += 1
        else:
            assert c["marker"] == ""
    assert decided >= 10  # the test did decide something, many times


def test_identical_samples_are_not_flagged():
    c = compare_samples([RATE] * 5, [RATE] * 5)
    assert c["marker"] == ""
    assert c["p_value"] == 1.0
    assert c["change_pct"] == 0


def test_two_constant_sides_apart_are_tested():
    # A coarse clock can read the same every loop: each side constant, the two apart.
    # Only a set of samples all equal is "nothing to test"; these are all above.
    c = compare_samples([RATE] * 8, [RATE * 1.1] * 8)
    assert c["p_value"] < 0.01
    assert c["marker"] == IMPROVEMENT


def test_too_few_samples_for_alpha():
    base = samples(3, seed=1)
    new = samples(3, mean=RATE * 0.8, seed=2)
    c = compare_samples(base, new, alpha=0.01)
    assert c["marker"] == NOT_SIGNIFICANT
    assert c["p_value"] >= 0.01
    assert c["note"] and "3 vs 3" in c["note"] and "0.01" in c["note"]


def test_reachable_alpha_has_no_note():
    assert compare_samples(samples(5, seed=1), samples(5, seed=2), alpha=0.05)["note"] is None


@pytest.mark.parametrize("factor, marker", [(0.90, REGRESSION), (1.0, "")])
def test_unequal_counts(factor, marker):
    base = samples(8, seed=1)
    new = samples(20, mean=RATE * factor, seed=2)
    c = compare_samples(base, new)
    assert c["marker"] == marker
    assert c["note"] is None
    # The other way round too: sample counts never decide a result.
    assert compare_samples(new, base)["marker"] == {REGRESSION: IMPROVEMENT, "": ""}[marker]


@pytest.mark.parametrize("factor, marker", [(1.10, REGRESSION), (0.90, IMPROVEMENT)])
def test_lower_is_better_unit(factor, marker):
    base = samples(15, mean=2.0, seed=1)
    new = samples(15, mean=2.0 * factor, seed=2)
    assert compare_samples(base, new, unit="cycles/byte")["marker"] == marker


def test_units():
    assert higher_is_better("bytes/sec")
    assert not higher_is_better("cycles/byte")


def test_small_significant_change_is_not_flagged():
    base = samples(15, noise=0.0001, seed=1)
    new = samples(15, mean=RATE * 0.99, noise=0.0001, seed=2)
    c = compare_samples(base, new)  # 1% < the 2% threshold
    assert c["p_value"] < 0.01
    assert c["marker"] == ""
    # ... and flagged once the threshold is below the change.
    assert compare_samples(base, new, threshold=0.005)["marker"] == REGRESSION


@pytest.mark.parametrize(
    "base, new, kw",
    [
        ([], [1.0], {}),
        ([1.0], [], {}),
        ([1.0], [1.0], {"alpha": 0}),
        ([1.0], [1.0], {"alpha": 1}),
        ([1.0], [1.0], {"threshold": -0.1}),
    ],
)
def test_compare_samples_bad_input(base, new, kw):
    words = "alpha must be in \\(0, 1\\) and threshold non-negative" if kw else "both sides"
    with pytest.raises(ValueError, match=words):
        compare_samples(base, new, **kw)


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


def test_only_bytes_per_sec_is_a_rate_and_better_higher():
    assert is_rate("bytes/sec") and higher_is_better("bytes/sec")
    for unit in ("cycles/byte", "ns/line", None):
        assert not is_rate(unit) and not higher_is_better(unit)


# compare_samples at its edges ----------------------------------------------------------


def test_three_against_three_all_apart_is_p_one_tenth():
    # Every new value above every base value: 2 of the C(6, 3) = 20 orders are as
    # extreme, two-sided p = 0.1. The change is of the means, 2 to 5: +150%.
    c = compare_samples([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], alpha=0.2)
    assert c["p_value"] == pytest.approx(0.1)
    assert c["change_pct"] == pytest.approx(150.0)
    assert (c["marker"], c["note"]) == ("(I)", None)
    assert (
        compare_samples([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], "cycles/byte", alpha=0.2)["marker"]
        == "(R)"
    )


def test_a_level_the_counts_cannot_reach_is_noted():
    # 3 against 3 cannot go below p = 0.1: at alpha 0.1 (and below) the note says so.
    c = compare_samples([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], alpha=0.1)
    assert c["note"] == "3 vs 3 samples cannot reach p < 0.1 (smallest possible p is 0.1)"
    assert c["marker"] == "~"
    assert compare_samples([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], alpha=0.11)["note"] is None


def test_a_change_of_exactly_the_threshold_is_not_marked():
    base, new = [10.0, 10.1, 9.9] * 3, [11.0, 11.11, 10.89] * 3  # means 10 and 11
    assert compare_samples(base, new, threshold=0.1)["marker"] == ""
    assert compare_samples(base, new, threshold=0.0999)["marker"] == "(I)"
    assert compare_samples(base, new, threshold=0.0)["marker"] == "(I)"


def test_a_base_mean_of_zero_is_an_infinite_change():
    c = compare_samples([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], unit="cycles/byte", alpha=0.2)
    assert c["change_pct"] == math.inf and c["marker"] == "(R)"


def test_messages_in_full():
    with pytest.raises(ValueError, match="^no samples for an interval of the median$"):
        median_interval([])
    with pytest.raises(ValueError, match="^no samples to summarize$"):
        summarize([])
    with pytest.raises(ValueError, match="^both sides need at least one sample$"):
        compare_samples([], [1.0])
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\) and threshold non-negative$"):
        compare_samples([1.0], [1.0], alpha=0)


def test_min_p_value_with_one_value_a_side():
    # 2 / C(4, 1): one value against three.
    assert min_p_value(1, 3) == min_p_value(3, 1) == 0.5


def test_a_mean_of_zero_has_no_relative_spread():
    assert summarize([0.0, 0.0], unit="cycles/byte")["stdev_pct"] == 0.0


def test_the_medians_interval_follows_the_confidence_asked():
    # Ten values: (x4, x7) covers the median with 1 - 2 P(B <= 3) = 0.65625 (B ~
    # Binomial(10, 1/2)), enough for 0.5; (x2, x9) 0.978515625 for 0.95.
    s = summarize([float(v) for v in range(1, 11)], confidence=0.5)
    assert (s["median_ci_low"], s["median_ci_high"], s["median_ci_level"]) == (4.0, 7.0, 0.65625)
    # A level met exactly counts: four values, (x2, x3) covers with 0.375.
    assert median_interval([1, 2, 3, 4], 0.375) == (2.0, 3.0, 0.375)
