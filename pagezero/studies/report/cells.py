"""The report's figures: each table cell is the median of per-run medians.

The run is the unit (Kalibera and Jones, "Rigorous Benchmarking in Reasonable
Time", 2013): a run is one fresh process, which lands on one physical
placement of its buffers, and the loops inside it cannot see the variation
between placements. A study's sweeps therefore run `runs` repetitions in as
many fresh processes (pagezero.runs.sweeps.sweep's processes), and every cell is
pagezero.results.points.point_summary's median of the runs' medians. How a cell and
a sentence read is pagezero.studies.report.words'.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from pagezero.interrupt import as_interrupted, deferred
from pagezero.results.points import summarize_points
from pagezero.results.resultset import ResultSet
from pagezero.runs.sweeps import sweep
from pagezero.system.machine import machine

__all__ = [
    "Section",
    "holding",
    "draw",
    "run_points",
    "cells",
    "failure_text",
]


@dataclass
class Section:
    """One study's part of the report: its lines in report.md and in the summary.
    interrupted: the name of the stop signal that cut the study short (or True
    where the name is not known), else None. failed: why the study could not
    finish (its exception, in one line), or None."""

    title: str
    body: list = field(default_factory=list)
    summary: list = field(default_factory=list)
    interrupted: object = None
    failed: str | None = None


@contextlib.contextmanager
def holding(section):
    """Stop signals held while a study saves and tabulates what it measured
    (milliseconds): one arriving meanwhile marks `section` interrupted when
    the block ends, instead of taking the finished section with it.

    Parameters
    ----------
    section : Section
        The study's section.

    Yields
    ------
    Section
        The same section.
    """
    try:
        with deferred():
            yield section
    except KeyboardInterrupt as e:
        section.interrupted = section.interrupted or as_interrupted(e).signame


def draw(section, plot, *args, **kwargs):
    """Draw a study's plot; a stop signal meanwhile marks the section
    interrupted and keeps its tables, which matter more than the picture.

    Parameters
    ----------
    section : Section
        The study's section.
    plot : callable
        A :mod:`pagezero.figures` function; ``*args`` and ``**kwargs`` go to it.
    """
    try:
        plot(*args, **kwargs)
    except KeyboardInterrupt as e:
        section.interrupted = as_interrupted(e).signame


def failure_text(e):
    """An exception in one line, for the reader: its type and its message.

    Parameters
    ----------
    e : BaseException
        The exception.

    Returns
    -------
    str
    """
    text = getattr(e, "strerror", None) if isinstance(e, OSError) else None
    return f"{type(e).__name__}: {text or e}"


def run_points(benchmark, points, runs, warmup, progress=None):
    """Points that are not a grid (size and chunk go together): one sweep per
    point shape, merged, each of `runs` repetitions in a fresh process (one
    process when runs is 1). Interleaving still holds within each sweep.

    Parameters
    ----------
    benchmark : str
        The sweep's benchmark ("memset", "mmap").
    points : list of dict
        The points, each with its ``function``.
    runs : int
        Fresh processes per point.
    warmup : int
        Untimed repetitions thrown away first.
    progress : file, optional
        Where the sweeps' progress goes.

    Returns
    -------
    pagezero.ResultSet
        Every result, its runs numbered per process; interrupted when a signal
        stopped a sweep.
    """
    results, run_rows, interrupted = [], [], None
    shapes = {}
    for p in points:
        key = tuple(sorted((k, v) for k, v in p.items() if k != "function"))
        shapes.setdefault(key, []).append(p["function"])
    for key, functions in shapes.items():
        grid = {k: [v] for k, v in key}
        grid["function"] = functions
        rs = sweep(benchmark, grid, repeat=runs, warmup=warmup, processes=runs, progress=progress)
        results += rs.results
        run_rows += rs.runs
        if rs.interrupted:
            interrupted = rs.interrupted  # the signal's name
            break
    return ResultSet(results, run_rows, machine(), interrupted)


def cells(rs, x):
    """{function: {x(result): point_summary}} of a result set's points.

    Parameters
    ----------
    rs : pagezero.ResultSet
        The study's results.
    x : callable
        A result's column or row key (an extent in bytes, a page label).

    Returns
    -------
    dict
        Per function, per key, the point's summary
        (:func:`pagezero.results.points.point_summary`: ``median`` in the result's unit,
        ``spread_pct``, ``runs``, ``spread_of``, ``unit``, ``size``).
    """
    table = {}
    for first, summary in summarize_points(rs).values():
        cell = dict(summary, size=first.params.get("size"))
        table.setdefault(first.function, {})[x(first)] = cell
    return table
