"""Result sets, or one's functions, compared point by point, the run the unit (docs/compare.rst)."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Container, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.analysis.significance import (
    IMPROVEMENT,
    MARKERS,
    METHOD,
    MIN_RUNS,
    NOT_SIGNIFICANT,
    REGRESSION,
    compare_runs,
)
from pagezero.measure.fault import WORKLOADS
from pagezero.results.points import grouped, point_key, point_summary, summarize, variant_key
from pagezero.system.kernels import KINDS, Kernel, kernels
from pagezero.units import GBPS, format_size

if TYPE_CHECKING:
    from pagezero.results.resultset import Result, ResultSet

    # One point of one side: its first Result, its loop values by process, its sources.
    _Point = tuple[Result, dict[int, list[float]], set[str | None]]

# MemTotal moves by a few MB between one machine's kernels; more is another machine, or mem=.
_MEMORY_TOLERANCE = 0.02
# What format_text() leaves out of a side's line, said where the sides differ in it.
_DIFFERING = {"thp": "THP settings", "kernel_cmdline": "kernel command lines"}
# format_text()'s words for its figures, and the heading of an other side's column.
_TEXT_FIGURES = (
    "figures: the base's median of per-run medians (GB/s: 10^9 bytes/s), each other's "
    "change of it in %, and the spread of the runs' medians in +-%"
)
_SIDE_HEAD = f"{'change':>7} {'':3} {'spread':>7}"
FEW_RUNS_NOTE = (
    f"note: fewer than {MIN_RUNS} runs on a side for some points: the variation between runs "
    f"is unknown there, so no change is called significant; measure with --runs {MIN_RUNS} "
    f"or more (or sweep --processes {MIN_RUNS}) on each side"
)


def side_points(
    rs: ResultSet,
    sources: Sequence[str | None] | None = None,
    key: Callable[[Result], Any] = point_key,
) -> dict[Any, _Point]:
    """{key(result): (first Result, {process: [loop values]}, {sources})}: a process is a run."""
    points: dict[Any, _Point] = {}
    sources = sources or [None] * len(rs.results)
    for result, run, source in zip(rs.results, rs.runs, sources):
        first, by_run, names = points.setdefault(key(result), (result, {}, set()))
        by_run.setdefault(run.get("process", 0), []).extend(result.values())
        names.add(source)
    return points


def _side(first: Result, by_run: Mapping[int, Sequence[float]]) -> dict[str, Any]:
    """One side of a point: summarize() of all its loops, and the centre and spread of its runs."""
    s = point_summary(by_run.values(), first.unit)
    loops = [v for values in by_run.values() for v in values]
    keep = ("runs", "spread_pct", "spread_of")
    return dict(summarize(loops, unit=first.unit), center=s["median"], **{k: s[k] for k in keep})


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
    base, *others : ResultSet
        The base side, and one or more other sides.
    threshold, alpha : float
        The smallest relative change marked (0.02 is 2%), and the significance level, in (0, 1).
    sources : sequence of str, optional
        One name per Result of `base`, its study (folders.load_sources), for the rows' "study".

    Returns
    -------
    list of dict
        A row per point of `base`, its "changes" None where a set lacks it (docs/compare.rst).

    Raises
    ------
    ValueError
        No other set, one sharing no point with the base, or a bad threshold or alpha.
    """
    if not others:
        raise ValueError("compare needs a base and at least one other result set")
    base_points = side_points(base, sources)
    other_points = [side_points(o) for o in others]
    for o, points in zip(others, other_points):
        if not set(points) & set(base_points):
            shared = {variant_key(r) for r in base} & {variant_key(r) for r in o}
            hint = "; to put their functions side by side, compare with --by function"
            raise ValueError(
                f"nothing to compare: the base measured {', '.join(base.benchmarks) or 'nothing'}, "
                f"the other {', '.join(o.benchmarks) or 'nothing'}, with no point in common"
                f"{hint if shared else ''}"
            )
    return point_rows(base_points, other_points, threshold, alpha)


def point_rows(
    base_points: Mapping[Hashable, _Point],
    other_points: Sequence[Mapping[Hashable, _Point]],
    threshold: float,
    alpha: float,
    label: Callable[[Result], str] | None = None,
) -> list[dict[str, Any]]:
    """compare()'s rows from each side's side_points(), a row named by `label` (Result.label)."""

    def change(
        first: Result, by_run: Mapping[int, Sequence[float]], other: _Point
    ) -> dict[str, Any]:
        c = compare_runs(by_run.values(), other[1].values(), first.unit, threshold, alpha)
        side = _side(other[0], other[1])
        return c | {k: side[k] for k in ("n", "mean", "center", "spread_pct")} | {"method": METHOD}

    rows: list[dict[str, Any]] = []
    for key, (first, by_run, names) in base_points.items():
        changes = [change(first, by_run, p[key]) if key in p else None for p in other_points]
        study = next(iter(names)) if len(names) == 1 else None
        row = {"label": label(first) if label else first.label(), "unit": first.unit}
        rows.append(row | {"study": study, "base": _side(first, by_run), "changes": changes})
    return rows


