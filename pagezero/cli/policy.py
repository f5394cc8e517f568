"""pagezero batch | folio | advise: the clearing policies (clear_pages() batch
sizes, folio_zero_user() orders) and the advice drawn from them."""

import json
import sys

from pagezero.cli.backing import backing_heading, backing_lines, backing_row
from pagezero.cli.mem import add_loops
from pagezero.cli.options import (
    add_conditions,
    add_format,
    add_output,
    check_output,
    integer,
    number,
)
from pagezero.cli.render import (
    Measured,
    condition_lines,
    condition_row,
    emit,
    gbs,
    interrupted_line,
)
from pagezero.cli.runs import (
    add_runs,
    between_runs_line,
    check_runs_option,
    measure_runs,
    pooled,
    runs_row,
)
from pagezero.interrupt import as_interrupted, deferred
from pagezero.measure.policy import (
    PRESETS,
    STRATEGIES,
    FolioMemory,
    default_nt_kernel,
    plan_batch,
    plan_folio,
    run_batch,
    run_folio,
)
from pagezero.results.resultset import atomic_write
from pagezero.studies.advise.study import DEFAULT_BUDGETS_MS, advise
from pagezero.system.backing import BACKINGS
from pagezero.units import format_size, parse_size

__all__ = ["COMMANDS", "add_parsers"]

_COLD_WORDS = {"clflush": "clflush of those lines", "evict": "reading twice the LLC to evict them"}


def cmd_batch(args):
    """`pagezero batch`: clear a region in batches between resched points.

    Per batch size (``-b``; every preset that fits the region by default): GB/s
    (10^9 bytes/s) over whole passes, the worst, p99 and median batch latency and the
    typical worst (ms), headed by the pages used (``--backing``, 2MB by default) and,
    with ``--runs N``, the spread between runs.

    Returns
    -------
    int
        The exit status: 0, or 130, 143, 129 after a stop signal (what was measured
        is saved); errors are raised for :func:`pagezero.cli.main` (exit 2 or 1).
    """
    loops = args.nr_loops
    check_output(args.output)
    batches, notes = args.batch or list(PRESETS), []
    if not args.batch:
        # Every preset by default; those larger than the region step aside.
        nbytes = parse_size(args.size)
        for name, b in PRESETS.items():
            if b is not None and b > nbytes:
                batches.remove(name)
                notes.append(
                    f"# batch '{name}' skipped: larger than the {format_size(nbytes)} region"
                )
    common = dict(
        size=args.size,
        kernel=args.kernel,
        loops=loops,
        yield_between=args.yield_between,
        cache=args.cache,
        threads=args.threads,
        node=args.node,
        counters=args.counters,
        backing=args.backing,
    )
    jobs = [plan_batch(batch=b, **common) for b in batches]
    runs = check_runs_option(args)
    # Only once every argument passed: a mistake is one line, never notes and then an error.
    for note in notes:
        print(note, file=sys.stderr)
    with Measured(args.output, runs * len(jobs) * loops).saving() as measured:
        if runs > 1:
            per_batch = measure_runs(
                measured,
                "batch",
                [dict(common, batch=b) for b in batches],
                runs,
                lambda r: r.params["batch"],
                batches,
            )
        else:
            for job in jobs:
                measured.results.append(run_batch(job))
            per_batch = [[r] for r in measured.results]
    results = [pooled(rs) for rs in per_batch]
    rows = [
        {
            "batch": str(j.batch),
            "batch_bytes": r.batch_bytes,
            "kernel": r.function,
            "batches_per_loop": r.batches_per_loop,
            "loops": r.loops,
            "bytes_per_sec": r.bytes_per_sec,
            "worst_ms": r.worst_ms,
            "p99_ms": r.p99_ms,
            "typical_worst_ms": r.typical_worst_ms,
            "median_ms": r.median_ms,
            **backing_row(r),
            **condition_row(r),
            **runs_row(rs),
        }
        for j, r, rs in zip(jobs, results, per_batch)
    ]
    head = jobs[0]
    lines = [
        f"# Running 'policy/batch': clearing {format_size(head.nbytes)} of "
        f"{backing_heading(results)} in batches with {head.kernel}, {loops} loops, "
        f"{'sched_yield() after each batch' if args.yield_between else 'no yield'}",
        "# GB/s = 10^9 bytes/s over whole loops; latencies over every batch of every "
        "loop; typ.worst: the slowest batch position, median over loops",
        f"{'batch':>8} {'bytes':>8} {'batches':>8} {'GB/s':>8} {'worst ms':>9} "
        f"{'p99 ms':>9} {'typ.worst':>9} {'median ms':>9}",
    ]
    for row in rows:
        lines.append(
            f"{row['batch']:>8} {format_size(row['batch_bytes']):>8} "
            f"{row['batches_per_loop']:>8} {gbs(row['bytes_per_sec']):>8} "
            f"{row['worst_ms']:9.3g} {row['p99_ms']:9.3g} "
            f"{row['typical_worst_ms']:9.3g} {row['median_ms']:9.3g}"
        )
    lines += condition_lines(results, "batch's range")
    for line in backing_lines(results, lambda r: f"batch '{r.params['batch']}'"):
        print(line, file=sys.stderr)
    if runs > 1:
        lines.append(
            f"# {runs} runs: GB/s over every loop of every run, worst ms the worst "
            f"of all runs, the other latencies the median of the runs'"
        )
        lines += [
            between_runs_line(rs, f" (batch {row['batch']})") for rs, row in zip(per_batch, rows)
        ]
    emit(args, rows, lines, ("bytes_per_sec", "worst_ms", "p99_ms"))
    return 0


