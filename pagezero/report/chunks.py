"""The chunk study of `perf bench mem memset -k`: one large region cleared in
chunks of 4KB up to the whole region, on the kernel's own mappings: where
the CPU stops allocating cache lines, compared with the LLC size."""

import os
import statistics

from ..kernels import kernel_roles
from ..mappings import kernel_backing
from ..plot import plot_rates
from ..stats import KNEE_CLEAR_STEP, KNEE_MIN_EXTENT, find_knee
from ..sysinfo import llc_bytes
from ..units import format_size
from .cells import (
    Section,
    cells,
    draw,
    holding,
    markdown_table,
    rate,
    ratio,
    run_points,
    runs_line,
    span,
)

__all__ = ["study_chunks", "knee_of", "by_role"]


def by_role(roles, functions):
    """The kernels of `roles` (kernels.kernel_roles(), or a kernel's own
    name such as "default") that are among `functions`, else the first of them.

    Parameters
    ----------
    roles : iterable of str
        Roles or kernel names.
    functions : list of str
        The kernels this machine can run.

    Returns
    -------
    list of str
        The kernels chosen, each once, in the order of `roles`.
    """
    table = kernel_roles()
    names = [n for r in roles for n in table.get(r, (r,))]
    return [f for f in dict.fromkeys(names) if f in functions] or functions[:1]


def knee_of(by_chunk):
    """The step in rate with chunk size, as the report quotes it: {knee, below
    (the chunks of KNEE_MIN_EXTENT and up under the knee), above (the knee's and
    up), below_rate and above_rate (the median rate of each side), step
    (above_rate / below_rate)}; None with fewer than two chunks to look at.
    The knee is pagezero.stats.find_knee's; the step is the ratio of the two
    medians quoted beside it, so a reader can redo the division.

    Parameters
    ----------
    by_chunk : dict
        Per chunk (bytes), its median rate (bytes/sec).

    Returns
    -------
    dict or None
        The knee and the chunks (bytes) on each side, the median rate of each
        side (bytes/sec) and the step (a ratio).
    """
    try:
        knee, _ = find_knee(by_chunk.items())
    except ValueError:
        return None
    xs = sorted(x for x in by_chunk if x >= KNEE_MIN_EXTENT)
    below, above = [x for x in xs if x < knee], [x for x in xs if x >= knee]
    lo = statistics.median(by_chunk[x] for x in below)
    hi = statistics.median(by_chunk[x] for x in above)
    return {
        "knee": knee,
        "below": below,
        "above": above,
        "below_rate": lo,
        "above_rate": hi,
        "step": hi / lo,
    }


def _knee_row(kernel, k):
    return (
        f"| {kernel} | {span(k['below'][0], k['below'][-1])} | {rate(k['below_rate'])} | "
        f"{span(k['above'][0], k['above'][-1])} | {rate(k['above_rate'])} | "
        f"{ratio(k['step'])} |"
    )


def _knee_line(kernel, k, by_chunk, llc, region, label):
    xs = sorted(by_chunk)
    if k["step"] < KNEE_CLEAR_STEP:
        return (
            f"{kernel}: no clear step in rate with chunk size up to {format_size(xs[-1])} "
            f"(whole {format_size(region)} region on {label} pages: "
            f"{rate(by_chunk[xs[-1]])} GB/s)."
        )
    where = (
        f"chunks of {span(k['above'][0], k['above'][-1])} clear {ratio(k['step'])} as fast "
        f"as chunks of {span(k['below'][0], k['below'][-1])} (medians "
        f"{rate(k['above_rate'])} vs {rate(k['below_rate'])} GB/s), clearing a "
        f"{format_size(region)} region on {label} pages"
    )
    knee, last_below = k["knee"], k["below"][-1]
    if llc and llc // 2 <= knee <= 2 * llc and last_below >= llc // 4:
        # The threshold "mm: folio_zero_user: clear contiguous pages" (2025) reports on
        # AMD Zen: long enough stores stop allocating cache lines near the LLC size.
        return (
            f"{kernel} stops allocating cache lines above ~{format_size(last_below)} per "
            f"call here (LLC: {format_size(llc)}): {where}."
        )
    return f"{kernel}: the rate steps up at {format_size(knee)} per call: {where}."


def _chunk_of(r):
    return r.params["chunk"] or r.params["size"]


def _tabulate(section, rs, size, backing, info):
    llc = llc_bytes(info)
    table = cells(rs, _chunk_of)
    knees = [
        "| kernel | chunks below the knee | median GB/s | chunks from the knee | "
        "median GB/s | step |",
        "|---|---|---|---|---|---|",
    ]
    for kernel, by_x in sorted(table.items()):
        by_chunk = {x: c["median"] for x, c in by_x.items()}
        k = knee_of(by_chunk)
        if k:
            knees.append(_knee_row(kernel, k))
            section.summary.append(_knee_line(kernel, k, by_chunk, llc, size, backing.label))
    xs = sorted({x for by_x in table.values() for x in by_x})
    section.body = [
        f"One {format_size(size)} region on {backing.label} pages cleared per loop "
        f"in chunk-sized calls, as `perf bench mem memset -k CHUNK`. "
        f"{runs_line(rs)} GB/s:",
        "",
    ]
    if backing.note:
        section.body[1:1] = ["", f"Pages: {backing.note}."]
    section.body += markdown_table(table, xs, "chunk", llc)
    if len(knees) > 2:
        section.body += [
            "",
            f"The step in rate (chunks of {format_size(KNEE_MIN_EXTENT)} and "
            "up, split where one step fits best; each side's median rate, and "
            "their ratio):",
            "",
        ] + knees
    section.body += ["", "![rate by chunk](chunks.png)"]


def study_chunks(out_dir, cfg, info, functions, progress):
    """The chunk study: one large region (beyond the LLC) cleared per loop in
    chunk-sized calls from 4KB up to the whole region, with ``clear_pages()``'s
    kernel and the widest non-temporal one, on 2MB pages where the machine gives
    them (:func:`pagezero.mappings.kernel_backing`).

    It finds the step in rate where the CPU stops allocating cache lines (the LLC
    knee of "mm: folio_zero_user: clear contiguous pages", 2025) and sets it against
    the LLC size; results in ``chunks.json``, the plot in ``chunks.png``/``.svg``.

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
    size = cfg["chunk_size"]
    chunk_list = cfg["chunks"] or [1 << s for s in range(12, size.bit_length())]
    chosen = by_role(cfg["chunk_kernels"], functions)
    backing = kernel_backing(size)
    points = [
        {
            "function": f,
            "size": size,
            "chunk": c,
            "loops": cfg["chunk_loops"],
            **backing.region_args(),
        }
        for f in chosen
        for c in chunk_list
    ]
    rs = run_points("memset", points, cfg["runs"], cfg["warmup"], progress)
    section = Section(f"Chunk study ({backing.label} pages)", interrupted=rs.interrupted)
    with holding(section):
        rs.save(os.path.join(out_dir, "chunks.json"))
        if len(rs):
            _tabulate(section, rs, size, backing, info)
    if len(rs):
        draw(
            section,
            plot_rates,
            rs,
            os.path.join(out_dir, "chunks"),
            x=_chunk_of,
            xlabel="chunk per call",
            title=f"Clearing {format_size(size)} in chunks ({backing.label} pages)",
        )
    return section