def shared_rows(
    rows: Sequence[Mapping[str, Any]], base: ResultSet, *others: ResultSet
) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """(compare()'s rows another side shares, left_out: "base_only", "by_study", "without_base")."""
    kept = [row for row in rows if any(c is not None for c in row["changes"])]
    by_study = Counter(row["study"] for row in rows if all(c is None for c in row["changes"]))
    base_keys = set(side_points(base))
    lacking = [sum(k not in base_keys for k in side_points(o)) for o in others]
    left_out = {"base_only": len(rows) - len(kept), "by_study": dict(by_study)}
    return kept, dict(left_out, without_base=lacking)


def _points(n: int) -> str:
    return f"{n} point{'' if n == 1 else 's'}"


def left_out_line(
    base: str,
    base_only: int,
    without_base: Mapping[str, int],
    by_study: Mapping[Any, int] | None = None,
) -> str | None:
    """One line on the points a comparison passed over ("left out: ..."), None for none."""
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


def span(counts: Iterable[int]) -> str:
    """Counts as "N", "N-M" (the fewest to the most) or "-" for none."""
    c = sorted(set(counts))
    return "-" if not c else str(c[0]) if len(c) == 1 else f"{c[0]}-{c[-1]}"


def runs_per_side(rows: Sequence[Mapping[str, Any]], sides: int) -> list[str]:
    """Per side (base first), its runs per point over the points it has: "N", "N-M" or "-"."""
    others = ([c["runs"][1] for r in rows if (c := r["changes"][j])] for j in range(sides - 1))
    return [span(row["base"]["runs"] for row in rows), *map(span, others)]


def _notes(rows: Iterable[Mapping[str, Any]], legend: Mapping[str, str]) -> list[str]:
    """Under a table: the legend of each marker shown, the note on too few runs, the notes."""
    changes = [c for row in rows for c in row["changes"] if c]
    shown = {c["marker"] for c in changes}
    lines = list(dict.fromkeys(words for marker, words in legend.items() if marker in shown))
    if any(min(c["runs"]) < MIN_RUNS for c in changes):
        lines.append(FEW_RUNS_NOTE)
    notes = {c["note"] for c in changes if c["note"] and min(c["runs"]) >= MIN_RUNS}
    return lines + [f"note: {n}" for n in sorted(notes)]


def aligned(
    rows: Sequence[Sequence[str]], sep: str, right: Container[int] = ()
) -> tuple[list[str], list[int]]:
    """(rows as columns joined by `sep`, left-aligned but `right`'s, one-cell rows kept; widths)."""
    widths = [max(map(len, column)) for column in zip(*(r for r in rows if r[1:]))]
    pads = [str.rjust if i in right else str.ljust for i in range(len(widths))]
    lines = [sep.join(pad(c, w) for c, w, pad in zip(r, widths, pads)).rstrip() for r in rows]
    return [line if r[1:] else r[0] for line, r in zip(lines, rows)], widths


def format_table(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    legend: Mapping[str, str] = MARKERS,
) -> str:
    """compare()'s rows as a wide text table, `names` the sides', with `legend` and notes."""
    header = ["benchmark", "result class", *names]
    groups = grouped(rows, lambda row: row["study"])
    body: list[list[str]] = []
    for study, group in groups.items():
        if len(groups) > 1:
            body.append([f"[{study or 'in several files'}]"])
        for row in group:
            b, unit = row["base"], row["unit"]
            of = "" if b["spread_of"] == "runs" else " (loops)"
            value = f"{_center(row)} {_unit(unit)} +-{b['spread_pct']:.1f}%{of}"
            cells = [row["label"], unit, value]
            for c in row["changes"]:
                cells.append(f"{c['change_pct']:+.1f}% {c['marker']}".rstrip() if c else "-")
            body.append(cells)
    lines, widths = aligned([header, *body], " | ")
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines + _notes(rows, legend))


def wrap(lines: Iterable[str], width: int = 80) -> list[str]:
    """Each line wrapped at `width` columns, its continuation indented by two; "" kept."""
    out = []
    for line in lines:
        out += textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False) or [""]
    return out


def _spread(pct: float, of_loops: bool) -> str:
    return f"+-{pct:.1f}%" + ("*" if of_loops else "")


def _unit(unit: str) -> str:
    return "GB/s" if unit == "bytes/sec" else unit


def _center(row: Mapping[str, Any]) -> str:
    """The base's median of per-run medians: in GB/s for a rate, else in the row's unit."""
    center = row["base"]["center"]
    return f"{center / GBPS:.2f}" if row["unit"] == "bytes/sec" else f"{center:.4g}"


