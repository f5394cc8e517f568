"""Statistics of samples, and whether a change between two sets of samples is real.

A change is flagged only when it is both larger than a threshold and
significant by a Mann-Whitney U test: noisy machines make small differences
common, and a difference is only interesting when it is too large to be
noise. Different sample counts are fine: the test handles them, and they
never count as significant by themselves.

Rates are summarised as the times they stand for (summarize): the mean of
bytes/sec is harmonic, total bytes over total time, and says so in
"mean_kind"; medians stay medians, with an interval of their own.
"""

import math
import statistics

__all__ = [
    "summarize",
    "median_interval",
    "relative_spread",
    "is_rate",
    "min_p_value",
    "compare_samples",
    "higher_is_better",
    "find_knee",
    "best_kernels",
    "REGRESSION",
    "IMPROVEMENT",
    "NOT_SIGNIFICANT",
]

REGRESSION = "(R)"
IMPROVEMENT = "(I)"
NOT_SIGNIFICANT = "~"

# Units where a larger number is better; every other unit (cycles/byte,
# ns/line, seconds) is a cost.
_HIGHER_IS_BETTER = ("bytes/sec",)
# Units that are an amount per time: averaged over the times (summarize).
_RATE_UNITS = ("bytes/sec",)


def higher_is_better(unit):
    return unit in _HIGHER_IS_BETTER


def is_rate(unit):
    """Whether values in `unit` are amounts per time (bytes/sec), whose mean
    must be taken over the times they stand for, not over the rates."""
    return unit in _RATE_UNITS


def _costs(values, unit):
    """Values as costs that add up as time does: a rate's reciprocal (time per
    byte), any other unit (cycles/byte, seconds) as it is."""
    if not is_rate(unit):
        return list(values)
    if any(v <= 0 for v in values):
        raise ValueError("a rate must be positive to average it as time")
    return [1.0 / v for v in values]


def relative_spread(values, unit=None):
    """Standard deviation in % of the mean, of the costs `values` stand for
    (for rates: of the times per byte, the spread a run's time has)."""
    costs = _costs([float(v) for v in values], unit)
    if len(costs) < 2:
        return 0.0
    mean = statistics.fmean(costs)
    return 100.0 * statistics.stdev(costs) / mean if mean else 0.0


