"""The TLB's share: one region cleared on 4KB and on 2MB pages (docs/studies/pages.rst)."""

from functools import partial

from pagezero.analysis.cache import run_cache
from pagezero.studies.report.cells import Section, cells, sweep_study
from pagezero.studies.report.words import cell_text, marked, rate, ratio, runs_line, spread_footnote
from pagezero.system.backing import Backing, kernel_backing
from pagezero.system.kernels import clear_pages_kernel
from pagezero.units import format_size


def _tabulate(section, rs, size, small, huge, info):
    label_of = {(b.page, b.thp): b.label for b in (small, huge)}
    table = cells(rs, lambda r: label_of.get((r.params["page"], r.params.get("thp"))))
    llc = run_cache(info).effective_bytes  # the measured cache where it differs from sysfs
    small_l, huge_l = small.label, huge.label
    rows = [
        f"| kernel | {small_l} GB/s | {huge_l} GB/s | {huge_l} / {small_l} |",
        "|---|---|---|---|",
    ]
    for f in sorted(table):
        a, b = table[f].get(small_l), table[f].get(huge_l)
        change = ratio(b["median"] / a["median"]) if a and b else "-"
        rows.append(f"| {f} | {cell_text(a, llc)} | {cell_text(b, llc)} | {change} |")
    if any(marked(c, llc) for by in table.values() for c in by.values()):
        rows += ["", spread_footnote()]
    section.body = [
        f"Each kernel clears one {format_size(size)} region per loop in one call, "
        f"on 4KB pages (THP refused) and on {huge_l} pages, alternated in one "
        f"sweep: the difference is the TLB misses of 4KB pages, which "
        f"clear_pages() does not pay through the kernel's direct map. "
        f"{runs_line(rs)}",
        "",
        *([f"Pages: {huge.note}.", ""] if huge.note else []),
        *rows,
    ]
    kernel = clear_pages_kernel()
    a, b = table.get(kernel, {}).get(small_l), table.get(kernel, {}).get(huge_l)
    if a and b:
        section.summary.append(
            f"{kernel} (clear_pages() here) clears a {format_size(size)} region at "
            f"{rate(a['median'])} GB/s on 4KB pages and {rate(b['median'])} GB/s on {huge_l} "
            f"pages ({ratio(b['median'] / a['median'])}): the share of TLB misses the kernel's "
            f"direct map does not pay."
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
