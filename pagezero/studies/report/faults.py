"""`pagezero mem mmap` per page size: demand and populate faults, the kernel's own clearing,
and the headroom between them and user space's best clear of the same extents."""

from pagezero._core import MappingError, PagezeroError
from pagezero.figures import plot_bars
from pagezero.interrupt import as_interrupted
from pagezero.measure import fault
from pagezero.results.points import summarize_points
from pagezero.runs.sweeps import sweep_points
from pagezero.studies.report.cells import Section, failure_text, finish, holding
from pagezero.studies.report.words import interval_text, rate, ratio, runs_line
from pagezero.units import format_size, parse_size

# The fault workloads per page size: 4KB with THP refused and asked for, then the hugetlb
# sizes when their pools have the pages (or --reserve).
FAULT_PAGES = (("4KB", False), ("4KB", True), ("2MB", False), ("1GB", False))


def _fault_page(r):
    return r.params["page"] + (" + THP" if r.params.get("thp") else "")


def _fault_label(r):
    return f"{r.function} {_fault_page(r)}"


def _points(cfg, reserve, notes):
    size, loops = cfg["fault_size"], cfg["fault_loops"]
    sizes = {page: max(size, parse_size(page)) for page, _ in FAULT_PAGES}  # whole pages
    points = []
    for page, thp in FAULT_PAGES:
        p = fault.plan(sizes[page], page, loops, thp=thp)
        if p.hugetlb and not reserve:
            try:
                fault.check_hugepages(p)
            except MappingError as e:
                notes.append(f"{page} pages not measured: {e.strerror}")
                continue
        point = dict(size=sizes[page], page=page, thp=thp, loops=loops)
        points += [dict(point, function=f, reserve=reserve) for f in ("demand", "populate")]
    return points, sizes


def _headroom(section, sizes, cfg, functions, reserve, skipped):
    """The headroom table, measured right after the faults: the figures the summary quotes."""
    section.body += [
        "",
        "Headroom: demand faults beside the fastest user-space clear of the "
        "same extents (page-sized calls over a region of the same page size), "
        "measured right after, one run:",
        "",
        "| page | faults GB/s | best clear GB/s | kernel | headroom |",
        "|---|---|---|---|---|",
    ]
    for page, thp in FAULT_PAGES:
        if thp or page in skipped:
            continue
        try:
            loops = cfg["fault_loops"]
            h = fault.headroom(
                sizes[page], page, "demand", loops, reserve=reserve, clear_kernels=functions
            )
        except KeyboardInterrupt as e:
            section.interrupted = as_interrupted(e).signame
            return
        except (PagezeroError, OSError) as e:
            # Too little memory for the clears beside the faults: the fault table stands
            # without this row.
            section.body.append(f"| {page} | - | - | not measured: {failure_text(e)} | - |")
            continue
        fault_rate, best = rate(h.fault_rate), rate(h.best.bytes_per_sec)
        with holding(section):
            section.body.append(
                f"| {page} | {fault_rate} | {best} | {h.best.function} | {ratio(h.ratio)} |"
            )
            # An answer: the kernel's fault rate at this page size against the fastest clear.
            section.answers.append(
                f"Demand faults on {page} pages run at {fault_rate} GB/s; user space clears "
                f"the same extents at {best} GB/s ({h.best.function}): {ratio(h.ratio)} "
                f"headroom for the kernel's fault path (headroom table)."
            )
        if section.interrupted:
            return


def _tabulate(section, rs):
    # The figure's statistic and interval (faults.png draws this very summary): the median
    # of per-run medians, and the spread between runs, or one run's loops.
    rows = ["| page | workload | region | GB/s | interval |", "|---|---|---|---|---|"]
    for first, s in summarize_points(rs).values():
        rows.append(
            f"| {_fault_page(first)} | {first.function} | "
            f"{format_size(first.params['size'])} | {rate(s['median'])} | {interval_text(s)} |"
        )
    section.body = [
        "Each loop maps the region and touches every page (demand) or maps it populated "
        "(populate): the kernel zeroes every page it hands out, so this is its clearing rate "
        f"plus the fault path's cost, as `perf bench mem mmap`. {runs_line(rs)}",
        *["", *rows, "", "![fault rates](faults.png)"],
    ]


def study_faults(out_dir, cfg, info, functions, progress, reserve):
    """Demand and populate faults per page size, then the headroom to user space's best."""
    notes = []
    points, sizes = _points(cfg, reserve, notes)
    heading, title = (
        "Page faults: the kernel's own clearing",
        "Fault rate by page size and workload",
    )
    # A size whose pages are gone by the time its sweep maps them (another process took them
    # after the check) is named and left out, the other sizes kept (sweep_points).
    rs = sweep_points("mmap", points, cfg["runs"], cfg["warmup"], progress, notes)
    section = Section(heading, interrupted=rs.interrupted or None)
    figure = dict(plot=plot_bars, label=_fault_label, title=title)
    finish(section, out_dir, "faults", rs, lambda: _tabulate(section, rs), **figure)
    if not section.interrupted:
        skipped = {page for page, _ in FAULT_PAGES} - {r.params["page"] for r in rs.results}
        _headroom(section, sizes, cfg, functions, reserve, skipped)
    if notes:
        section.body += [""] + [f"- {n}" for n in notes]
    return section
