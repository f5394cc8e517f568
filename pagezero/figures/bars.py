"""Bars: one per point, the median of its per-run medians with the between-run interval,
exactly the numbers of the report's tables (the same point_summary)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pagezero.figures.common import (
    RATE_AXIS,
    closes_on_error,
    finish,
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


@closes_on_error
def bars_figure(
    rs: Any, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> Any:
    """The figure of plot_bars(), not saved; ValueError for an empty result set."""
    points = list(summarize_points(rs).values())
    if not points:
        raise ValueError("nothing to plot in this result set")
    unit = points[0][0].unit
    scale, what = (GBPS, RATE_AXIS) if unit == "bytes/sec" else (1.0, unit)
    fig, ax = pyplot().subplots(figsize=(max(6, 0.6 * len(points) + 2), 5), layout="constrained")
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
    ax.set_xticks(range(len(points)))
    ax.set_xticklabels(
        [printable(label(first)) for first, _ in points], rotation=30, ha="right", fontsize=8
    )
    ax.set_ylabel(f"{what}\n{statistic_words(s for _, s in points)}", fontsize=9)
    return finish(fig, ax, title, rs.machine, pages_of(first for first, _ in points))


def plot_bars(
    rs: Any, stem: str, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> list[str]:
    """One bar per point of `rs` (labelled by label(its first result)), its error bar the
    spread between runs (between loops for one run, as the axis label then says), in its
    function's colour, written to `stem`.png and .svg; returns the paths."""
    return save(bars_figure(rs, label, title), stem)
