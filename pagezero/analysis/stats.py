"""Statistics of samples: summaries (rates summarised as the times they stand for: the mean of
bytes/sec is harmonic, total bytes over total time, and says so in "mean_kind"), and the
markers of a change (analysis.significance decides them, the run being the unit).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

REGRESSION = "(R)"
IMPROVEMENT = "(I)"
NOT_SIGNIFICANT = "~"

# Units where a larger number is better; every other unit (cycles/byte,
# ns/line, seconds) is a cost.
_HIGHER_IS_BETTER = ("bytes/sec",)
# Units that are an amount per time: averaged over the times (summarize).
_RATE_UNITS = ("bytes/sec",)


def higher_is_better(unit: str | None) -> bool:
    """Whether a larger value in `unit` is better (bytes/sec) rather than a cost."""
    return unit in _HIGHER_IS_BETTER


def is_rate(unit: str | None) -> bool:
    """Whether values in `unit` are amounts per time (bytes/sec).

    The mean of such values must be taken over the times they stand for, not
    over the rates.

    Parameters
    ----------
    unit : str or None
        The values' unit.

    Returns
    -------
    bool
        True for bytes/sec.
    """
    return unit in _RATE_UNITS


def _costs(values: Iterable[float], unit: str | None) -> list[float]:
    """Values as costs that add up as time does: a rate's reciprocal (time per
    byte), any other unit (cycles/byte, seconds) as it is."""
    if not is_rate(unit):
        return list(values)
    if any(v <= 0 for v in values):
        raise ValueError("a rate must be positive to average it as time")
    return [1.0 / v for v in values]


def relative_spread(values: Iterable[float], unit: str | None = None) -> float:
    """Standard deviation in % of the mean, of the costs `values` stand for.

    For rates this is the spread of the times per byte, the spread a run's
    time has.

    Parameters
    ----------
    values : iterable of float
        The values, in `unit`.
    unit : str or None
        Their unit: bytes/sec is a rate, anything else (cycles/byte, seconds,
        None) is taken as it is.

    Returns
    -------
    float
        The spread in percent; 0.0 for fewer than two values or a mean of 0.

    Raises
    ------
    ValueError
        A rate that is not positive.
    """
    costs = _costs([float(v) for v in values], unit)
    if len(costs) < 2:
        return 0.0
    mean = statistics.fmean(costs)
    return 100.0 * statistics.stdev(costs) / mean if mean else 0.0


def median_interval(
    values: Iterable[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """A distribution-free interval of the median.

    The order statistics x(j) and x(n+1-j) that cover the median with
    probability `level` >= `confidence` (the sign test's interval,
    Binomial(n, 1/2)); with too few values for `confidence`, min..max with the
    level it has (a level of 0 for one value).

    Parameters
    ----------
    values : iterable of float
        The samples, in any unit.
    confidence : float
        The coverage wanted, between 0 and 1.

    Returns
    -------
    tuple of (float, float, float)
        (low, high, level): the interval's ends, in the values' unit, and the
        coverage it has.

    Raises
    ------
    ValueError
        No values.
    """
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


def summarize(
    values: Iterable[float], confidence: float = 0.95, unit: str | None = None
) -> dict[str, Any]:
    """Summary statistics of one set of samples.

    n, mean, stdev, %stdev, median, min, max, the `confidence` interval of
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

    Parameters
    ----------
    values : iterable of float
        The samples, in `unit`.
    confidence : float
        The level of both intervals, between 0 and 1.
    unit : str or None
        The values' unit; bytes/sec is averaged as time (above).

    Returns
    -------
    dict
        n (int), mean, mean_kind ("harmonic" or "arithmetic"), stdev,
        stdev_pct (percent), median, min, max, ci_low, ci_high, confidence,
        median_ci_low, median_ci_high and median_ci_level; values in `unit`.

    Raises
    ------
    ValueError
        No values, a value that is not finite, or a rate that is not positive.
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


def min_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p-value a Mann-Whitney U test gives for n1 against n2 values:
    2 / C(n1+n2, n1), all of one side above all of the other; 1.0 for an empty side."""
    if n1 < 1 or n2 < 1:
        return 1.0
    # int / int: C(n1+n2, n1) passes a float's range from about 500 samples a side,
    # where 2.0 / C overflows; the exact quotient just rounds to 0.0.
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def spread(rates: Sequence[float]) -> tuple[float, float] | tuple[None, None]:
    """(mean, stdev in % of it) as perf prints "GB/sec/thread ( +- x% )"; (None, None) for none."""
    if not rates:
        return None, None
    mean = statistics.fmean(rates)
    stdev = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return mean, 100.0 * stdev / mean if mean else 0.0
