"""The pagezero command line.

    pagezero mem memset|memcpy|mmap [perf bench mem options]
    pagezero kernels

One cmd_<name> function per subcommand, chosen through a dispatch table.
User errors print one line, "pagezero: error: ...", and exit 2; a machine
that cannot do what was asked (no hugepages, no cycle counter, a kernel
the CPU lacks) exits 1 with a line that names the cause and the fix.
Never a traceback.
"""
import argparse
import os
import sys

from . import _core, fault
from .bench import plan, run
from .kernels import find_kernel, kernels
from .results import save_results
from .units import format_rate, format_size, parse_page

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_ENVIRONMENT = 1
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage before its error; one line is enough.
    def error(self, message):
        raise UsageError(message)


def _parse_whole(text, what):
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"invalid {what} {text!r}: not a whole number") from None


def _parse_loops(text):
    return _parse_whole(text, "loops")


def _parse_value(text):
    if text == "loop":
        return text
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"invalid fill value {text!r}: expected 0..255 or 'loop'") from None
    return value


def _resolve_clock(args):
    """-c is perf's spelling of --clock cycles; the default clock is ns."""
    if args.cycles:
        if args.clock not in (None, "cycles"):
            raise UsageError(f"-c/--cycles and --clock {args.clock} contradict each other")
        args.clock = "cycles"
    args.clock = args.clock or "ns"


def _check_output(path):
    # Refuse up front rather than after minutes of measuring.
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {path!r}: no directory {directory!r}")


def _print_functions(kind):
    print("Available functions:")
    for k in kernels(kind):
        note = "" if k.available else f"  [unavailable: {k.reason}]"
        print(f"\t{k.name} ... {k.description}{note}")


def _selected(function, kind, value):
    """The kernels to run: one by name, or every one this machine can run for 'all'."""
    if function != "all":
        return [find_kernel(function, kind)]
    chosen = []
    for k in kernels(kind):
        if not k.available:
            print(f"# function '{k.name}' skipped: {k.reason}", file=sys.stderr)
        elif k.zero_only and value != 0:
            print(f"# function '{k.name}' skipped: it can only write zeros", file=sys.stderr)
        else:
            chosen.append(k)
    return chosen


def _print_result(args, kernel, result, benchmark, first):
    if args.format == "simple":
        value = result.cycles_per_byte if args.clock == "cycles" else result.bytes_per_sec
        print(f"{value:f}")
        return
    if first:
        print(f"# Running 'mem/{benchmark}' benchmark:")
    print(f"# function '{kernel.name}' ({kernel.description})")
    print(f"# Copying {args.size} bytes ...")
    print()
    if args.clock == "cycles":
        print(f" {result.cycles_per_byte:14f} cycles/byte")
    else:
        print(format_rate(result.bytes_per_sec))
    sys.stdout.flush()


def _cmd_mem(args, benchmark):
    kind = "clear" if benchmark == "memset" else "copy"
    if args.function == "help":
        _print_functions(kind)
        return 0
    _resolve_clock(args)
    loops = _parse_loops(args.nr_loops)
    if args.output:
        _check_output(args.output)

    value = _parse_value(args.value) if benchmark == "memset" else 0
    # Check everything before running anything, so a bad argument never
    # follows part of a run (or notes about kernels that -f all skips).
    job = plan(benchmark, size=args.size, page=args.page, chunk=args.chunk, loops=loops,
               clock=args.clock, value=value, thp=True if args.thp else False)

    results = []
    try:
        for kernel in _selected(args.function, kind, value):
            result = run(job, kernel.name)
            results.append(result)
            _print_result(args, kernel, result, benchmark, first=len(results) == 1)
    finally:
        # Ctrl-C or a failure part-way still keeps what was measured.
        if args.output and results:
            save_results(args.output, results)
    return 0


def cmd_memset(args):
    return _cmd_mem(args, "memset")


def cmd_memcpy(args):
    return _cmd_mem(args, "memcpy")


