"""report.html: report.md's lines as one self-contained page, its figures inlined."""

from __future__ import annotations

import functools
import html
import itertools
import os
import re
from collections.abc import Sequence
from importlib import resources

from pagezero.files import atomic_write


@functools.cache  # read once: publish writes a page per point and per pair of sets
def _asset(name: str) -> str:
    """A file shipped beside this module (its style sheet, its sorting script)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


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
    """A sortable table (sort.js sorts it) of header and body cells already in HTML."""
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
    style, script = _asset("report.css"), _asset("sort.js")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{style}</style></head>"
        f"<body>\n{body}\n<script>{script}</script></body></html>\n"
    )


def write_html(folder: str, markdown_lines: Sequence[str]) -> str:
    """Write folder/report.html from report.md's lines; its path."""
    title = markdown_lines[0].lstrip("# ").strip() if markdown_lines else "pagezero report"
    text = page(title, markdown_to_html(markdown_lines, folder))
    path = os.path.join(folder, "report.html")
    atomic_write(path, lambda f: f.write(text))
    return path
