"""``pagezero store publish -o SITE/`` (docs/store.rst): the store as a static site of
index.html, point-N.html (a point's history) and compare-A-B.html, every link relative."""

import functools
import html
import json
import os
import shutil
import tempfile
from collections.abc import Callable

from pagezero.analysis.compare import compare, format_table, header_lines, runs_per_side
from pagezero.analysis.significance import METHOD
from pagezero.results.resultset import ResultSet
from pagezero.store import (
    HEADER,
    MAX_SERIES,
    by_point,
    format_value,
    history_cells,
    plot_history,
    stored_result_set,
)
from pagezero.studies.report.html import html_table, inline_svg, page

__all__ = ["publish", "MARKER", "MAX_ALL_PAIRS"]

# The file that marks a folder as a published site, safe to replace.
MARKER = ".pagezero-site"
# Up to this many result sets every pair that shares a point gets a comparison
# page (300 at most); beyond, each set is compared with the one before it.
MAX_ALL_PAIRS = 25

# Opens compare-A-B.html for the two sets chosen, the older first, where it exists.
_COMPARE_SCRIPT = """
function openComparison() {
  var a = +document.getElementById("base").value, b = +document.getElementById("other").value;
  var name = "compare-" + Math.min(a, b) + "-" + Math.max(a, b) + ".html";
  var message = document.getElementById("compare-message");
  if (a === b) { message.textContent = "choose two different result sets"; return false; }
  if (PAIRS.indexOf(name) < 0) { message.textContent = "no page for this pair"; return false; }
  window.location.href = name;
  return false;
}
"""


def _check_site(site: str) -> str:
    """The folder to write `site` in; ValueError for a site that cannot be published."""
    parent = os.path.dirname(os.path.abspath(site))
    if not os.path.isdir(parent):
        raise ValueError(f"cannot publish to {site!r}: no directory {parent!r}")
    if os.path.exists(site) and not os.path.isdir(site):
        raise ValueError(f"cannot publish to {site!r}: it is a file, not a folder")
    if os.path.isdir(site) and os.listdir(site) and not os.path.exists(os.path.join(site, MARKER)):
        raise ValueError(
            f"cannot publish to {site!r}: it holds files that are no published site; "
            f"choose an empty or new folder"
        )
    if not os.access(parent, os.W_OK):
        raise ValueError(f"cannot publish to {site!r}: directory {parent!r} is not writable")
    return parent


def publish(store, site: str) -> list[str]:
    """Write the store as a static site in `site`, replacing a site published before.

    Parameters
    ----------
    store : pagezero.store.Store
        The open store.
    site : str
        The site's folder (created; its parent must exist).

    Returns
    -------
    list of str
        The pages written, index.html first, as paths under `site`.

    Raises
    ------
    ValueError
        A bad `site` (missing parent, a file, a folder of other files) or an empty store.
    """
    parent, sets = _check_site(site), store.list()
    if not sets:
        raise ValueError(f"{store.path}: the store holds no result sets to publish")
    tmp = tempfile.mkdtemp(prefix=".publish-", dir=parent)
    try:
        names = _write_site(tmp, store, sets)
        # Renamed into place; an old site goes only once the new one is in.
        old = tempfile.mkdtemp(prefix=".unpublished-", dir=parent) if os.path.exists(site) else None
        if old:
            os.rename(site, os.path.join(old, "site"))
        os.rename(tmp, site)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old:
        shutil.rmtree(old, ignore_errors=True)
    return [os.path.join(site, n) for n in names]


def _write_site(folder: str, store, sets: list[dict]) -> list[str]:
    """Write the site's pages into `folder`; their names, index.html first."""
    by_id = {s["id"]: s for s in sets}
    documents = dict(store.documents())
    load = functools.cache(lambda set_id: stored_result_set(documents[set_id]))
    points = by_point(store.history())
    pages = {
        f"point-{n}.html": _point_page(folder, n, label, rows, by_id)
        for n, (label, rows) in enumerate(points, 1)
    }
    ids = [s["id"] for s in sets]  # oldest first
    candidates = list(zip(ids, ids[1:]))
    if len(ids) <= MAX_ALL_PAIRS:
        candidates = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    pairs = []
    for a, b in candidates:
        text = _compare_page(by_id[a], by_id[b], load)
        if text is not None:  # None: the two share no point
            pages[f"compare-{a}-{b}.html"] = text
            pairs.append((a, b))
    pages = {"index.html": _index_page(sets, points, pairs), **pages}
    pages[MARKER] = "a site written by pagezero store publish; safe to replace\n"
    for name, text in pages.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    return list(pages)[:-1]


def report_of(source: str | None) -> str | None:
    """The file:// address of report.html (else report.md) beside `source`, the file a
    stored result set was added from, when still there; else None."""
    if not source:
        return None
    for name in ("report.html", "report.md"):
        path = os.path.join(os.path.dirname(source), name)
        if os.path.isfile(path):
            return "file://" + path
    return None


