"""report.html: report.md's lines as one self-contained page, its figures inlined."""

from __future__ import annotations

import html
import itertools
import os
import re
from collections.abc import Sequence

from pagezero.files import atomic_write

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1500px; margin: 1em auto;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; font-size: 13px; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
th:first-child, td:first-child { text-align: left; }
th.asc::after { content: " \\25B2"; } th.desc::after { content: " \\25BC"; }
.pair { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.pair > figure, figure { margin: 0; max-width: 100%; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 12px; }
code { background: #f3f3f3; padding: 0 2px; }
"""

# Click a header: sort by that column, again to reverse. A number with at most a unit or
# mark after it ("12.3*", "1.25x", "4KB", "#3 (report)") sorts as its number (sizes in
# bytes), any other cell as text.
SORT_SCRIPT = """
(function () {
  var units = {KB: 1024, MB: 1048576, GB: 1073741824, TB: 1099511627776};
  function key(text) {
    var m = /^\\s*#?([-+]?[0-9.]+)\\s*([KMGT]B)?(.*)$/.exec(text);
    if (!m || /[0-9]/.test(m[3])) { return null; }
    return parseFloat(m[1]) * (units[m[2]] || 1);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var up = !th.classList.contains("asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(up ? "asc" : "desc");
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent, y = b.cells[col].textContent;
          var kx = key(x), ky = key(y), d;
          if (kx !== null && ky !== null) { d = kx - ky; } else { d = x.localeCompare(y); }
          return up ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
"""

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")


def anchor(heading: str) -> str:
    """A heading's anchor as markdown viewers make it: lower case, no punctuation, "-" for " "."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    # Links within the page only ("[a section](#its-anchor)"): nothing is fetched.
    out = re.sub(r"\[([^\]]+)\]\((#[\w-]+)\)", r'<a href="\2">\1</a>', out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def _table(lines: Sequence[str]) -> str:
    rows = [[_inline(c.strip()) for c in line.strip().strip("|").split("|")] for line in lines]
    return html_table(rows[0], rows[2:])


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A sortable table (SORT_SCRIPT sorts it) of header and body cells already in HTML."""
    head = "".join(f"<th>{c}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def inline_svg(folder: str, image: str, alt: str) -> str:
    """The SVG beside report.md's `image` as a <figure> captioned `alt` (or a caption alone)."""
    path = os.path.join(folder, os.path.splitext(image)[0] + ".svg")
    try:
        with open(path) as f:
            svg = f.read()
    except OSError:
        return f"<figure><figcaption>{html.escape(alt)} (no figure drawn)</figcaption></figure>"
    svg = svg[svg.find("<svg") :]
    # matplotlib's <metadata> names RDF vocabularies by URL: nothing a reader needs, and no
    # address should stand in a page that fetches none.
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{html.escape(alt)}" ', 1)
    return f'<figure class="figure">{svg}<figcaption>{html.escape(alt)}</figcaption></figure>'


def _kind(line: str) -> str:
    """The block a line of report.md belongs to."""
    if not line.strip():
        return "blank"
    if _IMAGE.match(line.strip()):
        return "figure"
    starts = {"#": "h", "|": "table", "- ": "ul"}
    return next((kind for start, kind in starts.items() if line.startswith(start)), "p")


def markdown_to_html(lines: Sequence[str], folder: str) -> str:
    """report.md's lines as the body's HTML, each figure in a pair with the table before it."""
    kinds, fenced = [], False
    for line in lines:
        fence = line.startswith("```")
        kinds.append("pre" if fenced or fence else _kind(line))
        fenced ^= fence
    blocks: list[tuple[str, str]] = []  # (kind, html)
    for kind, group in itertools.groupby(zip(kinds, lines), key=lambda x: x[0]):
        run = [line for _, line in group]
        if kind == "pre":
            code = "\n".join(x for x in run if not x.startswith("```"))
            blocks.append((kind, f"<pre>{html.escape(code)}</pre>"))
        elif kind == "table":
            blocks.append((kind, _table(run)))
        elif kind == "ul":
            blocks.append((kind, f"<ul>{''.join(f'<li>{_inline(x[2:])}</li>' for x in run)}</ul>"))
        elif kind == "p":
            blocks.append((kind, f"<p>{_inline(' '.join(run))}</p>"))
        for line in run if kind == "h" else ():
            level, text = len(line) - len(line.lstrip("#")), line.lstrip("#").strip()
            blocks.append((kind, f'<h{level} id="{anchor(text)}">{_inline(text)}</h{level}>'))
        for image in run if kind == "figure" else ():
            [(alt, src)] = _IMAGE.findall(image.strip())
            _pair(blocks, inline_svg(folder, src, alt))
    return "\n".join(b for _, b in blocks)


def _pair(blocks: list[tuple[str, str]], figure: str) -> None:
    """Put `figure` beside the last table of its section, or alone when it has none."""
    for k in range(len(blocks) - 1, -1, -1):
        kind, text = blocks[k]
        if kind == "h":
            break
        if kind == "table":
            blocks[k] = ("pair", f'<div class="pair">{text}{figure}</div>')
            return
    blocks.append(("figure", figure))


def page(title: str, body: str) -> str:
    """A whole HTML page: the style and the sorting script inline, nothing fetched."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n<script>{SORT_SCRIPT}</script></body></html>\n"
    )


def write_html(folder: str, markdown_lines: Sequence[str]) -> str:
    """Write folder/report.html from report.md's lines; its path."""
    title = markdown_lines[0].lstrip("# ").strip() if markdown_lines else "pagezero report"
    text = page(title, markdown_to_html(markdown_lines, folder))
    path = os.path.join(folder, "report.html")
    atomic_write(path, lambda f: f.write(text))
    return path
