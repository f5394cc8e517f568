"""pagezero mem memset | memcpy: perf bench mem's clearing and copying, with
the measured conditions (cold cache, threads, NUMA node, counters) added."""

import math
import sys

from pagezero.cli.options import (
    add_clock,
    add_conditions,
    add_format,
    add_output,
    check_output,
    fill_value,
    integer,
    resolve_clock,
)
from pagezero.cli.render import Measured
from pagezero.cli.runs import add_runs, between_runs_line, check_runs_option, measure_runs, pooled
from pagezero.measure.mem import plan, run, thread_spread
from pagezero.system.backing import thp_warning
from pagezero.system.kernels import find_kernel, kernels
from pagezero.units import format_rate, gb_per_sec

__all__ = ["COMMANDS", "add_parsers", "print_functions"]


def print_functions(names_and_descriptions):
    """Print ``-f help``'s list, as perf does: a heading, then one line per name.

    Parameters
    ----------
    names_and_descriptions : iterable of (str, str)
        Each function's name and its description.
    """
    print("Available functions:")
    for name, description in names_and_descriptions:
        print(f"\t{name} ... {description}")


def _help_rows(kind):
    for k in kernels(kind):
        note = "" if k.available else f"  [unavailable: {k.reason}]"
        yield k.name, k.description + note


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


def print_rate(args, result):
    """perf's rate line, or with -c its cycles per byte.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``clock``).
    result : pagezero.Result
        The result to print.
    """
    if args.clock == "cycles":
        print(f" {result.cycles_per_byte:14f} cycles/byte")
    else:
        print(format_rate(result.bytes_per_sec))


def print_simple(args, result):
    """Print ``--format simple``'s only line: the rate in bytes/sec, or with the
    cycles clock the cycles per byte.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``clock``).
    result : pagezero.Result
        The result to print.
    """
    print(f"{result.cycles_per_byte if args.clock == 'cycles' else result.bytes_per_sec:f}")


def _print_result(args, kernel, result, benchmark, first):
    if args.format == "simple":
        print_simple(args, result)
        return
    if first:
        print(f"# Running 'mem/{benchmark}' benchmark:")
    print(f"# function '{kernel.name}' ({kernel.description})")
    print(f"# Copying {args.size} bytes ...")
    print()
    print_rate(args, result)
    _print_conditions(result)
    sys.stdout.flush()


def _print_conditions(result):
    """What cold mode, threads, counters and THP add below perf's lines."""
    d = result.details
    if "huge_share" in d:
        # As mem mmap's "# pages:" line: what the kernel gave, not what was asked.
        print(f"# THP: {math.floor(d['huge_share'] * 100)}% of the buffer on huge pages (smaps)")
        warning = thp_warning(d["huge_share"], d["buffer_bytes"])
        if warning:
            print(f"pagezero: warning: '{result.function}': {warning}", file=sys.stderr)
    if "cold_method" in d:
        print(
            f"# cache cold: every chunk flushed with {d['cold_method']} before its "
            f"timed call (the flushes are not timed)"
        )
    if len(d.get("thread_samples", ())) > 1:
        mean, spread = thread_spread(result)
        mode = result.params.get("threads_mode", "shared")
        where = "parts of one region" if mode == "shared" else "their own regions"
        print(
            f"# {len(d['thread_samples'])} threads on CPUs {', '.join(map(str, d['cpus']))} "
            f"clearing {where}: aggregate above"
        )
        if mean is not None:
            print(f" {gb_per_sec(mean):14f} GB/sec/thread ( +- {spread:.2f}% )")
    if "counters" in d:
        loops = len(result.samples)
        for name, values in d["counters"].items():
            print(f"# {name}: {sum(values) / loops:.0f} per loop")


def _cmd_mem(args, benchmark):
    kind = "clear" if benchmark == "memset" else "copy"
    if args.function == "help":
        print_functions(_help_rows(kind))
        return 0
    resolve_clock(args)
    check_output(args.output)
    value = args.value if benchmark == "memset" else 0
    # Check everything before running anything, so a bad argument never
    # follows part of a run (or notes about kernels that -f all skips).
    point = dict(
        size=args.size,
        page=args.page,
        chunk=args.chunk,
        loops=args.nr_loops,
        clock=args.clock,
        thp=bool(args.thp),
        cache=args.cache,
        threads=args.threads,
        threads_mode=args.threads_mode,
        node=args.node,
        cpu_node=args.cpu_node,
        counters=args.counters,
        offset=args.offset,
    )
    if benchmark == "memset":
        point["value"] = value
    job = plan(benchmark, **point)
    runs = check_runs_option(args)
    chosen = _selected(args.function, kind, value)
    with Measured(args.output, runs * len(chosen) * args.nr_loops).saving() as measured:
        if runs > 1:
            _mem_runs(args, benchmark, point, chosen, measured)
            return 0
        for kernel in chosen:
            result = run(job, kernel.name)
            measured.results.append(result)
            _print_result(args, kernel, result, benchmark, first=len(measured.results) == 1)
    return 0


