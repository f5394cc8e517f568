"""Comparing result sets point by point, as the arm64 thread's tables do ("arm64:
clear_page[s] using memset" (2026)): a row per point, the base value, a % change column per
other set, marked as analysis.significance decides on the runs; above it, what each side
booted (release, command line, preemption, THP may differ between boots) and a warning where
the machine differs (CPU model, caches, memory): the change is then not the patch's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.analysis.significance import MARKERS, METHOD, MIN_RUNS, compare_runs
from pagezero.results.points import point_key, point_summary, variant_key
from pagezero.results.summary import summarize
from pagezero.units import format_gbps, format_size

if TYPE_CHECKING:
    from pagezero.results.resultset import Result, ResultSet

    # One point of one side: its first Result, its loop values by process, its sources.
    _Point = tuple[Result, dict[int, list[float]], set[str | None]]

# MemTotal moves by a few MB between kernels of one machine (what each reserves for itself);
# more than this is another machine, or mem=.
_MEMORY_TOLERANCE = 0.02


def side_points(
    rs: ResultSet,
    sources: Sequence[str | None] | None = None,
    key: Callable[[Result], Hashable] = point_key,
) -> dict[Hashable, _Point]:
    """{key(result): (first Result, {process: [loop values]}, {sources})}, in first-seen order:
    a run is a process (ResultSet.runs); repetitions inside one process pool their loops."""
    points: dict[Hashable, _Point] = {}
    sources = sources or [None] * len(rs.results)
    for result, run, source in zip(rs.results, rs.runs, sources):
        first, by_run, names = points.setdefault(key(result), (result, {}, set()))
        by_run.setdefault(run.get("process", 0), []).extend(result.values())
        names.add(source)
    return points


def _side(first: Result, by_run: Mapping[int, Sequence[float]]) -> dict[str, Any]:
    """One side of a point: summarize() of all its loops, and the centre and spread of its runs."""
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
        side's figures: summarize() of the loops plus center, the median of
        per-run medians, runs, spread_pct and spread_of) and "changes": per other
        result set (None where it lacks the point), change_pct (of the centre),
        runs ([base, other]), p_value and ci_pct (None below 3 runs a side),
        marker ("(R)" regression or "(I)" improvement: beyond the threshold and
        significant; "~" beyond but not significant; "?" beyond with too few runs;
        "" within), note, the other's n, mean, center and spread_pct, and the
        method. Values in the row's unit (bytes/sec or cycles/byte).

    Raises
    ------
    ValueError
        No other set, a set sharing no point with the base (e.g. results of
        different benchmarks), or a bad threshold or alpha.
    """
    if not others:
        raise ValueError("compare needs a base and at least one other result set")
    base_points = side_points(base, sources)
    other_points = [side_points(o) for o in others]
    for o, points in zip(others, other_points):
        if not set(points) & set(base_points):
            raise ValueError(
                f"nothing to compare: the base measured {', '.join(base.benchmarks) or 'nothing'}, "
                f"the other {', '.join(o.benchmarks) or 'nothing'}, with no point in common"
                f"{_by_function_hint(base, o)}"
            )
    return point_rows(base_points, other_points, threshold, alpha)


def _by_function_hint(base: ResultSet, other: ResultSet) -> str:
    """ "; ... --by function" where the two share points but for their functions."""
    if {variant_key(r) for r in base} & {variant_key(r) for r in other}:
        return "; to put their functions side by side, compare with --by function"
    return ""


def point_rows(
    base_points: Mapping[Hashable, _Point],
    other_points: Sequence[Mapping[Hashable, _Point]],
    threshold: float,
    alpha: float,
    label: Callable[[Result], str] | None = None,
) -> list[dict[str, Any]]:
    """compare()'s rows from each side's points ({key: (first, {process: loops}, sources)});
    `label` names a row (default Result.label); a row's study is its points' one source."""
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
                "label": label(first) if label else first.label(),
                "unit": first.unit,
                "study": study,
                "base": _side(first, by_run),
                "changes": changes,
            }
        )
    return rows


def shared_rows(
    rows: Sequence[Mapping[str, Any]], base: ResultSet, *others: ResultSet
) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """compare()'s rows that at least one other side shares, and what was left out.

    Returns (rows, left_out): left_out["base_only"] counts the base's points no other side
    measured, by study ("by_study", None for a point of several files), and
    left_out["without_base"] each other's points the base lacks, in the others' order; a
    full report against a quick one shares the quick one's scale.
    """
    kept = [row for row in rows if any(c is not None for c in row["changes"])]
    by_study: dict[str | None, int] = {}
    for row in rows:
        if all(c is None for c in row["changes"]):
            by_study[row["study"]] = by_study.get(row["study"], 0) + 1
    base_keys = set(side_points(base))
    lacking = [sum(k not in base_keys for k in side_points(o)) for o in others]
    left_out = {"base_only": len(rows) - len(kept), "by_study": by_study}
    return kept, dict(left_out, without_base=lacking)


def _points(n: int) -> str:
    return f"{n} point{'' if n == 1 else 's'}"


