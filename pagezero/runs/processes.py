"""Runs: the same measurement in N fresh processes, one after the other.

Loops inside one process share one physical placement of the buffers, so
their spread hides the variation between processes, which is often the
larger (3-5% at 256MB on a small VM). pyperf answers with worker processes,
Kalibera and Jones ("Rigorous Benchmarking in Reasonable Time", 2013) with
runs as the unit of comparison: each run here is a fresh interpreter that
maps, prefaults and warms up its own buffers and then times its loops, as
runs=1 does in the calling process. The workers are a sweep's
(pagezero.runs.sweeps), each run one repetition in one process.

Every public measuring function dispatches here in two lines:

    if check_runs(runs) > 1:
        return in_processes("memset", locals())
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.interrupt import Interrupted, received

if TYPE_CHECKING:
    from pagezero.results.resultset import ResultSet

__all__ = ["check_runs", "in_processes", "across_processes"]


def check_runs(runs: object) -> int:
    """Check a number of runs.

    Parameters
    ----------
    runs : int
        How many fresh processes measure.

    Returns
    -------
    int
        `runs`, unchanged.

    Raises
    ------
    ValueError
        In one line, unless `runs` is a positive int (a bool is not).
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int, not {runs!r}")
    return runs


def in_processes(benchmark: str, arguments: Mapping[str, Any]) -> ResultSet:
    """A public function's call, as ``arguments["runs"]`` fresh processes.

    Parameters
    ----------
    benchmark : str
        The sweepable benchmark's name (``"memset"``, ``"faults"``, ...).
    arguments : mapping
        The public function's locals() on entry, ``"runs"`` among them.

    Returns
    -------
    ResultSet
        One Result per run, ``runs[i]["process"] = i``.

    Raises
    ------
    ValueError
        For a bad ``runs`` or a bad argument of the benchmark.
    Interrupted
        On a stop signal; its partial is the ResultSet of the runs measured
        (the run it cut short with its completed loops).
    """
    point = dict(arguments)
    runs = check_runs(point.pop("runs"))
    return across_processes(benchmark, [point], runs)


def across_processes(
    benchmark: str, points: Sequence[Mapping[str, Any]], runs: int, progress: bool = False
) -> ResultSet:
    """Each point in each of `runs` fresh processes, one process after the other.

    Within a process the points run in a shuffled order (as a sweep's
    repetition). Every point is checked before any process starts.

    Parameters
    ----------
    benchmark : str
        The sweepable benchmark's name.
    points : sequence of mapping
        Argument dicts of `benchmark`, one per point.
    runs : int
        How many fresh processes, one after the other.
    progress : bool
        Show a progress bar.

    Returns
    -------
    ResultSet
        Every point's Result from every run, ``runs[i]["process"] = i``.

    Raises
    ------
    ValueError
        For a bad `runs` or a point the benchmark refuses.
    Interrupted
        On a stop signal, with the ResultSet measured so far as its partial.
    """
    # Both import the benchmarks (through pagezero.runs.sweeps), which import this module.
    from pagezero.runs import sweeps
    from pagezero.runs.workers import run_workers

    check_runs(runs)
    for point in points:
        sweeps.BENCHMARKS[benchmark].check(**point)
    rs = run_workers(
        benchmark, points, repeat=runs, warmup=0, processes=runs, seed=0, progress=progress
    )
    if rs.interrupted:
        raise Interrupted(
            getattr(signal, rs.interrupted, None) or received() or signal.SIGINT, partial=rs
        )
    return rs
