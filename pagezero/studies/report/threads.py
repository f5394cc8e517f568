"""Several CPUs clearing one region together: 1..N threads, each pinned to
its own CPU, clearing disjoint parts of it."""

import os

from pagezero.figures import plot_scaling
from pagezero.measure.mem import scaling
from pagezero.studies.report.cells import Section, draw, holding
from pagezero.studies.report.cold import condition_kernels
from pagezero.studies.report.words import rate, ratio
from pagezero.units import format_size

__all__ = ["study_threads"]


def study_threads(out_dir, cfg, info, functions, progress):
    """The threads study: 1 to N threads, each pinned to its own CPU and started
    behind a barrier, clearing disjoint parts of one region with ``clear_pages()``'s
    kernel on 4KB pages (:func:`pagezero.measure.mem.scaling`).

    It measures the aggregate rate (all bytes over first start to last end, GB/s)
    against one thread's, where memory bandwidth rather than the instruction becomes
    the limit. One run (one process): the report's runs do not apply. Results in
    ``threads.json``, the plot in ``threads.png``/``.svg``.

    Parameters
    ----------
    out_dir : str
        The report's folder: the study's results (JSON) and plots go there.
    cfg : dict
        The scale's settings (:data:`pagezero.studies.report.SCALES`), ``runs`` included:
        the fresh processes per point.
    info : dict
        The machine (:func:`pagezero.system.machine.machine`): its caches set the extents
        and the LLC the tables refer to.
    functions : list of str
        The clearing kernels this machine can run.
    progress : file or None
        Where the sweep's progress goes, if anywhere.

    Returns
    -------
    Section
        The study's part of ``report.md``: its heading, body (tables, plot) and
        summary sentences; marked interrupted when a signal stopped it.
    """
    f = condition_kernels(functions)[0]
    title = "Several CPUs at once (4KB pages)"
    try:
        rs = scaling(cfg["thread_size"], function=f, loops=3)
    except KeyboardInterrupt:
        return Section(title, interrupted=True)
    section = Section(title)
    with holding(section):
        rs.save(os.path.join(out_dir, "threads.json"))
        _tabulate(section, rs, f, cfg["thread_size"])
    draw(
        section,
        plot_scaling,
        rs,
        os.path.join(out_dir, "threads"),
        title=f"{f} clearing {format_size(cfg['thread_size'])} with several CPUs",
    )
    return section


def _tabulate(section, rs, f, size):
    one = rs.results[0].bytes_per_sec
    rows = ["| threads | aggregate GB/s | vs one thread |", "|---|---|---|"]
    for r in rs.results:
        rows.append(
            f"| {r.params.get('threads', 1)} | {rate(r.bytes_per_sec)} | "
            f"{ratio(r.bytes_per_sec / one)} |"
        )
    section.body = (
        [
            f"Threads pinned to distinct CPUs, started behind a barrier, clear disjoint parts of "
            f"one {format_size(size)} region with {f}: the way a parallel gigantic-page clear or "
            f"a pre-zeroing daemon would. One run (one process): total bytes over total time of "
            f"its loops.",
            "",
        ]
        + rows
        + ["", "![scaling](threads.png)"]
    )
    last = rs.results[-1]
    if len(rs) > 1:
        section.summary.append(
            f"{last.params.get('threads', 1)} CPUs clearing one {format_size(size)} region "
            f"together reach {rate(last.bytes_per_sec)} GB/s, {ratio(last.bytes_per_sec / one)} "
            f"one CPU's {rate(one)} GB/s."
        )
