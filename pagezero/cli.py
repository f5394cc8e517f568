"""The pagezero command line.

    pagezero mem memset|memcpy|mmap [perf bench mem options]
    pagezero kernels
    pagezero folio | batch | advise       (clearing policies)

One cmd_<name> function per subcommand, chosen through a dispatch table.
User errors print one line, "pagezero: error: ...", and exit 2; a machine
that cannot do what was asked (no hugepages, no cycle counter, a kernel
the CPU lacks) exits 1 with a line that names the cause and the fix.
Never a traceback.
"""
import argparse
import json
import os
import sys

from . import _core, cli_analysis, cli_fleet, cli_store, fault
from .advise import DEFAULT_BUDGETS_MS, advise
from .bench import plan, run, thread_rates, thread_spread
from .kernels import find_kernel, kernels
from .policy import (PRESETS, STRATEGIES, FolioMemory, default_nt_kernel, plan_batch,
                     plan_folio, run_batch, run_folio)
from .results import save_results
from .units import format_rate, format_size, parse_page, parse_size

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
    _print_conditions(result)
    sys.stdout.flush()


def _print_conditions(result):
    """What cold mode, threads and counters add below perf's lines."""
    d = result.details
    if "cold_method" in d:
        print(f"# cache cold: every chunk flushed with {d['cold_method']} before its "
              f"timed call (the flushes are not timed)")
    if len(d.get("thread_samples", ())) > 1:
        mean, spread = thread_spread(result)
        mode = result.params.get("threads_mode", "shared")
        where = "parts of one region" if mode == "shared" else "their own regions"
        print(f"# {len(d['thread_samples'])} threads on CPUs {', '.join(map(str, d['cpus']))} "
              f"clearing {where}: aggregate above")
        if mean is not None:
            print(f" {mean / (1 << 30):14f} GB/sec/thread ( +- {spread:.2f}% )")
    if "counters" in d:
        loops = len(result.samples)
        for name, values in d["counters"].items():
            print(f"# {name}: {sum(values) / loops:.0f} per loop")


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
               clock=args.clock, value=value, thp=True if args.thp else False,
               cache=args.cache, threads=_parse_whole(args.threads, "threads"),
               threads_mode=args.threads_mode,
               node=None if args.node is None else _parse_whole(args.node, "node"),
               cpu_node=None if args.cpu_node is None else _parse_whole(args.cpu_node,
                                                                         "cpu node"),
               counters=args.counters, offset=_parse_whole(args.offset, "offset"))

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


# Clearing policies -------------------------------------------------------


def _parse_int(text, what):
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"invalid {what} {text!r}: not a whole number") from None


def _emit(args, rows, text_lines):
    """Print rows as --format asks: the text table, one line of numbers per row, or JSON."""
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    elif args.format == "simple":
        for row in rows:
            print(" ".join(f"{row[k]:f}" for k in args.simple_keys))
    else:
        print("\n".join(text_lines))


def _gbs(rate):
    return f"{rate / 1e9:.2f}"


def cmd_batch(args):
    loops = _parse_loops(args.nr_loops)
    if args.output:
        _check_output(args.output)
    batches, notes = args.batch or list(PRESETS), []
    if not args.batch:
        # Every preset by default; those larger than the region step aside.
        nbytes = parse_size(args.size)
        for name, b in PRESETS.items():
            if b is not None and b > nbytes:
                batches.remove(name)
                notes.append(f"# batch '{name}' skipped: larger than the "
                             f"{format_size(nbytes)} region")
    jobs = [plan_batch(size=args.size, batch=b, kernel=args.kernel, loops=loops,
                       yield_between=args.yield_between, cache=args.cache,
                       threads=_parse_whole(args.threads, "threads"), node=_node_arg(args),
                       counters=args.counters) for b in batches]
    # Only once every argument passed: a mistake is one line, never notes and then an error.
    for note in notes:
        print(note, file=sys.stderr)
    results = []
    try:
        for job in jobs:
            results.append(run_batch(job))
    finally:
        if args.output and results:
            save_results(args.output, results)
    rows = [{"batch": str(j.batch), "batch_bytes": r.batch_bytes, "kernel": r.function,
             "batches_per_loop": r.batches_per_loop, "loops": r.loops,
             "bytes_per_sec": r.bytes_per_sec, "worst_ms": r.worst_ms, "p99_ms": r.p99_ms,
             "typical_worst_ms": r.typical_worst_ms, "median_ms": r.median_ms,
             **_condition_row(r)}
            for j, r in zip(jobs, results)]
    head = jobs[0]
    lines = [f"# Running 'policy/batch': clearing {format_size(head.nbytes)} of 4KB pages "
             f"in batches with {head.kernel}, {loops} loops, "
             f"{'sched_yield() after each batch' if args.yield_between else 'no yield'}",
             "# GB/s = 10^9 bytes/s over whole loops; latencies over every batch of every "
             "loop; typ.worst: the slowest batch position, median over loops",
             f"{'batch':>8} {'bytes':>8} {'batches':>8} {'GB/s':>8} {'worst ms':>9} "
             f"{'p99 ms':>9} {'typ.worst':>9} {'median ms':>9}"]
    for row in rows:
        lines.append(f"{row['batch']:>8} {format_size(row['batch_bytes']):>8} "
                     f"{row['batches_per_loop']:>8} {_gbs(row['bytes_per_sec']):>8} "
                     f"{row['worst_ms']:9.3g} {row['p99_ms']:9.3g} "
                     f"{row['typical_worst_ms']:9.3g} {row['median_ms']:9.3g}")
    lines += _condition_lines(results, "batch's range")
    args.simple_keys = ("bytes_per_sec", "worst_ms", "p99_ms")
    _emit(args, rows, lines)
    return 0