def _format_ns(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def _latency_line(result):
    lat = result.details["latency"]
    unit, page = lat["unit_bytes"], 1 << parse_page(result.params["page"])
    if unit == page:
        what = f"{format_size(page)} fault"
    elif result.params["thp"] is True:
        what = f"{format_size(unit)} THP fault"
    else:
        what = f"{format_size(unit)} ({unit // page} faults of {format_size(page)})"
    return (f"# latency per {what}: p50 {_format_ns(lat['p50_ns'])}, "
            f"p99 {_format_ns(lat['p99_ns'])}, max {_format_ns(lat['max_ns'])} "
            f"({lat['n']} samples)")


def _print_fault(args, job, result, first):
    if args.format == "simple":
        value = result.cycles_per_byte if args.clock == "cycles" else result.bytes_per_sec
        print(f"{value:f}")
        return
    if first:
        print("# Running 'mem/mmap' benchmark:")
    print(f"# function '{result.function}' ({fault.describe(result.function)})")
    print(f"# Copying {args.size} bytes ...")
    if job.threads > 1:
        print(f"# {job.threads} threads, each faulting its own {args.size}")
    print()
    if args.clock == "cycles":
        print(f" {result.cycles_per_byte:14f} cycles/byte")
    else:
        print(format_rate(result.bytes_per_sec))
        if job.threads > 1:
            # perf's "( +- x% )", here the standard deviation across threads.
            mean, pct = fault.thread_spread(result)
            print(f"{format_rate(mean)}/thread ( +- {pct:.2f}% )")
    pages = fault.page_report(result)
    print(f"# pages: {pages['text']}")
    if result.details["latency"]:
        print(_latency_line(result))
    sys.stdout.flush()


def _warn_pages(result):
    pages = fault.page_report(result)
    if not pages["fallback"]:
        return
    why = ""
    if result.function == "populate" and result.params["thp"]:
        why = (" (MAP_POPULATE faults the pages in before madvise(MADV_HUGEPAGE) can ask "
               "for THP: use populate-write)")
    print(f"pagezero: warning: '{result.function}': {pages['text']}{why}", file=sys.stderr)


def _print_headroom(args, faults, clears):
    best = max(clears, key=lambda r: r.bytes_per_sec)
    for result in faults:
        h = fault.Headroom(result, clears)
        if args.format == "simple":
            print(f"{h.ratio:f}")
            continue
        print(f"# headroom '{result.function}': faults {format_rate(h.fault_rate).strip()}"
              f"{'/thread' if result.params['threads'] > 1 else ''}, best user-space clear "
              f"of {result.params['page']} extents {format_rate(best.bytes_per_sec).strip()} "
              f"({best.function}): {h.ratio:.2f}x")


def _fault_functions(function, latency):
    if function != "all":
        return [fault.check_workload(function)]
    chosen = []
    for name in fault.WORKLOADS:
        if latency and name == "populate":
            print("# function 'populate' skipped: MAP_POPULATE faults every page inside "
                  "mmap(), so no fault can be timed on its own", file=sys.stderr)
        else:
            chosen.append(name)
    return chosen


def cmd_mmap(args):
    if args.function == "help":
        print("Available functions:")
        for name in fault.WORKLOADS:
            print(f"\t{name} ... {fault.describe(name)}")
        return 0
    _resolve_clock(args)
    loops = _parse_loops(args.nr_loops)
    seed = _parse_whole(args.randomize, "seed")
    threads = _parse_whole(args.threads, "threads")
    if args.output:
        _check_output(args.output)
    if args.headroom and args.clock == "cycles":
        raise UsageError("--headroom compares rates, which the cycles clock does not give")
    # Every argument is checked before anything runs or any pool changes.
    job = fault.plan(size=args.size, page=args.page, loops=loops, threads=threads, seed=seed,
                     thp=True if args.thp else False, clock=args.clock, latency=args.latency)
    functions = _fault_functions(args.function, args.latency)
    if args.function != "all":
        fault.check_latency(job, functions[0])

    results, clears = [], []
    try:
        with fault.reserved(job, args.reserve):
            for name in functions:
                try:
                    result = fault.run(job, name)
                except _core.UnavailableError as e:
                    if args.function != "all":
                        raise
                    print(f"# function '{name}' skipped: {e}", file=sys.stderr)
                    continue
                results.append(result)
                _print_fault(args, job, result, first=len(results) == 1)
                _warn_pages(result)
            if args.headroom and results:
                clears = list(fault.measure_headroom(results[0]))
                _print_headroom(args, results, clears)
    finally:
        # Ctrl-C or a failure part-way still keeps what was measured.
        if args.output and results:
            save_results(args.output, results + clears)
    return 0


def cmd_kernels(args):
    kinds = ("clear", "copy") if args.kind == "all" else (args.kind,)
    rows = [("KIND", "NAME", "AVAILABLE", "STORES", "NEEDS", "DESCRIPTION")]
    for kind in kinds:
        for k in kernels(kind):
            rows.append((
                k.kind,
                k.name,
                "yes" if k.available else f"no: {k.reason}",
                "temporal" if k.temporal else "non-temporal",
                ",".join(k.features) or "-",
                k.description,
            ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


COMMANDS = {
    "memset": cmd_memset,
    "memcpy": cmd_memcpy,
    "mmap": cmd_mmap,
    "kernels": cmd_kernels,
}


def _add_mem_options(p, benchmark):
    p.add_argument("-s", "--size", default="1GB",
                   help="bytes per loop; units B, KB, MB, GB, TB, powers of 1024 (default: 1GB)")
    p.add_argument("-p", "--page", default="4KB",
                   help="page size of the buffers: 4KB, 2MB or 1GB (default: 4KB)")
    p.add_argument("-k", "--chunk", default="0",
                   help="bytes per kernel call; 0 means the whole extent (default: 0)")
    p.add_argument("-f", "--function", default="all",
                   help="kernel to run, 'all' (default) or 'help' to list them")
    p.add_argument("-l", "--nr_loops", default="10",
                   help="timed loops over the whole size, one sample each (default: 10)")
    p.add_argument("-c", "--cycles", action="store_true",
                   help="count CPU cycles with perf_event_open, as perf's -c (needs a PMU)")
    p.add_argument("--clock", choices=None, default=None,
                   help="ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc")
    if benchmark == "memset":
        p.add_argument("--value", default="0",
                       help="fill byte 0..255 (default 0), or 'loop' to write the loop "
                            "index as perf does")
    p.add_argument("--thp", action="store_true",
                   help="ask for transparent huge pages on 4KB mappings (default: refuse them)")
    p.add_argument("--format", default="default", choices=["default", "simple"],
                   help="default: perf's text; simple: only the number")
    p.add_argument("-o", "--output", metavar="FILE.json",
                   help="also save every result, with its samples and the machine, as JSON")


def _add_mmap_options(p):
    p.add_argument("-s", "--size", default="1GB",
                   help="bytes each thread maps and faults per loop; units B, KB, MB, GB, TB, "
                        "powers of 1024 (default: 1GB)")
    p.add_argument("-p", "--page", default="4KB",
                   help="page size: 4KB, or 2MB / 1GB hugetlb (default: 4KB)")
    p.add_argument("-f", "--function", default="all",
                   help="workload: demand, populate, populate-write, 'all' (default) or 'help'")
    p.add_argument("-l", "--nr_loops", default="10",
                   help="timed map + fault loops, one sample each (default: 10)")
    p.add_argument("-c", "--cycles", action="store_true",
                   help="count CPU cycles with perf_event_open, as perf's -c (needs a PMU)")
    p.add_argument("--clock", default=None,
                   help="ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc")
    p.add_argument("-r", "--randomize", default="0", metavar="SEED",
                   help="demand: write a random byte of each page, drawn as rand() after "
                        "srand(SEED + thread) (default: 0, byte 0 of each page)")
    p.add_argument("-t", "--threads", default="1",
                   help="threads faulting their own regions at once (default: 1)")
    p.add_argument("--thp", action="store_true",
                   help="ask for transparent huge pages on 4KB mappings (default: refuse them)")
    p.add_argument("--latency", action="store_true",
                   help="also time each fault (groups of 16 for 4KB pages): p50, p99, max")
    p.add_argument("--headroom", action="store_true",
                   help="then clear the same extents with every clear kernel and print how "
                        "much faster the best one is than the faults")
    p.add_argument("--reserve", action="store_true",
                   help="grow the hugepage pool by what the run lacks, as root, and restore "
                        "it afterwards")
    p.add_argument("--format", default="default", choices=["default", "simple"],
                   help="default: perf's text; simple: only the number")
    p.add_argument("-o", "--output", metavar="FILE.json",
                   help="also save every result, with its samples and the machine, as JSON")


def build_parser():
    parser = _Parser(prog="pagezero",
                     description="A laboratory for clearing memory pages.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    mem = sub.add_parser("mem", help="perf bench mem workloads")
    mem_sub = mem.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    mem_sub.required = True
    for benchmark, text in (("memset", "time clearing a region, as perf bench mem memset"),
                            ("memcpy", "time copying a region, as perf bench mem memcpy")):
        p = mem_sub.add_parser(benchmark, help=text, description=text)
        _add_mem_options(p, benchmark)
        p.set_defaults(command=benchmark)
    text = "time mapping a region and faulting every page in, as perf bench mem mmap"
    p = mem_sub.add_parser("mmap", help=text, description=text)
    _add_mmap_options(p)
    p.set_defaults(command="mmap")

    k = sub.add_parser("kernels", help="list the clearing and copying kernels")
    k.add_argument("--kind", default="all", choices=["clear", "copy", "all"])
    return parser


def _fail(message, status):
    print(f"pagezero: error: {message}", file=sys.stderr)
    return status


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except UsageError as e:
        return _fail(e, EXIT_USAGE)
    except ValueError as e:
        return _fail(e, EXIT_USAGE)
    except _core.MappingError as e:
        return _fail(e.strerror or e, EXIT_ENVIRONMENT)
    except _core.PagezeroError as e:
        return _fail(e, EXIT_ENVIRONMENT)
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror}" if e.filename else e, EXIT_ENVIRONMENT)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
