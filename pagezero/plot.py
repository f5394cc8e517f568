"""Plots of result sets, as PNG and SVG, readable without a caption.

Rates are drawn in GB/s (10^9 bytes per second) against extents on a log2
axis, with the machine's cache sizes and the kernel's clearing batch sizes
(8MB in "mm: folio_zero_user: clear contiguous pages" v6-v8 (2025), 32MB
as merged in Linux 7.0) marked, since those are where
the curves are expected to bend. The machine is named in every title.
"""

import os

from .comparison import compare
from .sysinfo import cache_bytes, llc_bytes
from .units import GBPS, format_size, gbps

__all__ = ["plot_rates", "plot_bars", "plot_comparison", "plot_scaling", "extent_of"]

BATCHES = {"8MB batch": 8 << 20, "32MB batch": 32 << 20}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed, none assumed
    import matplotlib.pyplot as plt

    return plt


def extent_of(result):
    """Bytes per kernel call: the chunk, or the whole size when chunk is 0.

    Parameters
    ----------
    result : pagezero.Result
        A memset or memcpy result.

    Returns
    -------
    int
        The extent, in bytes.
    """
    return result.params.get("chunk") or result.params["size"]


def _title(text, rs):
    cpu = rs.machine.get("cpu_model", "unknown CPU")
    return f"{text}\n{cpu}, {rs.machine.get('kernel_release', '')}"


def _save(fig, stem):
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = f"{stem}.{ext}"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    _pyplot().close(fig)
    return paths


def _mark_thresholds(ax, rs):
    marks = {
        "L1d": cache_bytes(rs.machine, 1, "Data"),
        "L2": cache_bytes(rs.machine, 2),
        "LLC": llc_bytes(rs.machine),
        **BATCHES,
    }
    lo, hi = ax.get_xlim()
    for i, (name, x) in enumerate(
        sorted(((n, x) for n, x in marks.items() if x), key=lambda m: m[1])
    ):
        if lo <= x <= hi:
            style = ":" if "batch" in name else "--"
            ax.axvline(x, color="grey", linestyle=style, linewidth=1)
            ax.text(
                x,
                0.98 - 0.06 * (i % 2),
                f" {name} {format_size(x)}",
                rotation=90,
                transform=ax.get_xaxis_transform(),
                va="top",
                fontsize=7,
                color="dimgrey",
            )