def cmd_folio(args):
    loops = _parse_loops(args.nr_loops)
    fault = _parse_int(args.fault_index, "fault index")
    if args.output:
        _check_output(args.output)
    names = list(STRATEGIES) if args.strategy == "all" else [args.strategy]
    skip_nt = args.strategy == "all" and args.nt_kernel is None and default_nt_kernel() is None
    if skip_nt:
        # As -f all skips kernels the CPU lacks: only when nothing was asked for by name.
        names.remove("nocache-except-target")
    jobs = [plan_folio(size=args.page, strategy=name, fault_index=fault, kernel=args.kernel,
                       nt_kernel=args.nt_kernel, loops=loops, batch=args.batch,
                       backing=args.backing, cold=args.cold, cache=args.cache,
                       node=_node_arg(args), counters=args.counters) for name in names]
    if skip_nt:
        print("# strategy 'nocache-except-target' skipped: no non-temporal kernel "
              "available here", file=sys.stderr)
    results = []
    # One folio (and scrub buffer) for every strategy: they differ in order only.
    memory = FolioMemory(jobs[0].nbytes, jobs[0].backing, jobs[0].node)
    try:
        for job in jobs:
            results.append(run_folio(job, memory))
    finally:
        memory.close()
        if args.output and results:
            save_results(args.output, results)
    rows = [{"strategy": r.params["strategy"], "kernel": r.function,
             "nt_kernel": r.params["nt_kernel"], "folio_bytes": r.bytes_per_loop,
             "fault_index": fault, "backing": r.backing, "loops": r.loops,
             "bytes_per_sec": r.clear_bytes_per_sec,
             "touch_ns_per_line": r.touch_ns_per_line, "cold_ns_per_line": r.cold_ns_per_line,
             "touch_lines": r.touch_lines, "cold_method": r.cold_method,
             **_condition_row(r)}
            for r in results]
    r0 = results[0]
    first, count = r0.neighbourhood
    backing = ("one hugetlb page" if r0.backing == "hugetlb"
               else "4KB pages, THP refused")
    nt = {j.nt_kernel for j in jobs} - {None}
    lines = [f"# Running 'policy/folio': {format_size(r0.bytes_per_loop)} folio ({backing}), "
             f"fault at page {fault}, {r0.function}"
             + (f" (non-temporal: {', '.join(sorted(nt))})" if nt else "") + f", {loops} loops",
             f"# GB/s = 10^9 bytes/s; touch: read then write each line of pages "
             f"{first}..{first + count - 1} ({r0.touch_lines} lines) right after the clear; "
             f"cold: the same touch after {_COLD_WORDS[r0.cold_method]}; medians over loops",
             f"{'strategy':<22} {'GB/s':>8} {'touch ns/line':>14} {'cold ns/line':>13} "
             f"{'touch/cold':>10}"]
    for row in rows:
        lines.append(f"{row['strategy']:<22} {_gbs(row['bytes_per_sec']):>8} "
                     f"{row['touch_ns_per_line']:14.2f} {row['cold_ns_per_line']:13.2f} "
                     f"{row['touch_ns_per_line'] / row['cold_ns_per_line']:10.2f}")
    lines += _condition_lines(results, "folio")
    args.simple_keys = ("bytes_per_sec", "touch_ns_per_line", "cold_ns_per_line")
    _emit(args, rows, lines)
    return 0


def _node_arg(args):
    return None if args.node is None else _parse_whole(args.node, "node")


