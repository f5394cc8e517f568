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

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from pagezero.analysis.knee import KNEE_CLEAR_STEP as KNEE_CLEAR_STEP
from pagezero.analysis.knee import KNEE_MIN_EXTENT as KNEE_MIN_EXTENT
from pagezero.analysis.knee import TIE as TIE
from pagezero.analysis.knee import best_kernels as best_kernels
from pagezero.analysis.knee import find_knee as find_knee
from pagezero.results.summary import is_rate as is_rate
from pagezero.results.summary import median_interval as median_interval
from pagezero.results.summary import relative_spread as relative_spread
from pagezero.results.summary import summarize as summarize

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


def higher_is_better(unit: str | None) -> bool:
    """Whether a larger value in `unit` is better (bytes/sec) rather than a cost.

    Parameters
    ----------
    unit : str or None
        The values' unit ("bytes/sec", "cycles/byte", "ns/line", ...).

    Returns
    -------
    bool
        True for bytes/sec only; every other unit is a cost.
    """
    return unit in _HIGHER_IS_BETTER


def min_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p-value a Mann-Whitney U test can give.

    For samples of n1 and n2 values, all of one above all of the other:
    2 / C(n1+n2, n1).

    Parameters
    ----------
    n1, n2 : int
        The two sample counts.

    Returns
    -------
    float
        The p-value, at most 1.0 (1.0 when a side is empty).
    """
    if n1 < 1 or n2 < 1:
        return 1.0
    # int / int: C(n1+n2, n1) passes a float's range from about 500 samples a side,
    # where 2.0 / C overflows; the exact quotient just rounds to 0.0.
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def compare_samples(
    base: Iterable[float],
    new: Iterable[float],
    unit: str = "bytes/sec",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> dict[str, Any]:
    """Compare two sets of samples of one quantity.

    Parameters
    ----------
    base, new : iterable of float
        The samples of each side, in `unit`.
    unit : str
        Their unit: says whether a rise is better (bytes/sec) or worse.
    threshold : float
        The smallest relative change flagged, as a fraction (0.02 is 2%).
    alpha : float
        The significance level of the Mann-Whitney U test, in (0, 1).

    Returns
    -------
    dict
        change_pct (of the new mean over the base mean, percent), p_value, and
        a marker: "(R)" regression or "(I)" improvement when |change| >
        threshold and p < alpha; "~" when the change exceeds the threshold but
        is not significant; "" otherwise. `note` says when the sample counts
        are too small for `alpha` to be reachable at all (else None).

    Raises
    ------
    ValueError
        An empty side, alpha outside (0, 1) or a negative threshold.
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


def spread(rates: Sequence[float]) -> tuple[float, float] | tuple[None, None]:
    """The mean of `rates` and their standard deviation in % of it.

    As perf prints "GB/sec/thread ( +- x% )".

    Parameters
    ----------
    rates : sequence of float
        The values (bytes/sec, or any unit).

    Returns
    -------
    tuple
        (mean, stdev in percent of the mean; 0.0 for one rate or a mean of 0),
        or (None, None) for no rates.
    """
    if not rates:
        return None, None
    mean = statistics.fmean(rates)
    stdev = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return mean, 100.0 * stdev / mean if mean else 0.0
