"""Comparing result sets: base against one or more others, point by point.

As in the arm64 thread's tables ("arm64: clear_page[s] using memset" (2026)):
one row per benchmark point, the base value, then one % change column per
other result set. The run (one process) is the unit and its loops are
reduced to its median first: significance.py says which test is done on the
runs and why. A change is marked (R) regression or (I) improvement only when
it is larger than the threshold and significant, "~" when larger but not
significant, "?" when larger with fewer than 3 runs on a side (nothing can
be said about noise between runs then).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.analysis.significance import MARKERS, METHOD, MIN_RUNS, compare_runs
from pagezero.analysis.stats import summarize
from pagezero.results.points import point_key, point_summary
from pagezero.units import format_gbps

if TYPE_CHECKING:
    from pagezero.results.points import PointKey
    from pagezero.results.resultset import Result, ResultSet

    # One point of one side: its first Result, its loop values by process, its sources.
    _Point = tuple[Result, dict[int, list[float]], set[str | None]]

__all__ = ["compare", "format_table", "runs_per_side", "METHOD"]


def _by_point(rs: ResultSet, sources: Sequence[str | None] | None = None) -> dict[PointKey, _Point]:
    """{point_key: (first Result, {process: [loop values]}, {source names})} in
    first-seen order: a run is a process (ResultSet.runs says which one measured
    each Result); repetitions inside one process pool their loops."""
    points: dict[PointKey, _Point] = {}
    sources = sources or [None] * len(rs.results)
    for result, run, source in zip(rs.results, rs.runs, sources):
        first, by_run, names = points.setdefault(point_key(result), (result, {}, set()))
        by_run.setdefault(run.get("process", 0), []).extend(result.values())
        names.add(source)
    return points


def _side(first: Result, by_run: Mapping[int, Sequence[float]]) -> dict[str, Any]:
    """What a row says about one side of a point: summarize() of all its loops
    (the keys compare() always gave) and the centre and spread between runs."""
    values = [v for loops in by_run.values() for v in loops]
    s = point_summary(by_run.values(), first.unit)
    return dict(
        summarize(values, unit=first.unit),
        center=s["median"],
        runs=s["runs"],
        spread_pct=s["spread_pct"],
        spread_of=s["spread_of"],
    )


def compare(
    base: ResultSet,
    *others: ResultSet,
    threshold: float = 0.02,
    alpha: float = 0.01,
    sources: Sequence[str | None] | None = None,
) -> list[dict[str, Any]]:
    """Compare `base` with each of `others`, point by point; the run is the unit.

    Parameters
    ----------
    base : ResultSet
        The base side.
    *others : ResultSet
        One or more other sides.
    threshold : float
        The smallest relative change marked, as a fraction (0.02 is 2%).
    alpha : float
        The significance level, in (0, 1).
    sources : sequence of str, optional
        One name per Result of `base` (the study file it came from,
        folders.load_sources); a row's study is its points' one source, else None.

    Returns
    -------
    list of dict
        Rows for every point of `base`: its label, unit, study, "base" (its
        side's figures: summarize() of the loops plus center, runs, spread_pct,
        spread_of) and "changes": per other result set,
        significance.compare_runs() of that point with the other's n, mean,
        center, spread_pct and the method (None where the other set lacks the
        point). Values in the row's unit (bytes/sec or cycles/byte).

    Raises
    ------
    ValueError
        No other set, a set sharing no point with the base (e.g. results of
        different benchmarks), or a bad threshold or alpha.
    """
    if not others:
        raise ValueError("compare needs a base and at least one other result set")
    base_points = _by_point(base, sources)
    other_points = [_by_point(o) for o in others]
    for o, points in zip(others, other_points):
        if not set(points) & set(base_points):
            raise ValueError(
                f"nothing to compare: the base measured {', '.join(base.benchmarks) or 'nothing'}, "
                f"the other {', '.join(o.benchmarks) or 'nothing'}, with no point in common"
            )
    rows: list[dict[str, Any]] = []
    for key, (first, by_run, names) in base_points.items():
        changes: list[dict[str, Any] | None] = []
        for points in other_points:
            if key not in points:
                changes.append(None)
                continue
            other_first, other_runs, _ = points[key]
            c = compare_runs(
                list(by_run.values()), list(other_runs.values()), first.unit, threshold, alpha
            )
            side = _side(other_first, other_runs)
            c.update(
                n=side["n"],
                mean=side["mean"],
                center=side["center"],
                spread_pct=side["spread_pct"],
                method=METHOD,
            )
            changes.append(c)
        study = next(iter(names)) if len(names) == 1 else None
        rows.append(
            {
                "label": first.label(),
                "unit": first.unit,
                "study": study,
                "base": _side(first, by_run),
                "changes": changes,
            }
        )
    return rows


def runs_per_side(rows: Sequence[Mapping[str, Any]], sides: int) -> list[str]:
    """Per side (base first), its runs per point as text, over the points it has.

    Parameters
    ----------
    rows : sequence of dict
        compare()'s rows.
    sides : int
        The number of sides, the base included.

    Returns
    -------
    list of str
        Per side, "N", "N-M" (the fewest and most runs of its points), or "-"
        for a side with no point.
    """
    counts = [sorted({row["base"]["runs"] for row in rows})]
    for j in range(sides - 1):
        counts.append(
            sorted({row["changes"][j]["runs"][1] for row in rows if row["changes"][j] is not None})
        )
    return [("-" if not c else str(c[0]) if len(c) == 1 else f"{c[0]}-{c[-1]}") for c in counts]


def _value(x: float, unit: str) -> str:
    if unit == "bytes/sec":
        return format_gbps(x, 2)
    return f"{x:.4g} {unit}"


def _base_cell(b: Mapping[str, Any], unit: str) -> str:
    of = "" if b["spread_of"] == "runs" else " (loops)"
    return f"{_value(b['center'], unit)} +-{b['spread_pct']:.1f}%{of}"


def _legend(markers: Iterable[str]) -> list[str]:
    """One line per marker that appears, (R) and (I) sharing theirs."""
    lines: list[str] = []
    for marker in MARKERS:
        if marker in markers and MARKERS[marker] not in lines:
            lines.append(MARKERS[marker])
    return lines


def format_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str:
    """compare()'s rows as a text table, with its legend and notes.

    Rows of several studies (report folders) come grouped under "[study]".

    Parameters
    ----------
    rows : sequence of dict
        compare()'s rows.
    names : sequence of str
        The labels of the base and of each other column.

    Returns
    -------
    str
        The table, a legend line per marker shown, and notes (few runs, an
        alpha too small to reach), joined by newlines; no final newline.
    """
    header = ["benchmark", "result class", names[0], *names[1:]]
    studies = {row["study"] for row in rows}
    grouped = len(studies) > 1
    if grouped:
        order = {s: i for i, s in enumerate(dict.fromkeys(row["study"] for row in rows))}
        rows = sorted(rows, key=lambda row: order[row["study"]])
    body: list[list[str]] = []
    markers: set[str] = set()
    notes: set[str] = set()
    few_runs = False
    study: object = object()
    for row in rows:
        if grouped and row["study"] != study:
            study = row["study"]
            body.append([f"[{study or 'in several files'}]"])
        cells = [row["label"], row["unit"], _base_cell(row["base"], row["unit"])]
        for c in row["changes"]:
            if c is None:
                cells.append("-")
                continue
            cells.append(f"{c['change_pct']:+.1f}% {c['marker']}".rstrip())
            markers.add(c["marker"])
            few_runs |= min(c["runs"]) < MIN_RUNS
            if c["note"] and min(c["runs"]) >= MIN_RUNS:
                notes.add(c["note"])
        body.append(cells)
    full = [r for r in body if len(r) == len(header)]
    widths = [max(len(r[i]) for r in [header] + full) for i in range(len(header))]
    lines = [
        " | ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
        "-+-".join("-" * w for w in widths),
    ]
    lines += [
        " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() if len(r) > 1 else r[0]
        for r in body
    ]
    lines += _legend(markers)
    if few_runs:
        lines.append(
            f"note: fewer than {MIN_RUNS} runs on a side for some points: the variation "
            f"between runs is unknown there, so no change is called significant; "
            f"measure with --runs {MIN_RUNS} or more (or sweep --processes "
            f"{MIN_RUNS}) on each side"
        )
    lines += [f"note: {n}" for n in sorted(notes)]
    return "\n".join(lines)
