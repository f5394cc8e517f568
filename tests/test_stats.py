"""Statistics against known values, and the comparison of two sets of samples
on synthetic data drawn from a seeded random.Random (so every run sees the
same numbers)."""

import math
import random
import statistics

import pytest

from pagezero.stats import (
    IMPROVEMENT,
    NOT_SIGNIFICANT,
    REGRESSION,
    compare_samples,
    higher_is_better,
    min_p_value,
    spread,
    summarize,
)

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
