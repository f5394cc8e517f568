"""report.html: one self-contained page beside report.md, with report.md's
sections, every table (sortable) and every figure (inline SVG, next to its
table), naming no address outside itself. Read with html.parser; the browser's
view of it is tests/test_browser.py's."""

import re

from html_pages import Page, external

from pagezero.studies.report.html import markdown_to_html, page, write_html

# tiny_report: conftest's, the session's one tiny report (shared with test_report and
# test_browser).


def test_report_html_is_written_beside_report_md(tiny_report):
    md = (tiny_report / "report.md").read_text()
    html = (tiny_report / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "- `report.html`" in md  # listed among the files


def test_same_sections_as_report_md(tiny_report):
    md = (tiny_report / "report.md").read_text().splitlines()
    page_ = Page((tiny_report / "report.html").read_text())
    expected = [line.lstrip("#").strip() for line in md if line.startswith("#")]
    assert page_.headings == [re.sub(r"`([^`]*)`", r"\1", h) for h in expected]


def test_every_table_and_figure(tiny_report):
    md = (tiny_report / "report.md").read_text().splitlines()
    page_ = Page((tiny_report / "report.html").read_text())
    md_tables = [
        line for i, line in enumerate(md) if line.startswith("|") and not md[i - 1].startswith("|")
    ]
    assert len(page_.tables) == len(md_tables)
    for table, first_line in zip(page_.tables, md_tables):
        assert table == [c.strip() for c in first_line.strip("|").split("|")]
    images = [line for line in md if line.startswith("![")]
    assert len(images) >= 4  # extents, chunks, threads, faults
    assert len(page_.svg_parents) == len(images)
    assert not [t for t, a in page_.tags if t == "img"]  # inline SVG, no image files
    for parents in page_.svg_parents:
        assert parents[-1] == "figure"


def test_each_figure_stands_next_to_its_table(tiny_report):
    sections = (tiny_report / "report.html").read_text().split("<h2")
    for alt in ("rate by extent", "rate by chunk", "fault rates", "scaling"):
        [section] = [s for s in sections if f'aria-label="{alt}"' in s]
        pair = re.search(r'<div class="pair">(.*)</div>', section, re.S)
        assert pair and "<table" in pair.group(1) and f'aria-label="{alt}"' in pair.group(1)


def test_no_address_outside_the_page(tiny_report):
    page_ = Page((tiny_report / "report.html").read_text())
    assert [a for a in page_.addresses() if external(a[2])] == []
    scripts = [a for t, a in page_.tags if t in ("script", "link", "iframe", "object")]
    assert all("src" not in a and "href" not in a for a in scripts)
    html = (tiny_report / "report.html").read_text()
    assert "@import" not in html and "http://purl.org" not in html


def test_tables_are_sortable(tiny_report):
    page_ = Page((tiny_report / "report.html").read_text())
    classes = [a.get("class") for t, a in page_.tags if t == "table"]
    assert classes and set(classes) == {"sortable"}


# The markdown it reads, on made-up lines ------------------------------------------


def test_a_figure_pairs_with_the_table_before_it_in_its_section(tmp_path):
    (tmp_path / "a.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="x"><g/></svg>')
    body = markdown_to_html(
        [
            "## One",
            "",
            "| k | v |",
            "|---|---|",
            "| x | 1 |",
            "",
            "words",
            "",
            "![alt a](a.png)",
            "## Two",
            "",
            "![alt b](b.png)",
        ],
        str(tmp_path),
    )
    assert re.search(r'<div class="pair"><table.*?</table><figure.*?alt a.*?</figure></div>', body)
    assert "<?xml" not in body
    two = body[body.index('id="two"') :]
    assert "pair" not in two and "alt b (no figure drawn)" in two


def test_text_is_escaped_and_marked_up(tmp_path):
    body = markdown_to_html(["a <b> & `code` **bold**", "- item `x`"], str(tmp_path))
    assert "a &lt;b&gt; &amp; <code>code</code> <strong>bold</strong>" in body
    assert "<ul><li>item <code>x</code></li></ul>" in body


def test_code_blocks_keep_their_lines(tmp_path):
    body = markdown_to_html(["```", "cpu:  X <1>", "  two", "```"], str(tmp_path))
    assert "<pre>cpu:  X &lt;1&gt;\n  two</pre>" in body


def test_write_html_is_a_whole_page(tmp_path):
    path = write_html(str(tmp_path), ["# pagezero report: CPU <x>", "", "text"])
    with open(path) as f:
        text = f.read()
    assert "<title>pagezero report: CPU &lt;x&gt;</title>" in text
    assert text == page(
        "pagezero report: CPU <x>",
        markdown_to_html(["# pagezero report: CPU <x>", "", "text"], str(tmp_path)),
    )
