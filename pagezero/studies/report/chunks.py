"""The chunk study: a region cleared in chunks, where the rate steps (docs/studies/chunks.rst)."""

from functools import partial

import pagezero.studies.report.words as words
from pagezero.analysis.cache import run_cache
from pagezero.analysis.knee import KNEE_MIN_EXTENT, is_clear_step
from pagezero.figures import plot_rates
from pagezero.studies.report.cells import cells, sweep_study
from pagezero.system.backing import kernel_backing
from pagezero.system.kernels import kernel_roles, kernels
from pagezero.units import format_size

KNEE_HEADER = ["kernel", "chunks below the knee", "median GB/s", "chunks from the knee"]
KNEE_HEADER += ["median GB/s", "step"]


def by_role(roles, functions):
    """The kernels of `roles` (roles or names) among `functions`, else the first of them."""
    table = kernel_roles()
    names = [n for r in roles for n in table.get(r, (r,))]
    return [f for f in dict.fromkeys(names) if f in functions] or functions[:1]


def _chunk_of(r):
    return r.params["chunk"] or r.params["size"]


def allocation_evidence(kernel, knees, temporal):
    """Whether a temporal store's clear step is absent from every non-temporal one measured."""
    streaming = [k for name, k in knees.items() if name not in temporal]
    return (
        kernel in temporal
        and bool(streaming)
        and not any(k and is_clear_step(k["step"]) for k in streaming)
    )


def _tabulate(section, rs, size, backing, info):
    cache = run_cache(info)
    llc = cache.effective_bytes
    table = cells(rs, _chunk_of)
    knees = []
    by_kernel = {f: {x: c["median"] for x, c in by_x.items()} for f, by_x in table.items()}
    found = {f: words.knee_of(by_chunk) for f, by_chunk in by_kernel.items()}
    temporal = {k.name for k in kernels("clear") if k.temporal}
    for kernel, k in sorted(found.items()):
        if k:
            knees.append(words.knee_row(kernel, k))
            evidence = allocation_evidence(kernel, found, temporal)
            cache_text = f"cache: {cache.words()}"
            line = words.knee_line(
                kernel, k, by_kernel[kernel], llc, size, backing.label, evidence, cache_text
            )
            section.summary.append(line)
    xs = sorted({x for by_x in table.values() for x in by_x})
    section.body = [
        f"One {format_size(size)} region on {backing.label} pages cleared per loop "
        f"in chunk-sized calls, as `perf bench mem memset -k CHUNK`. "
        f"{words.runs_line(rs)} GB/s:",
        "",
        *([f"Pages: {backing.note}.", ""] if backing.note else []),
        *words.markdown_table(table, xs, "chunk", llc),
    ]
    if knees:
        section.body += [
            "",
            f"The step in rate (chunks of {format_size(KNEE_MIN_EXTENT)} and "
            "up, split where one step fits best; each side's median rate, and "
            "their ratio):",
            "",
        ] + words.md_table(KNEE_HEADER, knees)
    section.body += ["", "![rate by chunk](chunks.png)"]


def chunk_points(cfg, functions, backing):
    """The chunk study's memset points: cfg's region in each chunk, each chunk kernel."""
    size = cfg["chunk_size"]
    chunk_list = cfg["chunks"] or [1 << s for s in range(12, size.bit_length())]
    return [
        {"function": f, "size": size, "chunk": c, "loops": cfg["chunk_loops"]}
        | backing.region_args()
        for f in by_role(cfg["chunk_kernels"], functions)
        for c in chunk_list
    ]


def study_chunks(out_dir, cfg, info, functions, progress):
    """One region beyond the cache cleared in chunks of 4KB up to all of it: the step in rate."""
    size = cfg["chunk_size"]
    backing = kernel_backing(size)
    points = chunk_points(cfg, functions, backing)
    title = f"Clearing {format_size(size)} in chunks ({backing.label} pages)"
    tabulate = partial(_tabulate, size=size, backing=backing, info=info)
    plot = partial(plot_rates, cache_bytes=run_cache(info).measured_instead_of_llc)
    figure = dict(plot=plot, x=_chunk_of, xlabel="chunk per call", title=title)
    return sweep_study(out_dir, "chunks", "Chunk study", cfg, progress, points, tabulate, **figure)