def plot_rates(rs, stem, x=extent_of, xlabel="extent per call", title="Clearing rate"):
    """Median rate (GB/s, error bars min..max) against x(result) per function, on a
    log2 x axis, with the cache sizes marked.

    Parameters
    ----------
    rs : pagezero.ResultSet
        Results in bytes/sec.
    stem : str
        The path of the files to write, without extension.
    x : callable
        The x value of a result, in bytes (default: its extent).
    xlabel, title : str
        The axis label and the title.

    Returns
    -------
    list of str
        The paths written: ``stem + ".png"`` and ``stem + ".svg"``.
    """
    plt = _pyplot()
    series = {}
    for first, results in rs.points():
        if first.unit != "bytes/sec":
            continue
        values = sorted(v for r in results for v in r.values())
        series.setdefault(first.function, []).append(
            (x(first), values[len(values) // 2], values[0], values[-1])
        )
    if not series:
        raise ValueError("no rates (bytes/sec) to plot in this result set")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for name, pts in sorted(series.items()):
        pts.sort()
        xs = [p[0] for p in pts]
        med = [gbps(p[1]) for p in pts]
        err = [[gbps(p[1] - p[2]) for p in pts], [gbps(p[3] - p[1]) for p in pts]]
        ax.errorbar(xs, med, yerr=err, marker="o", markersize=3, capsize=2, label=name)
    ax.set_xscale("log", base=2)
    ticks = sorted({p[0] for pts in series.values() for p in pts})
    step = max(1, len(ticks) // 12)
    ax.set_xticks(ticks[::step])
    ax.set_xticklabels([format_size(t) for t in ticks[::step]], rotation=45, ha="right")
    ax.set_xlabel(f"{xlabel} (bytes, log2 scale)")
    ax.set_ylabel("rate (GB/s, 10^9 bytes/s; median, bars min..max)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    _mark_thresholds(ax, rs)
    ax.set_title(_title(title, rs), fontsize=10)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, stem)


def plot_bars(rs, stem, label=lambda r: r.label(), title="Rates"):
    """One bar per grid point: the median of its runs' medians, with the spread
    between runs (between loops when one run measured it) as the error bar: the
    figures the report's tables and ``pagezero compare`` give.

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
    from .points import summarize_points

    plt = _pyplot()
    rows = []
    spread_of = set()
    for first, s in summarize_points(rs).values():
        rows.append((label(first), s["median"], s["median"] * s["spread_pct"] / 100, first.unit))
        spread_of.add(s["spread_of"])
    if not rows:
        raise ValueError("nothing to plot in this result set")
    unit = rows[0][3]
    what = f"median +- spread between {' or '.join(sorted(spread_of))}"
    scale, ylabel = (
        (GBPS, f"rate (GB/s, 10^9 bytes/s; {what})")
        if unit == "bytes/sec"
        else (1.0, f"{unit} ({what})")
    )
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(rows) + 2), 5))
    ax.bar(
        range(len(rows)),
        [r[1] / scale for r in rows],
        yerr=[r[2] / scale for r in rows],
        capsize=3,
        color="tab:blue",
    )
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r[0] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(_title(title, rs), fontsize=10)
    return _save(fig, stem)


def plot_comparison(sets, names, stem, title="Comparison", threshold=0.02, alpha=0.01):
    """Grouped bars, one group per point of the base, one bar per result set.

    Each bar is the median of per-run medians, its error bar the spread between runs
    (of the loops where a side has one run); the markers of
    :func:`pagezero.comparison.compare`, with the same `threshold` and `alpha` as the
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
    plt = _pyplot()
    rows = compare(sets[0], *sets[1:], threshold=threshold, alpha=alpha)
    width = 0.8 / len(sets)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows) + 2), 5))
    unit = rows[0]["unit"] if rows else "bytes/sec"
    scale = GBPS if unit == "bytes/sec" else 1.0
    for j, name in enumerate(names):
        centers, errs = [], []
        for row in rows:
            s = row["base"] if j == 0 else row["changes"][j - 1]
            centers.append(s["center"] / scale if s else 0.0)
            errs.append(s["center"] * s["spread_pct"] / 100 / scale if s else 0.0)
        xs = [i + (j - (len(sets) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, centers, width, yerr=errs, capsize=2, label=name)
        if j:
            for x_, m, row in zip(xs, centers, rows):
                c = row["changes"][j - 1]
                if c and c["marker"]:
                    ax.text(x_, m, c["marker"], ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["label"] for r in rows], rotation=30, ha="right", fontsize=8)
    what = f"median of per-run medians; markers beyond {100 * threshold:g}% at alpha {alpha:g}"
    ax.set_ylabel(
        f"rate (GB/s, 10^9 bytes/s; {what})" if unit == "bytes/sec" else f"{unit} ({what})"
    )
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(_title(title, sets[0]), fontsize=10)
    return _save(fig, stem)


def plot_scaling(rs, stem, title="Clearing with several CPUs"):
    """Aggregate rate against thread count (:func:`pagezero.bench.scaling`), with
    the ideal line: one thread's rate times the count, which shared memory bandwidth
    bends away from.

    Parameters
    ----------
    rs : pagezero.ResultSet
        One result per thread count.
    stem : str
        The path of the files to write, without extension.
    title : str
        The title.

    Returns
    -------
    list of str
        The paths written: ``stem + ".png"`` and ``stem + ".svg"``.
    """
    from .bench import thread_spread

    plt = _pyplot()
    points = sorted((r.params.get("threads", 1), r) for r in rs)
    if not points:
        raise ValueError("nothing to plot in this result set")
    xs = [n for n, _ in points]
    agg = [gbps(r.bytes_per_sec) for _, r in points]
    per = [gbps(thread_spread(r)[0] or r.bytes_per_sec) for _, r in points]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(xs, agg, marker="o", label="aggregate (first start to last end)")
    ax.plot(xs, per, marker="s", linestyle="--", label="per thread (mean)")
    ax.plot(
        xs,
        [agg[0] * n / xs[0] for n in xs],
        color="grey",
        linestyle=":",
        label="ideal (one thread's rate x threads)",
    )
    ax.set_xlabel("threads (each pinned to its own CPU)")
    ax.set_xticks(xs)
    ax.set_ylabel("rate (GB/s, 10^9 bytes/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(_title(title, rs), fontsize=10)
    return _save(fig, stem)
