"""Statistics of samples, and whether a change between two sets of samples is real.

A change is flagged only when it is both larger than a threshold and
significant by a Mann-Whitney U test: noisy machines make small differences
common, and a difference is only interesting when it is too large to be
noise. Different sample counts are fine: the test handles them, and they
never count as significant by themselves.
"""
import math
import statistics

__all__ = ["summarize", "min_p_value", "compare_samples", "higher_is_better", "find_knee",
           "REGRESSION", "IMPROVEMENT", "NOT_SIGNIFICANT"]

REGRESSION = "(R)"
IMPROVEMENT = "(I)"
NOT_SIGNIFICANT = "~"

# Units where a larger number is better; every other unit (cycles/byte,
# ns/line, seconds) is a cost.
_HIGHER_IS_BETTER = ("bytes/sec",)


def higher_is_better(unit):
    return unit in _HIGHER_IS_BETTER


def summarize(values, confidence=0.95):
    """n, mean, stdev, %stdev, median, min, max and the `confidence` interval
    of the mean (Student's t; the interval is the mean itself for one sample)."""
    from scipy import stats as sps

    values = [float(v) for v in values]
    if not values:
        raise ValueError("no samples to summarize")
    n = len(values)
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else 0.0
    half = (sps.t.ppf((1 + confidence) / 2, n - 1) * stdev / math.sqrt(n)) if n > 1 else 0.0
    return {
        "n": n,
        "mean": mean,
        "stdev": stdev,
        "stdev_pct": 100.0 * stdev / mean if mean else 0.0,
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "ci_low": mean - half,
        "ci_high": mean + half,
        "confidence": confidence,
    }


def min_p_value(n1, n2):
    """The smallest two-sided p-value a Mann-Whitney U test can give for samples
    of n1 and n2 (all of one above all of the other): 2 / C(n1+n2, n1)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


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
        note = (f"{len(base)} vs {len(new)} samples cannot reach p < {alpha} "
                f"(smallest possible p is {floor:.3g})")
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


def find_knee(xs, ys, min_ratio=1.25):
    """Where a rate curve steps up: the x after the largest rise between
    neighbouring points (xs ascending), if that rise is at least `min_ratio`;
    else None. For a chunked clear this is where the CPU stops allocating
    cache lines (the LLC threshold of the seeds)."""
    pairs = sorted(zip(xs, ys))
    best, knee = min_ratio, None
    for (x0, y0), (x1, y1) in zip(pairs, pairs[1:]):
        if y0 > 0 and y1 / y0 >= best:
            best, knee = y1 / y0, x1
    return knee