def _mem_runs(args, benchmark, point, chosen, measured):
    """--runs N: every selected kernel in each of N fresh processes (cli/runs.py
    says why one process per run, not per kernel); then perf's lines per
    kernel over the loops of all runs, and the spread between runs."""
    names = [k.name for k in chosen]
    per_kernel = measure_runs(
        measured,
        benchmark,
        [dict(point, function=n) for n in names],
        args.runs,
        lambda r: r.function,
        names,
    )
    for kernel, results in zip(chosen, per_kernel):
        _print_result(args, kernel, pooled(results), benchmark, first=kernel is chosen[0])
        if args.format != "simple":
            print(between_runs_line(results))


def cmd_memset(args):
    """`pagezero mem memset`: time clearing a buffer, as ``perf bench mem memset``.

    Prints perf's lines per kernel (``-f all``: every kernel this CPU can run), the
    rate in GB/sec (2^30 bytes/sec) or cycles/byte, the conditions and, with
    ``--runs N``, ``# N runs: between runs +- X%``. ``-f help`` lists the kernels.

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
    """
    return _cmd_mem(args, "memset")


def cmd_memcpy(args):
    """`pagezero mem memcpy`: time copying a buffer, as ``perf bench mem memcpy``.

    Prints as :func:`cmd_memset` does, per copying kernel.

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
    """
    return _cmd_mem(args, "memcpy")


COMMANDS = {"memset": cmd_memset, "memcpy": cmd_memcpy}


def add_loops(p, help):
    """Add ``-l/--nr_loops`` (default 10), perf's spelling.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    help : str
        The option's help text.
    """
    p.add_argument("-l", "--nr_loops", default=10, type=integer, help=help)


def add_simple_format(p):
    """Add ``--format default|simple`` (perf's text, or only the number).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    """
    add_format(p, ("default", "simple"), help="default: perf's text; simple: only the number")


def _add_mem_options(p, benchmark):
    p.add_argument(
        "-s",
        "--size",
        default="1GB",
        help="bytes per loop; units B, KB, MB, GB, TB, powers of 1024 (default: 1GB)",
    )
    p.add_argument(
        "-p",
        "--page",
        default="4KB",
        help="page size of the buffers: 4KB, 2MB or 1GB (default: 4KB)",
    )
    p.add_argument(
        "-k",
        "--chunk",
        default="0",
        help="bytes per kernel call; 0 means the whole extent (default: 0)",
    )
    p.add_argument(
        "-f",
        "--function",
        default="all",
        help="kernel to run, 'all' (default) or 'help' to list them",
    )
    add_loops(p, "timed loops over the whole size, one sample each (default: 10)")
    add_clock(p)
    if benchmark == "memset":
        p.add_argument(
            "--value",
            default=0,
            type=fill_value,
            help="fill byte 0..255 (default 0), or 'loop' to write the loop index as perf does",
        )
    p.add_argument(
        "--thp",
        action="store_true",
        help="ask for transparent huge pages on 4KB mappings (default: refuse them)",
    )
    p.add_argument(
        "--offset",
        default=0,
        type=integer,
        metavar="BYTES",
        help="start the buffers BYTES past a page boundary (default 0, as perf "
        "since it mmap()s them; 16 reproduces perf 6.1's malloc()ed buffers)",
    )
    add_conditions(
        p,
        "flush each chunk from the caches before its timed call, timing each chunk",
        threads_text="threads, each pinned to its own CPU, started together (default: 1)",
        cpu_node=True,
    )
    p.add_argument(
        "--threads-mode",
        default="shared",
        choices=["shared", "private"],
        help="shared: disjoint parts of one region (default); private: a region of --size each",
    )
    add_runs(p)
    add_simple_format(p)
    add_output(p)


def add_parsers(mem_sub):
    """Add the ``mem`` command and its ``memset``, ``memcpy`` and ``mmap`` actions.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``pagezero`` parser (:func:`pagezero.cli.build_parser`).
    """
    for benchmark, text in (
        ("memset", "time clearing a region, as perf bench mem memset"),
        ("memcpy", "time copying a region, as perf bench mem memcpy"),
    ):
        p = mem_sub.add_parser(benchmark, help=text, description=text)
        _add_mem_options(p, benchmark)
        p.set_defaults(command=benchmark)
