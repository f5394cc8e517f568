"""pagezero mem memset | memcpy | mmap: perf bench mem's workloads, with the measured
conditions (cold cache, threads, NUMA node, counters, pages got) added."""

import sys

from pagezero import _core
from pagezero.cli.options import UsageError, check_output, pick
from pagezero.cli.render import Measured, backing_lines, counters_per_loop, format_ns, huge_share
from pagezero.cli.runs import between_runs_line, measure_runs, pooled
from pagezero.interrupt import Interrupted
from pagezero.measure import fault as faults
from pagezero.measure.mem import plan, run, thread_spread
from pagezero.system.kernels import find_kernel, kernels
from pagezero.units import format_rate, format_size, gb_per_sec, parse_page


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


def _skipped(name, reason):
    print(f"# function '{name}' skipped: {reason}", file=sys.stderr)


def _all(candidates):
    """-f all: the names whose reason to skip is empty; a line on stderr for each other."""
    chosen = []
    for name, reason in candidates:
        if reason:
            _skipped(name, reason)
        else:
            chosen.append(name)
    return chosen


def _measure(args, measured, point, names, here, show):
    """Measure each of names and show(result, first, its results of every run)."""
    # With --runs N in N fresh processes; else here(name) in this one, None for a skip.
    if args.runs > 1:
        points = [dict(point, function=n) for n in names]
        per_name = measure_runs(
            measured, args.benchmark, points, args.runs, lambda r: r.function, names
        )
        for i, results in enumerate(per_name):
            show(pooled(results), i == 0, results)
        return
    for name in names:
        result = here(name)
        if result is not None:
            measured.results.append(result)
            show(result, len(measured.results) == 1, [result])


def _perf_lines(args, result, description, first, heading=()):
    """perf's lines for one function, False after --format simple's one number."""
    cycles = args.clock == "cycles"
    if args.format == "simple":
        print(f"{result.cycles_per_byte if cycles else result.bytes_per_sec:f}")
        return False
    if first:
        print(f"# Running 'mem/{args.benchmark}' benchmark:")
    print(f"# function '{result.function}' ({description})")
    print(f"# Copying {args.size} bytes ...")
    for line in heading:
        print(line)
    print()
    print(
        f" {result.cycles_per_byte:14f} cycles/byte"
        if cycles
        else format_rate(result.bytes_per_sec)
    )
    return True


def _print_conditions(result):
    """What THP, cold mode, threads and counters add below perf's lines."""
    d = result.details
    if "huge_share" in d:
        # As mem mmap's "# pages:" line: what the kernel gave, not what was asked.
        print(f"# THP: {huge_share(result)} of the buffer on huge pages (smaps)")
        for line in backing_lines([result], lambda r: f"'{r.function}'"):
            print(line, file=sys.stderr)
    if "cold_method" in d:
        print(
            f"# cache cold: every chunk flushed with {d['cold_method']} before its "
            f"timed call (the flushes are not timed)"
        )
    if len(d.get("thread_samples", ())) > 1:
        mean, spread = thread_spread(result)
        shared = result.params.get("threads_mode", "shared") == "shared"
        print(
            f"# {len(d['thread_samples'])} threads on CPUs {', '.join(map(str, d['cpus']))} "
            f"clearing {'parts of one region' if shared else 'their own regions'}: aggregate above"
        )
        if mean is not None:
            print(f" {gb_per_sec(mean):14f} GB/sec/thread ( +- {spread:.2f}% )")
    if "counters" in d:
        for name, per_loop in counters_per_loop(result).items():
            print(f"# {name}: {per_loop:.0f} per loop")


def _unfit(kernel, value):
    if not kernel.available:
        return kernel.reason
    if kernel.zero_only and value != 0:
        return "it can only write zeros"


def plan_mem(args):
    """``(point, plan)`` of mem memset | memcpy's arguments, every one checked but the
    kernel's name and the output (also by ``fleet run``, before sending the command)."""
    resolve_clock(args)
    point = pick(args, "size", "page", "chunk", "clock", "thp", "cache", "threads", "threads_mode")
    point |= pick(args, "node", "cpu_node", "counters", "offset")
    if args.benchmark == "memset":
        point["value"] = getattr(args, "value", 0)
    return point, plan(args.benchmark, **point)


def cmd_mem(args):
    """pagezero mem memset | memcpy: time clearing or copying a buffer, as perf bench mem."""
    kind = "clear" if args.benchmark == "memset" else "copy"
    if args.function == "help":
        _list(
            (k.name, k.description + ("" if k.available else f"  [unavailable: {k.reason}]"))
            for k in kernels(kind)
        )
        return 0
    check_output(args.output)
    # Every argument checked before anything runs: a mistake never follows part of a
    # run, nor the notes on kernels that -f all skips.
    point, job = plan_mem(args)
    value = point.get("value", 0)
    if args.function != "all":
        names = [find_kernel(args.function, kind).name]
    else:
        names = _all((k.name, _unfit(k, value)) for k in kernels(kind))

    def show(result, first, results):
        if _perf_lines(args, result, find_kernel(result.function, kind).description, first):
            _print_conditions(result)
            if args.runs > 1:
                print(between_runs_line(results))
        sys.stdout.flush()

    with Measured(args.output, args.runs * len(names) * args.nr_loops).saving() as measured:
        _measure(args, measured, point, names, lambda name: run(job, name), show)
    return 0