def _e(text: object) -> str:
    return html.escape(str(text if text is not None else "?"))


def _when(row: dict) -> str:
    return _e(row["measured_at"].replace("+00:00", "Z"))


def _set_cell(s: dict) -> str:
    report = report_of(s.get("source"))
    link = f' (<a href="{_e(report)}">report</a>)' if report else ""
    return f"#{s['id']}{link}"


def _index_page(sets: list[dict], points: list, pairs: list[tuple[int, int]]) -> str:
    machines: dict[str, list[dict]] = {}
    for s in sets:
        machines.setdefault(s["machine_name"], []).append(s)
    machine_rows = []
    for name, group in machines.items():
        kernels = _e(", ".join(sorted({g["kernel_release"] or "?" for g in group})))
        machine_rows.append([_e(name), str(len(group)), kernels, _when(group[0]), _when(group[-1])])
    set_columns = ("machine_name", "kernel_release", "benchmarks", "points")
    set_rows = [
        [_set_cell(s), _when(s), *(_e(s[c]) for c in set_columns), _e(s["interrupted"] or "")]
        for s in sets
    ]
    point_rows = [
        [f'<a href="point-{n}.html">{_e(label)}</a>', str(len({r["machine_name"] for r in rows}))]
        + [str(len(rows)), _e(format_value(rows[-1]["median"], rows[-1]["unit"]))]
        for n, (label, rows) in enumerate(points, 1)
    ]
    options = "".join(
        f'<option value="{s["id"]}">#{s["id"]} {_when(s)} {_e(s["machine_name"])}</option>'
        for s in sets
    )
    names = json.dumps([f"compare-{a}-{b}.html" for a, b in pairs])
    body = [
        "<h1>pagezero results</h1>",
        f"<p>{len(sets)} result sets of {len(machines)} machines, {len(points)} points. "
        "Every figure is a point's median of per-run medians; its interval the spread "
        "between runs (of one run's loops where a set has one run).</p>",
        '<h2 id="machines">Machines</h2>',
        html_table(["machine", "result sets", "kernels", "first", "last"], machine_rows),
        '<h2 id="result-sets">Result sets</h2>',
        html_table(
            ["set", "measured (UTC)", "machine", "kernel", "benchmarks", "points", "interrupted"],
            set_rows,
        ),
        '<h2 id="compare">Compare two result sets</h2>',
        f'<form onsubmit="return openComparison()"><select id="base">{options}</select> '
        f'against <select id="other">{options}</select> <button type="submit">compare</button> '
        '<span id="compare-message"></span></form>',
        f"<script>var PAIRS = {names};{_COMPARE_SCRIPT}</script>",
        "<p>"
        + ", ".join(f'<a href="compare-{a}-{b}.html">#{b} against #{a}</a>' for a, b in pairs[:50])
        + "</p>",
        '<h2 id="points">Points</h2>',
        html_table(["point", "machines", "result sets", "latest median"], point_rows),
    ]
    return page("pagezero results", "\n".join(body))


def _point_page(folder: str, n: int, label: str, rows: list[dict], by_id: dict) -> str:
    figure = "<p>One result set holds this point: no history to draw yet.</p>"
    if len(rows) > 1 and len({r["machine_name"] for r in rows}) <= MAX_SERIES:
        plot_history(rows, os.path.join(folder, f"point-{n}"))
        figure = inline_svg(folder, f"point-{n}.png", f"history of {label}")
    cells = [[*map(_e, history_cells(r)), _set_cell(by_id[r["set_id"]])] for r in rows]
    table = html_table(HEADER, cells)
    body = (
        f'<p><a href="index.html">all results</a></p><h1>{_e(label)}</h1>'
        "<p>The point's median of per-run medians per result set; error bars and the "
        "spread column: the spread between runs (of one run's loops where it had one).</p>"
        f'<div class="pair">{table}{figure}</div>'
    )
    return page(label, body)


def _compare_page(a: dict, b: dict, load: Callable[[int], ResultSet]) -> str | None:
    """The page of set `b` against set `a`, or None when they share no point."""
    sides = [load(a["id"]), load(b["id"])]
    names = [f"#{a['id']}", f"#{b['id']}"]
    try:
        rows = compare(*sides)
    except ValueError:  # nothing in common (compare's own check): no page
        return None
    lines = header_lines([dict(rs.machine) for rs in sides], names, runs_per_side(rows, 2), METHOD)
    title = f"#{b['id']} against #{a['id']}"
    body = (
        f'<p><a href="index.html">all results</a></p><h1>{_e(title)}</h1>'
        f"<p>Base {_set_cell(a)}: {_e(a['machine_name'])}, {_when(a)}; "
        f"against {_set_cell(b)}: {_e(b['machine_name'])}, {_when(b)}. As "
        "<code>pagezero compare</code> prints it.</p>"
        f"<pre>{_e(chr(10).join(lines))}\n\n{_e(format_table(rows, names))}</pre>"
    )
    return page(f"pagezero: {title}", body)
