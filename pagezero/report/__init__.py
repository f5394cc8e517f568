"""`pagezero report`: the default study of this machine, as a folder.

Studies:
  extents  every available clear kernel over extents from 4KB to beyond the
           LLC, dense around the cache sizes (which kernel wins where);
  chunks   the chunk study of perf bench mem memset -k: one large region cleared in chunks of 4KB
           up to the whole region (where the CPU stops allocating cache
           lines, compared with the LLC size);
  cold     hot vs cache-cold clears of one extent per call;
  threads  1..N CPUs clearing one region together;
  faults   `pagezero mem mmap`: demand and populate faults per page size,
           and the headroom between them and user space's best clear;
  advice   `pagezero advise`: the batch size for clear_pages() per latency
           budget, with the kernel to use.

The folder holds each study's results (JSON, loadable with
pagezero.ResultSet.load), PNG and SVG plots, and report.md with the tables,
the pictures and a summary in plain words.

Sizes: "full" (the default, minutes), "quick" (under three minutes on a
2-core machine) and "tiny" (seconds; for tests and CI), the last two picked
by --quick or the PAGEZERO_SCALE environment variable.
"""
import datetime
import json
import os
import time
from dataclasses import dataclass

from . import fault
from ._core import MappingError
from .advise import advise
from .kernels import kernel_roles, kernels
from .bench import scaling
from .plot import extent_of, plot_bars, plot_rates, plot_scaling
from .results import ResultSet, atomic_write
from .stats import KNEE_CLEAR_STEP, TIE, best_kernels, find_knee
from .sweeps import default_sizes, sweep
from .sysinfo import llc_bytes, machine, summary
from .units import format_size, gbps, parse_size

__all__ = ["report", "SCALES"]

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30

# Below this extent, a loop clears the extent repeatedly over a region of
# this size (chunk = extent): the region stays in L2, and each timed loop is
# long enough that the clock reads around it do not count.
SMALL_REGION = 256 * KB

SCALES = {
    "full": dict(extents=None, repeat=3, warmup=1, chunk_size=1 * GB, chunk_loops=3,
                 fault_size=1 * GB, fault_loops=5,
                 cold_extents=[64 * KB, 2 * MB, 32 * MB], thread_size=1 * GB,
                 chunk_kernels=("clear_pages", "streaming", "portable"),
                 chunks=None),
    "quick": dict(extents=[4 * KB, 16 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB,
                           32 * MB, 64 * MB, 256 * MB],
                  repeat=2, warmup=1, chunk_size=512 * MB, chunk_loops=2,
                  fault_size=256 * MB, fault_loops=3,
                  cold_extents=[64 * KB, 2 * MB, 32 * MB], thread_size=256 * MB,
                  chunk_kernels=("clear_pages", "default"),
                  chunks=[4 * KB, 64 * KB, 2 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 512 * MB]),
    "tiny": dict(extents=[4 * KB, 64 * KB, 1 * MB], repeat=1, warmup=0,
                 fault_size=16 * MB, fault_loops=1,
                 cold_extents=[64 * KB, 1 * MB], thread_size=16 * MB,
                 chunk_size=16 * MB, chunk_loops=1, chunk_kernels=("portable",),
                 chunks=[4 * KB, 1 * MB, 16 * MB]),
}


