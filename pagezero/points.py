"""One figure per measured point: its median and the spread between runs.

Shared by `pagezero fleet table` (one column per machine) and `pagezero store
history` (one line per result set). The run is the unit (DESIGN.md, "the run
is the unit"; Kalibera and Jones, "Rigorous Benchmarking in Reasonable Time",
2013): loops inside one process share one placement of the buffers, so the
spread that tells whether two machines differ is the spread of the runs'
medians, a run being one process (a sweep's --processes, a fleet's --runs).
With a single run there is no such spread; the loops' spread is given
instead and says so.
"""
import statistics

from .results import params_key

__all__ = ["point_key", "point_summary", "summarize_points"]


def point_key(result):
    """What identifies a point across files and machines."""
    return (result.benchmark, result.function, params_key(result.params))


def point_summary(runs, unit):
    """median, spread_pct, runs, spread_of ("runs" or "loops") and unit of one point,
    from `runs`: per process that measured it, the values of all its loops."""
    runs = [list(v) for v in runs if len(v)]
    if not runs:
        raise ValueError("a point needs at least one run")
    run_medians = [statistics.median(v) for v in runs]
    if len(runs) > 1:
        values, spread_of = run_medians, "runs"
    else:
        values, spread_of = runs[0], "loops"
    center = statistics.median(run_medians)
    mean = statistics.fmean(values)
    spread = 100.0 * statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    return {"median": center, "spread_pct": spread, "runs": len(runs),
            "spread_of": spread_of, "unit": unit}


def summarize_points(result_set):
    """{point_key: (first Result, point_summary)} over a ResultSet, in first-seen order.
    A run is a process (the ResultSet's runs say which one measured each Result):
    repetitions inside one process pool their loops."""
    points = {}
    for result, run in zip(result_set.results, result_set.runs):
        first, by_process = points.setdefault(point_key(result), (result, {}))
        by_process.setdefault(run.get("process", 0), []).extend(result.values())
    return {key: (first, point_summary(by_process.values(), first.unit))
            for key, (first, by_process) in points.items()}