def cmd_folio(args):
    """`pagezero folio`: clear a folio in a strategy's order, then touch the
    faulting page's neighbourhood.

    Per strategy (``--strategy all``: every one): the clear's GB/s (10^9 bytes/s),
    the touch and cold ns per line and their ratio, headed by the folio's pages
    (``--backing``) and, with ``--runs N``, the spread between runs.

    Returns
    -------
    int
        The exit status: 0, or 130, 143, 129 after a stop signal (what was measured
        is saved); errors are raised for :func:`pagezero.cli.main` (exit 2 or 1).
    """
    loops, fault = args.nr_loops, args.fault_index
    check_output(args.output)
    names = list(STRATEGIES) if args.strategy == "all" else [args.strategy]
    skip_nt = args.strategy == "all" and args.nt_kernel is None and default_nt_kernel() is None
    if skip_nt:
        # As -f all skips kernels the CPU lacks: only when nothing was asked for by name.
        names.remove("nocache-except-target")
    common = dict(
        size=args.page,
        fault_index=fault,
        kernel=args.kernel,
        nt_kernel=args.nt_kernel,
        loops=loops,
        batch=args.batch,
        backing=args.backing,
        cold=args.cold,
        cache=args.cache,
        node=args.node,
        counters=args.counters,
    )
    jobs = [plan_folio(strategy=name, **common) for name in names]
    runs = check_runs_option(args)
    if skip_nt:
        print(
            "# strategy 'nocache-except-target' skipped: no non-temporal kernel available here",
            file=sys.stderr,
        )
    with Measured(args.output, runs * len(jobs) * loops).saving() as measured:
        if runs > 1:
            # Each run's process maps its own folio for each strategy (folio()).
            per_strategy = measure_runs(
                measured,
                "folio",
                [dict(common, strategy=n) for n in names],
                runs,
                lambda r: r.params["strategy"],
                names,
            )
        else:
            # One folio (and scrub buffer) for every strategy: they differ in order only.
            memory = FolioMemory(jobs[0].nbytes, jobs[0].backing, jobs[0].node)
            try:
                for job in jobs:
                    measured.results.append(run_folio(job, memory))
            finally:
                memory.close()
            per_strategy = [[r] for r in measured.results]
    results = [pooled(rs) for rs in per_strategy]
    rows = [
        {
            "strategy": r.params["strategy"],
            "kernel": r.function,
            "nt_kernel": r.params["nt_kernel"],
            "folio_bytes": r.bytes_per_loop,
            "fault_index": fault,
            **backing_row(r),
            "loops": r.loops,
            "bytes_per_sec": r.clear_bytes_per_sec,
            "touch_ns_per_line": r.touch_ns_per_line,
            "cold_ns_per_line": r.cold_ns_per_line,
            "touch_lines": r.touch_lines,
            "cold_method": r.cold_method,
            **condition_row(r),
            **runs_row(rs),
        }
        for r, rs in zip(results, per_strategy)
    ]
    r0 = results[0]
    first, count = r0.neighbourhood
    backing = memory.page_label if runs == 1 else backing_heading(results)
    if "huge_share" in r0.details:
        backing = backing_heading(results)
    nt = {j.nt_kernel for j in jobs} - {None}
    lines = [
        f"# Running 'policy/folio': {format_size(r0.bytes_per_loop)} folio ({backing}), "
        f"fault at page {fault}, {r0.function}"
        + (f" (non-temporal: {', '.join(sorted(nt))})" if nt else "")
        + f", {loops} loops",
        f"# GB/s = 10^9 bytes/s; touch: read then write each line of pages "
        f"{first}..{first + count - 1} ({r0.touch_lines} lines) right after the clear; "
        f"cold: the same touch after {_COLD_WORDS[r0.cold_method]}; medians over loops",
        f"{'strategy':<22} {'GB/s':>8} {'touch ns/line':>14} {'cold ns/line':>13} "
        f"{'touch/cold':>10}",
    ]
    for row in rows:
        lines.append(
            f"{row['strategy']:<22} {gbs(row['bytes_per_sec']):>8} "
            f"{row['touch_ns_per_line']:14.2f} {row['cold_ns_per_line']:13.2f} "
            f"{row['touch_ns_per_line'] / row['cold_ns_per_line']:10.2f}"
        )
    lines += condition_lines(results, "folio")
    for line in backing_lines(results, lambda r: f"strategy '{r.params['strategy']}'"):
        print(line, file=sys.stderr)
    if runs > 1:
        lines.append(
            f"# {runs} runs: medians over every loop of every run; the spread "
            f"between runs is the clearing rate's"
        )
        lines += [
            between_runs_line(rs, f" ({row['strategy']})") for rs, row in zip(per_strategy, rows)
        ]
    emit(args, rows, lines, ("bytes_per_sec", "touch_ns_per_line", "cold_ns_per_line"))
    return 0