def _condition_row(result):
    """The measured conditions of a policy result, for --format json and --output rows."""
    row = {k: result.params[k] for k in ("cache", "threads", "node") if k in result.params}
    d = result.details
    if "cold_method" in d:
        row["cache_flush"] = d["cold_method"]
    if "thread_samples" in d:
        row["thread_bytes_per_sec"] = list(thread_rates(result) or ())
        row["cpus"] = list(d["cpus"])
    if "counters" in d:
        row["counters"] = {name: list(v) for name, v in d["counters"].items()}
    return row


def _condition_lines(results, what):
    """Comment lines below a policy table: cold mode, threads, counters (first result's
    conditions; every row ran under the same)."""
    r0, lines = results[0], []
    d = r0.details
    if "cold_method" in d:
        lines.append(f"# cache cold: each {what} flushed with {d['cold_method']} before its "
                     f"timed clear (the flushes are not timed)")
    if "node" in r0.params:
        lines.append(f"# memory bound to NUMA node {r0.params['node']}")
    for r in results:
        if len(r.details.get("thread_samples", ())) > 1:
            mean, spread = thread_spread(r)
            lines.append(f"# {r.params.get('batch', '')}: {len(r.details['thread_samples'])} "
                         f"threads on CPUs {', '.join(map(str, r.details['cpus']))}, each "
                         f"clearing its own region: {_gbs(r.bytes_per_sec)} GB/s aggregate, "
                         f"{_gbs(mean)} GB/s/thread ( +- {spread:.2f}% )")
        if "counters" in r.details:
            loops = len(r.samples)
            label = r.params.get("strategy", r.params.get("batch"))
            lines.append(f"# {label} counters per loop: " + ", ".join(
                f"{name} {sum(v) / loops:.0f}" for name, v in r.details["counters"].items()))
    return lines


_COLD_WORDS = {"clflush": "clflush of those lines",
               "evict": "reading twice the LLC to evict them"}


def _parse_budget(text):
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"invalid budget {text!r}: not a number of milliseconds") from None


