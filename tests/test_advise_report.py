"""The report's advice section (studies/report/advice.py) from an Advice made by hand: its
answers, one sentence per budget with its figures, each figure a cell of its tables."""

import re

from helpers.advice import BATCH, OWN, advice

from pagezero.studies.report import advice as report_advice
from pagezero.studies.report.cells import Section

FIGURE = re.compile(r"(?<![\w.])\d+\.\d+x?(?![\w.])")  # as test_report's summary check


def tabulated(adv, quick=False):
    section = Section("Advice")
    report_advice._tabulate(section, adv, quick)
    return section


QUESTION = (
    "clearing a 64MB region (larger than the cache, as the kernel clears fresh pages) in "
    "batches between resched points"
)


def test_the_answers_are_one_sentence_per_budget_with_its_figures():
    section = tabulated(advice())
    assert section.answers == [
        "24.6 GB/s within a 1 ms budget: 16MB batches of movnti (worst 0.68 ms), tied with 4 "
        "others (the fastest: 1MB avx, 25.8 GB/s); clear_pages()'s stosb: 4MB, 11.0 GB/s "
        "(advice table).",
        "25.8 GB/s within a 0.1 ms budget: 1MB batches of avx (worst 0.04 ms), the fastest "
        "that fits; clear_pages()'s stosb: 64KB, 10.0 GB/s (advice table).",
        "0.01 ms, over a 0.005 ms budget: the closest batch, 64KB of avx, in 9 visits of 10 "
        "(advice table).",
    ]
    # The question and the tie rule, said once under the answers rather than in each.
    (rule,) = section.rules
    assert rule.startswith(f"The advice table: {QUESTION}; worst batch: in 9 visits of 10. Ties: ")
    assert rule.endswith("then the kernel rule among the kernels tied at that batch.")
    assert not any("Ties" in a or "chosen by" in a for a in section.answers)
    # The answers are the section's: nothing of them repeated in the rest of its summary.
    assert not any("budget" in line for line in section.summary)
    assert section.text == [
        "budget    batch  kernel  GB/s     worst ms  clear_pages()  GB/s",
        "1 ms       16MB  movnti  24.6         0.68            4MB  11.0",
        "0.1 ms      1MB  avx     25.8         0.04           64KB  10.0",
        "0.005 ms   64KB  avx     11.0  0.01 (over)              -     -",
    ]


def test_every_figure_of_the_answers_is_a_cell_of_the_tables():
    section = tabulated(advice())
    cells = {c.strip() for line in section.body if line.startswith("|") for c in line.split("|")}
    figures = {f for a in section.answers for f in FIGURE.findall(a)}
    assert figures and figures <= cells, figures - cells


def test_the_tables_hold_every_budget_for_both_kernels():
    body = tabulated(advice()).body
    at = body.index("With clear_pages()'s own kernel (stosb) alone, by the same rules:")
    chosen = [line for line in body[:at] if line.startswith("| ") and "budget" not in line]
    own = [line for line in body[at:] if line.startswith("| ") and "budget" not in line]
    assert chosen == [
        "| 1 | 16MB | movnti | 24.6 | 0.68 | yes | 1MB avx, 4MB movnti, 4MB avx, 16MB avx | 25.8 |",
        "| 0.1 | 1MB | avx | 25.8 | 0.04 | yes | - | - |",
        "| 0.005 | 64KB | avx | 11.0 | 0.01 | no | - | - |",
    ]
    assert own == [
        "| 1 | 4MB | stosb | 11.0 | 0.38 | yes | 1MB stosb |",
        "| 0.1 | 64KB | stosb | 10.0 | 0.01 | yes | - |",
        "| 0.005 | 64KB | stosb | 10.0 | 0.01 | no | - |",
    ]
    # The account below the tables is the advice's own text, method included.
    assert body[body.index("```") + 1 : -1] == advice().describe(explain=True)


def test_clear_pages_own_kernel_chosen_is_not_named_twice():
    own_first = (dict(OWN[0], budget_ms=1.0),)
    section = tabulated(advice(batch=own_first, batch_fits=(True,)))
    [answer] = section.answers
    assert "4MB batches of stosb" in answer and "clear_pages()'s stosb" not in answer
    assert BATCH[0]["kernel"] != "stosb"  # the main case does name it (above)
