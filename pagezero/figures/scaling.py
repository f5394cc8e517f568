"""The aggregate rate of several CPUs clearing one region, against the ideal."""

from __future__ import annotations

from typing import Any

from pagezero.figures.common import RATE_AXIS, closes_on_error, finish, pages_of, pyplot, save
from pagezero.figures.palette import kernel_colour
from pagezero.units import gbps


@closes_on_error
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
    fig, ax = pyplot().subplots(figsize=(7, 4.5), layout="constrained")
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
    # mem.scaling measures in one process: there is no between-run interval to draw.
    ax.set_ylabel(f"{RATE_AXIS}\none run: total bytes over total time", fontsize=9)
    return finish(fig, ax, title, rs.machine, pages_of(rs.results), grid="both")


def plot_scaling(rs: Any, stem: str, title: str = "Clearing with several CPUs") -> list[str]:
    """Aggregate rate against thread count (pagezero.measure.mem.scaling, one run) with the
    ideal, one thread's rate times the count, written to `stem`.png and .svg; the paths."""
    return save(scaling_figure(rs, title), stem)
