"""Ties in the advice: candidates whose difference is within the measured noise.

A sweep that names the fastest of near-equals presents a coin toss as a
recommendation: measured again, another of them wins. So advise treats two
candidates as tied when their rates differ by no more than the noise between
runs, and chooses among tied candidates by a fixed rule instead of by the
last digit:

- a kernel: the one the Linux clear_pages() uses on this CPU when it is
  among the tied (rep stosb with ERMS, else rep stosq, on x86-64:
  arch/x86/include/asm/page_64.h), else the first of them in the kernel
  table (the registry's order);
- a batch for a latency budget: the largest batch among the tied (fewest
  resched points), then the kernel rule among the kernels tied at that
  batch (with the fastest there, as for the best kernel by extent);
- the knee: of the best one-step fit and a neighbouring split tied with
  it, the smaller extent (the first from which the faster level is within
  noise);
- beyond the LLC: one question (which stores stream fastest to memory),
  so its extents are judged as one range, each kernel paired with the
  fastest within each run, and a budget's batch there takes that range's
  kernel (pagezero.studies.advise.choices, where these rules are applied).

The noise of a cell is the spread between runs (the standard deviation of
the per-run medians in % of their mean; a run is one process), or of the
loops when only one run was made (points.point_summary), and a cell's noise
the median of those spreads over the whole sweep (sweep_noise). Between runs, each
run is first divided by its load factor (run_spreads): on a shared machine
another task can slow a whole run, every cell of it alike, and that common
factor cannot change which candidate is faster within the run, so it must
not tie everything either. Two rates are tied
when they differ by less than twice the larger of their two spreads, or
TIE_FLOOR_PCT, whichever is larger (noise_pct: the sweep's): two medians each off by up to one
spread can differ by two, and with three runs a spread is itself only
roughly known, hence the floor. A batch fits a budget when the 90th
percentile of its worst batch over the visits, with the floor added, does.

Every function here works on plain dicts, so the rules can be checked on
made-up cells:
    cells: {(kernel, extent): {"bytes_per_sec", "spread_pct",
            "typical_worst_ms", "max_worst_ms"}}
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from pagezero.analysis.knee import KNEE_MIN_EXTENT, find_knee

__all__ = [
    "TIE_FLOOR_PCT",
    "run_spreads",
    "sweep_noise",
    "tolerance_pct",
    "tied",
    "choose_kernel",
    "sort_by_table",
    "fits_budget",
    "knee",
    "CHECKED_AGAINST",
]

# Differences smaller than this are never told apart: the between-run spread
# of a 256MB clear is 3-5% on a quiet 2-core Zen 4 VM (physical placement of
# the buffer), and three runs estimate a spread only roughly.
TIE_FLOOR_PCT = 5.0

# What a budget is checked against: the 90th percentile over the sweep's
# visits of a cell (every round of every run) of the visit's slowest batch
# position, each position's time the median over the visit's passes. A
# latency budget is a ceiling: the median over runs (typical_worst_ms) is
# exceeded in about half the visits, and a 128MB batch here, 2.8 ms typical
# against a 3 ms budget, went over it in a quarter of them. Nine visits in
# ten, not the slowest ever seen: one visit another task interrupted does
# not decide.
CHECKED_AGAINST = "p90_worst_ms"

# A cell's figures: "bytes_per_sec", "spread_pct", "typical_worst_ms",
# "p90_worst_ms", "max_worst_ms", "noise_pct" (None with one run), ... (advise.cells_from_results).
Cell = Mapping[str, Any]
# {(kernel, extent in bytes): cell}
Cells = Mapping[tuple[str, int], Cell]


def run_spreads(
    run_medians: Mapping[Hashable, Mapping[Hashable, float]],
) -> dict[Hashable, float | None]:
    """The spread between runs of every cell, each run divided by its load factor.

    A run's load factor is the median over the cells it measured of its
    median over that cell's median across runs.

    Parameters
    ----------
    run_medians : mapping of cell to (mapping of run to float)
        Per cell, each run's median rate (bytes/sec).

    Returns
    -------
    dict of cell to float or None
        The spread between runs in % of their mean; None for cells measured
        in one run only (no spread between runs).
    """
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
    """The noise of a whole sweep in %: the median of its cells' spreads.

    A spread from three runs is itself known only
    roughly (three values' standard deviation), so a cell's own spread decides
    its ties by chance: one that happened to spread wide tied with every
    kernel at its extent and, early in the kernel table, was chosen, then not
    the next time. The cells of one sweep are measured alike (the same runs,
    each run on one region), so their median spread is the noise of each of
    them, and far better known.

    Parameters
    ----------
    spreads : iterable of float or None
        The cells' spreads in % (None: a cell without one).

    Returns
    -------
    float or None
        The median spread in %, or None when no cell has one.
    """
    known = [s for s in spreads if s is not None]
    return statistics.median(known) if known else None


def _noise(cell: Cell) -> float:
    """A cell's noise in %: its sweep's (noise_pct), else its own spread."""
    noise = cell.get("noise_pct")
    return float(cell.get("spread_pct", 0.0)) if noise is None else float(noise)


def tolerance_pct(a: Cell, b: Cell) -> float:
    """How far apart cells `a` and `b` may be and still be tied.

    Parameters
    ----------
    a, b : mapping
        Cells with "spread_pct" and maybe "noise_pct" (in %).

    Returns
    -------
    float
        The tolerance in %: twice the larger noise, at least TIE_FLOOR_PCT.
    """
    return max(TIE_FLOOR_PCT, 2.0 * max(_noise(a), _noise(b)))


def tied(best: Cell, other: Cell) -> bool:
    """Whether `other`'s rate is within the noise of `best`'s.

    Parameters
    ----------
    best : mapping
        The faster cell ("bytes_per_sec", spreads in %).
    other : mapping
        The cell compared with it.

    Returns
    -------
    bool
        True when best's rate exceeds other's by no more than tolerance_pct().
    """
    b, o = best["bytes_per_sec"], other["bytes_per_sec"]
    return bool(b - o <= b * tolerance_pct(best, other) / 100.0)


def choose_kernel(names: Iterable[str], order: Sequence[str], clear_pages: str) -> str:
    """The kernel rule: clear_pages() when among `names`, else the first in the table.

    Parameters
    ----------
    names : iterable of str
        The tied kernels (not empty).
    order : sequence of str
        The kernel table's order; names not in it come last, by name (never by a
        set's order, which changes between processes).
    clear_pages : str
        The kernel clear_pages() uses on this CPU.

    Returns
    -------
    str
        The kernel chosen.
    """
    candidates = sort_by_table(set(names), order)
    return clear_pages if clear_pages in candidates else candidates[0]


def sort_by_table(names: Iterable[str], order: Sequence[str]) -> list[str]:
    """`names` in the kernel table's order (names not in it last, by name)."""
    return sorted(names, key=lambda k: (order.index(k) if k in order else len(order), k))


def fits_budget(cell: Cell, budget_ms: float) -> bool:
    """Whether a cell's worst batch stays within the budget in 9 visits of 10, with the floor added.

    The 90th percentile (CHECKED_AGAINST) already holds the variation
    between visits and runs, so the margin added is TIE_FLOOR_PCT alone: a
    latency within it of the budget is not told apart from the budget
    (a batch that fits only by that much fits one time and not the next).

    Parameters
    ----------
    cell : mapping
        A cell with "p90_worst_ms" (ms).
    budget_ms : float
        The latency budget in ms.

    Returns
    -------
    bool
        True when the 90th percentile plus TIE_FLOOR_PCT is within the budget.
    """
    return bool(cell[CHECKED_AGAINST] * (1.0 + TIE_FLOOR_PCT / 100.0) <= budget_ms)


def _fit_cost(logs: Sequence[float], k: int) -> float:
    """Least absolute deviation of a one-step fit split before index k."""

    def dev(xs: Sequence[float]) -> float:
        m = statistics.median(xs)
        return sum(abs(x - m) for x in xs)

    return dev(logs[:k]) + dev(logs[k:])


def knee(by_extent: Mapping[int, Cell]) -> tuple[int, float, list[int]]:
    """The knee of one kernel's cells.

    knee.find_knee gives the best one-step fit of log rate over the extents
    of KNEE_MIN_EXTENT and up. A split one extent lower or higher is tied
    with it when its fit is worse by no more than the noise of the extent
    that changes side (its tolerance, in log rate); the knee is the smaller
    of the tied, the first extent from which the faster level is within
    noise. Only neighbours tie: when the best fit moves between two
    neighbouring extents from one measurement to the next, both name the
    smaller; a split further away is a different knee, not a tie. The step
    is the ratio of the medians of the two sides of the split taken.

    Parameters
    ----------
    by_extent : mapping of int to mapping
        {extent in bytes: cell} of one kernel.

    Returns
    -------
    tuple of (int, float, list of int)
        The knee's extent in bytes, the step (upper level / lower level) and
        the other extents tied with it.
    """
    pts = sorted(
        (e, c) for e, c in by_extent.items() if e >= KNEE_MIN_EXTENT and c["bytes_per_sec"] > 0
    )
    best, best_step = find_knee((e, c["bytes_per_sec"]) for e, c in pts)
    if best_step <= 1:
        return best, best_step, []  # no rising step: nothing to be tied with
    extents = [e for e, _ in pts]
    logs = [math.log(c["bytes_per_sec"]) for _, c in pts]
    kb = extents.index(best)
    best_cost = _fit_cost(logs, kb)
    ties: list[int] = []
    for k in (kb - 1, kb + 1):
        if not 1 <= k < len(pts):
            continue
        rise = statistics.median(logs[k:]) - statistics.median(logs[:k])
        moved = pts[min(k, kb)][1]
        noise = math.log1p(max(TIE_FLOOR_PCT, 2.0 * _noise(moved)) / 100.0)
        if rise > 0 and _fit_cost(logs, k) - best_cost <= noise:
            ties.append(k)
    k = min([kb] + ties)
    step = math.exp(statistics.median(logs[k:]) - statistics.median(logs[:k]))
    return extents[k], step, [extents[t] for t in sorted([kb] + ties) if t != k]