def _base_head(unit: str) -> str:
    return f"{_unit(unit):>6} {'spread':>7}"


def _text_cells(row: Mapping[str, Any]) -> list[str]:
    """A row's cells in format_text(): the base's centre and spread, each other's change."""
    b = row["base"]
    cells = [f"{_center(row):>6} {_spread(b['spread_pct'], b['spread_of'] != 'runs'):>7}"]
    for c in row["changes"]:
        change, marker = (f"{c['change_pct']:+.1f}%", c["marker"]) if c else ("-", "")
        spread = _spread(c["spread_pct"], c["runs"][1] < 2) if c else ""
        cells.append(f"{change:>7} {marker:<3} {spread:>7}")
    return cells


def format_text(
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    legend: Mapping[str, str] = MARKERS,
    width: int = 80,
) -> str:
    """compare()'s rows in at most `width` columns, for a mail (docs/compare.rst)."""
    cells = [_text_cells(row) for row in rows]
    heads = [_base_head(row["unit"]) for row in rows]
    base_w = max(len(x) for x in [_base_head("bytes/sec"), *heads, *(c[0] for c in cells)])
    side_w = max([len(_SIDE_HEAD)] + [len(x) for c in cells for x in c[1:]])
    shown = [n if len(n) <= (side_w if j else base_w) else f"[{j}]" for j, n in enumerate(names)]
    named = [f"[{j}] {n}" for j, (n, s) in enumerate(zip(names, shown)) if n != s]
    out = wrap([_TEXT_FIGURES, *named], width)
    per_table = max(1, min(len(names) - 1, (width - 12 - base_w) // (side_w + 1)))
    label_w = width - base_w - 3 - per_table * (side_w + 1)
    groups = grouped(zip(rows, cells), lambda rc: (rc[0]["study"], rc[0]["unit"]))
    several = len({study for study, _ in groups}) > 1
    for (study, unit), group in groups.items():
        words = [row["label"].split() for row, _ in group]
        common = [w for w in words[0] if all(w in ws for ws in words[1:])]
        labels = [" ".join(w for w in ws if w not in common) or "(one point)" for ws in words]
        heading = f"[{study or 'in several files'}] " if several else ""
        out += ["", *wrap([f"{heading}{' '.join(common) or 'points'}:"], width)]
        lw = min(label_w, max(len("point"), *(len(label) for label in labels)))
        for first in range(1, len(names), per_table):
            sides = range(first, min(first + per_table, len(names)))
            table = [["", shown[0], *(shown[j] for j in sides)]]
            table.append(["point", _base_head(unit), *[_SIDE_HEAD] * len(sides)])
            for (_, c), label in zip(group, labels):
                parts = textwrap.wrap(label, lw, break_on_hyphens=False)
                table += [[parts[0], c[0], *(c[j] for j in sides)], *([p] for p in parts[1:])]
            widths = [base_w, *[side_w] * len(sides)]
            out += [""] if first > 1 else []
            for r in table:
                right = [x.rjust(w) for x, w in zip(r[1:], widths)]
                out.append(f"{r[0]:<{lw}}  {' '.join(right)}".rstrip())
    if any("*" in x for c in cells for x in c):
        out += ["* one run on that side: the spread is of its loops, not of runs"]
    notes = wrap(_notes(rows, legend), width)
    return "\n".join([*out, *([""] + notes if notes else [])])


def side_facts(machine: Mapping[str, Any]) -> dict[str, str]:
    """A side's kernel_release, kernel_cmdline, preemption and thp, "unknown" where not recorded."""
    thp = machine.get("thp") or {}
    return {
        "kernel_release": machine.get("kernel_release") or machine.get("kernel") or "unknown",
        "kernel_cmdline": machine.get("kernel_cmdline") or "unknown",
        "preemption": (machine.get("preemption") or {}).get("model") or "unknown",
        "thp": f"enabled={thp.get('enabled')} defrag={thp.get('defrag')}" if thp else "unknown",
    }


def _caches(machine: Mapping[str, Any]) -> str | None:
    caches = sorted(
        (c.get("level") or 0, str(c.get("type") or "").lower(), c.get("size_bytes") or 0)
        for c in machine.get("caches") or ()
    )
    return ", ".join(f"L{level} {kind} {format_size(size)}" for level, kind, size in caches) or None


def machine_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """How two machine() dicts are not one machine (CPU model, caches, memory): "what (a vs b)"."""
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


def header_json(
    machines: Sequence[Mapping[str, Any]], names: Sequence[str], runs: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sides' facts (side_facts(), name and runs), and a warning per other machine."""
    sides = [dict(side_facts(m), name=n, runs=r) for m, n, r in zip(machines, names, runs)]
    others = zip(names[1:], machines[1:])
    found = [(n, d) for n, m in others if (d := machine_differences(machines[0], m))]
    return sides, [{"side": n, "differences": d} for n, d in found]


def header_lines(
    machines: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    runs: Sequence[str],
    method: str,
    width: int | None = None,
) -> list[str]:
    """The lines above a comparison's table: the sides, the machine warnings and the method."""
    sides, foreign = header_json(machines, names, runs)
    cmdlines = {s["kernel_cmdline"] for s in sides}
    warnings = [
        f"warning: {names[0]} and {w['side']} were not measured on the same machine: "
        f"{'; '.join(w['differences'])}"
        for w in foreign
    ]
    if width:
        lines = [
            f"{s['name']}: Linux {s['kernel_release']}, preemption {s['preemption']}, "
            f"{s['runs']} runs per point"
            for s in sides
        ]
        differ = [w for k, w in _DIFFERING.items() if len({s[k] for s in sides}) > 1]
        if differ:
            lines.append(f"the sides' {' and '.join(differ)} differ: --format default shows them")
        return wrap([*lines, *warnings, f"method: {method}"], width)
    keys = ["name", "kernel_release", "preemption", "thp", "runs", "kernel_cmdline"]
    rows = [["side", "kernel", "preemption", "THP", "runs", "command line"]]
    rows += [[s[k] for k in keys] for s in sides]
    if len(cmdlines) == 1:
        rows = [r[:-1] for r in rows]
    lines = aligned(rows, "  ")[0]
    if len(cmdlines) == 1:
        lines.append(f"command line (every side): {cmdlines.pop()}")
    return [*lines, *warnings, f"method: {method}"]


BY = ("function",)  # what a variant can be told by

# format_table()'s legend for variants: against the base function, not an older boot.
_MARKED = "(R) worse and (I) better than the base function: beyond the threshold and significant"
VARIANT_LEGEND = MARKERS | {REGRESSION: _MARKED, IMPROVEMENT: _MARKED}
VARIANT_LEGEND[NOT_SIGNIFICANT] += ": a tie within the noise"
TIE_NOTE = "a change without a marker is within the threshold: a tie with the base"


def _variant_label(result: Result) -> str:
    """The point without its function: "memset chunk=0 page=4KB size=1GB value=0"."""
    benchmark, _function, *rest = result.label().split(" ", 2)
    return " ".join([benchmark, *rest])


def kernel_registry() -> dict[str, Kernel]:
    """Every registered kernel by name, clearing ones first, each once: the kernel table's order."""
    found: dict[str, Kernel] = {}
    for kind in KINDS:
        for k in kernels(kind):
            found.setdefault(k.name, k)
    return found


def variants_of(rs: ResultSet, by: str = "function") -> list[str]:
    """The values of `by` in `rs`, in the registry's order, then those it lacks as first seen."""
    if by not in BY:
        raise ValueError(f"cannot tell variants by {by!r}: only by {', '.join(BY)}")
    known = list(dict.fromkeys([*kernel_registry(), *WORKLOADS]))
    seen = dict.fromkeys(getattr(r, by) for r in rs.results)
    return sorted(seen, key=lambda n: known.index(n) if n in known else len(known))


def compare_variants(
    rs: ResultSet,
    base: str | None = None,
    by: str = "function",
    threshold: float = 0.02,
    alpha: float = 0.01,
    sources: Sequence[str | None] | None = None,
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """The functions of `rs` side by side against `base` (default: variants_of()'s first), as
    compare(): (names, base first; rows of points shared; left_out: "base_only", "without_base"
    counts). ValueError for an unknown base, fewer than two functions or no point shared."""
    names = variants_of(rs, by)
    base = names[0] if base is None and names else base
    if base not in names:
        raise ValueError(
            f"--base {base!r} is not a {by} of these results (they hold {', '.join(names)})"
        )
    if len(names) < 2:
        raise ValueError(
            f"nothing to compare: every result is of the {by} {base!r}; "
            f"--by {by} needs results of at least two"
        )
    names = [base, *(n for n in names if n != base)]
    points = side_points(rs, sources, key=lambda r: (getattr(r, by), variant_key(r)))
    sides = [{k: p for (n, k), p in points.items() if n == name} for name in names]
    base_points, others = sides[0], sides[1:]
    shared = {k: v for k, v in base_points.items() if any(k in o for o in others)}
    if not shared:
        raise ValueError(
            f"nothing to compare: no point where {base!r} and another {by} were both measured"
        )
    rows = point_rows(shared, others, threshold, alpha, label=_variant_label)
    lacking = {n: sum(k not in base_points for k in o) for n, o in zip(names[1:], others)}
    return names, rows, {"base_only": len(base_points) - len(shared), "without_base": lacking}
