"""Bars: one per point, the median of its per-run medians with the between-run
interval, exactly the numbers of the report's tables (the same point_summary)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pagezero.figures.common import (
    add_footer,
    closes_on_error,
    interval,
    pages_of,
    printable,
    pyplot,
    save,
    statistic_words,
)
from pagezero.figures.palette import kernel_colour
from pagezero.results.points import summarize_points
from pagezero.units import GBPS

__all__ = ["bars_figure", "plot_bars"]


@closes_on_error
def bars_figure(
    rs: Any, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> Any:
    """The figure of :func:`plot_bars`, not saved (the tests look at it).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        An empty result set.
    """
    points = list(summarize_points(rs).values())
    if not points:
        raise ValueError("nothing to plot in this result set")
    unit = points[0][0].unit
    scale, what = (GBPS, "rate (GB/s, 10^9 bytes/s)") if unit == "bytes/sec" else (1.0, unit)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(points) + 2), 5), layout="constrained")
    for i, (first, s) in enumerate(points):
        lo, hi = interval(s)
        ax.bar(
            i,
            s["median"] / scale,
            color=kernel_colour(first.function),
            yerr=[[(s["median"] - lo) / scale], [(hi - s["median"]) / scale]],
            capsize=3,
            label=printable(first.function),
        )
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    if unique:  # matplotlib hides names starting with "_"
        ax.legend(
            unique.values(),
            unique.keys(),
            fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            frameon=False,
        )
    ax.set_xticks(range(len(points)))
    ax.set_xticklabels(
        [printable(label(first)) for first, _ in points], rotation=30, ha="right", fontsize=8
    )
    ax.set_ylabel(f"{what}\n{statistic_words(s for _, s in points)}", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title, fontsize=11)
    add_footer(fig, rs.machine, pages_of(first for first, _ in points))
    return fig


def plot_bars(
    rs: Any, stem: str, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> list[str]:
    """One bar per point: the median of its runs' medians, with the spread
    between runs (between loops when one run measured it, as the axis label then
    says) as the error bar: the figures the report's tables and ``pagezero
    compare`` give, each bar in its function's fixed colour.

    Parameters
    ----------
    rs : pagezero.ResultSet
        The results.
    stem : str
        The path of the files to write, without extension.
    label : callable
        A point's label from its first result.
    title : str
        The title.

    Returns
    -------
    list of str
        The paths written: ``stem + ".png"`` and ``stem + ".svg"``.
    """
    return save(bars_figure(rs, label, title), stem)
