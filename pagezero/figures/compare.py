"""Grouped bars of result sets side by side: the figure of `pagezero compare`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pagezero.analysis.compare import compare
from pagezero.figures.common import (
    STATISTIC,
    add_footer,
    closes_on_error,
    pages_of,
    printable,
    pyplot,
    save,
)
from pagezero.figures.palette import PALETTE
from pagezero.units import GBPS

__all__ = ["comparison_figure", "plot_comparison"]


@closes_on_error
def comparison_figure(
    sets: Sequence[Any],
    names: Sequence[str],
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> Any:
    """The figure of :func:`plot_comparison`, not saved.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = pyplot()
    rows = compare(sets[0], *sets[1:], threshold=threshold, alpha=alpha)
    width = 0.8 / len(sets)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows) + 2), 5), layout="constrained")
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
        xs = [i + (j - (len(sets) - 1) / 2) * width for i in range(len(rows))]
        # Sides are result sets, not kernels: Okabe-Ito's colours in order.
        ax.bar(
            xs,
            centers,
            width,
            yerr=errs,
            capsize=2,
            label=printable(name),
            color=PALETTE[j % len(PALETTE)],
        )
        if j:
            for x_, m, row in zip(xs, centers, rows):
                c = row["changes"][j - 1]
                if c and c["marker"]:
                    ax.text(x_, m, c["marker"], ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([printable(r["label"]) for r in rows], rotation=30, ha="right", fontsize=8)
    interval_words = "spread of one run's loops" if one_run else "spread between runs"
    what = (
        f"{STATISTIC}, interval: {interval_words};\nmarkers beyond "
        f"{100 * threshold:g}% at alpha {alpha:g}"
    )
    ax.set_ylabel(
        f"rate (GB/s, 10^9 bytes/s)\n{what}" if unit == "bytes/sec" else f"{unit}\n{what}",
        fontsize=9,
    )
    ax.grid(True, axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # matplotlib hides names starting with "_"
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(title, fontsize=11)
    add_footer(fig, sets[0].machine, pages_of(sets[0].results))
    return fig


def plot_comparison(
    sets: Sequence[Any],
    names: Sequence[str],
    stem: str,
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars, one group per point of the base, one bar per result set.

    Each bar is the median of per-run medians, its error bar the spread between runs
    (of the loops where a side has one run); the markers of
    :func:`pagezero.analysis.compare.compare`, with the same `threshold` and `alpha` as the
    table, stand above the bars.

    Parameters
    ----------
    sets : sequence of pagezero.ResultSet
        The base first, then the others.
    names : sequence of str
        Each set's name in the legend.
    stem : str
        The path of the files to write, without extension.
    title : str
        The title.
    threshold : float
        The smallest change marked, as a fraction (0.02 is 2%).
    alpha : float
        The significance level of the test.

    Returns
    -------
    list of str
        The paths written: ``stem + ".png"`` and ``stem + ".svg"``.
    """
    return save(comparison_figure(sets, names, title, threshold, alpha), stem)
