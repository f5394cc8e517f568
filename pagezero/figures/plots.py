"""Rates against extents or threads; bars of points and of comparisons (docs/figures.rst)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pagezero.figures.common as common
from pagezero.analysis.compare import compare, compare_variants, shared_rows
from pagezero.figures.palette import PALETTE, group_by_family, kernel_colour, kernel_marker
from pagezero.results.points import grouped, summarize_points
from pagezero.system.machine import cache_bytes, llc_bytes
from pagezero.units import GBPS, format_size, gbps

ENVELOPE_LABEL = "fastest of all kernels"
# folio_zero_user()'s batches, in the patch's v6-v8 and Linux 7.0 (docs/figures.rst).
BATCHES = {"8MB batch": 8 << 20, "32MB batch": 32 << 20}
_STEP = 0.075  # axes fraction a label steps down per try


def extent_of(result: Any) -> int:
    """Bytes per kernel call of a memset or memcpy result: the chunk, or the size for chunk 0."""
    return int(result.params.get("chunk") or result.params["size"])


def _series(rs: Any, x: Callable[[Any], int]) -> dict[str, list[tuple[int, dict]]]:
    """Each function's rate points as (x, point_summary()), in x order."""
    series: dict[str, list[tuple[int, dict]]] = {}
    for first, s in summarize_points(rs).values():
        if first.unit == "bytes/sec":
            series.setdefault(first.function, []).append((x(first), s))
    return {name: sorted(pts, key=lambda p: p[0]) for name, pts in series.items()}


@common.closes_on_error
def rates_figure(
    rs: Any,
    x: Callable[[Any], int] = extent_of,
    xlabel: str = "extent per call",
    title: str = "Clearing rate",
    cache_bytes: int | None = None,
) -> Any:
    """The figure of plot_rates(), not saved; ValueError without a rate (bytes/sec) in `rs`."""
    series = _series(rs, x)
    if not series:
        raise ValueError("no rates (bytes/sec) to plot in this result set")
    groups = group_by_family(series)
    shape = {"figsize": (9, 1.4 + 2.4 * len(groups)), "squeeze": False, "layout": "constrained"}
    fig, axes = common.pyplot().subplots(len(groups), 1, sharex=True, sharey=True, **shape)
    drawn = [p for pts in series.values() for p in pts]
    env_x = sorted({e for e, _ in drawn})
    env_y = [max(s["median"] for at, s in drawn if at == e) / GBPS for e in env_x]
    for ax, (family, names) in zip(axes[:, 0], groups.items()):
        if len(series) > 1:
            envelope = {"color": "#BBBBBB", "linewidth": 5, "solid_capstyle": "round"}
            ax.plot(env_x, env_y, **envelope, zorder=1, label=ENVELOPE_LABEL)
        for name in names:
            xs = [p[0] for p in series[name]]
            lows, highs = zip(*(common.interval(p[1]) for p in series[name]))
            colour = kernel_colour(name)
            band = ([max(0.0, v) / GBPS for v in lows], [v / GBPS for v in highs])
            ax.fill_between(xs, *band, color=colour, alpha=0.25, linewidth=0, zorder=2)
            medians = [p[1]["median"] / GBPS for p in series[name]]
            style = {"marker": kernel_marker(name), "markersize": 3.5, "linewidth": 1.6}
            ax.plot(xs, medians, color=colour, **style, zorder=3, label=common.printable(name))
        ax.set_title(family, fontsize=9, loc="left", fontweight="bold")
        common.legend(ax)
        ax.grid(True, alpha=0.3)
    # Headroom above the highest line for the marks' labels (the axes are shared).
    top = max(env_y)
    if math.isfinite(top) and top > 0:
        axes[0, 0].set_ylim(0, 1.2 * top)
    bottom = axes[-1, 0]
    bottom.set_xscale("log", base=2)
    ticks = env_x[:: max(1, len(env_x) // 12)]
    bottom.set_xticks(ticks, [format_size(t) for t in ticks], rotation=45, ha="right")
    bottom.set_xlabel(f"{xlabel} (bytes, log2 scale)")
    words = common.statistic_words(s for _, s in drawn)
    fig.supylabel(f"{common.RATE_AXIS}\n{words}", fontsize=9)
    fig.suptitle(title, fontsize=11)
    common.add_footer(fig, rs.machine, common.pages_of(rs.results))
    # Labels laid out on the final geometry, kept: the boxes measured are the boxes drawn.
    with common.missing_glyphs_drawn():
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
    """Rates against x(result) in bytes, a panel per kernel family, as `stem`.png and .svg: the
    paths. `cache_bytes`, the cache measured where it is not sysfs's LLC, is marked beside it."""
    return common.save(rates_figure(rs, x, xlabel, title, cache_bytes), stem)


def threshold_marks(machine: Mapping[str, Any], measured: int | None = None) -> dict[str, int]:
    """{name: bytes}: the machine's caches, the cache `measured` if given, the clearing batches."""
    marks = {
        "L1d": cache_bytes(machine, 1, "Data"),
        "L2": cache_bytes(machine, 2),
        "LLC" if measured is None else "LLC (sysfs)": llc_bytes(machine),
        "cache (measured)": measured,
        **BATCHES,
    }
    return {n: x for n, x in marks.items() if x}


def mark_lines(ax: Any, marks: Mapping[str, int], label: bool = True) -> list[Any]:
    """Marks in the x range as vertical lines, with `label` their labels kept apart: the labels."""
    lo, hi = ax.get_xlim()
    inside = {name: x for name, x in marks.items() if lo <= x <= hi}
    by_x = grouped(sorted(inside, key=inside.__getitem__), inside.__getitem__)
    for x, names in by_x.items():
        dotted = ":" if all("batch" in n for n in names) else "--"
        ax.axvline(x, color="grey", linestyle=dotted, linewidth=0.8, zorder=0)
    if not label:
        return []
    renderer = ax.figure.canvas.get_renderer()
    texts: list[Any] = []
    to_axes = ax.transAxes.inverted()
    box = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1}
    style: dict[str, Any] = {"va": "top", "fontsize": 7, "color": "dimgrey", "bbox": box}
    for x, names in by_x.items():
        # "LLC 32MB = 32MB batch": a batch's name already says its size.
        words = " = ".join(n if "batch" in n else f"{n} {format_size(x)}" for n in names)
        # Right of its line, or left of it near the right edge, to stay inside.
        side = "left" if to_axes.transform(ax.transData.transform((x, 1)))[0] < 0.75 else "right"
        text = ax.text(x, 0.97, words, transform=ax.get_xaxis_transform(), ha=side, **style)
        y = 0.97
        while y > 0.1 and any(
            text.get_window_extent(renderer).overlaps(t.get_window_extent(renderer)) for t in texts
        ):
            y -= _STEP
            text.set_y(y)
        texts.append(text)
    return texts


def overlapping(texts: Sequence[Any], renderer: Any) -> list[tuple[str, str]]:
    """The strings of the pairs of visible texts whose boxes overlap (for the tests, and checks)."""
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible()]
    return [(a, b) for (a, p), (b, q) in itertools.combinations(boxes, 2) if p.overlaps(q)]


