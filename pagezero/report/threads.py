"""Several CPUs clearing one region together: 1..N threads, each pinned to
its own CPU, clearing disjoint parts of it."""
import os

from ..bench import scaling
from ..plot import plot_scaling
from ..units import format_size
from .cells import Section, rate, ratio
from .cold import condition_kernels

__all__ = ["study_threads"]


def study_threads(out_dir, cfg, info, functions, progress):
    f = condition_kernels(functions)[0]
    title = "Several CPUs at once"
    try:
        rs = scaling(cfg["thread_size"], function=f, loops=3)
    except KeyboardInterrupt:
        return Section(title, interrupted=True)
    rs.save(os.path.join(out_dir, "threads.json"))
    plot_scaling(rs, os.path.join(out_dir, "threads"),
                 title=f"{f} clearing {format_size(cfg['thread_size'])} with several CPUs")
    one = rs.results[0].bytes_per_sec
    rows = ["| threads | aggregate GB/s | vs one thread |", "|---|---|---|"]
    for r in rs.results:
        rows.append(f"| {r.params.get('threads', 1)} | {rate(r.bytes_per_sec)} | "
                    f"{ratio(r.bytes_per_sec / one)} |")
    last = rs.results[-1]
    section = Section(title, [
        f"Threads pinned to distinct CPUs, started behind a barrier, clear disjoint parts of "
        f"one {format_size(cfg['thread_size'])} region with {f}: the way a parallel "
        f"gigantic-page clear or a pre-zeroing daemon would. One run (one process): total "
        f"bytes over total time of its loops.", ""] + rows + ["", "![scaling](threads.png)"])
    if len(rs) > 1:
        section.summary.append(
            f"{last.params.get('threads', 1)} CPUs clearing one "
            f"{format_size(cfg['thread_size'])} region together reach "
            f"{rate(last.bytes_per_sec)} GB/s, {ratio(last.bytes_per_sec / one)} one CPU's "
            f"{rate(one)} GB/s.")
    return section