def cmd_advise(args):
    """`pagezero advise`: the fastest kernel per extent, the LLC knee, and the
    batch and kernel per latency budget (:func:`pagezero.advise`). Prints the advice
    in words, or with ``--format json`` as a document; ``-o`` also saves it (on a stop
    signal, the partial advice).

    Returns
    -------
    int
        The exit status, 0; errors are raised for :func:`pagezero.cli.main`.
    """
    budgets = args.budget or DEFAULT_BUDGETS_MS
    check_output(args.output)
    try:
        advice = advise(
            quick=args.quick,
            budgets_ms=budgets,
            progress=sys.stderr if args.format == "default" else None,
        )
    except KeyboardInterrupt as e:
        # The advice from the cells measured, marked interrupted, to -o; one line.
        stop = as_interrupted(e)
        if stop.partial is None:
            kept = "; too little measured to advise"
        elif args.output:
            with deferred():
                _write_advice(args.output, stop.partial)
            kept = f"; the partial advice is in {args.output}"
        else:
            kept = "; not saved (no -o)"
        print(interrupted_line(stop, kept), file=sys.stderr)
        stop.reported = True
        raise stop from None
    if args.output:
        _write_advice(args.output, advice)
    if args.format == "json":
        print(json.dumps(advice.to_json(), indent=1))
    else:
        print("\n".join(advice.describe()))
    return 0


def _write_advice(path, advice):
    def write(f):
        json.dump(advice.to_json(), f, indent=1)
        f.write("\n")

    # As results are written: renamed into place, signals held meanwhile.
    with deferred():
        atomic_write(path, write)


COMMANDS = {"batch": cmd_batch, "folio": cmd_folio, "advise": cmd_advise}


