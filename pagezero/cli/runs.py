"""--runs N on the measuring commands: N fresh processes, one after the other
(pagezero.runs.processes), and what they print: per point, the loops of every run
pooled (a rate is total bytes over total time of all runs' loops, as perf's
line is for one run), and the spread between the runs' medians.

-f all (every kernel, workload, batch or strategy) with --runs N runs each
run's process over every selected point, in a shuffled order, rather than N
processes per point: drift and a process's luck then fall on every point
alike, as in a sweep's repetition, and N process starts suffice. Each point
still maps its own buffers inside the process, so points never share a
physical placement.
"""

import dataclasses
import statistics
import sys

from pagezero.cli.options import UsageError, integer
from pagezero.interrupt import Interrupted
from pagezero.results.points import point_summary
from pagezero.runs.processes import across_processes
from pagezero.runs.sweeps import lost_lines

__all__ = [
    "add_runs",
    "check_runs_option",
    "measure_runs",
    "pooled",
    "between_runs_line",
    "runs_row",
]


def add_runs(p):
    """Add ``--runs N`` (default 1): measure in N fresh processes.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    """
    p.add_argument(
        "--runs",
        default=1,
        type=integer,
        metavar="N",
        help="measure in N fresh processes, one after the other, each with its "
        "own buffers and loops; prints the spread between runs (default: 1, "
        "this process)",
    )


def check_runs_option(args):
    """UsageError (exit 2) unless --runs is a positive integer; before anything runs.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``runs``).

    Returns
    -------
    int
        The number of runs.

    Raises
    ------
    UsageError
        ``--runs`` below 1 (exit status 2).
    """
    if args.runs < 1:
        raise UsageError(f"argument --runs: must be a positive integer, not {args.runs}")
    return args.runs


def measure_runs(measured, benchmark, points, runs, key_of, keys):
    """Run `points` (argument dicts of `benchmark`'s Python function) in `runs`
    fresh processes into `measured` (each Result with its run, for -o); return,
    for each of `keys` in order, the Results of its point, one per run measured.
    key_of(result) says which key a Result is. A stop signal keeps the runs
    measured (and the cut run's completed loops) in `measured` and goes on.

    Parameters
    ----------
    measured : Measured
        Where the results go, to be saved with ``-o``.
    benchmark : str
        The benchmark ("memset", "mmap", "batch", "folio").
    points : list of dict
        The points' arguments.
    runs : int
        Fresh processes.
    key_of : callable
        A result's key.
    keys : sequence
        The keys, in the order to return them.

    Returns
    -------
    list of list of pagezero.Result
        Per key, its results, one per run measured.
    """
    try:
        rs = across_processes(benchmark, points, runs, progress=None)
    except Interrupted as e:
        if e.partial is not None:
            _keep(measured, e.partial)
            e.partial = None
        raise
    _keep(measured, rs)
    by_key = {key: [] for key in keys}
    for result in rs.results:
        by_key.setdefault(key_of(result), []).append(result)
    # A worker runs every point, so each key has a Result of every run kept.
    return [by_key[key] for key in keys]


def _keep(measured, rs):
    measured.results += rs.results
    measured.runs += rs.runs
    measured.lost += rs.lost
    for line in lost_lines(rs):
        print(line, file=sys.stderr)


# The per-loop fields of Result and its subclasses (pagezero.measure.policy.results).
_PER_LOOP = ("samples", "pass_worst_ns", "touch_ns", "cold_ns")


def pooled(results):
    """One Result standing for the Results of one point in several runs, for
    printing: every per-loop sequence (samples, and a subclass's per-loop
    fields) holds the loops of all runs in run order, so rates are total bytes
    over total time of every loop; per-thread samples, counters and page
    counters likewise. A BatchResult's worst batch is the worst of all runs,
    its other batch figures the median of the runs'. The latency percentiles
    of `mem mmap --latency` are each run's own (printed per run).

    Parameters
    ----------
    results : sequence of pagezero.Result
        One point's results, one per run.

    Returns
    -------
    pagezero.Result
    """
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
    details = {k: v for k, v in first.details.items()}
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
    changes["details"] = details
    return dataclasses.replace(first, **changes)


def _summary(results):
    """pagezero.results.points.point_summary of one point's Results, one per run."""
    return point_summary([r.values() for r in results], results[0].unit)


def runs_row(results):
    """--format json's figures of --runs: runs, and the spread between them in %.

    Parameters
    ----------
    results : sequence of pagezero.Result
        One point's results, one per run.

    Returns
    -------
    dict
        ``runs`` and ``between_runs_pct`` (%); empty for fewer than 2 results.
    """
    if len(results) < 2:
        return {}
    s = _summary(results)
    return {"runs": s["runs"], "between_runs_pct": s["spread_pct"]}


def between_runs_line(results, what=""):
    """`# N runs: between runs +- X.X%`: the spread of the runs' medians
    (pagezero.results.points.point_summary), for one point; `what` names the point.

    Parameters
    ----------
    results : sequence of pagezero.Result
        One point's results, one per run.
    what : str
        The point's name, appended after "runs" ("" for none).

    Returns
    -------
    str
    """
    s = _summary(results)
    if s["runs"] < 2:
        return f"# 1 run{what}: no spread between runs (the others were lost or not run)"
    return f"# {s['runs']} runs{what}: between runs +- {s['spread_pct']:.1f}%"