@common.closes_on_error
def scaling_figure(rs: Any, title: str = "Clearing with several CPUs") -> Any:
    """The figure of plot_scaling(), not saved; ValueError for an empty result set."""
    from pagezero.measure.mem import thread_spread

    points = sorted(((r.params.get("threads", 1), r) for r in rs), key=lambda p: p[0])
    if not points:
        raise ValueError("nothing to plot in this result set")
    xs = [n for n, _ in points]
    agg = [gbps(r.bytes_per_sec) for _, r in points]
    per = [gbps(thread_spread(r)[0] or r.bytes_per_sec) for _, r in points]
    colour = kernel_colour(points[0][1].function)
    fig, ax = common.pyplot().subplots(figsize=(7, 4.5), layout="constrained")
    ax.plot(xs, agg, marker="o", color=colour, label="aggregate (first start to last end)")
    ax.plot(xs, per, marker="s", linestyle="--", color=colour, alpha=0.6, label="per thread (mean)")
    ideal = [agg[0] * n / xs[0] for n in xs]
    ax.plot(xs, ideal, color="grey", linestyle=":", label="ideal (one thread's rate x threads)")
    ax.set_xlabel("threads (each pinned to its own CPU)")
    ax.set_xticks(xs)
    # mem.scaling measures in one process: there is no between-run interval to draw.
    ax.set_ylabel(f"{common.RATE_AXIS}\none run: total bytes over total time", fontsize=9)
    return common.finish(fig, ax, title, rs.machine, common.pages_of(rs.results), grid="both")


def plot_scaling(rs: Any, stem: str, title: str = "Clearing with several CPUs") -> list[str]:
    """Aggregate rate against threads, and one thread's times the count: `stem`.png, .svg paths."""
    return common.save(scaling_figure(rs, title), stem)


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
    """A bar per point, named by label(its first result), in its function's colour: the paths."""
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
    """Grouped bars of compare(): a group per point, a bar per set (`names`), marked; the paths."""
    return common.save(comparison_figure(sets, names, title, threshold, alpha), stem)


def plot_variants(
    rs: Any,
    stem: str,
    base: str | None = None,
    title: str = "Functions side by side",
    threshold: float = 0.02,
    alpha: float = 0.01,
) -> list[str]:
    """Grouped bars of compare_variants(): a bar per function (`base` first), marked; the paths."""
    names, rows, _ = compare_variants(rs, base, threshold=threshold, alpha=alpha)
    return common.save(rows_figure(rows, names, rs, title, threshold, alpha), stem)
