"""pagezero batch | folio: clear_pages() batch sizes and folio_zero_user() orders."""

import sys

import pagezero.cli.render as render
from pagezero.cli.options import check_output, pick
from pagezero.cli.render import between_runs_line, each_point, pooled, runs_row
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
from pagezero.units import format_size, gbps, parse_size

# batch's and folio's figures in their --format json rows, as their results name them.
_BATCH_FIGURES = "batches_per_loop loops bytes_per_sec worst_ms p99_ms typical_worst_ms median_ms"
_FOLIO_FIGURES = "touch_ns_per_line cold_ns_per_line touch_lines cold_method"

_NO_NT = "# strategy 'nocache-except-target' skipped: no non-temporal kernel available here"
_COLD_WORDS = dict(clflush="clflush of those lines", evict="reading twice the cache to evict them")


def _measure(args, notes, common, key, names, here):
    """Per name (a value of `key`), its Results of every run, and those pooled; notes first."""
    for note in notes:  # once every argument passed: never notes and then an error
        print(note, file=sys.stderr)
    with render.Measured(args.output, args.runs * len(names) * args.nr_loops).saving() as measured:
        per_name = list(each_point(args, measured, common, key, names, here))
    return per_name, [pooled(rs) for rs in per_name]


def _table(args, lines, rows, per_row, results, label, simple_keys, runs_words):
    """Print rows as --format asks: the table with conditions, pages and runs below, or JSON."""
    lines += render.condition_lines(results, "batch's range" if label == "batch" else "folio")
    for line in render.backing_lines(results, lambda r: f"{label} '{r.params[label]}'"):
        print(line, file=sys.stderr)
    if args.runs > 1:
        lines.append(f"# {args.runs} runs: {runs_words}")
        what = "batch " if label == "batch" else ""
        lines += [between_runs_line(rs, f" ({what}{row[label]})") for rs, row in zip(per_row, rows)]
    if args.format == "json":
        render.print_json(rows)
    elif args.format == "simple":  # a line of numbers per row
        for row in rows:
            print(" ".join(f"{row[k]:f}" for k in simple_keys))
    else:
        print("\n".join(lines))
    return 0


def plan_batches(args):
    """``(batches, notes, common, plans)`` of batch's arguments, checked but -o (fleet run too)."""
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
    common = pick(args, "size kernel yield_between cache threads node counters backing")
    return batches, notes, common, [plan_batch(batch=b, **common) for b in batches]


def cmd_batch(args):
    check_output(args.output)
    batches, notes, common, jobs = plan_batches(args)
    here = (run_batch(j) for j in jobs)
    per_batch, results = _measure(args, notes, common, "batch", batches, here)
    rows = [
        {"batch": str(j.batch), "batch_bytes": r.batch_bytes, "kernel": r.function}
        | {name: getattr(r, name) for name in _BATCH_FIGURES.split()}
        | render.backing_row(r)
        | render.condition_row(r)
        | runs_row(rs)
        for j, r, rs in zip(jobs, results, per_batch)
    ]
    head = jobs[0]
    lines = [
        f"# Running 'policy/batch': clearing {format_size(head.nbytes)} of "
        f"{render.backing_heading(results)} in batches with {head.kernel}, {args.nr_loops} loops, "
        f"{'sched_yield() after each batch' if args.yield_between else 'no yield'}",
        "# GB/s = 10^9 bytes/s over whole loops; latencies over every batch of every "
        "loop; typ.worst: the slowest batch position, median over loops",
        f"{'batch':>8} {'bytes':>8} {'batches':>8} {'GB/s':>8} {'worst ms':>9} "
        f"{'p99 ms':>9} {'typ.worst':>9} {'median ms':>9}",
    ]
    for row in rows:
        lines.append(
            f"{row['batch']:>8} {format_size(row['batch_bytes']):>8} "
            f"{row['batches_per_loop']:>8} {gbps(row['bytes_per_sec']):8.2f} "
            f"{row['worst_ms']:9.3g} {row['p99_ms']:9.3g} "
            f"{row['typical_worst_ms']:9.3g} {row['median_ms']:9.3g}"
        )
    words = "GB/s over every loop of every run, worst ms the worst of all runs, the other "
    words += "latencies the median of the runs'"
    simple = ("bytes_per_sec", "worst_ms", "p99_ms")
    return _table(args, lines, rows, per_batch, results, "batch", simple, words)


