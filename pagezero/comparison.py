"""Comparing result sets: base against one or more others, point by point.

As in the arm64 thread's tables: one row per benchmark point, the base
value, then one % change column per other result set, each change marked
(R) regression or (I) improvement only when it is larger than the threshold
and significant (Mann-Whitney U), "~" when larger but not significant.
"""
from .results import params_key
from .stats import compare_samples, summarize
from .units import format_gbps

__all__ = ["compare", "format_table"]

def _by_point(rs):
    points = {}
    for first, results in rs.points():
        key = (first.benchmark, first.function, params_key(first.params))
        points[key] = (first, [v for r in results for v in r.values()])
    return points


def compare(base, *others, threshold=0.02, alpha=0.01):
    """Rows for every point of `base`: its summary and, per other result set,
    compare_samples() of that point (None where the other set lacks it).

    ValueError when the sets share no point, e.g. results of different benchmarks.
    """
    if not others:
        raise ValueError("compare needs a base and at least one other result set")
    base_points = _by_point(base)
    other_points = [_by_point(o) for o in others]
    for o, points in zip(others, other_points):
        if not set(points) & set(base_points):
            raise ValueError(
                f"nothing to compare: the base measured {', '.join(base.benchmarks) or 'nothing'}, "
                f"the other {', '.join(o.benchmarks) or 'nothing'}, with no point in common")
    rows = []
    for key, (first, values) in base_points.items():
        changes = []
        for points in other_points:
            if key in points:
                other_values = points[key][1]
                c = compare_samples(values, other_values, first.unit, threshold, alpha)
                c["n"] = len(other_values)
                c["mean"] = summarize(other_values)["mean"]
                changes.append(c)
            else:
                changes.append(None)
        rows.append({"label": first.label(), "unit": first.unit,
                     "base": summarize(values), "changes": changes})
    return rows


def _value(x, unit):
    if unit == "bytes/sec":
        return format_gbps(x, 2)
    return f"{x:.4g} {unit}"


def format_table(rows, names):
    """The rows as a text table; `names` label the base and each other column."""
    header = ["benchmark", "result class", names[0], *names[1:]]
    body = []
    notes = set()
    for row in rows:
        b = row["base"]
        cells = [row["label"], row["unit"], f"{_value(b['mean'], row['unit'])} +-{b['stdev_pct']:.1f}%"]
        for c in row["changes"]:
            if c is None:
                cells.append("-")
                continue
            cells.append(f"{c['change_pct']:+.1f}% {c['marker']}".rstrip())
            if c["note"]:
                notes.add(c["note"])
        body.append(cells)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = [" | ".join(h.ljust(w) for h, w in zip(header, widths)),
             "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    lines.append("(R) regression, (I) improvement: beyond the threshold and significant; "
                 "~ beyond the threshold but not significant")
    lines += [f"note: {n}" for n in sorted(notes)]
    return "\n".join(lines)
