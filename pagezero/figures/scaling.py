"""The aggregate rate of several CPUs clearing one region, against the ideal."""

from __future__ import annotations

from typing import Any

from pagezero.figures.common import add_footer, closes_on_error, pages_of, pyplot, save
from pagezero.figures.palette import kernel_colour
from pagezero.units import gbps

__all__ = ["scaling_figure", "plot_scaling"]


@closes_on_error
def scaling_figure(rs: Any, title: str = "Clearing with several CPUs") -> Any:
    """The figure of :func:`plot_scaling`, not saved.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        An empty result set.
    """
    from pagezero.measure.mem import thread_spread

    points = sorted(((r.params.get("threads", 1), r) for r in rs), key=lambda p: p[0])
    if not points:
        raise ValueError("nothing to plot in this result set")
    plt = pyplot()
    xs = [n for n, _ in points]
    agg = [gbps(r.bytes_per_sec) for _, r in points]
    per = [gbps(thread_spread(r)[0] or r.bytes_per_sec) for _, r in points]
    colour = kernel_colour(points[0][1].function)
    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    ax.plot(xs, agg, marker="o", color=colour, label="aggregate (first start to last end)")
    ax.plot(xs, per, marker="s", linestyle="--", color=colour, alpha=0.6, label="per thread (mean)")
    ax.plot(
        xs,
        [agg[0] * n / xs[0] for n in xs],
        color="grey",
        linestyle=":",
        label="ideal (one thread's rate x threads)",
    )
    ax.set_xlabel("threads (each pinned to its own CPU)")
    ax.set_xticks(xs)
    # bench.scaling measures in one process: there is no between-run interval to draw.
    ax.set_ylabel("rate (GB/s, 10^9 bytes/s)\none run: total bytes over total time", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(title, fontsize=11)
    add_footer(fig, rs.machine, pages_of(rs.results))
    return fig


def plot_scaling(rs: Any, stem: str, title: str = "Clearing with several CPUs") -> list[str]:
    """Aggregate rate against thread count (:func:`pagezero.measure.mem.scaling`), with
    the ideal line: one thread's rate times the count, which shared memory bandwidth
    bends away from. One run, as the axis label says.

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
    return save(scaling_figure(rs, title), stem)
