"""The cold and threads studies: hot against cache-cold clears; several CPUs on one region."""

from functools import partial

from pagezero.analysis.cache import run_cache
from pagezero.figures import plot_scaling
from pagezero.measure.mem import scaling
from pagezero.results.points import summarize_points
from pagezero.studies.report.cells import Section, finish, sweep_study
from pagezero.studies.report.chunks import by_role
from pagezero.studies.report.scales import KB, MB
from pagezero.studies.report.words import md_table, rate, ratio, runs_line
from pagezero.units import format_size


def condition_kernels(functions):
    """The kernels of the cold and threads studies: clear_pages()'s, the widest streaming."""
    # The widest streaming store: the kind of the 2012 clear_page_nocache proposal.
    return by_role(("clear_pages", "streaming"), functions)


def cold_extents(cfg, info):
    """cfg's cold extents, or 64KB, 2MB and the cache the run has (measured where it differs)."""
    if cfg["cold_extents"]:
        return list(cfg["cold_extents"])
    cache = run_cache(info).effective_bytes or 32 * MB
    return sorted({64 * KB, 2 * MB, cache})


def cold_points(cfg, info, functions):
    """The cold study's memset points: hot and cold, each extent, each condition kernel."""
    points = []
    for e in cold_extents(cfg, info):
        # ~tens of ms per run; tsc: a small clear takes tens of ns.
        loops = max(5, min(20000, (256 * MB) // e)) // cfg["cold_loop_div"] or 5
        points += [
            {"size": e, "loops": loops, "clock": "tsc", "cache": c, "function": f}
            for f in condition_kernels(functions)
            for c in ("hot", "cold")
        ]
    return points


def study_cold(out_dir, cfg, info, functions, progress):
    """Hot and cold rates per kernel and extent, on 4KB pages: what a hot benchmark flatters."""
    cfg = dict(cfg, cold_extents=cold_extents(cfg, info))
    points = cold_points(cfg, info, functions)
    tabulate = partial(_tabulate, cfg=cfg, functions=functions)
    return sweep_study(out_dir, "cold", "Cold vs hot", cfg, progress, points, tabulate)


def _tabulate(section, rs, cfg, functions):
    med = {
        (first.function, first.params["size"], first.params.get("cache", "hot")): s["median"]
        for first, s in summarize_points(rs).values()
    }
    rows = []
    quoted = max((x for x in cfg["cold_extents"] if x <= 2 * MB), default=None)
    for f in condition_kernels(functions):
        for e in cfg["cold_extents"]:
            hot, cold = med.get((f, e, "hot")), med.get((f, e, "cold"))
            if not (hot and cold):
                continue
            rows.append([f, format_size(e), rate(hot), rate(cold), ratio(hot / cold)])
            if e == quoted:
                section.summary.append(
                    f"{f} clears a cache-cold {format_size(e)} extent at {rate(cold)} GB/s, a "
                    f"hot one at {rate(hot)} GB/s: measure with the cache state a page fault "
                    f"sees (cold), as the 2012 reviewers asked."
                )
    methods = sorted({(r.details or {}).get("cold_method") for r in rs.results} - {None})
    section.body = [
        "Each loop clears one extent on 4KB pages in one call. Hot: the same buffer every loop, "
        "as perf runs. Cold: the extent flushed from every cache "
        f"({', '.join(methods) or 'flushed'}, outside the timing) before each call, "
        "as a freshly faulted page is. Extents below 64KB take less time than the "
        f"clock reads around them and are left out. {runs_line(rs)}",
        "",
        *md_table(["kernel", "extent", "hot GB/s", "cold GB/s", "hot/cold"], rows),
    ]


def study_threads(out_dir, cfg, info, functions, progress):
    """1 to N threads clearing one region, against one thread's rate."""
    # One run (one process): the report's runs do not apply.
    f, size = condition_kernels(functions)[0], cfg["thread_size"]
    title = "Several CPUs at once"
    try:
        rs = scaling(size, function=f, loops=3)
    except KeyboardInterrupt:
        return Section(title, interrupted=True)
    section = Section(title)
    tabulate = partial(_tabulate_threads, section, rs, f, size)
    figure = f"{f} clearing {format_size(size)} with several CPUs"
    return finish(section, out_dir, "threads", rs, tabulate, plot_scaling, title=figure)


def _tabulate_threads(section, rs, f, size):
    one = rs.results[0].bytes_per_sec
    rows = [
        [str(r.params.get("threads", 1)), rate(r.bytes_per_sec), ratio(r.bytes_per_sec / one)]
        for r in rs.results
    ]
    section.body = [
        f"Threads pinned to distinct CPUs, started behind a barrier, clear disjoint parts of "
        f"one {format_size(size)} region on 4KB pages with {f}: the way a parallel "
        f"gigantic-page clear or a pre-zeroing daemon would. One run (one process): total "
        f"bytes over total time of its loops.",
        "",
        *md_table(["threads", "aggregate GB/s", "vs one thread"], rows),
        "",
        "![scaling](threads.png)",
    ]
    last = rs.results[-1]
    if len(rs) > 1:
        section.summary.append(
            f"{last.params.get('threads', 1)} CPUs clearing one {format_size(size)} region "
            f"together reach {rate(last.bytes_per_sec)} GB/s, {ratio(last.bytes_per_sec / one)} "
            f"one CPU's {rate(one)} GB/s."
        )
