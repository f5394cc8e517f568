"""Ties in the advice: rates within the noise, the rule among them (docs/studies/advise.rst)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from pagezero.analysis.knee import KNEE_MIN_EXTENT, find_knee, fit_cost

# Differences smaller than this are never told apart: the between-run spread of a 256MB
# clear is 3-5% on a quiet 2-core Zen 4 VM (physical placement of the buffer).
TIE_FLOOR_PCT = 5.0

# What a budget is checked against: the p90 over a cell's visits of its slowest batch; the
# median over runs is exceeded in half the visits (docs/studies/advise.rst, Latencies).
CHECKED_AGAINST = "p90_worst_ms"

# A cell: "bytes_per_sec", "spread_pct", "noise_pct" (None with one run),
# "typical_worst_ms", "p90_worst_ms", "max_worst_ms", "run_medians"
# (study.cells_from_results).
Cell = Mapping[str, Any]
Cells = Mapping[tuple[str, int], Cell]  # {(kernel, extent in bytes): cell}


def run_spreads(
    run_medians: Mapping[Hashable, Mapping[Hashable, float]],
) -> dict[Hashable, float | None]:
    """Each cell's spread between runs in % (None with one run), each run over its load factor."""
    # A run's load factor: the median over its cells of its median over the cell's median.
    centre = {c: statistics.median(m.values()) for c, m in run_medians.items()}
    ratios: dict[Hashable, list[float]] = {}
    for c, m in run_medians.items():
        for run, v in m.items():
            if centre[c] > 0:
                ratios.setdefault(run, []).append(v / centre[c])
    factor = {run: statistics.median(r) or 1.0 for run, r in ratios.items()}
    out: dict[Hashable, float | None] = {}
    for c, m in run_medians.items():
        adjusted = [v / factor[run] for run, v in m.items()]
        mean = statistics.fmean(adjusted)
        out[c] = 100.0 * statistics.stdev(adjusted) / mean if len(adjusted) > 1 and mean else None
    return out


def sweep_noise(spreads: Iterable[float | None]) -> float | None:
    """The median of the cells' spreads (None when none has one)."""
    # Three runs know a cell's spread only roughly; the median of a sweep's is far better known.
    known = [s for s in spreads if s is not None]
    return statistics.median(known) if known else None


def _noise(cell: Cell) -> float:
    noise = cell.get("noise_pct")
    return float(cell.get("spread_pct", 0.0)) if noise is None else float(noise)


def gap_and_error(log_gaps: Sequence[float]) -> tuple[float, float]:
    """Per-run log-rate gaps to the fastest as (mean gap in %, its standard error in %)."""
    return (
        100.0 * (1.0 - math.exp(statistics.fmean(log_gaps))),
        100.0 * statistics.stdev(log_gaps) / math.sqrt(len(log_gaps)),
    )


def paired_error_pct(a: Cell, b: Cell) -> float:
    """The standard error of b's gap to a, paired in their common runs (0 with fewer than 3)."""
    ma, mb = a.get("run_medians") or {}, b.get("run_medians") or {}
    runs = sorted(r for r in ma if r in mb and ma[r] > 0 and mb[r] > 0)
    if len(runs) < 3:
        return 0.0
    return gap_and_error([math.log(mb[r] / ma[r]) for r in runs])[1]


def tolerance_pct(a: Cell, b: Cell) -> float:
    """How far apart two cells may be and still tie: twice the larger noise, twice the
    standard error of their paired gap, or TIE_FLOOR_PCT."""
    # The sweep's noise is the median cell's: a pair whose order changes from run to run can
    # be noisier than that, and judged by the median alone its answer follows the draw.
    return max(TIE_FLOOR_PCT, 2.0 * max(_noise(a), _noise(b)), 2.0 * paired_error_pct(a, b))


def tied(best: Cell, other: Cell) -> bool:
    """Whether `other`'s rate is within tolerance_pct() of the faster `best`'s."""
    b, o = best["bytes_per_sec"], other["bytes_per_sec"]
    return bool(b - o <= b * tolerance_pct(best, other) / 100.0)


def choose_kernel(names: Iterable[str], order: Sequence[str], clear_pages: str) -> str:
    """The kernel rule: clear_pages()'s kernel when among `names`, else the first in the table."""
    candidates = sort_by_table(set(names), order)
    return clear_pages if clear_pages in candidates else candidates[0]


def sort_by_table(names: Iterable[str], order: Sequence[str]) -> list[str]:
    """`names` in the kernel table's order; names not in it last, by name (never a set's order)."""
    return sorted(names, key=lambda k: (order.index(k) if k in order else len(order), k))


def fits_budget(cell: Cell, budget_ms: float) -> bool:
    """Whether the cell's p90 worst batch, with TIE_FLOOR_PCT added, is within the budget."""
    # Within the floor a latency is not told from the budget.
    return bool(cell[CHECKED_AGAINST] * (1.0 + TIE_FLOOR_PCT / 100.0) <= budget_ms)


def knee(by_extent: Mapping[int, Cell]) -> tuple[int, float, list[int]]:
    """One kernel's knee (bytes), its step (upper / lower level) and the extents tied with it."""
    # A split one extent away ties when its fit is worse by no more than the noise of the
    # extent that changes side; only neighbours tie: a split further away is another knee.
    pts = sorted(
        (e, c) for e, c in by_extent.items() if e >= KNEE_MIN_EXTENT and c["bytes_per_sec"] > 0
    )
    best, best_step = find_knee((e, c["bytes_per_sec"]) for e, c in pts)
    if best_step <= 1:
        return best, best_step, []  # no rising step: nothing to be tied with
    extents = [e for e, _ in pts]
    logs = [math.log(c["bytes_per_sec"]) for _, c in pts]
    kb = extents.index(best)
    best_cost = fit_cost(logs, kb)
    ties: list[int] = []
    for k in (kb - 1, kb + 1):
        if not 1 <= k < len(pts):
            continue
        rise = statistics.median(logs[k:]) - statistics.median(logs[:k])
        moved = pts[min(k, kb)][1]
        noise = math.log1p(max(TIE_FLOOR_PCT, 2.0 * _noise(moved)) / 100.0)
        if rise > 0 and fit_cost(logs, k) - best_cost <= noise:
            ties.append(k)
    k = min([kb] + ties)
    step = math.exp(statistics.median(logs[k:]) - statistics.median(logs[:k]))
    return extents[k], step, [extents[t] for t in sorted([kb] + ties) if t != k]
