"""The report's figures: each table cell is the median of per-run medians.

The run is the unit (Kalibera and Jones, "Rigorous Benchmarking in Reasonable
Time", 2013): a run is one fresh process, which lands on one physical
placement of its buffers, and the loops inside it cannot see the variation
between placements. A study's sweeps therefore run `runs` repetitions in as
many fresh processes (pagezero.sweeps.sweep's processes), and every cell is
pagezero.points.point_summary's median of the runs' medians.

One formatting function per kind of figure (rate, ratio) serves the tables
and the summary alike, so that a number quoted in the summary is the very
string of a table cell: same measurement, same rounding.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from ..interrupt import as_interrupted, deferred
from ..points import summarize_points
from ..results import ResultSet
from ..sweeps import sweep
from ..sysinfo import machine
from ..units import format_size, gbps

__all__ = [
    "Section",
    "holding",
    "draw",
    "run_points",
    "cells",
    "rate",
    "ratio",
    "span",
    "marked",
    "cell_text",
    "failure_text",
    "markdown_table",
    "spread_footnote",
    "runs_line",
    "SPREAD_MARK",
    "SPREAD_LIMIT_PCT",
]

# Beyond the LLC, placement decides more than anything inside one process
# (3-5% between processes at 256MB on a Zen 4 VM): a cell whose runs spread
# wider than this is marked, so a reader does not build on it.
SPREAD_LIMIT_PCT = 5.0
SPREAD_MARK = "*"


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
        A :mod:`pagezero.plot` function; ``*args`` and ``**kwargs`` go to it.
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
        (:func:`pagezero.points.point_summary`: ``median`` in the result's unit,
        ``spread_pct``, ``runs``, ``spread_of``, ``unit``, ``size``).
    """
    table = {}
    for first, summary in summarize_points(rs).values():
        cell = dict(summary, size=first.params.get("size"))
        table.setdefault(first.function, {})[x(first)] = cell
    return table


def rate(bytes_per_sec):
    """A rate as the report prints it, in GB/s (10^9): 1 decimal, 2 below 1 GB/s.

    Parameters
    ----------
    bytes_per_sec : float or None
        The rate, in bytes/sec.

    Returns
    -------
    str
        The rate in GB/s, or "-" when there is none.
    """
    if bytes_per_sec is None:
        return "-"
    g = gbps(bytes_per_sec)
    return f"{g:.1f}" if g >= 1 else f"{g:.2f}"


def ratio(r):
    """A ratio of two rates as the report prints it.

    Parameters
    ----------
    r : float
        The ratio.

    Returns
    -------
    str
        Two decimals and an "x": "1.25x".
    """
    return f"{r:.2f}x"


def span(lo, hi):
    """A range of sizes in words: "4KB to 2MB", or one size when both ends agree.

    Parameters
    ----------
    lo, hi : int
        The range's ends, in bytes.

    Returns
    -------
    str
    """
    return format_size(lo) if lo == hi else f"{format_size(lo)} to {format_size(hi)}"


def marked(cell, llc):
    """Whether a cell gets SPREAD_MARK: beyond the LLC, its runs spread wider
    than SPREAD_LIMIT_PCT. With one run the spread between runs is unknown.

    Parameters
    ----------
    cell : dict
        A point summary (``size`` in bytes, ``spread_pct``, ``spread_of``).
    llc : int
        The LLC's size in bytes (0 when unknown: every cell counts as beyond it).

    Returns
    -------
    bool
    """
    beyond = not llc or (cell.get("size") or 0) > llc
    return beyond and cell["spread_of"] == "runs" and cell["spread_pct"] > SPREAD_LIMIT_PCT


def cell_text(cell, llc):
    """A table cell as the report prints it: the median rate in GB/s (10^9
    bytes/s) and its interval, the figures' (the spread between runs, or one
    run's loops, in %: runs_line says which), with the spread mark when its runs
    spread too much beyond the LLC.

    Parameters
    ----------
    cell : dict or None
        The cell (a point summary: ``median`` in bytes/sec, ``spread_pct``,
        ``spread_of``, ``size``), or None for a point not measured ("-").
    llc : int
        The LLC's size in bytes (0 when unknown: every cell counts as beyond it).

    Returns
    -------
    str
    """
    if cell is None:
        return "-"
    mark = SPREAD_MARK if marked(cell, llc) else ""
    return f"{rate(cell['median'])} +-{cell['spread_pct']:.0f}%{mark}"


def markdown_table(table, xs, x_label, llc):
    """Rows of xs, one column per function, with the spread marks.

    Parameters
    ----------
    table : dict
        :func:`cells`' table: per function, per x, a cell.
    xs : iterable of int
        The rows' x values, in bytes.
    x_label : str
        The first column's heading.
    llc : int
        The LLC's size in bytes (0 when unknown).

    Returns
    -------
    list of str
        The table's markdown lines, and the footnote when a cell is marked.
    """
    functions = sorted(table)
    lines = [f"| {x_label} | " + " | ".join(functions) + " |", "|---|" + "---|" * len(functions)]
    for x in xs:
        row = [format_size(x)] + [cell_text(table[f].get(x), llc) for f in functions]
        lines.append("| " + " | ".join(row) + " |")
    if any(marked(c, llc) for by_x in table.values() for c in by_x.values()):
        lines += ["", spread_footnote()]
    return lines


def spread_footnote():
    """The footnote that explains the spread mark under a table that has one.

    Returns
    -------
    str
    """
    return (
        f"{SPREAD_MARK} beyond the LLC, the runs' medians of this cell spread by more "
        f"than {SPREAD_LIMIT_PCT:g}% (coefficient of variation): each process got its "
        f"own physical placement of the buffer; more runs (--runs) narrow it down."
    )


def runs_line(rs):
    """How many runs the cells of a result set stand on, in words.

    Parameters
    ----------
    rs : pagezero.ResultSet
        The study's results.

    Returns
    -------
    str
        One sentence ("" when the set is empty).
    """
    summaries = [s for _, s in summarize_points(rs).values()]
    if not summaries:
        return ""
    n = min(s["runs"] for s in summaries)
    if n < 2:
        return (
            "Cells: medians of one run (one process) +- the spread of its loops: the "
            "spread between runs is unknown; `pagezero report --runs 3` measures it."
        )
    return (
        f"Cells: the median of {n} runs' medians, each run a fresh process, +- the "
        f"spread between runs (as the figures draw them)."
    )
