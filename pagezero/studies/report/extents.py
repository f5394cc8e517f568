"""The extents study (docs/studies/extents.rst): every clear kernel from 4KB to beyond the
cache; it sets the cache the run has in the machine() dict the later studies get."""

from functools import partial

from pagezero.analysis.cache import INFO_KEY, run_cache
from pagezero.figures import extent_of, plot_rates
from pagezero.runs.sweeps import default_sizes, sweep_points
from pagezero.studies.cache import SMALL_REGION, cache_of, extend, extent_points, settle_line
from pagezero.studies.report.cells import Section, cells, finish
from pagezero.studies.report.headline import (
    answer,
    cache_line,
    headline_rows,
    headline_table,
    headline_text,
    pages_by_extent,
    pages_words,
)
from pagezero.studies.report.words import fastest_lines, markdown_table, runs_line
from pagezero.system.backing import kernel_backing
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.units import format_size


def _tabulate(section, rs, backing, info):
    table = cells(rs, extent_of)
    xs = sorted({x for by_x in table.values() for x in by_x})
    cache = cache_of({f: {x: c["median"] for x, c in by.items()} for f, by in table.items()}, info)
    info[INFO_KEY] = cache.to_json()  # for the studies after this one
    llc, words = cache.effective_bytes, cache.words()
    nontemporal = {k.name for k in kernels("clear") if not k.temporal}
    portable = {k.name for k in kernels("clear") if k.arch == "any"}
    rows = headline_rows(table, xs, cache, clear_pages_kernel(), portable)
    section.answers = [answer(r, nontemporal) for r in rows]
    section.text = headline_text(rows)
    section.summary = [cache_line(cache, xs[-1]), *fastest_lines(table, xs, llc, words)]
    pages = pages_by_extent(rs, backing.label)
    section.body = [
        f"Each kernel clears an extent in one call, repeatedly, on {pages_words(pages)} (the "
        f"kernel clears through its direct map's huge pages; a buffer under 2MB cannot be on a "
        f"2MB page); extents under {format_size(SMALL_REGION)} are cleared in extent-sized "
        f"calls over a {format_size(SMALL_REGION)} region so the timing clock does not "
        f"count. Up to the cache, {words}, the buffer is hot; beyond it, each loop streams "
        f"through memory. {runs_line(rs)} GB/s:",
        "",
        *([f"Pages: {backing.note}.", ""] if backing.note else []),
        *([settled, ""] if (settled := settle_line(rs)) else []),
        *markdown_table(table, xs, "extent", llc, pages),
        "",
        "![rate by extent](extents.png)",
    ]
    if rows:
        section.body += [
            "",
            "The headline table: clear_pages()'s kernel on this CPU against the fastest "
            "other store, at the largest extent in cache and the largest beyond it (GB/s):",
            "",
            *headline_table(rows),
        ]


def study_extents(out_dir, cfg, info, functions, progress):
    """Which kernel clears fastest where: rates per kernel and extent, and the sentences."""
    extents = cfg["extents"] or default_sizes(info)
    backing = kernel_backing(max(max(extents), SMALL_REGION))
    points = extent_points(extents, functions, backing.region_args())
    notes = []
    # No warm-up pass: it would map and unmap buffers of its own, warming nothing a timed
    # point uses; each point settles its own buffer instead (extent_points).
    rs = sweep_points("memset", points, cfg["runs"], 0, progress, notes)
    if cfg.get("extend_extents"):
        rs = extend(rs, functions, info, cfg["runs"], progress, notes)
    section = Section("Kernels by extent", interrupted=rs.interrupted)
    title = f"Clearing rate by extent (memset, each kernel, {backing.label} pages)"
    tabulate = partial(_tabulate, section, rs, backing=backing, info=info)
    plot = partial(_plot, info=info)
    return finish(section, out_dir, "extents", rs, tabulate, plot=plot, notes=notes, title=title)


def _plot(rs, stem, info, **figure):
    """plot_rates() with the measured cache marked where it differs from sysfs's LLC."""
    return plot_rates(rs, stem, cache_bytes=run_cache(info).measured_instead_of_llc, **figure)
