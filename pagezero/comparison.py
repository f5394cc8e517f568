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

from .points import point_key, point_summary
from .significance import MARKERS, METHOD, MIN_RUNS, compare_runs
from .stats import summarize
from .units import format_gbps

__all__ = ["compare", "format_table", "runs_per_side", "METHOD"]


def _by_point(rs, sources=None):
    """{point_key: (first Result, {process: [loop values]}, {source names})} in
    first-seen order: a run is a process (ResultSet.runs says which one measured
    each Result); repetitions inside one process pool their loops."""
    points = {}
    sources = sources or [None] * len(rs.results)
    for result, run, source in zip(rs.results, rs.runs, sources):
        first, by_run, names = points.setdefault(point_key(result), (result, {}, set()))
        by_run.setdefault(run.get("process", 0), []).extend(result.values())
        names.add(source)
    return points


def _side(first, by_run):
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


def compare(base, *others, threshold=0.02, alpha=0.01, sources=None):
    """Rows for every point of `base`: its label, unit, study, its side's figures
    (summarize() of the loops plus center, runs, spread_pct, spread_of) and, per
    other result set, significance.compare_runs() of that point with the other's
    n, mean, center and the method (None where the other set lacks the point).

    `sources`: one name per Result of `base` (the study file it came from,
    folders.load_sources); a row's study is its points' one source, else None.
    ValueError when the sets share no point, e.g. results of different benchmarks.
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
    rows = []
    for key, (first, by_run, names) in base_points.items():
        changes = []
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


def runs_per_side(rows, sides):
    """Per side (base first), the text "N" or "N-M": its runs per point, over
    the points it has."""
    counts = [sorted({row["base"]["runs"] for row in rows})]
    for j in range(sides - 1):
        counts.append(
            sorted({row["changes"][j]["runs"][1] for row in rows if row["changes"][j] is not None})
        )
    return [("-" if not c else str(c[0]) if len(c) == 1 else f"{c[0]}-{c[-1]}") for c in counts]


def _value(x, unit):
    if unit == "bytes/sec":
        return format_gbps(x, 2)
    return f"{x:.4g} {unit}"


def _base_cell(b, unit):
    of = "" if b["spread_of"] == "runs" else " (loops)"
    return f"{_value(b['center'], unit)} +-{b['spread_pct']:.1f}%{of}"


def _legend(markers):
    """One line per marker that appears, (R) and (I) sharing theirs."""
    lines = []
    for marker in MARKERS:
        if marker in markers and MARKERS[marker] not in lines:
            lines.append(MARKERS[marker])
    return lines


def format_table(rows, names):
    """The rows as a text table; `names` label the base and each other column.
    Rows of several studies (report folders) come grouped under "[study]"."""
    header = ["benchmark", "result class", names[0], *names[1:]]
    studies = {row["study"] for row in rows}
    grouped = len(studies) > 1
    if grouped:
        order = {s: i for i, s in enumerate(dict.fromkeys(row["study"] for row in rows))}
        rows = sorted(rows, key=lambda row: order[row["study"]])
    body, markers, notes, few_runs = [], set(), set(), False
    study = object()
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
