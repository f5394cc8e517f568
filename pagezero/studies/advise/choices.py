"""advise's choices by advise.ties' rules: the kernel per extent range, the batch per budget."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pagezero.analysis.knee import range_row
from pagezero.studies.advise.ties import (
    CHECKED_AGAINST,
    TIE_FLOOR_PCT,
    Cell,
    Cells,
    choose_kernel,
    fits_budget,
    gap_and_error,
    sort_by_table,
    tied,
)


def batch_for_budget(
    cells: Cells,
    budget_ms: float,
    order: Sequence[str],
    clear_pages: str,
    pooled_from: int | None = None,
) -> tuple[dict[str, Any], bool]:
    """The JSON row of the batch for one latency budget, and whether anything fits it."""
    fitting = {c: v for c, v in cells.items() if fits_budget(v, budget_ms)}
    ties: Cells = {}
    if fitting:
        fastest = max(fitting.values(), key=lambda v: v["bytes_per_sec"])
        ties = {c: v for c, v in fitting.items() if tied(fastest, v)}
        extent = max(e for _, e in ties)
        # The kernel rule among those tied at that batch (those tied overall change by run).
        here = {k: v for (k, e), v in fitting.items() if e == extent}
        kernel, _ = _judge(here, order, clear_pages)
        pool = _streaming_range(cells, sorted({e for _, e in cells}), pooled_from)
        if extent in pool:
            chosen, range_ties = judge_range(cells, pool, order, clear_pages)
            rest = [k for k in sort_by_table(range_ties, order) if k != chosen]
            fit_here = [k for k in [chosen] + rest if k in here]
            kernel = fit_here[0] if fit_here else kernel
    else:
        kernel, extent = min(
            cells, key=lambda c: (cells[c][CHECKED_AGAINST], -cells[c]["bytes_per_sec"])
        )
    c = cells[(kernel, extent)]
    rank = {k: i for i, k in enumerate(sort_by_table({k for k, _ in ties}, order))}
    others = sorted((t for t in ties if t != (kernel, extent)), key=lambda t: (t[1], rank[t[0]]))
    row = {
        "budget_ms": float(budget_ms),
        "batch_bytes": extent,
        "kernel": kernel,
        "bytes_per_sec": float(c["bytes_per_sec"]),
        "worst_ms": float(c["typical_worst_ms"]),
        **{k: float(c[k]) for k in ("typical_worst_ms", "p90_worst_ms", "max_worst_ms")},
        "checked_against": CHECKED_AGAINST,
        "fits": bool(fitting),
        "spread_pct": float(c.get("spread_pct", 0.0)),
        "tied": [
            {"batch_bytes": e, "kernel": k, "bytes_per_sec": float(cells[(k, e)]["bytes_per_sec"])}
            for k, e in others
        ],
    }
    return row, bool(fitting)


def _everywhere(cells: Cells, extents: Iterable[int]) -> set[str]:
    """The kernels measured at every one of `extents`."""
    return set.intersection(*({k for (k, x) in cells if x == e} for e in extents))


def _paired_gaps(cells: Cells, extents: Sequence[int]) -> dict[str, tuple[float, float]] | None:
    """Each kernel's % gap to the fastest over a range, paired in runs, and its standard error."""
    # docs/policies.rst, "Beyond the LLC"; None without the medians of three common runs.
    medians = {
        k: [cells[(k, e)].get("run_medians") or {} for e in extents]
        for k in sorted(_everywhere(cells, extents))
    }
    medians = {k: m for k, m in medians.items() if all(v > 0 for ms in m for v in ms.values())}
    runs = sorted(
        set.intersection(*(set(ms) for m in medians.values() for ms in m)) if medians else []
    )
    if len(runs) < 3:
        return None
    log_rate = {
        k: [statistics.fmean(math.log(ms[r]) for ms in m) for r in runs] for k, m in medians.items()
    }
    fastest = max(log_rate, key=lambda k: statistics.fmean(log_rate[k]))
    return {
        k: gap_and_error([a - b for a, b in zip(lr, log_rate[fastest])])
        for k, lr in log_rate.items()
    }


def _geometric_means(cells: Cells, extents: Sequence[int]) -> dict[str, dict[str, Any]]:
    """One cell per kernel measured over the whole range: the geometric mean of its rates."""
    pooled: dict[str, dict[str, Any]] = {}
    for k in _everywhere(cells, extents):
        here = [cells[(k, e)] for e in extents]
        rates = [float(c["bytes_per_sec"]) for c in here]
        pooled[k] = {
            "bytes_per_sec": statistics.geometric_mean(rates) if min(rates) > 0 else 0.0,
            "spread_pct": statistics.median(float(c.get("spread_pct", 0.0)) for c in here),
            "noise_pct": here[0].get("noise_pct"),
        }
    return pooled


def judge_range(
    cells: Cells, extents: Sequence[int], order: Sequence[str], clear_pages: str
) -> tuple[str, list[str]]:
    """The kernel for a range of extents judged as one, and the kernels tied there."""
    # docs/policies.rst, "Beyond the LLC"; without per-run medians, geometric means tied as cells.
    gaps = _paired_gaps(cells, extents)
    if gaps is None:
        return _judge(_geometric_means(cells, extents), order, clear_pages)
    ties = [k for k, (gap, se) in gaps.items() if gap <= max(TIE_FLOOR_PCT, 2.0 * se)]
    return choose_kernel(ties, order, clear_pages), ties


def _judge(
    here: Mapping[str, Cell], order: Sequence[str], clear_pages: str
) -> tuple[str, list[str]]:
    """The kernel rule over one extent's cells, and the kernels tied there."""
    fastest = max(here.values(), key=lambda v: v["bytes_per_sec"])
    ties = [k for k, v in here.items() if tied(fastest, v)]
    return choose_kernel(ties, order, clear_pages), ties


def _streaming_range(cells: Cells, extents: Iterable[int], pooled_from: int | None) -> list[int]:
    """The extents from pooled_from on, when two or more and some kernel has them all, else []."""
    pool = [e for e in extents if pooled_from is not None and e >= pooled_from]
    return pool if len(pool) >= 2 and _everywhere(cells, pool) else []


def best_kernels(
    cells: Cells,
    extents: Iterable[int],
    order: Sequence[str],
    clear_pages: str,
    pooled_from: int | None = None,
) -> list[dict[str, Any]]:
    """Ranges of extents with their kernel: range_row()'s rows, with tied and pooled."""
    measured = [e for e in extents if any(x == e for _, x in cells)]
    pool = _streaming_range(cells, measured, pooled_from)
    ranges: list[dict[str, Any]] = []
    for e in [e for e in measured if e not in pool]:
        kernel, ties = _judge({k: v for (k, x), v in cells.items() if x == e}, order, clear_pages)
        if ranges and ranges[-1]["kernel"] == kernel:
            ranges[-1]["extents"].append(e)
            ranges[-1]["tied"].update(ties)
        else:
            ranges.append({"kernel": kernel, "extents": [e], "tied": set(ties)})
    if pool:
        # Its own row even where the extents below chose the same kernel: the reader is told
        # which extents were judged together.
        kernel, ties = judge_range(cells, pool, order, clear_pages)
        ranges.append({"kernel": kernel, "extents": pool, "tied": set(ties), "pooled": True})
    return [
        dict(
            range_row(rg["kernel"], rg["extents"], lambda k, e: cells[(k, e)]["bytes_per_sec"]),
            tied=sort_by_table(rg["tied"] - {rg["kernel"]}, order),
            pooled=rg.get("pooled", False),
        )
        for rg in ranges
    ]
