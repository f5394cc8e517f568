"""--runs N on the measuring commands: N fresh processes, one after the other, and what
they print: per point, the loops of every run pooled (a rate is total bytes over total
time, as perf's line is for one run), and the spread between the runs' medians. Each
run's process measures every point (-f all, every batch or strategy) in a shuffled order,
so that drift and a process's luck fall on every point alike, as in a sweep's repetition;
each point still maps its own buffers, so points never share a physical placement.
"""

import dataclasses
import statistics
import sys

from pagezero.interrupt import Interrupted
from pagezero.results.points import point_summary
from pagezero.runs.processes import across_processes
from pagezero.runs.sweeps import lost_lines


def each_point(args, measured, common, key, names, here):
    """Per name (a value of `key`), its Results, kept in `measured` as they come."""
    # With --runs N from N fresh processes (a line per run on stderr but with --quiet), all
    # at the end; else one each as the iterable `here` yields them here (None: skipped).
    if args.runs == 1:
        for result in here:
            if result is not None:
                measured.results.append(result)
                yield [result]
        return
    points = [dict(common, **{key: n}) for n in names]
    try:
        rs = across_processes(args.command, points, args.runs, progress=not args.quiet)
    except Interrupted as e:
        if e.partial is not None:  # the runs measured, and the cut run's loops, are kept
            _keep(measured, e.partial)
            e.partial = None
        raise
    _keep(measured, rs)
    by_name = {name: [] for name in names}
    for r in rs.results:
        by_name.setdefault(r.function if key == "function" else r.params[key], []).append(r)
    yield from (by_name[name] for name in names)


def _keep(measured, rs):
    measured.results += rs.results
    measured.runs += rs.runs
    measured.lost += rs.lost
    for line in lost_lines(rs):
        print(line, file=sys.stderr)


# The per-loop fields of Result and its subclasses (pagezero.measure.policy.results).
_PER_LOOP = ("samples", "pass_worst_ns", "touch_ns", "cold_ns")


def pooled(results):
    """One point's Results of several runs as one, holding the loops of every run."""
    # A batch's worst is the worst of all runs, its other batch figures the median
    # of the runs'; mmap --latency's percentiles stay each run's own.
    first = results[0]
    if len(results) == 1:
        return first
    changes = {
        name: tuple(v for r in results for v in getattr(r, name))
        for name in _PER_LOOP
        if hasattr(first, name)
    }
    if getattr(first, "batch_ns", None):
        changes["batch_ns"] = {
            k: (max if k == "max" else statistics.median)(r.batch_ns[k] for r in results)
            for k in first.batch_ns
        }
    details = dict(first.details)
    if "thread_samples" in details:
        details["thread_samples"] = [
            [s for r in results for s in r.details["thread_samples"][t]]
            for t in range(len(details["thread_samples"]))
        ]
    if "counters" in details:
        details["counters"] = {
            name: [v for r in results for v in r.details["counters"][name]]
            for name in details["counters"]
        }
    if "pages" in details:
        details["pages"] = [p for r in results for p in r.details["pages"]]
    return dataclasses.replace(first, **changes, details=details)


def _summary(results):
    return point_summary([r.values() for r in results], results[0].unit)


def runs_row(results):
    """--format json's runs and between_runs_pct; empty for fewer than 2 results."""
    if len(results) < 2:
        return {}
    s = _summary(results)
    return {"runs": s["runs"], "between_runs_pct": s["spread_pct"]}


def between_runs_line(results, what=""):
    """`# N runs: between runs +- X.X%`, the spread of one point's runs' medians."""
    s = _summary(results)
    if s["runs"] < 2:
        return f"# 1 run{what}: no spread between runs (the others were lost or not run)"
    return f"# {s['runs']} runs{what}: between runs +- {s['spread_pct']:.1f}%"
