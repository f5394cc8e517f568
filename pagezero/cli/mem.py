"""pagezero mem memset | memcpy | mmap: perf bench mem's workloads, and their conditions."""

import sys

import pagezero.cli.render as render
from pagezero import _core
from pagezero.cli.options import UsageError, check_output, pick
from pagezero.interrupt import Interrupted
from pagezero.measure import fault as faults
from pagezero.measure import profile as inside
from pagezero.measure.mem import plan, run, thread_spread
from pagezero.system.kernels import find_kernel, kernels
from pagezero.units import format_gbps, format_rate, format_size, parse_page

_POPULATE_THP = (
    " (MAP_POPULATE faults the pages in before madvise(MADV_HUGEPAGE) can ask for THP: use "
    "populate-write)"
)
TOUCH_LINES = {
    "perf": "as perf, each page's byte read then written (mmap_page_touch), after every workload",
    "write": "one byte written per page (demand), as the studies of the kernel's clearing",
}


def resolve_clock(args):
    """-c is perf's spelling of --clock cycles; the default clock is ns."""
    if args.cycles:
        if args.clock not in (None, "cycles"):
            raise UsageError(f"-c/--cycles and --clock {args.clock} contradict each other")
        args.clock = "cycles"
    args.clock = args.clock or "ns"


def _list(rows):
    print("Available functions:")  # as perf's -f help
    for name, description in rows:
        print(f"\t{name} ... {description}")
    return 0


def _all(candidates):
    """-f all: the names whose reason to skip is empty; one line on stderr for the others."""
    # One line for all on stderr (stdout stays perf's): two machines' -f all are told apart.
    skipped = [f"{name} ({reason})" for name, reason in candidates if reason]
    if skipped:
        print(f"# -f all skips {', '.join(skipped)}", file=sys.stderr)
    return [name for name, reason in candidates if not reason]


def _measure(args, measured, point, names, here, show):
    """show(result, first, its results of every run) for each of names, as measured."""
    for i, results in enumerate(render.each_point(args, measured, point, "function", names, here)):
        show(render.pooled(results), i == 0, results)


def _perf_lines(args, result, description, first, heading=()):
    """perf's lines for one function, False after --format simple's one number."""
    cycles = args.clock == "cycles"
    rate = result.cycles_per_byte if cycles else result.bytes_per_sec
    if args.format == "simple":
        print(f"{rate:f}")
        return False
    if first:
        print(f"# Running 'mem/{args.benchmark}' benchmark:")
    print(f"# function '{result.function}' ({description})")
    print(f"# Copying {args.size} bytes ...")
    print("".join(f"{line}\n" for line in heading))  # then a blank line, as perf
    print(f" {rate:14f} cycles/byte" if cycles else format_rate(rate))
    return True


def _per_thread_line(mean, spread):
    """The mean thread's rate below perf's aggregate, in pagezero's GB/s: perf has no such line."""
    return f"# per thread: {format_gbps(mean, 2)} ( +- {spread:.2f}% between threads )"


def _print_conditions(result):
    """What THP, cold mode, threads and counters add below perf's lines."""
    d = result.details
    if "settle_loops" in d:
        how = "the last two agreed" if d["settled"] else "the bound, not settled"
        print(f"# settle: {d['settle_loops']} untimed loops before timing ({how})")
    if "huge_share" in d:
        # As mem mmap's "# pages:" line: what the kernel gave, not what was asked.
        print(f"# THP: {render.huge_share(result)} of the buffer on huge pages (smaps)")
        for line in render.backing_lines([result], lambda r: f"'{r.function}'"):
            print(line, file=sys.stderr)
    if "cold_method" in d:
        flushed = f"every chunk flushed with {d['cold_method']} before its timed call"
        print(f"# cache cold: {flushed} (the flushes are not timed)")
    if len(d.get("thread_samples", ())) > 1:
        mean, spread = thread_spread(result)
        shared = result.params.get("threads_mode", "shared") == "shared"
        print(
            f"# {len(d['thread_samples'])} threads on CPUs {', '.join(map(str, d['cpus']))} "
            f"clearing {'parts of one region' if shared else 'their own regions'}: aggregate above"
        )
        if mean is not None:
            print(_per_thread_line(mean, spread))
    if "counters" in d:
        for name, per_loop in render.counters_per_loop(result).items():
            print(f"# {name}: {per_loop:.0f} per loop")