def plan_folios(args):
    """``(strategies, notes, common, plans)`` of folio's arguments, checked but -o (fleet too)."""
    names, notes = list(STRATEGIES) if args.strategy == "all" else [args.strategy], []
    if args.strategy == "all" and args.nt_kernel is None and default_nt_kernel() is None:
        # As -f all skips kernels the CPU lacks: only when nothing was asked for by name.
        names.remove("nocache-except-target")
        notes.append(_NO_NT)
    fields = "fault_index kernel nt_kernel batch backing cold cache node counters"
    common = pick(args, fields, size="page")
    return names, notes, common, [plan_folio(strategy=name, **common) for name in names]


def cmd_folio(args):
    check_output(args.output)
    names, notes, common, jobs = plan_folios(args)
    page_label = []

    def here():
        # One folio (and scrub buffer) for every strategy: they differ in order only.
        # With --runs, each run's process maps its own for each strategy.
        memory = FolioMemory(jobs[0].nbytes, jobs[0].backing, jobs[0].node)
        page_label.append(memory.page_label)
        try:
            for job in jobs:
                yield run_folio(job, memory)
        finally:
            memory.close()

    per_strategy, results = _measure(args, notes, common, "strategy", names, here())
    rows = [
        {"strategy": r.params["strategy"], "kernel": r.function, "nt_kernel": r.params["nt_kernel"]}
        | {"folio_bytes": r.bytes_per_loop, "fault_index": args.fault_index}
        | render.backing_row(r)
        | {"loops": r.loops, "bytes_per_sec": r.clear_bytes_per_sec}
        | {name: getattr(r, name) for name in _FOLIO_FIGURES.split()}
        | render.condition_row(r)
        | runs_row(rs)
        for r, rs in zip(results, per_strategy)
    ]
    r0 = results[0]
    first, count = r0.neighbourhood
    own = page_label and "huge_share" not in r0.details  # the folio's pages, as mapped here
    backing = page_label[0] if own else render.backing_heading(results)
    nt = {j.nt_kernel for j in jobs} - {None}
    lines = [
        f"# Running 'policy/folio': {format_size(r0.bytes_per_loop)} folio ({backing}), "
        f"fault at page {args.fault_index}, {r0.function}"
        + (f" (non-temporal: {', '.join(sorted(nt))})" if nt else "")
        + f", {args.nr_loops} loops",
        f"# GB/s = 10^9 bytes/s; touch: read then write each line of pages "
        f"{first}..{first + count - 1} ({r0.touch_lines} lines) right after the clear; "
        f"cold: the same touch after {_COLD_WORDS[r0.cold_method]}; medians over loops",
        f"{'strategy':<22} {'GB/s':>8} {'touch ns/line':>14} {'cold ns/line':>13} "
        f"{'touch/cold':>10}",
    ]
    for row in rows:
        lines.append(
            f"{row['strategy']:<22} {gbps(row['bytes_per_sec']):8.2f} "
            f"{row['touch_ns_per_line']:14.2f} {row['cold_ns_per_line']:13.2f} "
            f"{row['touch_ns_per_line'] / row['cold_ns_per_line']:10.2f}"
        )
    words = "medians over every loop of every run; the spread between runs is the clearing rate's"
    simple = ("bytes_per_sec", "touch_ns_per_line", "cold_ns_per_line")
    return _table(args, lines, rows, per_strategy, results, "strategy", simple, words)
