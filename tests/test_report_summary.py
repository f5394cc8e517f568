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

FAULTS = "Page faults"
PREDICT = "Clearing policies"


def sections():
    """Three studies: one with an answer and a remark, one with only remarks, one with two
    answers and no remark."""
    return [
        Section(
            FAULTS,
            ["| a |", "|---|", "| 1.0 |"],
            ["fault remark."],
            ["1.0 GB/s: fault answer (fault table)."],
            rules=["The fault rule, once."],
            text=["page  GB/s", "4KB    1.0"],
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
        "- 1.0 GB/s: fault answer ([fault table](#page-faults)).",
        f"- predict 3.0 ([{PREDICT}](#clearing-policies)).",
        f"- predict 4.0 ([{PREDICT}](#clearing-policies)).",
        "",
        "The fault rule, once.",
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
    assert answers.count("<li>") == 3
    assert '1.0 GB/s: fault answer (<a href="#page-faults">fault table</a>).' in answers


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
        "9.96x headroom: demand faults on 4KB pages run at 2.5 GB/s, user space clears the "
        "same extents at 24.9 GB/s (x86-64-avx512-nt) (faults table).",
        "2.62x headroom: demand faults on 2MB pages run at 9.5 GB/s, user space clears the "
        "same extents at 24.9 GB/s (x86-64-avx512-nt) (faults table).",
    ]
    assert section.text == [
        "page  fault GB/s  clearing  inside GB/s  best GB/s  best store",
        "4KB          2.5         -            -       24.9  x86-64-avx512-nt",
        "2MB          9.5         -            -       24.9  x86-64-avx512-nt",
    ]
    cells = {c.strip() for line in section.body if line.startswith("|") for c in line.split("|")}
    assert {"2.5", "9.5", "24.9", "9.96x", "2.62x"} <= cells


# summary.txt: the answers to paste ------------------------------------------------------

LONG = (
    "26.3 GB/s (+276%) with non-temporal x86-64-avx-nt and 8.6 GB/s (+23%) with "
    "clear_pages()'s x86-64-stosb: 2MB demand faults under the 7.0 policy, from 7.0 GB/s "
    "today, 94% of it clearing (projection table)."
)
# Where a plain textwrap would split a kernel's name at its hyphen, and a figure from its unit.
AT_A_HYPHEN = "aaaa 2MB faults at 26.3 GB/s with non-temporal stores of x86-64-avx-nt (a table)."
AT_A_UNIT = "aaaaaaa 2MB demand faults under the 7.0 policy would fault at 26.3 GB/s here."


def test_summary_txt_is_the_machine_the_answers_their_tables_and_the_command(tmp_path):
    answers = [LONG, AT_A_HYPHEN, AT_A_UNIT]
    found = sections() + [Section("Advice", answers=answers, rules=["Ties: " + "x " * 60])]
    run = ReportRun(str(tmp_path), 1, found, command="pagezero report --quick --runs 3")
    info = machine()
    write_markdown(run, info, "quick", 1.0, 0.0)
    lines = (tmp_path / "summary.txt").read_text().splitlines()
    assert max(map(len, lines)) <= 72
    assert lines[0].startswith(f"{info['cpu_model']}, {info['kernel_release']}, preempt=")
    assert " sysfs, " in lines[0] + lines[1] and " measured" in lines[0] + lines[1]
    text = "\n".join(lines)
    # Each study with answers: its title, its answers wrapped, its table, its rules.
    assert f"\n{FAULTS}\n- 1.0 GB/s: fault answer (fault table).\n\npage  GB/s\n4KB    1.0" in text
    assert "\nThe fault rule, once.\n" in text and "Cold vs hot" not in text
    # Wrapped at 72, never inside a kernel's name or between a figure and its unit.
    wrapped = text.split("\nAdvice\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(wrapped) == 7 and " ".join(x.strip() for x in wrapped) == "- " + " - ".join(answers)
    assert not any(x.endswith("-") or x.lstrip().startswith("GB/s") for x in wrapped)
    assert lines[-2:] == ["Measured with:", "  pagezero report --quick --runs 3"]
    assert "summary.txt" in (tmp_path / "report.md").read_text()  # among the files


def test_summary_txt_of_an_interrupted_report_says_so_and_keeps_what_was_measured(tmp_path):
    found = [Section(FAULTS, answers=["1.0 GB/s: a (faults table)."]), Section("B", failed="X")]
    run = ReportRun(str(tmp_path), 1, found, interrupted="SIGTERM")
    write_markdown(run, machine(), "tiny", 1.0, 0.0)
    text = (tmp_path / "summary.txt").read_text()
    assert "- 1.0 GB/s: a (faults table)." in text
    assert "B: failed: X." in text and "Interrupted by SIGTERM" in text
    assert text.endswith("Measured with:\n  pagezero report\n")


def test_a_table_too_wide_for_a_mail_is_left_to_report_md(tmp_path):
    wide = Section(FAULTS, answers=["1.0 GB/s: a (faults table)."], text=["x" * 73])
    write_markdown(ReportRun(str(tmp_path), 1, [wide]), machine(), "tiny", 1.0, 0.0)
    text = (tmp_path / "summary.txt").read_text()
    assert "x" * 73 not in text and "(its table: in report.md)" in text
