"""The TLB's share: one region cleared on 4KB and on 2MB pages (docs/studies/pages.rst)."""

from functools import partial

import pagezero.studies.report.words as words
from pagezero.analysis.cache import run_cache
from pagezero.studies.report.cells import Section, cells, sweep_study
from pagezero.system.backing import Backing, kernel_backing
from pagezero.system.kernels import clear_pages_kernel
from pagezero.units import format_size


def _tabulate(section, rs, size, small, huge, info):
    label_of = {(b.page, b.thp): b.label for b in (small, huge)}
    table = cells(rs, lambda r: label_of.get((r.params["page"], r.params.get("thp"))))
    llc = run_cache(info).effective_bytes  # the measured cache where it differs from sysfs
    small_l, huge_l = small.label, huge.label
    rows = []
    for f in sorted(table):
        a, b = table[f].get(small_l), table[f].get(huge_l)
        change = words.ratio(b["median"] / a["median"]) if a and b else "-"
        rows.append([f, words.cell_text(a, llc), words.cell_text(b, llc), change])
    header = ["kernel", f"{small_l} GB/s", f"{huge_l} GB/s", f"{huge_l} / {small_l}"]
    lines = words.md_table(header, rows)
    if any(words.marked(c, llc) for by in table.values() for c in by.values()):
        lines += ["", words.spread_footnote()]
    section.body = [
        f"Each kernel clears one {format_size(size)} region per loop in one call, "
        f"on 4KB pages (THP refused) and on {huge_l} pages, alternated in one "
        f"sweep: the difference is the TLB misses of 4KB pages, which "
        f"clear_pages() does not pay through the kernel's direct map. "
        f"{words.runs_line(rs)}",
        "",
        *([f"Pages: {huge.note}.", ""] if huge.note else []),
        *lines,
    ]
    kernel = clear_pages_kernel()
    a, b = table.get(kernel, {}).get(small_l), table.get(kernel, {}).get(huge_l)
    if a and b:
        section.summary.append(
            f"{kernel} (clear_pages() here) clears a {format_size(size)} region at "
            f"{words.rate(a['median'])} GB/s on 4KB pages and {words.rate(b['median'])} GB/s "
            f"on {huge_l} pages ({words.ratio(b['median'] / a['median'])}): the share of TLB "
            f"misses the kernel's direct map does not pay."
        )


def page_points(cfg, functions, huge):
    """The page-size study's memset points: each kernel over cfg's region, 4KB and `huge`."""
    size, loops = cfg["page_size"], cfg["page_loops"]
    return [
        {"function": f, "size": size, "loops": loops, **b.region_args()}
        for b in (Backing("4KB"), huge)
        for f in functions
    ]


def study_pages(out_dir, cfg, info, functions, progress):
    """The kernels on one large region on 4KB and on 2MB pages, alternated in one sweep."""
    size = cfg["page_size"]
    small, huge = Backing("4KB"), kernel_backing(size)
    if huge.how == "4KB":
        return Section(
            "Page size",
            [f"Not measured: this machine gives no 2MB pages now ({huge.note})."],
        )
    points = page_points(cfg, functions, huge)
    tabulate = partial(_tabulate, size=size, small=small, huge=huge, info=info)
    return sweep_study(out_dir, "pages", "Page size", cfg, progress, points, tabulate)
