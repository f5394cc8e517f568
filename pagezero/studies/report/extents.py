"""The extents study: every available clear kernel over extents from 4KB to beyond the LLC,
dense around the cache sizes (which kernel wins where), on the kernel's own mappings (2MB
pages when this machine gives them)."""

from functools import partial

from pagezero.figures import extent_of, plot_rates
from pagezero.runs.sweeps import default_sizes
from pagezero.studies.report.cells import cells, sweep_study
from pagezero.studies.report.scales import MB, SMALL_REGION
from pagezero.studies.report.words import fastest_lines, markdown_table, runs_line
from pagezero.system.backing import kernel_backing
from pagezero.system.machine import llc_bytes
from pagezero.units import format_size


def extent_points(extents, functions, region_args):
    """memset points clearing each extent in one call; small ones over SMALL_REGION."""
    points = []
    for e in extents:
        size = max(e, SMALL_REGION)
        loops = max(2, min(20, (16 * MB) // size))  # about 16MB of clearing per timed run
        points.append({"size": size, "chunk": e if e < size else 0, "loops": loops, **region_args})
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
        *([f"Pages: {backing.note}.", ""] if backing.note else []),
        *markdown_table(table, xs, "extent", llc),
        "",
        "![rate by extent](extents.png)",
    ]


def study_extents(out_dir, cfg, info, functions, progress):
    """Which kernel clears fastest where: rates per kernel and extent, and the sentences."""
    extents = cfg["extents"] or default_sizes(info)
    backing = kernel_backing(max(max(extents), SMALL_REGION))
    points = extent_points(extents, functions, backing.region_args())
    heading = f"Kernels by extent ({backing.label} pages)"
    title = f"Clearing rate by extent (memset, each kernel, {backing.label} pages)"
    tabulate = partial(_tabulate, backing=backing, info=info)
    figure = dict(plot=plot_rates, title=title)
    return sweep_study(out_dir, "extents", heading, cfg, progress, points, tabulate, **figure)
