"""Rates against extents, one panel per kernel family sharing both axes: eleven kernels in
one panel cross and hide each other, while a family's two to four lines differ for a reason
(string ops, vector stores, non-temporal stores), and the envelope of the fastest drawn
behind each panel says how far the family is from the best."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pagezero.figures.common import (
    RATE_AXIS,
    add_footer,
    closes_on_error,
    interval,
    legend,
    missing_glyphs_drawn,
    pages_of,
    printable,
    pyplot,
    save,
    statistic_words,
)
from pagezero.figures.families import group_by_family
from pagezero.figures.labels import mark_lines, threshold_marks
from pagezero.figures.palette import kernel_colour, kernel_marker, registry_names
from pagezero.results.points import summarize_points
from pagezero.units import GBPS, format_size

ENVELOPE_LABEL = "fastest of all kernels"


def extent_of(result: Any) -> int:
    """Bytes per kernel call of a memset or memcpy result: the chunk, or the size for chunk 0."""
    return int(result.params.get("chunk") or result.params["size"])


def _series(rs: Any, x: Callable[[Any], int]) -> tuple[dict[str, list[tuple[int, dict]]], list]:
    series: dict[str, list[tuple[int, dict]]] = {}
    drawn = []
    for first, s in summarize_points(rs).values():
        if first.unit != "bytes/sec":
            continue
        series.setdefault(first.function, []).append((x(first), s))
        drawn.append(s)
    for pts in series.values():
        pts.sort(key=lambda p: p[0])
    return series, drawn


def _ordered(names: Sequence[str]) -> list[str]:
    order = registry_names()
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


def _envelope(series: dict[str, list[tuple[int, dict]]]) -> tuple[list[int], list[float]]:
    best: dict[int, float] = {}
    for pts in series.values():
        for x, s in pts:
            best[x] = max(best.get(x, 0.0), s["median"])
    xs = sorted(best)
    return xs, [best[x] / GBPS for x in xs]


@closes_on_error
def rates_figure(
    rs: Any,
    x: Callable[[Any], int] = extent_of,
    xlabel: str = "extent per call",
    title: str = "Clearing rate",
    cache_bytes: int | None = None,
) -> Any:
    """The figure of plot_rates(), not saved; ValueError without a rate (bytes/sec) in `rs`."""
    series, drawn = _series(rs, x)
    if not series:
        raise ValueError("no rates (bytes/sec) to plot in this result set")
    groups = group_by_family(_ordered(list(series)))
    plt = pyplot()
    fig, axes = plt.subplots(
        len(groups),
        1,
        sharex=True,
        sharey=True,
        figsize=(9, 1.4 + 2.4 * len(groups)),
        squeeze=False,
        layout="constrained",
    )
    env_x, env_y = _envelope(series)
    for ax, (family, names) in zip(axes[:, 0], groups.items()):
        if len(series) > 1:
            ax.plot(
                env_x,
                env_y,
                color="#BBBBBB",
                linewidth=5,
                solid_capstyle="round",
                zorder=1,
                label=ENVELOPE_LABEL,
            )
        for name in names:
            pts = series[name]
            xs = [p[0] for p in pts]
            lows, highs = zip(*(interval(p[1]) for p in pts))
            colour = kernel_colour(name)
            ax.fill_between(
                xs,
                [max(0.0, v) / GBPS for v in lows],
                [v / GBPS for v in highs],
                color=colour,
                alpha=0.25,
                linewidth=0,
                zorder=2,
            )
            ax.plot(
                xs,
                [p[1]["median"] / GBPS for p in pts],
                color=colour,
                marker=kernel_marker(name),
                markersize=3.5,
                linewidth=1.6,
                zorder=3,
                label=printable(name),
            )
        ax.set_title(family, fontsize=9, loc="left", fontweight="bold")
        legend(ax)
        ax.grid(True, alpha=0.3)
    # Headroom above the highest line for the marks' labels (the axes are shared).
    top = max(env_y)
    if math.isfinite(top) and top > 0:
        axes[0, 0].set_ylim(0, 1.2 * top)
    bottom = axes[-1, 0]
    bottom.set_xscale("log", base=2)
    ticks = sorted({p[0] for pts in series.values() for p in pts})
    step = max(1, len(ticks) // 12)
    bottom.set_xticks(ticks[::step])
    bottom.set_xticklabels([format_size(t) for t in ticks[::step]], rotation=45, ha="right")
    bottom.set_xlabel(f"{xlabel} (bytes, log2 scale)")
    fig.supylabel(f"{RATE_AXIS}\n{statistic_words(drawn)}", fontsize=9)
    fig.suptitle(title, fontsize=11)
    add_footer(fig, rs.machine, pages_of(rs.results))
    # The labels are laid out on the final geometry: lay the figure out once, then
    # keep it, so that the boxes measured are the boxes drawn.
    with missing_glyphs_drawn():
        fig.canvas.draw()
        fig.set_layout_engine("none")
        marks = threshold_marks(rs.machine, cache_bytes)
        for i, ax in enumerate(axes[:, 0]):
            mark_lines(ax, marks, label=i == 0)
    return fig


def plot_rates(
    rs: Any,
    stem: str,
    x: Callable[[Any], int] = extent_of,
    xlabel: str = "extent per call",
    title: str = "Clearing rate",
    cache_bytes: int | None = None,
) -> list[str]:
    """Rates against x(result) in bytes, one panel per kernel family, written to `stem`.png and
    .svg; returns the paths.

    Each kernel is a line of its points' medians of per-run medians (GB/s) with the
    between-run interval as a band (a run's loops for one run, as the axis label then says),
    in its fixed colour; the fastest of all kernels is the broad light line behind every
    panel; the machine's cache sizes and the clearing batch sizes are marked, their labels
    kept apart; the machine, kernel release, pages and date are in the footer.
    `cache_bytes`, the cache a run was measured to have where it differs from sysfs's LLC
    (pagezero.analysis.cache), is marked beside it.
    """
    return save(rates_figure(rs, x, xlabel, title, cache_bytes), stem)
