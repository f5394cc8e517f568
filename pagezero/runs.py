"""Runs: the same measurement in N fresh processes, one after the other.

Loops inside one process share one physical placement of the buffers, so
their spread hides the variation between processes, which is often the
larger (3-5% at 256MB on a small VM). pyperf answers with worker processes,
Kalibera and Jones ("Rigorous Benchmarking in Reasonable Time", 2013) with
runs as the unit of comparison: each run here is a fresh interpreter that
maps, prefaults and warms up its own buffers and then times its loops, as
runs=1 does in the calling process. The workers are a sweep's
(pagezero.sweeps), each run one repetition in one process.

Every public measuring function dispatches here in two lines:

    if check_runs(runs) > 1:
        return in_processes("memset", locals())
"""

import signal

from .interrupt import Interrupted, received

__all__ = ["check_runs", "in_processes", "across_processes"]


def check_runs(runs):
    """`runs` when it is a positive int; ValueError in one line otherwise."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int, not {runs!r}")
    return runs


def in_processes(benchmark, arguments):
    """A public function's call, `arguments` being its locals() on entry (runs
    among them), as arguments["runs"] fresh processes. Returns a ResultSet of
    one Result per run, runs[i]["process"] = i; a stop signal raises Interrupted
    whose partial is the ResultSet of the runs measured (the run it cut short
    with its completed loops)."""
    point = dict(arguments)
    runs = check_runs(point.pop("runs"))
    return across_processes(benchmark, [point], runs)


def across_processes(benchmark, points, runs, progress=False):
    """Each point of `points` (argument dicts of the sweepable `benchmark`) in
    each of `runs` fresh processes, one process after the other; within a
    process the points run in a shuffled order (as a sweep's repetition).
    Every point is checked before any process starts."""
    from . import sweeps  # it imports the benchmarks, which import this module

    check_runs(runs)
    for point in points:
        sweeps.BENCHMARKS[benchmark].check(**point)
    rs = sweeps._run_workers(
        benchmark, points, repeat=runs, warmup=0, processes=runs, seed=0, progress=progress
    )
    if rs.interrupted:
        raise Interrupted(
            getattr(signal, rs.interrupted, None) or received() or signal.SIGINT, partial=rs
        )
    return rs
