"""Several CPUs clearing one region together (docs/studies/threads.rst)."""

from pagezero.figures import plot_scaling
from pagezero.measure.mem import scaling
from pagezero.studies.report.cells import Section, finish
from pagezero.studies.report.cold import condition_kernels
from pagezero.studies.report.words import md_table, rate, ratio
from pagezero.units import format_size


def study_threads(out_dir, cfg, info, functions, progress):
    """1 to N threads clearing one region, against one thread's rate."""
    # One run (one process): the report's runs do not apply.
    f, size = condition_kernels(functions)[0], cfg["thread_size"]
    title = "Several CPUs at once"
    try:
        rs = scaling(size, function=f, loops=3)
    except KeyboardInterrupt:
        return Section(title, interrupted=True)
    section = Section(title)
    return finish(
        section,
        out_dir,
        "threads",
        rs,
        lambda: _tabulate(section, rs, f, size),
        plot_scaling,
        title=f"{f} clearing {format_size(size)} with several CPUs",
    )


def _tabulate(section, rs, f, size):
    one = rs.results[0].bytes_per_sec
    rows = [
        [str(r.params.get("threads", 1)), rate(r.bytes_per_sec), ratio(r.bytes_per_sec / one)]
        for r in rs.results
    ]
    section.body = [
        f"Threads pinned to distinct CPUs, started behind a barrier, clear disjoint parts of "
        f"one {format_size(size)} region on 4KB pages with {f}: the way a parallel "
        f"gigantic-page clear or a pre-zeroing daemon would. One run (one process): total "
        f"bytes over total time of its loops.",
        "",
        *md_table(["threads", "aggregate GB/s", "vs one thread"], rows),
        "",
        "![scaling](threads.png)",
    ]
    last = rs.results[-1]
    if len(rs) > 1:
        section.summary.append(
            f"{last.params.get('threads', 1)} CPUs clearing one {format_size(size)} region "
            f"together reach {rate(last.bytes_per_sec)} GB/s, {ratio(last.bytes_per_sec / one)} "
            f"one CPU's {rate(one)} GB/s."
        )
