"""pagezero mem mmap: perf bench mem mmap's fault workloads, with threads,
fault latencies, the headroom against user-space clears and --reserve."""

import dataclasses
import sys

from pagezero import _core
from pagezero.cli.mem import add_loops, add_simple_format, print_functions, print_rate, print_simple
from pagezero.cli.options import (
    UsageError,
    add_clock,
    add_output,
    check_output,
    integer,
    resolve_clock,
)
from pagezero.cli.render import Measured, format_ns
from pagezero.cli.runs import add_runs, between_runs_line, check_runs_option, measure_runs, pooled
from pagezero.interrupt import Interrupted
from pagezero.measure import fault as faults
from pagezero.units import format_rate, format_size, parse_page

__all__ = ["COMMANDS", "add_parser"]


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
        f"p99 {format_ns(lat['p99_ns'])}, max {format_ns(lat['max_ns'])} "
        f"({lat['n']} samples)"
    )


def _print_fault(args, job, result, first):
    if args.format == "simple":
        print_simple(args, result)
        return
    if first:
        print("# Running 'mem/mmap' benchmark:")
    print(f"# function '{result.function}' ({faults.describe(result.function)})")
    print(f"# Copying {args.size} bytes ...")
    if job.threads > 1:
        print(f"# {job.threads} threads, each faulting its own {args.size}")
    print()
    print_rate(args, result)
    if args.clock != "cycles" and job.threads > 1:
        # perf's "( +- x% )", here the standard deviation across threads.
        mean, pct = faults.thread_spread(result)
        print(f"{format_rate(mean)}/thread ( +- {pct:.2f}% )")
    pages = faults.page_report(result)
    print(f"# pages: {pages['text']}")
    if result.details["latency"]:
        print(_latency_line(result))
    sys.stdout.flush()


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


def _print_headroom(args, results, clears):
    best = max(clears, key=lambda r: r.bytes_per_sec)
    for result in results:
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


def _functions(function, latency):
    if function != "all":
        return [faults.check_workload(function)]
    chosen = []
    for name in faults.WORKLOADS:
        if latency and name == "populate":
            print(
                "# function 'populate' skipped: MAP_POPULATE faults every page inside "
                "mmap(), so no fault can be timed on its own",
                file=sys.stderr,
            )
        else:
            chosen.append(name)
    return chosen


def _measure_headroom(measured):
    """The clears of --headroom, kept as extras: saved with the faults, not
    counted among the loops planned, also those a signal stops."""
    try:
        measured.extra = list(faults.measure_headroom(measured.results[0]))
    except Interrupted as e:
        measured.extra = list(e.partial.results) if e.partial is not None else []
        e.partial = None
        raise


def cmd_mmap(args):
    """`pagezero mem mmap`: time mapping a region and faulting every page in.

    As ``perf bench mem mmap``: per workload (demand, populate, populate-write), the
    kernel's own clearing plus its fault path, in perf's lines (GB/sec, 2^30
    bytes/sec), a ``# pages:`` line with the page size really got, with
    ``--latency`` the per-fault latency percentiles, with ``--headroom`` the best
    user-space clear of the same extents beside it, and with ``--runs N`` the spread
    between runs. ``-f help`` lists the workloads.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status: 0; after a stop signal (Ctrl-C, SIGTERM, SIGHUP) what was
        measured is saved and the signal's status (130, 143, 129) is returned.
        Errors are raised for :func:`pagezero.cli.main` to turn into one line and
        exit status 2 (usage) or 1 (the machine cannot do it).

    Raises
    ------
    UsageError
        ``--headroom`` with the cycles clock or with ``--runs`` above 1 (exit status 2).
    """
    if args.function == "help":
        print_functions((name, faults.describe(name)) for name in faults.WORKLOADS)
        return 0
    resolve_clock(args)
    check_output(args.output)
    if args.headroom and args.clock == "cycles":
        raise UsageError("--headroom compares rates, which the cycles clock does not give")
    # Every argument is checked before anything runs or any pool changes.
    point = dict(
        size=args.size,
        page=args.page,
        loops=args.nr_loops,
        threads=args.threads,
        seed=args.randomize,
        thp=bool(args.thp),
        clock=args.clock,
        latency=args.latency,
    )
    job = faults.plan(**point)
    runs = check_runs_option(args)
    functions = _functions(args.function, args.latency)
    if args.function != "all":
        faults.check_latency(job, functions[0])
    if runs > 1 and args.headroom:
        raise UsageError(
            "--headroom sets faults beside clears of the same process: use it without --runs"
        )
    if runs > 1:
        with Measured(args.output, runs * len(functions) * args.nr_loops).saving() as measured:
            _mmap_runs(args, job, dict(point, reserve=args.reserve), functions, measured)
        return 0

    # The pool is given back (inner block) before the results are saved (outer).
    with Measured(args.output, len(functions) * args.nr_loops).saving() as measured:
        with faults.reserved(job, args.reserve):
            for name in functions:
                try:
                    result = faults.run(job, name)
                except _core.UnavailableError as e:
                    if args.function != "all":
                        raise
                    print(f"# function '{name}' skipped: {e}", file=sys.stderr)
                    continue
                measured.results.append(result)
                _print_fault(args, job, result, first=len(measured.results) == 1)
                _warn_pages(result)
            if args.headroom and measured.results:
                _measure_headroom(measured)
                _print_headroom(args, measured.results, measured.extra)
    return 0