def _latency_line(result):
    lat = result.details["latency"]
    unit, page = lat["unit_bytes"], 1 << parse_page(result.params["page"])
    if unit == page:
        what = f"{format_size(page)} fault"
    elif result.params["thp"] is True:
        what = f"{format_size(unit)} THP fault"
    else:
        what = f"{format_size(unit)} ({unit // page} faults of {format_size(page)})"
    return (
        f"# latency per {what}: p50 {format_ns(lat['p50_ns'])}, "
        f"p99 {format_ns(lat['p99_ns'])}, max {format_ns(lat['max_ns'])} ({lat['n']} samples)"
    )


def _print_fault(args, job, result, first, latency):
    threads = (
        [f"# {job.threads} threads, each faulting its own {args.size}"] if job.threads > 1 else []
    )
    if not _perf_lines(args, result, faults.describe(result.function), first, threads):
        return
    if args.clock != "cycles" and job.threads > 1:
        # perf's "( +- x% )", here the standard deviation across threads.
        mean, pct = faults.thread_spread(result)
        print(f"{format_rate(mean)}/thread ( +- {pct:.2f}% )")
    print(f"# pages: {faults.page_report(result)['text']}")
    if latency:
        print(_latency_line(result))


def _warn_pages(result):
    pages = faults.page_report(result)
    if not pages["fallback"]:
        return
    why = ""
    if result.function == "populate" and result.params["thp"]:
        why = (
            " (MAP_POPULATE faults the pages in before madvise(MADV_HUGEPAGE) can ask "
            "for THP: use populate-write)"
        )
    print(f"pagezero: warning: '{result.function}': {pages['text']}{why}", file=sys.stderr)


def _headroom(args, measured):
    """--headroom: clear the faults' extents, then a line per fault."""
    # The clears are extras: saved with the faults, also those a signal stops, but not
    # counted among the loops planned.
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
            f"# headroom '{result.function}': faults {format_rate(h.fault_rate).strip()}"
            f"{'/thread' if result.params['threads'] > 1 else ''}, best user-space clear "
            f"of {result.params['page']} extents {format_rate(best.bytes_per_sec).strip()} "
            f"({best.function}): {h.ratio:.2f}x"
        )


def plan_mmap(args):
    """``(point, plan)`` of mem mmap's arguments, every one checked but the workload's name
    and the output (also by ``fleet run``, before sending the command)."""
    resolve_clock(args)
    if args.headroom and args.clock == "cycles":
        raise UsageError("--headroom compares rates, which the cycles clock does not give")
    point = pick(args, "size", "page", "threads", "thp", "clock", "latency", seed="randomize")
    return point, faults.plan(**point)


def cmd_mmap(args):
    """pagezero mem mmap: time mapping a region and faulting every page in."""
    if args.function == "help":
        _list((name, faults.describe(name)) for name in faults.WORKLOADS)
        return 0
    check_output(args.output)
    # Every argument is checked before anything runs or any pool changes.
    point, job = plan_mmap(args)
    if args.function != "all":
        names = [faults.check_workload(args.function)]
        faults.check_latency(job, names[0])
    else:
        why = "MAP_POPULATE faults every page inside mmap(), so no fault can be timed on its own"
        skip = {"populate": why} if args.latency else {}
        names = _all((n, skip.get(n)) for n in faults.WORKLOADS)
    if args.runs > 1 and args.headroom:
        raise UsageError(
            "--headroom sets faults beside clears of the same process: use it without --runs"
        )

    def here(name):
        try:
            return faults.run(job, name)
        except _core.UnavailableError as e:
            if args.function != "all":
                raise
            _skipped(name, e)

    def show(result, first, results):
        # With --runs, each run's latencies below the pooled lines.
        latency = None if args.runs > 1 else result.details["latency"]
        _print_fault(args, job, result, first, latency)
        sys.stdout.flush()
        _warn_pages(result)
        if args.runs > 1 and args.format != "simple":
            if args.latency:
                for i, r in enumerate(results):
                    print(_latency_line(r).replace("# latency", f"# run {i}: latency", 1))
            print(between_runs_line(results))

    # The pool is given back (inner block) before the results are saved (outer).
    with Measured(args.output, args.runs * len(names) * args.nr_loops).saving() as measured:
        if args.runs > 1:
            # Each run's process reserves its pool itself.
            _measure(args, measured, dict(point, reserve=args.reserve), names, None, show)
            return 0
        with faults.reserved(job, args.reserve):
            _measure(args, measured, point, names, here, show)
            if args.headroom and measured.results:
                _headroom(args, measured)
    return 0
