"""Grouped bars of result sets side by side: the figure of `pagezero compare`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pagezero.analysis.compare import compare, shared_rows
from pagezero.analysis.variants import compare_variants
from pagezero.figures.common import (
    RATE_AXIS,
    STATISTIC,
    closes_on_error,
    finish,
    pages_of,
    printable,
    pyplot,
    save,
)
from pagezero.figures.palette import PALETTE
from pagezero.units import GBPS


def comparison_figure(
    sets: Sequence[Any],
    names: Sequence[str],
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> Any:
    """The figure of plot_comparison(), not saved."""
    rows = compare(sets[0], *sets[1:], threshold=threshold, alpha=alpha)
    shared = shared_rows(rows, sets[0], *sets[1:])[0]
    return rows_figure(shared, names, sets[0], title, threshold, alpha)


@closes_on_error
def rows_figure(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    reference: Any,
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> Any:
    """Grouped bars of compare()'s (or compare_variants()') `rows`, a bar per side in `names`;
    the machine and pages in the footer are the `reference` ResultSet's."""
    width = 0.8 / len(names)
    fig, ax = pyplot().subplots(figsize=(max(6, 1.2 * len(rows) + 2), 5), layout="constrained")
    unit = rows[0]["unit"] if rows else "bytes/sec"
    scale = GBPS if unit == "bytes/sec" else 1.0
    one_run = False
    for j, name in enumerate(names):
        centers, errs = [], []
        for row in rows:
            s = row["base"] if j == 0 else row["changes"][j - 1]
            centers.append(s["center"] / scale if s else 0.0)
            errs.append(s["center"] * s["spread_pct"] / 100 / scale if s else 0.0)
            runs = s.get("runs", 2) if s else 2  # a change gives both sides' runs
            one_run = one_run or min(runs if isinstance(runs, list) else [runs]) < 2
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(rows))]
        # Sides are result sets, not kernels: Okabe-Ito's colours in order.
        colour = PALETTE[j % len(PALETTE)]
        ax.bar(xs, centers, width, yerr=errs, capsize=2, label=printable(name), color=colour)
        for x_, m, row in zip(xs, centers, rows):
            c = row["changes"][j - 1] if j else None
            if c and c["marker"]:
                ax.text(x_, m, c["marker"], ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([printable(r["label"]) for r in rows], rotation=30, ha="right", fontsize=8)
    interval_words = "spread of one run's loops" if one_run else "spread between runs"
    what = (
        f"{STATISTIC}, interval: {interval_words};\nmarkers beyond "
        f"{100 * threshold:g}% at alpha {alpha:g}"
    )
    ax.set_ylabel(f"{RATE_AXIS if unit == 'bytes/sec' else unit}\n{what}", fontsize=9)
    return finish(fig, ax, title, reference.machine, pages_of(reference.results))


def plot_comparison(
    sets: Sequence[Any],
    names: Sequence[str],
    stem: str,
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars, a group per point of the base (`sets[0]`), a bar per set named in
    `names`: the median of per-run medians with the spread between runs, and compare()'s
    markers at the same `threshold` and `alpha` as the table above them; written to
    `stem`.png and .svg, returns the paths."""
    return save(comparison_figure(sets, names, title, threshold, alpha), stem)


def plot_variants(
    rs: Any,
    stem: str,
    base: str | None = None,
    title: str = "Functions side by side",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars of compare_variants(): a group per point, a bar per function of `rs`, the
    `base` function's first, with its markers at `threshold` and `alpha`; written to
    `stem`.png and .svg, returns the paths."""
    names, rows, _ = compare_variants(rs, base, threshold=threshold, alpha=alpha)
    return save(rows_figure(rows, names, rs, title, threshold, alpha), stem)