def plan_mem(args):
    """``(point, plan)`` of memset | memcpy's arguments, checked but -f and -o (fleet run too)."""
    resolve_clock(args)
    fields = "size page chunk clock thp cache threads threads_mode node cpu_node counters offset"
    point = pick(args, fields)
    if args.benchmark == "memset":
        point |= {"value": getattr(args, "value", 0), "settle": getattr(args, "settle", 0)}
    return point, plan(args.benchmark, **point)


def cmd_mem(args):
    kind = "clear" if args.benchmark == "memset" else "copy"
    if args.function == "help":
        return _list(
            (k.name, k.description + ("" if k.available else f"  [unavailable: {k.reason}]"))
            for k in kernels(kind)
        )
    check_output(args.output)
    # Every argument checked first: a mistake never follows part of a run or -f all's notes.
    point, job = plan_mem(args)
    if args.function != "all":
        names = [find_kernel(args.function, kind).name]
    else:
        zeros = "it can only write zeros" if point.get("value", 0) != 0 else None
        why = [(k.name, k.reason or (zeros if k.zero_only else None)) for k in kernels(kind)]
        names = _all(why)

    def show(result, first, results):
        if _perf_lines(args, result, find_kernel(result.function, kind).description, first):
            _print_conditions(result)
            if args.runs > 1:
                print(render.between_runs_line(results))
        sys.stdout.flush()

    planned = args.runs * len(names) * args.nr_loops
    with render.Measured(args.output, planned, names, args.runs).saving() as measured:
        _measure(args, measured, point, names, (run(job, name) for name in names), show)
    return 0


def _latency_line(result, run=""):
    """The latency line of one result (`run`: which of several runs, "run 2: ")."""
    lat = result.details["latency"]
    unit, page = lat["unit_bytes"], 1 << parse_page(result.params["page"])
    if unit == page:
        what = f"{format_size(page)} fault"
    elif result.params["thp"] is True:
        what = f"{format_size(unit)} THP fault"
    else:
        what = f"{format_size(unit)} ({unit // page} faults of {format_size(page)})"
    p50, p99, top = (render.format_ns(lat[k]) for k in ("p50_ns", "p99_ns", "max_ns"))
    return f"# {run}latency per {what}: p50 {p50}, p99 {p99}, max {top} ({lat['n']} samples)"


def _warmup_lines(results):
    """What the rate of `results` (one point's runs) left out or was preceded by."""
    lines = []
    if any(r.details.get("pool_warmed") for r in results):
        lines.append(
            "# warm-up: the freshly reserved hugepages faulted in once, untimed, before the "
            "timed loops (on a VM the host faults guest memory in on its first touch)"
        )
    dropped = [(i, r.details["warmup"]) for i, r in enumerate(results) if "warmup" in r.details]
    if dropped:
        kept = sum(r.loops for r in results)
        total = kept + sum(w["loops"] for _, w in dropped)
        where = "" if len(results) == 1 else "run {} "
        slow = ", ".join(
            where.format(i) + ("loop 1" if w["loops"] == 1 else f"loops 1-{w['loops']}")
            for i, w in dropped
        )
        rule = dropped[0][1]["rule"]
        lines.append(
            f"# loops: the rate counts {kept} of {total}; {slow} left out as warming up: {rule}"
        )
    return lines