def left_out_line(
    base: str,
    base_only: int,
    without_base: Mapping[str, int],
    by_study: Mapping[Any, int] | None = None,
) -> str | None:
    """One line on the points a comparison passed over, None for none: `base_only` points
    only the base side has (by study where they are of several), and per other side the
    points the base lacks."""
    parts = []
    if base_only:
        studies = by_study if by_study and len(by_study) > 1 else {}
        each = ", ".join(f"{study or 'several files'} {n}" for study, n in studies.items())
        parts.append(f"{_points(base_only)} only {base} has" + (f" ({each})" if each else ""))
    lacking = {name: n for name, n in without_base.items() if n}
    if lacking:
        each = ", ".join(f"{name} {n}" for name, n in lacking.items())
        parts.append(f"{_points(sum(lacking.values()))} {base} lacks ({each})")
    return f"left out: {'; '.join(parts)}" if parts else None


def runs_per_side(rows: Sequence[Mapping[str, Any]], sides: int) -> list[str]:
    """Per side (base first), its runs per point over the points it has: "N", "N-M" or "-"."""
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


def _legend(markers: Iterable[str], legend: Mapping[str, str]) -> list[str]:
    """One line per marker that appears, (R) and (I) sharing theirs."""
    lines: list[str] = []
    for marker in legend:
        if marker in markers and legend[marker] not in lines:
            lines.append(legend[marker])
    return lines


def format_table(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    legend: Mapping[str, str] = MARKERS,
) -> str:
    """compare()'s rows as a text table (grouped under "[study]" where rows are of several),
    with a legend line per marker shown (its words from `legend`, by marker) and its notes;
    `names`: the base's and each other's."""
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
    lines += _legend(markers, legend)
    if few_runs:
        lines.append(
            f"note: fewer than {MIN_RUNS} runs on a side for some points: the variation "
            f"between runs is unknown there, so no change is called significant; "
            f"measure with --runs {MIN_RUNS} or more (or sweep --processes "
            f"{MIN_RUNS}) on each side"
        )
    lines += [f"note: {n}" for n in sorted(notes)]
    return "\n".join(lines)


def side_facts(machine: Mapping[str, Any]) -> dict[str, str]:
    """A side's kernel_release, kernel_cmdline, preemption and thp, "unknown" where not recorded."""
    thp = machine.get("thp") or {}
    preemption = machine.get("preemption") or {}
    return {
        "kernel_release": machine.get("kernel_release") or machine.get("kernel") or "unknown",
        "kernel_cmdline": machine.get("kernel_cmdline") or "unknown",
        "preemption": preemption.get("model") or "unknown",
        "thp": (f"enabled={thp.get('enabled')} defrag={thp.get('defrag')}" if thp else "unknown"),
    }


def _caches(machine: Mapping[str, Any]) -> str | None:
    caches = sorted(
        (c.get("level") or 0, str(c.get("type") or "").lower(), c.get("size_bytes") or 0)
        for c in machine.get("caches") or ()
    )
    return ", ".join(f"L{level} {kind} {format_size(size)}" for level, kind, size in caches) or None


def machine_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What says two machine() dicts are not one machine (CPU model, caches, memory), each as
    "what (a vs b)"; facts only one side records are passed over."""
    found: list[str] = []
    if a.get("cpu_model") and b.get("cpu_model") and a["cpu_model"] != b["cpu_model"]:
        found.append(f"CPU model ({a['cpu_model']} vs {b['cpu_model']})")
    ca, cb = _caches(a), _caches(b)
    if ca and cb and ca != cb:
        found.append(f"caches ({ca} vs {cb})")
    ma, mb = ((m.get("memory") or {}).get("total_bytes") for m in (a, b))
    if ma and mb and abs(ma - mb) > _MEMORY_TOLERANCE * max(ma, mb):
        found.append(f"memory ({ma / 2**30:.1f} GiB vs {mb / 2**30:.1f} GiB)")
    return found


def header_lines(
    machines: Sequence[Mapping[str, Any]], names: Sequence[str], runs: Sequence[str], method: str
) -> list[str]:
    """The lines above a comparison's table: a row per side (kernel, preemption, THP, runs per
    point, and the command line where the sides' differ), a warning per side measured on
    another machine than the base, and the method."""
    facts = [side_facts(m) for m in machines]
    cmdlines = {f["kernel_cmdline"] for f in facts}
    rows = [["side", "kernel", "preemption", "THP", "runs", "command line"]]
    rows += [
        [name, f["kernel_release"], f["preemption"], f["thp"], r, f["kernel_cmdline"]]
        for name, f, r in zip(names, facts, runs)
    ]
    if len(cmdlines) == 1:
        rows = [r[:-1] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip() for r in rows]
    if len(cmdlines) == 1:
        lines.append(f"command line (every side): {cmdlines.pop()}")
    for name, m in zip(names[1:], machines[1:]):
        diff = machine_differences(machines[0], m)
        if diff:
            lines.append(
                f"warning: {names[0]} and {name} were not measured on the same machine: "
                f"{'; '.join(diff)}"
            )
    lines.append(f"method: {method}")
    return lines


def header_json(
    machines: Sequence[Mapping[str, Any]], names: Sequence[str], runs: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """header_lines()' facts for --format json: the sides, and the machine warnings."""
    sides = [dict(side_facts(m), name=n, runs=r) for m, n, r in zip(machines, names, runs)]
    warnings = [
        {"side": n, "differences": machine_differences(machines[0], m)}
        for n, m in zip(names[1:], machines[1:])
        if machine_differences(machines[0], m)
    ]
    return sides, warnings
