"""Bars: one per point, as the report's tables give it; and grouped bars of result sets (or
functions) side by side, the figure of `pagezero compare`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pagezero.analysis.compare import compare, compare_variants, shared_rows
from pagezero.figures import common
from pagezero.figures.palette import PALETTE, kernel_colour
from pagezero.results.points import summarize_points
from pagezero.units import GBPS


@common.closes_on_error
def bars_figure(
    rs: Any, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> Any:
    """The figure of plot_bars(), not saved; ValueError for an empty result set."""
    points = list(summarize_points(rs).values())
    if not points:
        raise ValueError("nothing to plot in this result set")
    unit = points[0][0].unit
    scale, what = (GBPS, common.RATE_AXIS) if unit == "bytes/sec" else (1.0, unit)
    size = (max(6, 0.6 * len(points) + 2), 5)
    fig, ax = common.pyplot().subplots(figsize=size, layout="constrained")
    for i, (first, s) in enumerate(points):
        err = s["median"] * s["spread_pct"] / 100 / scale
        colour, name = kernel_colour(first.function), common.printable(first.function)
        ax.bar(i, s["median"] / scale, color=colour, yerr=err, capsize=3, label=name)
    names = [common.printable(label(first)) for first, _ in points]
    ax.set_xticks(range(len(points)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{what}\n{common.statistic_words(s for _, s in points)}", fontsize=9)
    return common.finish(fig, ax, title, rs.machine, common.pages_of(p[0] for p in points))


def plot_bars(
    rs: Any, stem: str, label: Callable[[Any], str] = lambda r: r.label(), title: str = "Rates"
) -> list[str]:
    """One bar per point of `rs`, named by label(its first result), in its function's colour,
    written to `stem`.png and .svg; returns the paths."""
    return common.save(bars_figure(rs, label, title), stem)


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


@common.closes_on_error
def rows_figure(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    reference: Any,
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> Any:
    """Grouped bars of compare()'s rows, a bar per side; the footer's is the `reference` set's."""
    width = 0.8 / len(names)
    size = (max(6, 1.2 * len(rows) + 2), 5)
    fig, ax = common.pyplot().subplots(figsize=size, layout="constrained")
    unit = rows[0]["unit"] if rows else "bytes/sec"
    scale, axis = (GBPS, common.RATE_AXIS) if unit == "bytes/sec" else (1.0, unit)
    for j, name in enumerate(names):
        sides = [row["base"] if j == 0 else row["changes"][j - 1] for row in rows]
        centers = [s["center"] / scale if s else 0.0 for s in sides]
        errs = [s["center"] * s["spread_pct"] / 100 / scale if s else 0.0 for s in sides]
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(rows))]
        # Sides are result sets, not kernels: Okabe-Ito's colours in order.
        colour = PALETTE[j % len(PALETTE)]
        ax.bar(xs, centers, width, yerr=errs, capsize=2, label=common.printable(name), color=colour)
        for x_, m, s in zip(xs, centers, sides):
            if j and s and s["marker"]:
                ax.text(x_, m, s["marker"], ha="center", va="bottom", fontsize=7)
    labels = [common.printable(r["label"]) for r in rows]
    ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    runs = [r["base"]["runs"] for r in rows]
    runs += [c["runs"][1] for r in rows for c in r["changes"] if c]
    spread = "spread of one run's loops" if min(runs, default=2) < 2 else "spread between runs"
    markers = f"markers beyond {100 * threshold:g}% at alpha {alpha:g}"
    ax.set_ylabel(f"{axis}\n{common.STATISTIC}, interval: {spread};\n{markers}", fontsize=9)
    return common.finish(fig, ax, title, reference.machine, common.pages_of(reference.results))


def plot_comparison(
    sets: Sequence[Any],
    names: Sequence[str],
    stem: str,
    title: str = "Comparison",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars of compare(), a group per point of `sets[0]` and a bar per set named in
    `names`, with its markers; written to `stem`.png and .svg, returns the paths."""
    return common.save(comparison_figure(sets, names, title, threshold, alpha), stem)


def plot_variants(
    rs: Any,
    stem: str,
    base: str | None = None,
    title: str = "Functions side by side",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars of compare_variants(), a bar per function of `rs` (`base` first), with its
    markers; written to `stem`.png and .svg, returns the paths."""
    names, rows, _ = compare_variants(rs, base, threshold=threshold, alpha=alpha)
    return common.save(rows_figure(rows, names, rs, title, threshold, alpha), stem)