def _add_folio(sub):
    text = "clear a folio in a folio_zero_user() strategy's order and time the fault neighbourhood"
    f = sub.add_parser("folio", help=text, description=text)
    f.add_argument(
        "-p",
        "--page",
        default="2MB",
        help="folio size: 2MB, 1GB or any power-of-two number of 4KB pages (default: 2MB)",
    )
    f.add_argument(
        "--strategy",
        default="all",
        choices=list(STRATEGIES) + ["all"],
        help="clearing order (default: all)",
    )
    f.add_argument(
        "--fault-index",
        default=0,
        type=integer,
        help="the faulting page, 0-based (default: 0, the common case)",
    )
    f.add_argument("--kernel", help="clear kernel for cached stores (default: clear_pages()'s)")
    f.add_argument(
        "--nt-kernel",
        help="non-temporal kernel for nocache-except-target (default: the first available)",
    )
    f.add_argument(
        "-b",
        "--batch",
        default="32MB",
        help="most clear_pages() clears at once: a size or a preset "
        f"({', '.join(PRESETS)}) (default: 32MB)",
    )
    add_loops(f, "timed clears (default: 10)")
    f.add_argument(
        "--backing",
        default="auto",
        choices=list(BACKINGS),
        help="a hugetlb page of the folio's size, THP (asked with MADV_HUGEPAGE, "
        "checked in smaps) or 4KB pages (THP refused); auto (default): a "
        "hugetlb page when one is free, else 2MB hugetlb pages, else THP, "
        "else 4KB pages with a line saying so",
    )
    f.add_argument(
        "--cold",
        default="auto",
        choices=["auto", "clflush", "evict"],
        help="how the cold baseline evicts the neighbourhood (default: clflush "
        "where the CPU has it)",
    )
    add_conditions(
        f,
        "flush the whole folio from the caches before each clear (after the "
        "scrub read), outside the timing",
    )
    add_runs(f)
    add_format(
        f,
        ("default", "simple", "json"),
        help="simple: 'rate touch_ns_per_line cold_ns_per_line' per strategy",
    )
    add_output(f)


def _add_batch(sub):
    text = "clear a region in clear_pages() batches and time every batch"
    b = sub.add_parser("batch", help=text, description=text)
    b.add_argument(
        "-s",
        "--size",
        default="1GB",
        help="region size, a whole number of 4KB pages (default: 1GB)",
    )
    b.add_argument(
        "-b",
        "--batch",
        action="append",
        help=f"batch: a size or a preset ({', '.join(PRESETS)}); repeat for "
        "several (default: every preset)",
    )
    b.add_argument("--kernel", help="clear kernel (default: clear_pages()'s)")
    add_loops(b, "timed passes over the region (default: 10)")
    b.add_argument(
        "--yield",
        dest="yield_between",
        action="store_true",
        help="sched_yield() after each batch, as cond_resched()",
    )
    b.add_argument(
        "--backing",
        default="auto",
        choices=list(BACKINGS),
        help="the region's pages, standing for the kernel's direct map: 2MB "
        "hugetlb, THP (asked with MADV_HUGEPAGE, checked in smaps) or 4KB "
        "(THP refused); auto (default): hugetlb when enough 2MB pages are "
        "available, else THP, else 4KB with a line saying so",
    )
    add_conditions(
        b,
        "flush each batch's range from the caches before it, outside the timing",
        threads_text="threads, each pinned to its own CPU and clearing its own "
        "region of --size in batches, every pass started together "
        "(default: 1)",
    )
    add_runs(b)
    add_format(b, ("default", "simple", "json"), help="simple: 'rate worst_ms p99_ms' per batch")
    add_output(b)


def _add_advise(sub):
    text = "sweep this machine and advise kernels, the cache knee and batch sizes"
    a = sub.add_parser("advise", help=text, description=text)
    a.add_argument(
        "--quick",
        action="store_true",
        help="a sweep of a few seconds in 1 run (smoke test, not a measurement; "
        "the full sweep makes 3 runs, fresh processes)",
    )
    a.add_argument(
        "--budget",
        action="append",
        metavar="MS",
        type=number,
        help="budget in ms for the typical worst batch latency (the slowest "
        "batch position, median over passes and runs); repeat for several "
        "(default: 1 and 3)",
    )
    add_format(a, ("default", "json"))
    add_output(a, help="also write the JSON advice")


def add_parsers(sub):
    """Add the ``folio``, ``batch`` and ``advise`` commands to `sub`, the
    ``pagezero`` parser's subparsers."""
    _add_folio(sub)
    _add_batch(sub)
    _add_advise(sub)
