"""One figure per measured point: its median and the spread between runs.

Shared by `pagezero fleet table` (one column per machine) and `pagezero store
history` (one line per result set). The run is the unit (DESIGN.md, "the run
is the unit"; Kalibera and Jones, "Rigorous Benchmarking in Reasonable Time",
2013): loops inside one process share one placement of the buffers, so the
spread that tells whether two machines differ is the spread of the runs'
medians. With a single run there is no such spread; the loops' spread is
given instead and says so.
"""
import statistics

from .results import params_key

__all__ = ["point_key", "point_summary", "summarize_points"]


def point_key(result):
    """What identifies a point across files and machines."""
    return (result.benchmark, result.function, params_key(result.params))


def point_summary(results):
    """median, spread_pct, runs, spread_of ("runs" or "loops") and unit of the
    Results of one point, each Result being one run."""
    if not results:
        raise ValueError("a point needs at least one run")
    unit = results[0].unit
    run_medians = [statistics.median(r.values()) for r in results]
    if len(results) > 1:
        values, spread_of = run_medians, "runs"
    else:
        values, spread_of = list(results[0].values()), "loops"
    center = statistics.median(run_medians)
    mean = statistics.fmean(values)
    spread = 100.0 * statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    return {"median": center, "spread_pct": spread, "runs": len(results),
            "spread_of": spread_of, "unit": unit}


def summarize_points(result_set):
    """{point_key: (first Result, point_summary)} over a ResultSet, in first-seen order."""
    return {point_key(first): (first, point_summary(rs)) for first, rs in result_set.points()}
