"""What a measured point is, and one figure per point: its median and the
spread between runs.

A point is what was measured, not how long: the benchmark, the function, the
unit its values come in (bytes/sec from a clock that counts time, cycles/byte
from one that counts cycles: the two never compare), and its parameters
without `loops`, sizes read as bytes ("32MB" and 33554432 are one point).
ResultSet.points(), comparisons, `fleet table` and `store history` all group
by point_key(); there is no second definition.

The figure: the run is the unit (DESIGN.md, "the run is the unit"; Kalibera
and Jones, "Rigorous Benchmarking in Reasonable Time", 2013): loops inside one
process share one placement of the buffers, so the spread that tells whether
two machines differ is the spread of the runs' medians, a run being one
process (a sweep's --processes, a fleet's --runs). With a single run there is
no such spread; the loops' spread is given instead and says so.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.analysis.stats import relative_spread
from pagezero.units import parse_size

if TYPE_CHECKING:
    from pagezero.results.resultset import Result, ResultSet

# What identifies a point: benchmark, function, unit, params_key().
PointKey = tuple[str, str, str, tuple[tuple[str, str], ...]]

__all__ = [
    "point_key",
    "params_key",
    "identity_params",
    "point_summary",
    "summarize_points",
    "NOT_IDENTITY",
    "SIZE_PARAMS",
]

# Parameters that say how long to measure, not what: never part of a point.
NOT_IDENTITY = ("loops",)

# Parameters that are sizes, given as bytes or as "4KB"-style strings: read
# as bytes so that one size spelled two ways is one point. A value that is no
# size (batch presets such as "llc", None) stays as it is.
SIZE_PARAMS = ("size", "chunk", "page", "batch", "batch_bytes")


def _normal(name: str, value: Any) -> Any:
    if name in SIZE_PARAMS and isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            return parse_size(value, what=name, allow_zero=True)
        except ValueError:
            pass
    return value


def identity_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` as a point knows them: without NOT_IDENTITY, sizes in bytes.

    Parameters
    ----------
    params : Mapping
        A result's parameters, as given.

    Returns
    -------
    dict
        The parameters but `loops`, with the SIZE_PARAMS that read as a size
        in bytes (int); the rest as they are.
    """
    return {k: _normal(k, v) for k, v in params.items() if k not in NOT_IDENTITY}


def params_key(params: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A hashable, order-free key of identity_params(params).

    Parameters
    ----------
    params : Mapping
        A result's parameters, as given.

    Returns
    -------
    tuple of (str, str)
        (name, value as JSON) pairs, sorted by name.
    """
    return tuple(
        sorted(
            (str(k), json.dumps(v, sort_keys=True, default=str))
            for k, v in identity_params(params).items()
        )
    )


def point_key(result: Result) -> PointKey:
    """What identifies a point across runs, files and machines.

    Parameters
    ----------
    result : Result
        One run of the point.

    Returns
    -------
    tuple
        (benchmark, function, unit, params_key(params)): hashable, equal for
        every run of one point whatever its loops or its sizes' spelling.
    """
    return (result.benchmark, result.function, result.unit, params_key(result.params))


def point_summary(runs: Iterable[Sequence[float]], unit: str) -> dict[str, Any]:
    """One point's figure: the median of its runs' medians and their spread.

    Parameters
    ----------
    runs : iterable of sequences of float
        Per process that measured the point, the values of all its loops, in
        `unit`; empty runs are left out.
    unit : str
        The values' unit (bytes/sec or cycles/byte).

    Returns
    -------
    dict
        median (of the per-run medians, in `unit`), spread_pct (percent,
        between runs, or between loops when there is one run; for rates, the
        spread of the times they stand for: stats.relative_spread), runs (how
        many), spread_of ("runs" or "loops") and unit.

    Raises
    ------
    ValueError
        No run with a value.
    """
    kept = [list(v) for v in runs if len(v)]
    if not kept:
        raise ValueError("a point needs at least one run")
    run_medians = [statistics.median(v) for v in kept]
    if len(kept) > 1:
        values, spread_of = run_medians, "runs"
    else:
        values, spread_of = kept[0], "loops"
    return {
        "median": statistics.median(run_medians),
        "spread_pct": relative_spread(values, unit),
        "runs": len(kept),
        "spread_of": spread_of,
        "unit": unit,
    }


def summarize_points(result_set: ResultSet) -> dict[PointKey, tuple[Result, dict[str, Any]]]:
    """point_summary() of every point of a ResultSet, in first-seen order.

    A run is a process (the ResultSet's runs say which one measured each
    Result): repetitions inside one process pool their loops.

    Parameters
    ----------
    result_set : ResultSet
        The results, with their runs.

    Returns
    -------
    dict
        {point_key: (the point's first Result, its point_summary())}.
    """
    points: dict[PointKey, tuple[Result, dict[int, list[float]]]] = {}
    for result, run in zip(result_set.results, result_set.runs):
        first, by_process = points.setdefault(point_key(result), (result, {}))
        by_process.setdefault(run.get("process", 0), []).extend(result.values())
    return {
        key: (first, point_summary(by_process.values(), first.unit))
        for key, (first, by_process) in points.items()
    }
