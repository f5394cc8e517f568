"""The report's summary from sections made by hand: every study's answers first, in the
order the studies ran, each linked to its section, then what else they found; the same
in report.html, with the links resolving to the page's own headings."""

import re
from types import SimpleNamespace

from html_pages import Page

from pagezero.studies.report import ReportRun
from pagezero.studies.report.cells import Section
from pagezero.studies.report.html import anchor
from pagezero.studies.report.markdown import summary_lines, write_markdown
from pagezero.system.machine import machine

FAULTS = "Page faults: the kernel's own clearing"
PREDICT = "What a new clearing policy would gain here"


def sections():
    """Three studies: one with an answer and a remark, one with only remarks, one with two
    answers and no remark."""
    return [
        Section(
            FAULTS,
            ["| a |", "|---|", "| 1.0 |"],
            ["fault remark."],
            ["fault answer 1.0 (fault table)."],
        ),
        Section("Cold vs hot", ["| b |", "|---|", "| 2.0 |"], ["cold remark 2.0."]),
        Section(PREDICT, ["| c |", "|---|", "| 3.0 |"], [], ["predict 3.0.", "predict 4.0."]),
    ]


def write(tmp_path, found):
    run = ReportRun(str(tmp_path), 1, found)
    write_markdown(run, machine(), "tiny", 1.0, 0.0)
    return (tmp_path / "report.md").read_text()


def summary_of(md):
    return md.split("## Summary\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()


def test_answers_open_the_summary_then_the_rest(tmp_path):
    lines = summary_of(write(tmp_path, sections()))
    assert lines == [
        "### Answers",
        "",
        f"- fault answer 1.0 (fault table, in [{FAULTS}](#page-faults-the-kernels-own-clearing)).",
        f"- predict 3.0 ([{PREDICT}](#{anchor(PREDICT)})).",
        f"- predict 4.0 ([{PREDICT}](#{anchor(PREDICT)})).",
        "",
        "### Also found",
        "",
        "- fault remark.",
        "- cold remark 2.0.",
    ]


def test_without_answers_the_summary_is_the_rest_alone():
    found = [Section("A", summary=["one."]), Section("B", summary=["two."])]
    assert summary_lines(found) == ["", "- one.", "- two."]
    assert summary_lines([Section("A", answers=["only."])]) == [
        "",
        "### Answers",
        "",
        "- only ([A](#a)).",
    ]


def test_each_answer_links_to_its_section_in_report_md_and_html(tmp_path):
    md = write(tmp_path, sections())
    headings = {anchor(h[3:]) for h in md.splitlines() if h.startswith("## ")}
    links = re.findall(r"\]\(#([\w-]+)\)", "\n".join(summary_of(md)))
    assert len(links) == 3 and set(links) <= headings
    html = (tmp_path / "report.html").read_text()
    ids = set(re.findall(r'<h\d id="([^"]+)"', html))
    hrefs = re.findall(r'<a href="#([^"]+)">', html)
    assert hrefs == links and set(hrefs) <= ids
    page = Page(html)
    assert page.headings[:4] == [page.headings[0], "Summary", "Answers", "Also found"]
    answers = html.split(">Answers</h3>", 1)[1].split("</ul>", 1)[0]
    assert answers.count("<li>") == 3 and "fault answer 1.0 (fault table, in <a href=" in answers


def test_anchor_is_a_markdown_viewers():
    assert (
        anchor("Page faults: the kernel's own clearing") == "page-faults-the-kernels-own-clearing"
    )
    assert anchor("Kernels by extent (2MB THP pages)") == "kernels-by-extent-2mb-thp-pages"
    assert anchor("Cold vs hot") == "cold-vs-hot"


def test_the_headroom_per_page_size_is_an_answer(monkeypatch):
    # The fault study's answers: the fault rate per page size against the fastest clear of
    # the same extents, each figure a cell of the headroom table.
    from pagezero.studies.report import faults

    def headroom(size, page, workload, loops, reserve, clear_kernels):
        fault_rate = {"4KB": 2.5e9, "2MB": 9.5e9}[page]
        best = SimpleNamespace(bytes_per_sec=24.9e9, function="x86-64-avx512-nt")
        return SimpleNamespace(fault_rate=fault_rate, best=best, ratio=24.9e9 / fault_rate)

    monkeypatch.setattr(faults.fault, "headroom", headroom)
    section = Section(FAULTS)
    sizes = {"4KB": 1 << 24, "2MB": 1 << 24, "1GB": 1 << 30}
    faults._headroom(section, sizes, {"fault_loops": 1}, ["generic"], False, {"1GB"}, {})
    assert section.summary == []
    assert section.answers == [
        "Demand faults on 4KB pages run at 2.5 GB/s; user space clears the same extents at "
        "24.9 GB/s (x86-64-avx512-nt): 9.96x headroom for the kernel's fault path "
        "(headroom table).",
        "Demand faults on 2MB pages run at 9.5 GB/s; user space clears the same extents at "
        "24.9 GB/s (x86-64-avx512-nt): 2.62x headroom for the kernel's fault path "
        "(headroom table).",
    ]
    cells = {c.strip() for line in section.body if line.startswith("|") for c in line.split("|")}
    assert {"2.5", "9.5", "24.9", "9.96x", "2.62x"} <= cells
