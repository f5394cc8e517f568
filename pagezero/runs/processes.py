"""runs=N for the public API: N fresh processes (docs/measuring.rst, "Runs")."""

from __future__ import annotations

import inspect
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec

from pagezero.interrupt import Interrupted, received
from pagezero.measure import fault, mem, policy
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs.progress import Progress, run_finished
from pagezero.runs.workers import BENCHMARKS, run_workers


def check_runs(runs: object) -> int:
    """`runs`, checked to be a positive int (not a bool)."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int, not {runs!r}")
    return runs


def across_processes(
    benchmark: str,
    points: Sequence[Mapping[str, Any]],
    runs: int,
    progress: Progress | bool | None = None,
) -> ResultSet:
    """Each point (checked first) in each of `runs` fresh processes; Interrupted with the part."""
    check_runs(runs)
    for point in points:
        BENCHMARKS[benchmark].check(**point)
    own = Progress("pagezero", runs * len(points)) if progress is True else progress
    try:
        rs = run_workers(
            benchmark, points, repeat=runs, warmup=0, processes=runs, seed=0, progress=own
        )
    finally:
        if own is not progress and isinstance(own, Progress):
            own.close()
    if rs.interrupted:
        raise Interrupted(
            getattr(signal, rs.interrupted, None) or received() or signal.SIGINT, partial=rs
        )
    return rs


_RUNS_DOC = """    runs : int
        1 (default) measures in this process; N > 1 in N fresh processes, one after another.

    Returns
    -------
    ResultSet
        One {kind} per run: ``rs[i]``, ``rs.runs[i]["process"] == i``; ``rs.bytes_per_sec``
        is the median of the per-run medians, the figure the tables and ``compare`` use.{more}

"""

P = ParamSpec("P")


def with_runs(
    benchmark: str, measure: Callable[P, Result | None], more: str = ""
) -> Callable[P, ResultSet]:
    """`measure` with its runs carried out, one here or N in fresh processes, as a ResultSet."""
    signature = inspect.signature(measure)
    kind = str(signature.return_annotation).split(" |")[0]  # "BatchResult | None": BatchResult
    signature = signature.replace(return_annotation="ResultSet")
    call: Callable[..., Result | None] = measure  # with the arguments bound below

    def public(*args: P.args, **kwargs: P.kwargs) -> ResultSet:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        n = check_runs(arguments.pop("runs"))
        if n > 1:
            return across_processes(benchmark, [arguments], n)
        run = [{"process": 0, "pid": os.getpid()}]
        try:
            r = call(**arguments)
        except Interrupted as e:
            if isinstance(e.partial, Result):
                e.partial = ResultSet([e.partial], run, interrupted=e.signame)
            raise
        run_finished(f"{measure.__name__} run done (this process)")
        if r is None:  # a program's own handler took a stop signal before a loop completed
            return ResultSet([], interrupted=True)
        return ResultSet([r], run, interrupted=r.interrupted)

    head, raises = (measure.__doc__ or "").split("\n    Raises\n")
    # A measure's own Returns (faults') says what each run's Result holds: kept, under ResultSet.
    head, _, own = head.partition("\n    Returns\n    -------\n")
    lines = ([f"        {more}"] if more else []) + own.rstrip().splitlines()[1:]
    more = "".join(f"\n{line}" for line in lines)
    public.__doc__ = (
        f"{head.rstrip()}\n{_RUNS_DOC.format(kind=kind, more=more)}    Raises\n{raises}"
    )
    public.__name__ = public.__qualname__ = measure.__name__
    public.__signature__ = signature  # type: ignore[attr-defined]
    return public


memset = with_runs("memset", mem.memset)
memcpy = with_runs("memcpy", mem.memcpy)
faults = with_runs(
    "mmap", fault.faults, "pagezero.measure.fault.page_report(rs[i]) says which pages it had."
)
batch = with_runs(
    "batch", policy.batch, "rs[i].worst_ms, p99_ms, median_ms and typical_worst_ms: every batch's."
)
folio = with_runs(
    "folio", policy.folio, "rs[i].touch_ns_per_line, cold_ns_per_line: after the clear, cold."
)
