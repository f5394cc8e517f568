"""``pagezero fleet table DIR`` (docs/fleet.rst): machines side by side, point by point."""

import os

from pagezero.fleet.run import FLEET_FILE
from pagezero.results.points import summarize_points
from pagezero.results.resultset import ResultSet, load_folder
from pagezero.results.schema import read_json
from pagezero.store.history import format_value

__all__ = ["machine_sets", "table_rows", "format_table", "only_matching"]


def _fleet_entries(path):
    """{name: (folder, status, error)} of each machine fleet.json lists."""
    doc = read_json(path)
    machines = doc.get("machines", []) if isinstance(doc, dict) else None
    if not isinstance(machines, list):
        raise ValueError(f"{path}: not a fleet run's record (no list of machines)")
    entries = {}
    for m in machines:
        if not (isinstance(m, dict) and all(isinstance(m.get(k), str) for k in ("name", "folder"))):
            raise ValueError(f"{path}: a machine without a name and a folder")
        folder = m["folder"]
        if not folder or folder in (".", "..") or "/" in folder or "\0" in folder:
            where = os.path.dirname(path) or "."
            raise ValueError(
                f"{path}: machine {m['name']!r}'s folder must be a name in {where}, not {folder!r}"
            )
        if m["name"] in entries:
            raise ValueError(f"{path}: machine {m['name']!r} is listed twice")
        # A hand-edited status or error as text (None stays None).
        status, error = (None if m.get(k) is None else str(m[k]) for k in ("status", "error"))
        entries[m["name"]] = (folder, status, error)
    return entries


def machine_sets(fleet_dir):
    """``([(machine name, ResultSet)], a line per machine without results)`` of a fleet run's
    folder (or any folder of machine folders), in ``fleet.json``'s order, else by name;
    ValueError for a missing folder, a bad ``fleet.json`` or no results."""
    path = os.path.join(fleet_dir, FLEET_FILE)
    if os.path.exists(path):
        entries = _fleet_entries(path)
    elif os.path.isdir(fleet_dir):
        names = [n for n in os.listdir(fleet_dir) if os.path.isdir(os.path.join(fleet_dir, n))]
        entries = {name: (name, None, None) for name in sorted(names)}
    else:
        raise ValueError(f"{fleet_dir}: no such folder")
    sets, notes = [], []
    for name, (folder, status, error) in entries.items():
        try:
            sets.append((name, load_folder(os.path.join(fleet_dir, folder))))
        except ValueError as e:
            why = str(e)  # why its folder holds no results, unless its run went wrong
            if status and status != "ok":
                why = status + (f": {error}" if error else "")
            notes.append(f"{name}: no results ({why})")
    if not sets:
        raise ValueError(
            f"{fleet_dir}: no machine's results under it"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    return sets, notes


def only_matching(sets, words):
    """`sets` with only the results whose label has all of `words`; ValueError for none."""
    words = set(words.split())
    kept = []
    for name, rs in sets:
        pairs = [(r, run) for r, run in zip(rs.results, rs.runs) if words <= set(r.label().split())]
        if pairs:
            results, runs = zip(*pairs)
            kept.append((name, ResultSet(results, [dict(run) for run in runs], dict(rs.machine))))
    if not kept:
        raise ValueError(f"no measured point has all of {' '.join(sorted(words))!r} in its label")
    return kept


def table_rows(sets):
    """Per point of (machine name, ResultSet) pairs a dict of ``label``, ``unit`` and
    ``machines``: name to its :func:`pagezero.results.points.point_summary`, or None."""
    rows, names = {}, [name for name, _ in sets]
    for name, rs in sets:
        for key, (first, summary) in summarize_points(rs).items():
            empty = {"label": first.label(), "unit": first.unit, "machines": dict.fromkeys(names)}
            rows.setdefault(key, empty)["machines"][name] = summary
    return list(rows.values())


def _cell(summary):
    if summary is None:
        return "-"
    mark = "" if summary["spread_of"] == "runs" else "*"
    return (
        f"{format_value(summary['median'], summary['unit'])} +-{summary['spread_pct']:.1f}%{mark}"
    )


def format_table(sets, notes=()):
    """The table of :func:`table_rows` as lines, the machines above it, `notes` below."""
    names = [name for name, _ in sets]
    machines = [
        f"{n}: {rs.machine.get('cpu_model', '?')}, {rs.machine.get('kernel_release', '?')}"
        for n, rs in sets
    ]
    header = ["point", *names]
    body = [[row["label"], *(_cell(row["machines"][n]) for n in names)] for row in table_rows(sets)]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    text = [" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + body]
    rule = "-+-".join("-" * w for w in widths)
    legend = (
        "median rate over runs (GB/s = 10^9 bytes/s), +- the stdev of the runs' "
        "medians; * one run: the stdev of its loops instead"
    )
    return [*machines, "", text[0], rule, *text[1:], "", legend, *notes]
