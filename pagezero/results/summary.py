"""Statistics of one set of samples; rates averaged as the times they stand for (harmonic: an
arithmetic mean weighs a fast loop more than its time, and can call a slowdown an improvement)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["summarize", "median_interval", "relative_spread", "is_rate"]


def is_rate(unit: str | None) -> bool:
    """Whether values in `unit` are amounts per time (bytes/sec), averaged over their times."""
    return unit == "bytes/sec"


def _costs(values: Iterable[float], unit: str | None) -> list[float]:
    """Values as costs that add up as time does: a rate's reciprocal, any other unit as it is."""
    values = [float(v) for v in values]
    if not is_rate(unit):
        return values
    if any(v <= 0 for v in values):
        raise ValueError("a rate must be positive to average it as time")
    return [1.0 / v for v in values]


def relative_spread(values: Iterable[float], unit: str | None = None) -> float:
    """Stdev in % of the mean of the costs `values` stand for; 0.0 for under two or a mean of 0."""
    costs = _costs(values, unit)
    if len(costs) < 2:
        return 0.0
    mean = statistics.fmean(costs)
    return 100.0 * statistics.stdev(costs) / mean if mean else 0.0


def median_interval(
    values: Iterable[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """(low, high, level): the sign test's interval of the median, x(j)..x(n+1-j) at `level` >=
    `confidence`, else min..max and its level."""
    import numpy as np
    from scipy import stats as sps

    xs = sorted(float(v) for v in values)
    n = len(xs)
    if not n:
        raise ValueError("no samples for an interval of the median")
    # Coverage of (x(j), x(n+1-j)) is 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2): the largest j
    # (1-based, at most the middle) whose coverage is enough, else 1.
    coverage = 1 - 2 * sps.binom.cdf(np.arange((n + 1) // 2), n, 0.5)  # falls with j
    j = max(1, int(np.count_nonzero(coverage >= confidence)))
    return xs[j - 1], xs[n - j], max(0.0, float(coverage[j - 1]))


def summarize(
    values: Iterable[float], confidence: float = 0.95, unit: str | None = None
) -> dict[str, Any]:
    """n, mean, mean_kind, stdev, stdev_pct, median, min, max, the mean's Student's t interval
    (ci_low, ci_high, confidence) and the median's (median_ci_low, _high, _level)."""
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


def spread(rates: Sequence[float]) -> tuple[float, float] | tuple[None, None]:
    """(mean, stdev in % of it), as perf's "( +- x% )"; (None, None) for none."""
    return (statistics.fmean(rates), relative_spread(rates)) if rates else (None, None)
