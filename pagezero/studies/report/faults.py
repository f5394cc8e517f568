"""Faults per page size, sampled inside, and their headroom (docs/studies/faults.rst)."""

import statistics

import pagezero.studies.report.words as words
from pagezero._core import MappingError, PagezeroError
from pagezero.figures import plot_bars
from pagezero.interrupt import as_interrupted
from pagezero.measure import fault
from pagezero.results.points import summarize_points
from pagezero.runs.sweeps import sweep_points
from pagezero.studies.predict.model import SAMPLED, inside
from pagezero.studies.report.cells import Section, failure_text, finish, holding
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
        points += [dict(point, function="demand", reserve=reserve, **SAMPLED)]
        points += [dict(point, function="populate", reserve=reserve)]
    return points, sizes


def inside_faults(rs):
    """Per page: (Inside, median on-CPU fault rate over share, median fault rate), or (why, None,
    None)."""
    found = {}
    for first, results in rs.points():
        if first.function != "demand":
            continue
        seen, clearing, faults = inside(results), None, None
        if not isinstance(seen, str):
            # The share is of the run's CPU time: the clear's rate is the on-CPU rate over it.
            share = [r.details["profile"]["clearing_share"] for r in results]
            runs = [(r.bytes_per_sec, fault.on_cpu_rate(r), s) for r, s in zip(results, share)]
            runs = [(b, c, s) for b, c, s in runs if b and c and s]
            if runs:
                clearing = statistics.median(c / s for _, c, s in runs)
                faults = statistics.median(b for b, _, _ in runs)
        found[_fault_page(first)] = (seen, clearing, faults)
    return found


def _inside_table(found):
    """The "Inside the fault" table per page size, and lines why not."""
    sampled = {page: x for page, x in found.items() if not isinstance(x[0], str)}
    whys = dict.fromkeys(why for why, *_ in found.values() if isinstance(why, str))
    lines = ["", "Inside the fault: where the CPU was during the demand faults, sampled:", ""]
    if not sampled:
        return lines[:1] + [f"Inside the fault: {'; '.join(whys) or 'no demand faults'}."]
    groups = list(dict.fromkeys(g for seen, *_ in sampled.values() for g in seen.groups))
    header = ["page", "clearing share", "routine", "kernel clears at GB/s", *groups, "samples"]
    rows = [
        [page, seen.share_text(), seen.routines_text(), words.rate(clearing)]
        + [f"{seen.groups.get(g, 0.0):.0%}" for g in groups]
        + [str(seen.samples)]
        for page, (seen, clearing, _) in sampled.items()
    ]
    lines += words.md_table(header, rows)
    return lines + [f"\n{page}: {why}." for page, (why, *_) in found.items() if page not in sampled]


def _answer(page, fault_rate, h, seen, clearing):
    """A page size's answer: its clearing inside the fault, else its fault rate, vs the best."""
    best = words.rate(h.best.bytes_per_sec)
    if clearing is None:
        return (
            f"{words.ratio(h.ratio)} headroom: demand faults on {page} pages run at {fault_rate} "
            f"GB/s, user space clears the same extents at {best} GB/s ({h.best.function}) "
            f"(faults table)."
        )
    return (
        f"{words.rate(clearing)} GB/s: the kernel's clearing inside a {page} demand fault "
        f"({seen.share:.0%} of its time; {seen.routines_text()}), against {best} GB/s for "
        f"the best user-space store (faults table)."
    )


def _headroom(section, sizes, cfg, functions, reserve, skipped, found):
    """The headroom table, measured right after the faults: the figures the summary quotes."""
    section.body += [
        "",
        "Headroom: demand faults beside the fastest user-space clear of the "
        "same extents (page-sized calls over a region of the same page size), "
        "measured right after, one run; where the faults were sampled, also the kernel's "
        "clearing inside the fault (the on-CPU fault rate over the clearing share, from the table "
        "above) against the same clear, like with like:",
        "",
        "| page | faults GB/s | best clear GB/s | kernel | headroom | kernel clears inside "
        "the fault GB/s | clearing headroom |",
        "|---|---|---|---|---|---|---|",
    ]
    text = []  # summary.txt's rows
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
            # Too little memory for the clears beside the faults: the row says so.
            section.body.append(f"| {page} | - | - | not measured: {failure_text(e)} | - | - | - |")
            continue
        fault_rate, best = words.rate(h.fault_rate), words.rate(h.best.bytes_per_sec)
        seen, clearing, sampled = found.get(page, (None, None, None))
        inner = "- | -"
        if clearing:
            inner = f"{words.rate(clearing)} | {words.ratio(h.best.bytes_per_sec / clearing)}"
        with holding(section):
            section.body.append(
                f"| {page} | {fault_rate} | {best} | {h.best.function} | {words.ratio(h.ratio)} "
                f"| {inner} |"
            )
            section.answers.append(_answer(page, fault_rate, h, seen, clearing))
            # Beside a share, the fault rate of the very runs sampled (the headroom run's is
            # another measurement, on a loaded machine even a slower one than "inside").
            if clearing:
                row = [page, words.rate(sampled), f"{seen.share:.0%}", words.rate(clearing)]
            else:
                row = [page, fault_rate, "-", "-"]
            text.append([*row, best, h.best.function])
            header = ["page", "fault GB/s", "clearing", "inside GB/s", "best GB/s", "best store"]
            section.text = words.text_table(header, text)
        if section.interrupted:
            return


def _tabulate(section, rs, found):
    # The figure's statistic and interval: faults.png draws this very summary.
    rows = [
        [_fault_page(first), first.function, format_size(first.params["size"])]
        + [words.rate(s["median"]), words.interval_text(s)]
        for first, s in summarize_points(rs).values()
    ]
    section.body = [
        "The kernel's own clearing: each loop maps the region and touches every page (demand) "
        "or maps it populated "
        "(populate): the kernel zeroes every page it hands out, so this is its clearing rate "
        f"plus the fault path's cost, as `perf bench mem mmap`. {words.runs_line(rs)}",
        *["", *words.md_table(["page", "workload", "region", "GB/s", "interval"], rows)],
        *["", "![fault rates](faults.png)"],
        *_inside_table(found),
    ]


def study_faults(out_dir, cfg, info, functions, progress, reserve=False):
    """Demand and populate faults per page size, then the headroom to user space's best."""
    notes = []
    points, sizes = _points(cfg, reserve, notes)
    title = "Fault rate by page size and workload"
    # A size whose pages another process took after the check is named and left out.
    rs = sweep_points("mmap", points, cfg["runs"], cfg["warmup"], progress, notes)
    section = Section("Page faults", interrupted=rs.interrupted or None)
    figure = dict(plot=plot_bars, label=_fault_label, title=title)
    found = inside_faults(rs)
    finish(section, out_dir, "faults", rs, lambda: _tabulate(section, rs, found), **figure)
    if not section.interrupted:
        skipped = {page for page, _ in FAULT_PAGES} - {r.params["page"] for r in rs.results}
        _headroom(section, sizes, cfg, functions, reserve, skipped, found)
    if notes:
        section.body += [""] + [f"- {n}" for n in notes]
    return section