def _loops(size):
    # About 16MB of clearing per timed run, between 2 and 20 loops.
    return max(2, min(20, (16 * MB) // size))


def _extent_points(extents, functions):
    points = []
    for e in extents:
        size = max(e, SMALL_REGION)
        points.append({"size": size, "chunk": e if e < size else 0, "loops": _loops(size)})
    return [dict(p, function=f) for p in points for f in functions]


def _run_points(benchmark, points, repeat, warmup):
    """Points that are not a grid (size and chunk go together): one sweep per
    point shape, merged. Interleaving still holds within each sweep."""
    results, runs, interrupted = [], [], None
    shapes = {}
    for p in points:
        key = tuple(sorted((k, v) for k, v in p.items() if k != "function"))
        shapes.setdefault(key, []).append(p["function"])
    for key, functions in shapes.items():
        grid = {k: [v] for k, v in key}
        grid["function"] = functions
        rs = sweep(benchmark, grid, repeat=repeat, warmup=warmup)
        results += rs.results
        runs += rs.runs
        if rs.interrupted:
            interrupted = rs.interrupted    # the signal's name
            break
    return ResultSet(results, runs, machine(), interrupted)


def _medians(rs, x):
    """{function: {x: median}} of a result set's rates."""
    table = {}
    for first, results in rs.points():
        values = sorted(v for r in results for v in r.values())
        table.setdefault(first.function, {})[x(first)] = values[len(values) // 2]
    return table


def _gbps(v):
    return "-" if v is None else f"{gbps(v):.1f}"


def _markdown_table(medians, xs, x_label):
    functions = sorted(medians)
    lines = [f"| {x_label} | " + " | ".join(functions) + " |",
             "|---|" + "---|" * len(functions)]
    for x in xs:
        row = [format_size(x)] + [_gbps(medians[f].get(x)) for f in functions]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _span(lo, hi):
    return format_size(lo) if lo == hi else f"{format_size(lo)} to {format_size(hi)}"


@dataclass
class Section:
    """One study's part of the report: its lines in report.md and in the summary."""

    title: str
    body: list
    summary: list
    interrupted: bool = False


def _study_extents(out_dir, cfg, info, functions, progress):
    rs = _run_points("memset", _extent_points(cfg["extents"] or default_sizes(info), functions),
                     cfg["repeat"], cfg["warmup"])
    rs.save(os.path.join(out_dir, "extents.json"))
    section = Section("Kernels by extent", [], [], rs.interrupted)
    if not len(rs):
        return section
    plot_rates(rs, os.path.join(out_dir, "extents"),
               title="Clearing rate by extent (memset, each kernel)")
    med = _medians(rs, extent_of)
    xs = sorted({x for m in med.values() for x in m})
    for r in best_kernels(med, xs):
        section.summary.append(
            f"For extents of {_span(r['min_bytes'], r['max_bytes'])}, {r['kernel']} clears "
            f"fastest, or within {TIE:.0%} of the fastest ({gbps(r['bytes_per_sec']):.0f} GB/s).")
    section.body = [f"Each kernel clears an extent in one call, repeatedly; extents under "
                    f"{format_size(SMALL_REGION)} are cleared in extent-sized calls over a "
                    f"{format_size(SMALL_REGION)} region so the timing clock does not count.", ""]
    section.body += _markdown_table(med, xs, "extent") + ["", "![rate by extent](extents.png)"]
    return section


def _knee_line(kernel, by_chunk, llc, region):
    try:
        knee, step = find_knee(by_chunk.items())
    except ValueError:
        return None  # too few chunk sizes of 64KB and up to look for a step
    xs = sorted(by_chunk)
    if step < KNEE_CLEAR_STEP:
        return (f"{kernel}: no clear step in rate with chunk size up to {format_size(xs[-1])} "
                f"(whole region: {gbps(by_chunk[xs[-1]]):.1f} GB/s).")
    below = max(x for x in xs if x < knee)
    where = (f"{format_size(knee)} chunks and up clear {step:.1f}x as fast as smaller ones "
             f"({gbps(by_chunk[knee]):.1f} vs {gbps(by_chunk[below]):.1f} GB/s at "
             f"{format_size(below)}), over a {format_size(region)} region")
    if llc and llc // 2 <= knee <= 2 * llc and below >= llc // 4:
        # The threshold "mm: folio_zero_user: clear contiguous pages" (2025) reports on
        # AMD Zen: long enough stores stop allocating cache lines near the LLC size.
        return (f"{kernel} stops allocating cache lines above ~{format_size(below)} per call "
                f"here (LLC: {format_size(llc)}): {where}.")
    return f"{kernel}: the rate steps up at {format_size(knee)} per call: {where}."


def _study_chunks(out_dir, cfg, info, functions, progress):
    size = cfg["chunk_size"]
    chunk_list = cfg["chunks"] or [1 << s for s in range(12, size.bit_length())]
    chosen = _by_role(cfg["chunk_kernels"], functions)
    rs = sweep("memset", {"function": chosen, "size": [size], "chunk": chunk_list,
                          "loops": [cfg["chunk_loops"]]},
               repeat=cfg["repeat"], warmup=cfg["warmup"], progress=progress)
    rs.save(os.path.join(out_dir, "chunks.json"))
    section = Section("Chunk study", [], [], rs.interrupted)
    if not len(rs):
        return section
    chunk_of = lambda r: r.params["chunk"] or r.params["size"]  # noqa: E731
    plot_rates(rs, os.path.join(out_dir, "chunks"), x=chunk_of, xlabel="chunk per call",
               title=f"Clearing {format_size(size)} in chunks")
    med = _medians(rs, chunk_of)
    for kernel, by_chunk in sorted(med.items()):
        line = _knee_line(kernel, by_chunk, llc_bytes(info), size)
        if line:
            section.summary.append(line)
    xs = sorted({x for m in med.values() for x in m})
    section.body = ["One region cleared per loop in chunk-sized calls, as "
                    "`perf bench mem memset -k CHUNK`.", ""]
    section.body += _markdown_table(med, xs, "chunk") + ["", "![rate by chunk](chunks.png)"]
    return section


# Kernels for the cold-vs-hot and threads studies: the kernel's clear_page()
# choice and the widest streaming store (the kind of the 2012
# clear_page_nocache proposal).
CONDITION_KERNELS = ("clear_pages", "streaming")


def _by_role(roles, functions):
    """The kernels of `roles` (kernels.kernel_roles(), or a kernel's own
    name such as "default") that are among `functions`, else the first of them."""
    table = kernel_roles()
    names = [n for r in roles for n in table.get(r, (r,))]
    return [f for f in dict.fromkeys(names) if f in functions] or functions[:1]


def _condition_kernels(functions):
    return _by_role(CONDITION_KERNELS, functions)


def _study_cold(out_dir, cfg, info, functions, progress):
    """One extent per call, the same buffer every loop (hot, perf's conditions)
    or flushed from the caches before each call (cold, as a faulting page is)."""
    points = []
    for e in cfg["cold_extents"]:
        # ~tens of ms per run; tsc: a small clear takes tens of ns.
        loops = max(5, min(20000, (256 * MB) // e)) // (1 if cfg["repeat"] > 1 else 8) or 5
        points += [{"size": e, "loops": loops, "clock": "tsc", "cache": c, "function": f}
                   for f in _condition_kernels(functions) for c in ("hot", "cold")]
    rs = _run_points("memset", points, cfg["repeat"], cfg["warmup"])
    rs.save(os.path.join(out_dir, "cold.json"))
    section = Section("Cold vs hot", [], [], rs.interrupted)
    med = {}
    for first, results in rs.points():
        values = sorted(v for r in results for v in r.values())
        med[(first.function, first.params["size"], first.params.get("cache", "hot"))] = \
            values[len(values) // 2]
    rows = ["| kernel | extent | hot GB/s | cold GB/s | hot/cold |", "|---|---|---|---|---|"]
    for f in _condition_kernels(functions):
        for e in cfg["cold_extents"]:
            hot, cold = med.get((f, e, "hot")), med.get((f, e, "cold"))
            if hot and cold:
                rows.append(f"| {f} | {format_size(e)} | {gbps(hot):.1f} | {gbps(cold):.1f} | "
                            f"{hot / cold:.2f}x |")
                if e == max(x for x in cfg["cold_extents"] if x <= 2 * MB):
                    section.summary.append(
                        f"{f} clears a cache-cold {format_size(e)} extent at {gbps(cold):.0f} "
                        f"GB/s, a hot one at {gbps(hot):.0f} GB/s: measure with the cache state "
                        f"a page fault sees (cold), as the 2012 reviewers asked.")
    methods = sorted({(r.details or {}).get("cold_method") for r in rs.results} - {None})
    section.body = ["Each loop clears one extent in one call. Hot: the same buffer every loop, "
                    "as perf runs. Cold: the extent flushed from every cache "
                    f"({', '.join(methods) or 'flushed'}, outside the timing) before each call, "
                    "as a freshly faulted page is. Extents below 64KB take less time than the "
                    "clock reads around them and are left out.", ""] + rows
    return section


def _study_threads(out_dir, cfg, info, functions, progress):
    """1..N threads, each pinned to its own CPU, clearing disjoint parts of one region."""
    f = _condition_kernels(functions)[0]
    try:
        rs = scaling(cfg["thread_size"], function=f, loops=3)
    except KeyboardInterrupt:
        return Section("Several CPUs at once", [], [], True)
    rs.save(os.path.join(out_dir, "threads.json"))
    plot_scaling(rs, os.path.join(out_dir, "threads"),
                 title=f"{f} clearing {format_size(cfg['thread_size'])} with several CPUs")
    one = rs.results[0].bytes_per_sec
    rows = ["| threads | aggregate GB/s | vs one thread |", "|---|---|---|"]
    for r in rs.results:
        rows.append(f"| {r.params.get('threads', 1)} | {gbps(r.bytes_per_sec):.1f} | "
                    f"{r.bytes_per_sec / one:.2f}x |")
    last = rs.results[-1]
    section = Section("Several CPUs at once", [
        f"Threads pinned to distinct CPUs, started behind a barrier, clear disjoint parts of "
        f"one {format_size(cfg['thread_size'])} region with {f}: the way a parallel "
        f"gigantic-page clear or a pre-zeroing daemon would.", ""] + rows +
        ["", "![scaling](threads.png)"], [])
    if len(rs) > 1:
        section.summary.append(
            f"{last.params.get('threads', 1)} CPUs clearing one "
            f"{format_size(cfg['thread_size'])} region together reach {gbps(last.bytes_per_sec):.0f} GB/s, "
            f"{last.bytes_per_sec / one:.2f}x one CPU's {gbps(one):.0f} GB/s.")
    return section


# The fault workloads per page size: 4KB with THP refused and asked for,
# then the hugetlb sizes when their pools have the pages (or --reserve).
FAULT_PAGES = (("4KB", False), ("4KB", True), ("2MB", False), ("1GB", False))


def _study_faults(out_dir, cfg, info, functions, progress, reserve):
    size, loops = cfg["fault_size"], cfg["fault_loops"]
    section = Section("Page faults: the kernel's own clearing", [], [])
    points, notes = [], []
    sizes = {page: max(size, parse_size(page)) for page, _ in FAULT_PAGES}  # whole pages
    for page, thp in FAULT_PAGES:
        p = fault.plan(sizes[page], page, loops, thp=thp)
        if p.hugetlb and not reserve:
            try:
                fault.check_hugepages(p)
            except MappingError as e:
                notes.append(f"{page} pages not measured: {e.strerror}")
                continue
        points += [{"size": sizes[page], "page": page, "thp": thp, "loops": loops, "function": f,
                    "reserve": reserve} for f in ("demand", "populate")]
    rs = _run_points("mmap", points, cfg["repeat"], cfg["warmup"])
    rs.save(os.path.join(out_dir, "faults.json"))
    section.interrupted = rs.interrupted
    if len(rs):
        plot_bars(rs, os.path.join(out_dir, "faults"), label=_fault_label,
                  title="Fault rate by page size and workload")
        rows = ["| page | workload | region | GB/s (median) |", "|---|---|---|---|"]
        for first, results in rs.points():
            values = sorted(v for r in results for v in r.values())
            rows.append(f"| {_fault_page(first)} | {first.function} | "
                        f"{format_size(first.params['size'])} | "
                        f"{gbps(values[len(values) // 2]):.2f} |")
        section.body = ["Each loop maps the region and touches every page (demand) or maps it "
                        "populated (populate): the kernel zeroes every page it hands out, so this "
                        "is its clearing rate plus the fault path's cost, as "
                        "`perf bench mem mmap`.", ""] + rows + ["", "![fault rates](faults.png)"]
    if not section.interrupted:
        section.body += ["", "Headroom: demand faults beside the fastest user-space clear of the "
                         "same extents (page-sized calls over a region of the same page size), "
                         "measured right after:", "",
                         "| page | faults GB/s | best clear GB/s | kernel | headroom |",
                         "|---|---|---|---|---|"]
        for page, thp in FAULT_PAGES:
            if thp or any(page in n for n in notes):
                continue
            try:
                h = fault.headroom(sizes[page], page, "demand", loops, reserve=reserve,
                                   clear_kernels=functions)
            except KeyboardInterrupt:
                section.interrupted = True
                break
            section.body.append(f"| {page} | {gbps(h.fault_rate):.2f} | "
                                f"{gbps(h.best.bytes_per_sec):.2f} | {h.best.function} | "
                                f"{h.ratio:.1f}x |")
            section.summary.append(
                f"Demand faults on {page} pages run at {gbps(h.fault_rate):.1f} GB/s; user space "
                f"clears the same extents at {gbps(h.best.bytes_per_sec):.1f} GB/s "
                f"({h.best.function}): {h.ratio:.1f}x headroom for the kernel's fault path.")
    section.body += [""] + [f"- {n}" for n in notes] if notes else []
    return section


def _fault_page(r):
    return r.params["page"] + (" + THP" if r.params.get("thp") else "")


def _fault_label(r):
    return f"{r.function} {_fault_page(r)}"


def _study_advice(out_dir, cfg, info, functions, progress, quick):
    advice = advise(quick=quick)
    atomic_write(os.path.join(out_dir, "advice.json"),
                  lambda f: json.dump(advice.to_json(), f, indent=1))
    section = Section("Advice", ["From `pagezero advise`" + (" (its quick sweep)" if quick else "")
                                 + ":", "", "```"] + advice.describe() + ["```"], [])
    for row, fits in zip(advice.batch, advice.batch_fits):
        if fits:
            section.summary.append(
                f"Within a {row['budget_ms']:g} ms budget between resched points, clear_pages() "
                f"batches of {format_size(row['batch_bytes'])} with {row['kernel']} clear "
                f"fastest ({gbps(row['bytes_per_sec']):.0f} GB/s, worst batch "
                f"{row['worst_ms']:.2f} ms).")
        else:
            section.summary.append(f"No batch measured stays within {row['budget_ms']:g} ms here.")
    return section


def report(out_dir=None, scale="full", functions=None, progress=None, reserve=False):
    """Run the default study and write the report folder; returns its path.

    reserve: let the fault study grow the hugepage pools for its 2MB and 1GB
    runs (root only), giving the pages back afterwards; without it, page
    sizes whose pools lack free pages are skipped, saying so.

    Refuses a folder that already holds a report. Ctrl-C stops the study,
    and the report is written from what was measured, saying so.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown report scale {scale!r} (expected {', '.join(SCALES)})")
    cfg = SCALES[scale]
    if out_dir is None:
        out_dir = "pagezero-report-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if os.path.exists(os.path.join(out_dir, "report.md")):
        raise ValueError(f"{out_dir} already holds a report; choose another folder")
    os.makedirs(out_dir, exist_ok=True)

    info = machine()
    functions = list(functions) if functions else \
        [k.name for k in kernels("clear") if k.available]
    studies = [
        lambda: _study_extents(out_dir, cfg, info, functions, progress),
        lambda: _study_chunks(out_dir, cfg, info, functions, progress),
        lambda: _study_cold(out_dir, cfg, info, functions, progress),
        lambda: _study_threads(out_dir, cfg, info, functions, progress),
        lambda: _study_faults(out_dir, cfg, info, functions, progress, reserve),
        lambda: _study_advice(out_dir, cfg, info, functions, progress, scale != "full"),
    ]
    start = time.monotonic()
    load = os.getloadavg()[0]  # other work on the machine skews every figure, threads most
    sections = []
    for study in studies:
        try:
            sections.append(study())
        except KeyboardInterrupt:
            sections.append(Section("", [], [], interrupted=True))
        if sections[-1].interrupted:
            break
    _write_markdown(out_dir, info, scale, time.monotonic() - start, load, sections)
    return out_dir


def _write_markdown(out_dir, info, scale, elapsed, load, sections):
    md = [f"# pagezero report: {info['cpu_model']}", ""]
    md.append(f"{datetime.datetime.now():%Y-%m-%d %H:%M}, scale `{scale}`, "
              f"{elapsed:.0f} s of measuring, load average {load:.2f} at the start "
              f"(on {info['cpus_online']} CPUs). Rates are medians in GB/s (10^9 bytes/s).")
    if any(s.interrupted for s in sections):
        md += ["", "**Interrupted: this report covers only what was measured before Ctrl-C.**"]
    md += ["", "## Summary", ""] + [f"- {line}" for s in sections for line in s.summary]
    md += ["", "## Machine", "", "```"] + summary(info) + ["```"]
    for s in sections:
        if s.body:
            md += ["", f"## {s.title}", ""] + s.body
    md += ["", "## Files", ""]
    md += [f"- `{name}`" for name in sorted(os.listdir(out_dir)) if not name.startswith(".")]
    atomic_write(os.path.join(out_dir, "report.md"), lambda f: f.write("\n".join(md) + "\n"))
