"""--runs N on the measuring commands: N fresh processes, one after the other
(pagezero.runs.processes), and what they print: per point, the loops of every run
pooled (a rate is total bytes over total time of all runs' loops, as perf's line
is for one run), and the spread between the runs' medians.

With several points (-f all, every batch or strategy) each run's process measures
every point, in a shuffled order, rather than N processes per point: drift and a
process's luck then fall on every point alike, as in a sweep's repetition. Each
point still maps its own buffers, so points never share a physical placement.
"""

import dataclasses
import statistics
import sys

from pagezero.interrupt import Interrupted
from pagezero.results.points import point_summary
from pagezero.runs.processes import across_processes
from pagezero.runs.sweeps import lost_lines


def measure_runs(measured, benchmark, points, runs, key_of, keys, progress=True):
    """Measure points in `runs` fresh processes into `measured`: per key, its Results;
    with `progress`, a line per run on stderr with the time left."""
    try:
        rs = across_processes(benchmark, points, runs, progress=progress)
    except Interrupted as e:
        if e.partial is not None:  # the runs measured, and the cut run's loops, are kept
            _keep(measured, e.partial)
            e.partial = None
        raise
    _keep(measured, rs)
    by_key = {key: [] for key in keys}
    for result in rs.results:
        by_key.setdefault(key_of(result), []).append(result)
    return [by_key[key] for key in keys]


def _keep(measured, rs):
    measured.results += rs.results
    measured.runs += rs.runs
    measured.lost += rs.lost
    for line in lost_lines(rs):
        print(line, file=sys.stderr)


# The per-loop fields of Result and its subclasses (pagezero.measure.policy.batches, .folios).
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