def _mmap_runs(args, job, point, functions, measured):
    """--runs N: every workload in each of N fresh processes; perf's lines per
    workload over the loops of all runs, each run's latencies, the spread
    between runs. A workload this kernel lacks ends every run: with -f all,
    name the workloads instead."""
    per_workload = measure_runs(
        measured,
        "mmap",
        [dict(point, function=f) for f in functions],
        args.runs,
        lambda r: r.function,
        functions,
    )
    for i, results in enumerate(per_workload):
        result = pooled(results)
        _print_fault(
            args,
            job,
            dataclasses.replace(result, details=dict(result.details, latency=None)),
            first=i == 0,
        )
        _warn_pages(result)
        if args.format != "simple":
            if args.latency:
                for run, r in enumerate(results):
                    print(_latency_line(r).replace("# latency", f"# run {run}: latency", 1))
            print(between_runs_line(results))


COMMANDS = {"mmap": cmd_mmap}


def add_parser(mem_sub):
    """Add ``mmap`` under ``pagezero mem``.

    Parameters
    ----------
    mem_sub : argparse._SubParsersAction
        The subparsers of ``pagezero mem``.
    """
    text = "time mapping a region and faulting every page in, as perf bench mem mmap"
    p = mem_sub.add_parser("mmap", help=text, description=text)
    p.set_defaults(command="mmap")
    p.add_argument(
        "-s",
        "--size",
        default="1GB",
        help="bytes each thread maps and faults per loop; units B, KB, MB, GB, TB, "
        "powers of 1024 (default: 1GB)",
    )
    p.add_argument(
        "-p", "--page", default="4KB", help="page size: 4KB, or 2MB / 1GB hugetlb (default: 4KB)"
    )
    p.add_argument(
        "-f",
        "--function",
        default="all",
        help="workload: demand, populate, populate-write, 'all' (default) or 'help'",
    )
    add_loops(p, "timed map + fault loops, one sample each (default: 10)")
    add_clock(p)
    p.add_argument(
        "-r",
        "--randomize",
        default=0,
        type=integer,
        metavar="SEED",
        help="demand: write a random byte of each page, drawn as rand() after "
        "srand(SEED + thread) (default: 0, byte 0 of each page)",
    )
    p.add_argument(
        "-t",
        "--threads",
        default=1,
        type=integer,
        help="threads faulting their own regions at once (default: 1)",
    )
    p.add_argument(
        "--thp",
        action="store_true",
        help="ask for transparent huge pages on 4KB mappings (default: refuse them)",
    )
    p.add_argument(
        "--latency",
        action="store_true",
        help="also time each fault (groups of 16 for 4KB pages): p50, p99, max",
    )
    p.add_argument(
        "--headroom",
        action="store_true",
        help="then clear the same extents with every clear kernel and print how "
        "much faster the best one is than the faults",
    )
    p.add_argument(
        "--reserve",
        action="store_true",
        help="grow the hugepage pool by what the run lacks, as root, and restore it afterwards",
    )
    add_runs(p)
    add_simple_format(p)
    add_output(p)