def _print_fault(args, job, result, first, results):
    """perf's lines for one workload and pagezero's below them: pages, latency, warm-up."""
    threads = f"# {job.threads} threads, each faulting its own {args.size}"
    heading = [threads] if job.threads > 1 else []
    if not _perf_lines(args, result, faults.describe(result.function), first, heading):
        return
    if args.clock != "cycles" and job.threads > 1:
        # The standard deviation across threads, as perf's "( +- x% )" is across runs.
        print(_per_thread_line(*faults.thread_spread(result)))
    print(f"# pages: {faults.page_report(result)['text']}")
    if args.runs == 1 and result.details["latency"]:  # with --runs, below the pooled lines
        print(_latency_line(result))
    print(f"# touch: {TOUCH_LINES[result.details.get('touch', 'write')]}")
    for line in _warmup_lines(results) + (inside.lines(results) if job.profile else []):
        print(line)


def _headroom(args, measured):
    """--headroom: clear the faults' extents, then a line per fault."""
    # The clears are extras: saved with the faults (a signal's too), not among the loops planned.
    try:
        clears = measured.extra = list(faults.measure_headroom(measured.results[0]))
    except Interrupted as e:
        measured.extra = list(e.partial.results) if e.partial is not None else []
        e.partial = None
        raise
    best = max(clears, key=lambda r: r.bytes_per_sec)
    for result in measured.results:
        h = faults.Headroom(result, clears)
        if args.format == "simple":
            print(f"{h.ratio:f}")
            continue
        print(
            f"# headroom '{result.function}': faults {format_gbps(h.fault_rate, 2)}"
            f"{'/thread' if result.params['threads'] > 1 else ''}, best user-space clear "
            f"of {result.params['page']} extents {format_gbps(best.bytes_per_sec, 2)} "
            f"({best.function}): {h.ratio:.2f}x"
        )


def plan_mmap(args):
    """``(point, plan)`` of mem mmap's arguments, all checked but -o (fleet run too)."""
    resolve_clock(args)
    if args.headroom and args.clock == "cycles":
        raise UsageError("--headroom compares rates, which the cycles clock does not give")
    point = pick(args, "size page threads thp clock latency touch profile", seed="randomize")
    job = faults.plan(**point)
    if args.function not in ("all", "help"):
        faults.check_latency(job, faults.check_workload(args.function))
    return point, job


def cmd_mmap(args):
    if args.function == "help":
        return _list((name, faults.describe(name)) for name in faults.WORKLOADS)
    check_output(args.output)
    # Every argument is checked before anything runs or any pool changes.
    point, job = plan_mmap(args)
    if args.function != "all":
        names = [args.function]
    else:
        why = "MAP_POPULATE faults every page inside mmap(), so no fault can be timed on its own"
        skip = {"populate": why} if args.latency else {}
        names = _all([(n, skip.get(n)) for n in faults.WORKLOADS])
    if args.runs > 1 and args.headroom:
        raise UsageError(
            "--headroom sets faults beside clears of the same process: use it without --runs"
        )

    def here(warmed):
        for name in names:
            try:
                yield faults.run(job, name, warmed)
            except _core.UnavailableError as e:
                if args.function != "all":
                    raise
                print(f"# function '{name}' skipped: {e}", file=sys.stderr)

    def show(result, first, results):
        _print_fault(args, job, result, first, results)
        sys.stdout.flush()
        pages = faults.page_report(result)
        if pages["fallback"]:
            why = _POPULATE_THP if result.function == "populate" and result.params["thp"] else ""
            print(f"pagezero: warning: '{result.function}': {pages['text']}{why}", file=sys.stderr)
        if args.runs > 1 and args.format != "simple":
            if args.latency:
                for i, r in enumerate(results):
                    print(_latency_line(r, f"run {i}: "))
            print(render.between_runs_line(results))

    # The pool is given back (inner block) before the results are saved (outer).
    planned = args.runs * len(names) * args.nr_loops
    with render.Measured(args.output, planned, names, args.runs).saving() as measured:
        if args.runs > 1:  # each run's process reserves its pool itself
            _measure(args, measured, dict(point, reserve=args.reserve), names, (), show)
            return 0
        with faults.reserved(job, args.reserve) as warmed:
            _measure(args, measured, point, names, here(warmed), show)
            if args.headroom and measured.results:
                _headroom(args, measured)
    return 0