def median_interval(values, confidence=0.95):
    """(low, high, level): the order statistics x(j) and x(n+1-j) that cover
    the median with probability `level` >= `confidence` (the sign test's
    distribution-free interval, Binomial(n, 1/2)); with too few values for
    `confidence`, min..max with the level it has (a level of 0 for one value)."""
    import numpy as np
    from scipy import stats as sps

    xs = sorted(float(v) for v in values)
    n = len(xs)
    if not n:
        raise ValueError("no samples for an interval of the median")
    # Coverage of (x(j), x(n+1-j)) is 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2):
    # the largest j (1-based, at most the middle) whose coverage is enough, else 1.
    coverage = 1 - 2 * sps.binom.cdf(np.arange((n + 1) // 2), n, 0.5)  # falls with j
    j = max(1, int(np.count_nonzero(coverage >= confidence)))
    return xs[j - 1], xs[n - j], max(0.0, float(coverage[j - 1]))


def summarize(values, confidence=0.95, unit=None):
    """n, mean, stdev, %stdev, median, min, max, the `confidence` interval of
    the mean (Student's t; the mean itself for one sample), and the median's
    own interval (median_interval: median_ci_low, median_ci_high, median_ci_level).

    Rates (unit bytes/sec) are averaged as time is: "mean" is their harmonic
    mean, which for loops of equal bytes is total bytes over total time (what
    a run prints), and stdev, %stdev and the mean's interval come from the
    times per byte, turned back into rates. An arithmetic mean of per-loop
    rates weighs a fast loop more than the time it took and can call a
    slowdown an improvement. "mean_kind" says which mean it is: "harmonic"
    for rates, "arithmetic" for costs (cycles/byte, seconds: they add as time
    does already) and for values of no given unit.
    """
    from scipy import stats as sps

    values = [float(v) for v in values]
    if not values:
        raise ValueError("no samples to summarize")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("samples must be finite numbers")
    n = len(values)
    costs = _costs(values, unit)
    mean = statistics.fmean(costs)
    stdev = statistics.stdev(costs) if n > 1 else 0.0
    half = (sps.t.ppf((1 + confidence) / 2, n - 1) * stdev / math.sqrt(n)) if n > 1 else 0.0
    low, high = mean - half, mean + half
    stdev_pct = 100.0 * stdev / mean if mean else 0.0
    if is_rate(unit):
        # Back to rates: the mean time's interval, inverted (its ends swap);
        # an interval reaching zero time has no upper rate.
        mean = 1.0 / mean
        stdev = mean * stdev_pct / 100.0  # the times' relative spread, as a rate's
        low, high = 1.0 / high, (1.0 / low if low > 0 else math.inf)
    m_low, m_high, m_level = median_interval(values, confidence)
    return {
        "n": n,
        "mean": mean,
        "mean_kind": "harmonic" if is_rate(unit) else "arithmetic",
        "stdev": stdev,
        "stdev_pct": stdev_pct,
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "ci_low": low,
        "ci_high": high,
        "confidence": confidence,
        "median_ci_low": m_low,
        "median_ci_high": m_high,
        "median_ci_level": m_level,
    }


def min_p_value(n1, n2):
    """The smallest two-sided p-value a Mann-Whitney U test can give for samples
    of n1 and n2 (all of one above all of the other): 2 / C(n1+n2, n1)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    # int / int: C(n1+n2, n1) passes a float's range from about 500 samples a side,
    # where 2.0 / C overflows; the exact quotient just rounds to 0.0.
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def compare_samples(base, new, unit="bytes/sec", threshold=0.02, alpha=0.01):
    """Compare two sets of samples of one quantity.

    Returns change_pct (of the new mean over the base mean), p_value, and a
    marker: "(R)" regression or "(I)" improvement when |change| > threshold
    and p < alpha; "~" when the change exceeds the threshold but is not
    significant; "" otherwise. `note` says when the sample counts are too
    small for `alpha` to be reachable at all.
    """
    from scipy import stats as sps

    base, new = [float(v) for v in base], [float(v) for v in new]
    if not base or not new:
        raise ValueError("both sides need at least one sample")
    if not 0 < alpha < 1 or threshold < 0:
        raise ValueError("alpha must be in (0, 1) and threshold non-negative")
    b, n = statistics.fmean(base), statistics.fmean(new)
    change = (n - b) / b if b else math.inf
    note = None
    floor = min_p_value(len(base), len(new))
    if floor >= alpha:
        note = (
            f"{len(base)} vs {len(new)} samples cannot reach p < {alpha} "
            f"(smallest possible p is {floor:.3g})"
        )
    if len(set(base + new)) == 1:
        p = 1.0  # every sample equal: nothing to test
    else:
        p = float(sps.mannwhitneyu(base, new, alternative="two-sided").pvalue)
    marker = ""
    if abs(change) > threshold:
        if p < alpha:
            better = (change > 0) == higher_is_better(unit)
            marker = IMPROVEMENT if better else REGRESSION
        else:
            marker = NOT_SIGNIFICANT
    return {"change_pct": 100.0 * change, "p_value": p, "marker": marker, "note": note}


# Below this, the cost of each call, not the cache, sets the rate: no knee there.
KNEE_MIN_EXTENT = 64 << 10
# A step smaller than this is not called a knee in words (it still is the largest step).
KNEE_CLEAR_STEP = 1.3
# A kernel within this of the fastest keeps the range it already holds, so
# noise between near-equals does not split the table.
TIE = 0.05


def _spread(logs):
    m = statistics.median(logs)
    return sum(abs(x - m) for x in logs)


def spread(rates):
    """(mean of `rates`, their standard deviation in % of it), as perf's
    "GB/sec/thread ( +- x% )"; (None, None) for no rates."""
    if not rates:
        return None, None
    mean = statistics.fmean(rates)
    stdev = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return mean, 100.0 * stdev / mean if mean else 0.0


def find_knee(points):
    """The knee of [(extent, bytes_per_sec), ...] over extents of KNEE_MIN_EXTENT
    and up: fit one step (two levels) in log rate at every split between
    extents and keep the rising split whose levels fit best (least absolute
    deviation from each side's median, so one noisy point costs what it is
    off by and no more). Returns (first extent of the upper side, ratio of
    the two medians); the smallest such extent on a tie. Needs two extents."""
    pts = sorted((e, r) for e, r in points if e >= KNEE_MIN_EXTENT and r > 0)
    if len(pts) < 2:
        raise ValueError("finding a knee needs rates at two extents of 64KB or more")
    logs = [math.log(r) for _, r in pts]
    fits = []
    for k in range(1, len(pts)):
        rise = statistics.median(logs[k:]) - statistics.median(logs[:k])
        fits.append((rise <= 0, _spread(logs[:k]) + _spread(logs[k:]), k, rise))
    _, _, k, rise = min(fits)
    return pts[k][0], math.exp(rise)


def best_kernels(rates, extents):
    """Ranges of extents with their fastest kernel: [{min_bytes, max_bytes, kernel,
    bytes_per_sec}], bytes_per_sec the median of that kernel's rates over the range.
    rates: {kernel: {extent: bytes_per_sec}}.

    A kernel within TIE of the fastest keeps the range it holds; where a new
    range must start, it goes to the near-fastest kernel that stays so the
    longest, so that near-equals (the streaming kernels beyond the LLC) do
    not split the table into one range per extent."""

    def near_best(k, e):
        here = [r[e] for r in rates.values() if e in r]
        return e in rates[k] and rates[k][e] >= (1 - TIE) * max(here)

    def run_length(k, i):
        n = 0
        while i + n < len(extents) and near_best(k, extents[i + n]):
            n += 1
        return n

    ranges = []
    for i, e in enumerate(extents):
        if ranges and near_best(ranges[-1]["kernel"], e):
            ranges[-1]["extents"].append(e)
            continue
        winner = max(
            (k for k in rates if near_best(k, e)), key=lambda k: (run_length(k, i), rates[k][e])
        )
        ranges.append({"kernel": winner, "extents": [e]})
    out = []
    for rg in ranges:
        k, es = rg["kernel"], rg["extents"]
        out.append(
            {
                "min_bytes": es[0],
                "max_bytes": es[-1],
                "kernel": k,
                "bytes_per_sec": float(statistics.median(rates[k][e] for e in es)),
            }
        )
    return out