def cmd_advise(args):
    budgets = [_parse_budget(b) for b in args.budget] if args.budget else DEFAULT_BUDGETS_MS
    if args.output:
        _check_output(args.output)
    advice = advise(quick=args.quick, budgets_ms=budgets,
                    progress=sys.stderr if args.format == "default" else None)
    doc = advice.to_json()
    if args.output:
        with open(args.output, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if args.format == "json":
        print(json.dumps(doc, indent=1))
    else:
        print("\n".join(advice.describe()))
    return 0


COMMANDS = {
    "memset": cmd_memset,
    "memcpy": cmd_memcpy,
    "mmap": cmd_mmap,
    "kernels": cmd_kernels,
    "folio": cmd_folio,
    "batch": cmd_batch,
    "advise": cmd_advise,
    **cli_analysis.COMMANDS,
    **cli_fleet.COMMANDS,
    **cli_store.COMMANDS,
}


def _add_clock_options(p):
    p.add_argument("-c", "--cycles", action="store_true",
                   help="count CPU cycles with perf_event_open, as perf's -c (needs a PMU)")
    p.add_argument("--clock", default=None,
                   help="ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc")


def _add_policy_conditions(p, cold_text):
    """mem memset's --cache, --node and --counters, on a clearing policy command."""
    p.add_argument("--cache", default="hot", choices=["hot", "cold"],
                   help=f"hot: as before (default); cold: {cold_text} "
                        "(clflushopt/clflush, elsewhere evict)")
    p.add_argument("--node", default=None,
                   help="bind the memory to this NUMA node (mbind) before its first touch")
    p.add_argument("--counters", action="store_true",
                   help="read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles "
                        "and instructions around each timed pass (needs a PMU)")


def _add_output_option(p):
    p.add_argument("-o", "--output", metavar="FILE.json",
                   help="also save every result, with its samples and the machine, as JSON")


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
    _add_clock_options(p)
    if benchmark == "memset":
        p.add_argument("--value", default="0",
                       help="fill byte 0..255 (default 0), or 'loop' to write the loop "
                            "index as perf does")
    p.add_argument("--thp", action="store_true",
                   help="ask for transparent huge pages on 4KB mappings (default: refuse them)")
    p.add_argument("--offset", default="0", metavar="BYTES",
                   help="start the buffers BYTES past a page boundary (default 0, as perf "
                        "since it mmap()s them; 16 reproduces perf 6.1's malloc()ed buffers)")
    p.add_argument("--cache", default="hot", choices=["hot", "cold"],
                   help="hot: the same buffer every loop, as perf (default); cold: flush each "
                        "chunk from the caches before its timed call (clflushopt/clflush, "
                        "elsewhere evict), timing each chunk")
    p.add_argument("-t", "--threads", default="1",
                   help="threads, each pinned to its own CPU, started together (default: 1)")
    p.add_argument("--threads-mode", default="shared", choices=["shared", "private"],
                   help="shared: disjoint parts of one region (default); private: a region "
                        "of --size each")
    p.add_argument("--node", default=None,
                   help="bind the buffers to this NUMA node (mbind)")
    p.add_argument("--cpu-node", default=None,
                   help="run the threads on this NUMA node's CPUs")
    p.add_argument("--counters", action="store_true",
                   help="read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles "
                        "and instructions around each loop (needs a PMU)")
    p.add_argument("--format", default="default", choices=["default", "simple"],
                   help="default: perf's text; simple: only the number")
    _add_output_option(p)


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
    _add_clock_options(p)
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
    _add_output_option(p)


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

    text = "clear a folio in a folio_zero_user() strategy's order and time the fault neighbourhood"
    f = sub.add_parser("folio", help=text, description=text)
    f.add_argument("-p", "--page", default="2MB",
                   help="folio size: 2MB, 1GB or any power-of-two number of 4KB pages "
                        "(default: 2MB)")
    f.add_argument("--strategy", default="all", choices=list(STRATEGIES) + ["all"],
                   help="clearing order (default: all)")
    f.add_argument("--fault-index", default="0",
                   help="the faulting page, 0-based (default: 0, the common case)")
    f.add_argument("--kernel", help="clear kernel for cached stores (default: clear_pages()'s)")
    f.add_argument("--nt-kernel",
                   help="non-temporal kernel for nocache-except-target (default: the first "
                        "available)")
    f.add_argument("-b", "--batch", default="32MB",
                   help="most clear_pages() clears at once: a size or a preset "
                        f"({', '.join(PRESETS)}) (default: 32MB)")
    f.add_argument("-l", "--nr_loops", default="10", help="timed clears (default: 10)")
    f.add_argument("--backing", default="auto", choices=["auto", "hugetlb", "4KB"],
                   help="hugetlb page or 4KB pages (THP refused); auto: hugetlb when one "
                        "is free (default)")
    f.add_argument("--cold", default="auto", choices=["auto", "clflush", "evict"],
                   help="how the cold baseline evicts the neighbourhood (default: clflush "
                        "where the CPU has it)")
    _add_policy_conditions(f, "flush the whole folio from the caches before each clear "
                              "(after the scrub read), outside the timing")
    f.add_argument("--format", default="default", choices=["default", "simple", "json"],
                   help="simple: 'rate touch_ns_per_line cold_ns_per_line' per strategy")
    _add_output_option(f)

    text = "clear a region in clear_pages() batches and time every batch"
    b = sub.add_parser("batch", help=text, description=text)
    b.add_argument("-s", "--size", default="1GB",
                   help="region size, a whole number of 4KB pages (default: 1GB)")
    b.add_argument("-b", "--batch", action="append",
                   help=f"batch: a size or a preset ({', '.join(PRESETS)}); repeat for "
                        "several (default: every preset)")
    b.add_argument("--kernel", help="clear kernel (default: clear_pages()'s)")
    b.add_argument("-l", "--nr_loops", default="10",
                   help="timed passes over the region (default: 10)")
    b.add_argument("--yield", dest="yield_between", action="store_true",
                   help="sched_yield() after each batch, as cond_resched()")
    _add_policy_conditions(b, "flush each batch's range from the caches before it, outside "
                              "the timing")
    b.add_argument("-t", "--threads", default="1",
                   help="threads, each pinned to its own CPU and clearing its own region of "
                        "--size in batches, every pass started together (default: 1)")
    b.add_argument("--format", default="default", choices=["default", "simple", "json"],
                   help="simple: 'rate worst_ms p99_ms' per batch")
    _add_output_option(b)

    text = "sweep this machine and advise kernels, the cache knee and batch sizes"
    a = sub.add_parser("advise", help=text, description=text)
    a.add_argument("--quick", action="store_true",
                   help="a sweep of a few seconds (smoke test, not a measurement)")
    a.add_argument("--budget", action="append", metavar="MS",
                   help="worst-case batch latency budget in ms; repeat for several "
                        "(default: 1 and 3)")
    a.add_argument("--format", default="default", choices=["default", "json"])
    a.add_argument("-o", "--output", metavar="FILE.json", help="also write the JSON advice")
    cli_analysis.add_parsers(sub)
    cli_fleet.add_parsers(sub)
    cli_store.add_parsers(sub)
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
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _core.MappingError as e:
        return _fail(e.strerror or e, EXIT_ENVIRONMENT)
    except _core.PagezeroError as e:
        return _fail(e, EXIT_ENVIRONMENT)
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror}" if e.filename else e, EXIT_ENVIRONMENT)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except RuntimeError as e:  # a sweep worker that died
        return _fail(e, EXIT_ENVIRONMENT)
