"""Whether a change between two sets of runs is real: Welch's t-test (docs/compare.rst)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from pagezero.results.points import is_rate

MIN_RUNS = 3
METHOD = "Welch's t-test on the logs of per-run medians"

REGRESSION = "(R)"
IMPROVEMENT = "(I)"
NOT_SIGNIFICANT = "~"
UNKNOWN = "?"

# Legend entries, in the order a legend lists them.
MARKERS = {
    REGRESSION: "(R) regression and (I) improvement: beyond the threshold and significant",
    IMPROVEMENT: "(R) regression and (I) improvement: beyond the threshold and significant",
    NOT_SIGNIFICANT: "~ beyond the threshold but not significant",
    UNKNOWN: f"? beyond the threshold, but fewer than {MIN_RUNS} runs on a side: "
    "the variation between runs is unknown",
}


def _welch(
    base_logs: Sequence[float], new_logs: Sequence[float], alpha: float
) -> tuple[float, float, float]:
    """(p, low, high): Welch's two-sided p and the 1 - alpha interval of the difference."""
    from scipy import stats as sps

    diff = statistics.fmean(new_logs) - statistics.fmean(base_logs)
    va = statistics.variance(base_logs) / len(base_logs)
    vb = statistics.variance(new_logs) / len(new_logs)
    se = math.sqrt(va + vb)
    if se == 0:
        # Every run of each side gave the same median: nothing varies but the centre.
        return (1.0 if diff == 0 else 0.0), diff, diff
    df = (va + vb) ** 2 / (va**2 / (len(base_logs) - 1) + vb**2 / (len(new_logs) - 1))
    p = float(2 * sps.t.sf(abs(diff) / se, df))
    half = float(sps.t.ppf(1 - alpha / 2, df)) * se
    return p, diff - half, diff + half


def compare_runs(
    base_runs: Iterable[Sequence[float]],
    new_runs: Iterable[Sequence[float]],
    unit: str = "bytes/sec",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> dict[str, Any]:
    """One point of two sets of runs (each run its loops' values): change_pct, runs, p_value and
    ci_pct (None below MIN_RUNS), marker ("(R)", "(I)", "~", "?" or "") and note."""
    if not 0 < alpha < 1 or not threshold >= 0:
        raise ValueError("alpha must be in (0, 1) and threshold non-negative")
    base_medians = [statistics.median(v) for v in base_runs if len(v)]
    new_medians = [statistics.median(v) for v in new_runs if len(v)]
    if not base_medians or not new_medians:
        raise ValueError("both sides need at least one run")
    b, n = statistics.median(base_medians), statistics.median(new_medians)
    change = (n - b) / b if b else math.inf
    runs = [len(base_medians), len(new_medians)]
    out: dict[str, Any] = dict(change_pct=100.0 * change, runs=runs, p_value=None, ci_pct=None)
    beyond = abs(change) > threshold
    if min(runs) < MIN_RUNS:
        note = f"{runs[0]} vs {runs[1]} runs: the variation between runs is unknown; "
        note += f"measure with --runs {MIN_RUNS} or more on each side"
    elif not all(math.isfinite(m) and m > 0 for m in base_medians + new_medians):
        note = "a run's median is not a positive finite number: no test"
    else:
        base_logs, new_logs = ([math.log(m) for m in side] for side in (base_medians, new_medians))
        p, low, high = _welch(base_logs, new_logs, alpha)
        out |= {"p_value": p, "ci_pct": [100.0 * math.expm1(low), 100.0 * math.expm1(high)]}
        better = (change > 0) == is_rate(unit)  # a rate: higher is better; a cost: lower
        marker = NOT_SIGNIFICANT if p >= alpha else IMPROVEMENT if better else REGRESSION
        return dict(out, marker=marker if beyond else "", note=None)
    return dict(out, marker=UNKNOWN if beyond else "", note=note)
