"""The extents study: every available clear kernel over extents from 4KB to
beyond the LLC, dense around the cache sizes (which kernel wins where), on
the kernel's own mappings (2MB pages when this machine gives them)."""

import os

from ..mappings import kernel_backing
from ..plot import extent_of, plot_rates
from ..stats import TIE, best_kernels
from ..sweeps import default_sizes
from ..sysinfo import llc_bytes
from ..units import format_size
from .cells import Section, cells, draw, holding, markdown_table, rate, run_points, runs_line, span
from .scales import MB, SMALL_REGION

__all__ = ["study_extents", "HOT_QUESTION", "STREAM_QUESTION"]

# The two questions a "fastest" answers: they have different answers, since
# the stores that skip the caches lose while the buffer fits in them.
HOT_QUESTION = "reusing a buffer while it is hot (in cache)"
STREAM_QUESTION = "streaming through a region larger than the LLC, as the kernel clears fresh pages"


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
        :meth:`pagezero.mappings.Backing.region_args`.

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


def fastest_lines(table, xs, llc):
    """The summary's "fastest" sentences: one per range of extents with its
    kernel, each naming its question, quoting the table's cells at both ends.

    Parameters
    ----------
    table : dict
        Per kernel, per extent (bytes), a cell (``median`` in bytes/sec).
    xs : sequence of int
        The extents measured, in bytes.
    llc : int
        The LLC's size in bytes (0 when unknown).

    Returns
    -------
    list of str
        The sentences, in the summary's words.
    """
    rates = {f: {x: c["median"] for x, c in by_x.items()} for f, by_x in table.items()}
    groups = [
        (HOT_QUESTION, [x for x in xs if not llc or x <= llc]),
        (STREAM_QUESTION, [x for x in xs if llc and x > llc]),
    ]
    lines = []
    for question, group in groups:
        if not group:
            continue
        for r in best_kernels(rates, group):
            lo, hi, k = r["min_bytes"], r["max_bytes"], r["kernel"]
            ends = f"{rate(rates[k][lo])} GB/s at {format_size(lo)}"
            if hi != lo:
                ends += f", {rate(rates[k][hi])} GB/s at {format_size(hi)}"
            lines.append(
                f"{question[0].upper()}{question[1:]}, extents of {span(lo, hi)}: "
                f"{k} clears fastest, or within {TIE:.0%} of the fastest ({ends})."
            )
    return lines


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
    gives them (:func:`pagezero.mappings.kernel_backing`).

    It measures which kernel clears fastest where: the table and plot of rates
    (GB/s, 10^9 bytes/s) per kernel and extent, and the summary's "fastest"
    sentences for a hot buffer and for streaming beyond the LLC, ties named;
    results in ``extents.json``.

    Parameters
    ----------
    out_dir : str
        The report's folder: the study's results (JSON) and plots go there.
    cfg : dict
        The scale's settings (:data:`pagezero.report.SCALES`), ``runs`` included:
        the fresh processes per point.
    info : dict
        The machine (:func:`pagezero.sysinfo.machine`): its caches set the extents
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
