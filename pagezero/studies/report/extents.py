"""The extents study: every available clear kernel over extents from 4KB to
beyond the LLC, dense around the cache sizes (which kernel wins where), on
the kernel's own mappings (2MB pages when this machine gives them)."""

import os

from pagezero.figures import extent_of, plot_rates
from pagezero.runs.sweeps import default_sizes
from pagezero.studies.report.cells import Section, cells, draw, holding, run_points
from pagezero.studies.report.scales import MB, SMALL_REGION
from pagezero.studies.report.words import fastest_lines, markdown_table, runs_line
from pagezero.system.backing import kernel_backing
from pagezero.system.machine import llc_bytes
from pagezero.units import format_size

__all__ = ["study_extents"]


def _loops(size):
    # About 16MB of clearing per timed run, between 2 and 20 loops.
    return max(2, min(20, (16 * MB) // size))


def extent_points(extents, functions, region_args):
    """The sweep's points of the extents study: one call clears one extent;
    extents under 256KB are cleared repeatedly over a 256KB region, so that each
    timed loop is long enough for the clock reads around it not to count.

    Parameters
    ----------
    extents : iterable of int
        The extents, in bytes.
    functions : list of str
        The kernels to run at each extent.
    region_args : dict
        The buffer's pages (``page``, ``thp``), from
        :meth:`pagezero.system.backing.Backing.region_args`.

    Returns
    -------
    list of dict
        memset points (size, chunk, loops, pages, function).
    """
    points = []
    for e in extents:
        size = max(e, SMALL_REGION)
        points.append(
            {"size": size, "chunk": e if e < size else 0, "loops": _loops(size), **region_args}
        )
    return [dict(p, function=f) for p in points for f in functions]


def _tabulate(section, rs, backing, info):
    llc = llc_bytes(info)
    table = cells(rs, extent_of)
    xs = sorted({x for by_x in table.values() for x in by_x})
    section.summary = fastest_lines(table, xs, llc)
    section.body = [
        f"Each kernel clears an extent in one call, repeatedly, on {backing.label} "
        f"pages (the kernel clears through its direct map's huge pages); extents "
        f"under {format_size(SMALL_REGION)} are cleared in extent-sized calls over a "
        f"{format_size(SMALL_REGION)} region so the timing clock does not count. "
        f"Up to the LLC the buffer is hot; beyond it, each loop streams through "
        f"memory. {runs_line(rs)} GB/s:",
        "",
    ]
    if backing.note:
        section.body[1:1] = ["", f"Pages: {backing.note}."]
    section.body += markdown_table(table, xs, "extent", llc)
    section.body += ["", "![rate by extent](extents.png)"]


def study_extents(out_dir, cfg, info, functions, progress):
    """The extents study: every available clearing kernel over extents from 4KB
    to beyond the LLC, dense around the cache sizes, on 2MB pages where the machine
    gives them (:func:`pagezero.system.backing.kernel_backing`).

    It measures which kernel clears fastest where: the table and plot of rates
    (GB/s, 10^9 bytes/s) per kernel and extent, and the summary's "fastest"
    sentences for a hot buffer and for streaming beyond the LLC, ties named;
    results in ``extents.json``.

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
    extents = cfg["extents"] or default_sizes(info)
    backing = kernel_backing(max(max(extents), SMALL_REGION))
    rs = run_points(
        "memset",
        extent_points(extents, functions, backing.region_args()),
        cfg["runs"],
        cfg["warmup"],
        progress,
    )
    section = Section(f"Kernels by extent ({backing.label} pages)", interrupted=rs.interrupted)
    with holding(section):
        rs.save(os.path.join(out_dir, "extents.json"))
        if len(rs):
            _tabulate(section, rs, backing, info)
    if len(rs):
        draw(
            section,
            plot_rates,
            rs,
            os.path.join(out_dir, "extents"),
            title=f"Clearing rate by extent (memset, each kernel, {backing.label} pages)",
        )
    return section
