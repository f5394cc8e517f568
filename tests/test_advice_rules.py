"""The advice as words and JSON (pagezero/studies/advise/text.py), from an
Advice made by hand, and advise's tie rules (ties.py, choices.py) on cells whose answer is
worked out here.

The expected text is written out in full, figures worked out by hand from the cells
(medians, GB/s, which rule chose among ties), so a changed word, number format or branch
shows as a difference, not only a missing keyword.
"""

import math
import os
import platform

import pytest
from conftest import run_python
from helpers.advice import BATCH, BEST, CELLS, GB, KB, MB, OWN, TABLE, advice, cell, row

from pagezero.studies.advise import text
from pagezero.studies.advise.choices import batch_for_budget, best_kernels
from pagezero.studies.advise.text import uses_vector_registers, vector_context_line
from pagezero.studies.advise.ties import (
    choose_kernel,
    fits_budget,
    knee,
    run_spreads,
    sweep_noise,
    tied,
    tolerance_pct,
)
from pagezero.system.kernels import Kernel, kernels

EXPECTED = [
    "Per latency budget, the batch for clear_pages() between resched points (GB/s = 10^9 "
    "bytes/s; worst batch: the slowest batch of a visit, in 9 visits of 10):",
    "  1 ms -> 16MB batches of movnti, 24.6 GB/s, worst batch 0.68 ms: tied with 4 others "
    "within the noise (the fastest: 1MB avx, 25.8 GB/s), chosen by the largest batch "
    "(fewest resched points), then the first tied kernel in the kernel table",
    "      with clear_pages()'s own stosb: 4MB batches, 11.0 GB/s, worst batch 0.38 ms; tied "
    "with 1 other batch, chosen by the largest",
    "  0.1 ms -> 1MB batches of avx, 25.8 GB/s, worst batch 0.04 ms: the fastest that fits",
    "      with clear_pages()'s own stosb: 64KB batches, 10.0 GB/s, worst batch 0.01 ms",
    "  0.005 ms -> nothing measured fits; closest: 64KB batches of avx, 11.0 GB/s, worst "
    "batch 0.01 ms",
    "      with clear_pages()'s own stosb: nothing measured fits; closest: 64KB batches, "
    "10.0 GB/s, worst batch 0.01 ms",
    "",
    "Kernel by extent (the fastest; among kernels tied within the noise, clear_pages()'s if "
    "tied, else the first in the kernel table):",
    "  64KB to 1MB      avx                  18.4 GB/s",
    "  4MB to 16MB      movnti               24.6 GB/s  (tied: avx)",
    "",
    "Knee: none for stosb (clear_pages() here): its largest step is only 1.05x; the LLC is "
    "16MB (sysfs).",
    "",
    "From a sweep of 3 kernels x 4 extents (64KB to 16MB), clearing a 64MB region on 2MB "
    "pages in batches of each extent, 3 runs (fresh processes) of 4 passes each in 2 "
    "shuffled rounds, 12.3 s (medians over runs); --explain says how they were judged and "
    "chosen.",
]

METHOD = [
    "",
    "Ties: candidates within the noise between runs are tied (the larger of twice the "
    "sweep's noise, 2.0%, twice the standard error of the pair's gap over runs, and 5%); "
    "among tied kernels, clear_pages()'s (stosb) if tied, "
    "else the first in the kernel table; among tied batches for a budget, the largest "
    "(fewest resched points), then the kernel rule among the kernels tied at that batch.",
    "",
    "Budgets: a batch fits when its worst batch of 9 visits in 10 does (p90: per visit of a "
    "cell, the slowest batch position, each position's time the median over the visit's "
    "passes; its 90th percentile over every visit of every run, with 5% added, must fit "
    "the budget, so one visit another task interrupted does not decide).",
    "",
    "Every budget's candidates (typical: the median over runs of the worst batch; max: the "
    "slowest batch of all runs):",
    "  1 ms: 16MB movnti, worst batch p90 0.68 ms (typical 0.34 ms, max 1.36 ms)",
    "      tied: 1MB avx; 4MB movnti, avx; 16MB avx",
    "  0.1 ms: 1MB avx, worst batch p90 0.04 ms (typical 0.02 ms, max 0.08 ms)",
    "  0.005 ms: 64KB avx, worst batch p90 0.01 ms (typical 0.01 ms, max 0.02 ms)",
]


def test_the_hand_made_rows_are_what_the_rules_choose():
    # The text below reads its rules back from these cells: they must be the rows that
    # choices makes of them, or the test would check words against an impossible advice.
    for want, fits in zip(BATCH, (True, True, False)):
        assert batch_for_budget(CELLS, want["budget_ms"], TABLE, "stosb") == (want, fits)
    assert best_kernels(CELLS, advice().extents, TABLE, "stosb") == list(BEST)
    assert [r for r, _ in advice().clear_pages_batches()] == OWN


def test_the_answers_come_first_and_the_sweep_last():
    assert advice().describe() == EXPECTED


def test_explain_adds_the_method_after_the_answers():
    lines = advice().describe(explain=True)
    assert lines[: len(EXPECTED) - 1] == EXPECTED[:-1]
    assert lines[len(EXPECTED) - 1] == EXPECTED[-1].replace(
        "; --explain says how they were judged and chosen", ""
    )
    assert lines[len(EXPECTED) :] == METHOD


def line_of(adv, start, explain=False):
    """The one line of adv's text that starts with `start`."""
    [line] = [x for x in adv.describe(explain) if x.startswith(start)]
    return line


def test_the_fastest_among_ties_is_called_the_fastest_and_the_rule_still_named():
    # 1 ms with 1MB avx at 26.5 and 16MB movnti at 24: 26.5 leads 16MB avx (25.6) by
    # 3.4%, 4MB movnti by 7.2%: tied only with 4MB and 16MB avx. At 16MB, the largest,
    # movnti trails avx by 6.25%: avx alone, chosen by the batch rule only.
    cells = CELLS | {("avx", 1 * MB): cell(26.5, 0.04), ("movnti", 16 * MB): cell(24, 0.68)}
    want = dict(row(1.0, 16 * MB, "avx"), tied=[
        {"batch_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 26.5 * GB},
        {"batch_bytes": 4 * MB, "kernel": "avx", "bytes_per_sec": 25.5 * GB}])  # fmt: skip
    assert batch_for_budget(cells, 1.0, TABLE, "stosb") == (want, True)
    line = line_of(advice(cells=cells, batch=(want,), batch_fits=(True,)), "  1 ms -> ")
    assert line == (
        "  1 ms -> 16MB batches of avx, 25.6 GB/s, worst batch 0.66 ms: tied with 2 others "
        "within the noise (the fastest: 1MB avx, 26.5 GB/s), chosen by the largest batch "
        "(fewest resched points)"
    )
    # Where the chosen is the fastest: said so, and the rule named all the same.
    top = dict(want, bytes_per_sec=27 * GB)
    line = line_of(advice(cells=cells, batch=(top,), batch_fits=(True,)), "  1 ms -> ")
    assert line == (
        "  1 ms -> 16MB batches of avx, 27.0 GB/s, worst batch 0.66 ms: the fastest, tied "
        "with 2 others within the noise; chosen by the largest batch (fewest resched points)"
    )


def test_clear_pages_own_kernel_chosen_names_its_rule_and_no_second_line():
    # At 4MB with a 0.2 ms budget: stosb at 25.5 ties avx (the fastest fitting, 25.5)
    # and movnti (24.6); clear_pages()'s kernel is taken, and its own line would repeat it.
    cells = CELLS | {("stosb", 4 * MB): cell(25.5, 0.16)}
    got, fits = batch_for_budget(cells, 0.2, TABLE, "stosb")
    assert (got["batch_bytes"], got["kernel"], fits) == (4 * MB, "stosb", True)
    adv = advice(cells=cells, batch=(got,), batch_fits=(True,))
    lines = adv.describe()
    assert lines[1].endswith(
        "chosen by the largest batch (fewest resched points), then clear_pages()'s own kernel"
    )
    assert not lines[2].startswith("      with clear_pages()'s own")


def test_a_range_judged_as_one_says_so_in_its_heading_its_row_and_its_rule():
    pooled = BEST[:1] + (dict(BEST[1], pooled=True),)
    lines = advice(best_kernel=pooled).describe()
    # The 1 ms batch (16MB) lies in the range: its kernel is the range's.
    at = EXPECTED.index("")
    assert lines[1] == EXPECTED[1].replace(
        "then the first tied kernel in the kernel table",
        "then the kernel of 4MB to 16MB, judged as one range",
    )
    assert lines[:1] + lines[2:at] == EXPECTED[:1] + EXPECTED[2:at]
    heading = at + 1
    assert lines[heading : heading + 3] == [
        "Kernel by extent (the fastest; among kernels tied within the noise, clear_pages()'s "
        "if tied, else the first in the kernel table; from the cache's size on, one question "
        "judged over all its extents: which stores stream fastest to memory):",
        EXPECTED[heading + 1],
        "  4MB to 16MB      movnti               24.6 GB/s  (tied: avx)  (judged as one "
        "range, paired within runs)",
    ]
    assert lines[heading + 3 :] == EXPECTED[heading + 3 :]
    # The range's movnti not fitting a budget at 16MB: the next of the range's tied does.
    avx_16mb = row(
        1.0,
        16 * MB,
        "avx",
        tied=[(1 * MB, "avx"), (4 * MB, "movnti"), (4 * MB, "avx"), (16 * MB, "movnti")],
    )
    pooled_avx = advice(best_kernel=pooled, batch=(avx_16mb,), batch_fits=(True,))
    assert line_of(pooled_avx, "  1 ms -> ").endswith(
        "chosen by the largest batch (fewest resched points), then the first of the kernels "
        "tied over 4MB to 16MB (judged as one range) that fits"
    )


def test_one_run_says_quick_and_that_the_noise_is_unknown():
    quick_cells = {c: dict(v, noise_pct=None) for c, v in CELLS.items()}
    quick = advice(runs=1, rounds=1, cells=quick_cells)
    assert quick.describe()[-1] == EXPECTED[-1].replace(
        "3 runs (fresh processes) of 4 passes each in 2 shuffled rounds",
        "1 run of 4 passes (--quick: the noise between runs is unknown, ties judged by "
        "the passes' spread)",
    )
    assert line_of(quick, "Ties: ", explain=True) == METHOD[1].replace(
        "2.0%", "unknown with one run"
    )


def test_one_round_is_not_named():
    assert advice(rounds=1).describe()[-1] == EXPECTED[-1].replace(" in 2 shuffled rounds", "")


def test_an_interrupted_sweep_says_so_first():
    lines = advice(interrupted="SIGINT").describe()
    assert lines[0] == (
        "Interrupted by SIGINT: from the 12 cells measured before it, partly with fewer runs."
    )
    assert lines[1:] == EXPECTED


# stosb with a step: 10 and 11 GB/s below 4MB (median 10.5), 30 and 34 from there (32).
STEP_CELLS = CELLS | {("stosb", 4 * MB): cell(30, 0.38), ("stosb", 16 * MB): cell(34, 1.4)}


def knee_advice(**changes):
    return advice(**(dict(cells=STEP_CELLS, knee_bytes=4 * MB, knee_step=3.05) | changes))


def test_a_clear_knee_its_ties_and_the_llc():
    assert line_of(knee_advice(knee_tied=(1 * MB,)), "Knee: ") == (
        "Knee: stosb (clear_pages() here) clears 3.0x faster from 4MB on (10.5 GB/s below, "
        "32.0 GB/s from there); the LLC is 16MB (sysfs), so the knee sits at 0.25x the LLC; "
        "tied within noise: 1MB (the smallest is taken)."
    )


def test_a_knee_without_ties_or_llc():
    assert line_of(knee_advice(llc_bytes=0), "Knee: ") == (
        "Knee: stosb (clear_pages() here) clears 3.0x faster from 4MB on (10.5 GB/s below, "
        "32.0 GB/s from there); the LLC size is unknown (sysfs gives none)."
    )


def test_a_step_below_the_clear_one_is_no_knee():
    # KNEE_CLEAR_STEP is 1.3: 1.25 is not a knee, 1.3 is. Without a knee no ratio to
    # the LLC is given: there is nothing to set against it.
    assert line_of(knee_advice(knee_step=1.25), "Knee: ") == (
        "Knee: none for stosb (clear_pages() here): its largest step is only 1.25x, at 4MB; "
        "the LLC is 16MB (sysfs)."
    )
    assert line_of(knee_advice(knee_step=1.3), "Knee: ").startswith(
        "Knee: stosb (clear_pages() here) clears 1.3x"
    )


def test_no_knee_at_all_is_said_and_null_in_the_json():
    # knee_bytes None (no extent to name): the step alone; JSON null, not an extent.
    adv = advice(knee_bytes=None, knee_step=1.0)
    assert line_of(adv, "Knee: ") == (
        "Knee: none for stosb (clear_pages() here): its largest step is only 1.00x; the LLC "
        "is 16MB (sysfs)."
    )
    assert adv.to_json()["knee_bytes"] is None


def test_the_json_shape():
    doc = advice(knee_bytes=4 * MB, knee_step=3.05, knee_tied=(1 * MB,)).to_json()
    assert doc == {
        "knee_bytes": 4 * MB,
        "knee_step": 3.05,
        "knee_split_bytes": 4 * MB,
        "knee_extents": [64 * KB, 1 * MB, 4 * MB, 16 * MB],
        "cache": None,
        "llc_bytes": 16 * MB,
        "best_kernel": [dict(r) for r in BEST],
        "batch": [dict(r) for r in BATCH],
        "clear_pages_batch": OWN,
        "knee_tied": [1 * MB],
        "runs": 3,
        "backing": "2MB",
    }
    assert advice(interrupted="SIGTERM").to_json()["interrupted"] == "SIGTERM"


# What a kernel needs around a vector kernel (pagezero/studies/advise/text.py) ------------


def kernel_row(name, arch="x86-64", features=(), align=8, temporal=False):
    return Kernel("clear", name, name, arch, temporal, False, tuple(features), True, None,
                  align, align)  # fmt: skip


HAND_TABLE = (
    kernel_row("stosb", features=["erms"], align=1, temporal=True),
    kernel_row("movnti", features=["sse2"]),  # an SSE2 instruction on a general register
    kernel_row("avx", features=["avx"], align=32),
    kernel_row("clzero", features=["clzero"], align=64),  # 64-byte aligned, no SIMD set
    kernel_row("sse2-nt", features=["sse2"], align=16),
    kernel_row("neon", arch="arm64", features=["asimd"], align=16),
    kernel_row("stnp", arch="arm64", align=16),
)


def test_vector_registers_are_a_simd_set_and_a_vector_wide_store():
    assert [k.name for k in HAND_TABLE if uses_vector_registers(k)] == ["avx", "sse2-nt", "neon"]


VECTOR_ROWS = {
    "x86_64": {"x86-64-sse2-nt", "x86-64-avx-nt", "x86-64-avx512-nt", "x86-64-avx512"},
    "aarch64": set(),  # stp/stnp store xzr pairs, DC ZVA and MOPS no registers at all
}


@pytest.mark.skipif(
    platform.machine() not in VECTOR_ROWS, reason="no kernel table known for this architecture"
)
def test_the_registrys_vector_rows():
    rows = {k.name for k in kernels("clear") if uses_vector_registers(k)}
    assert rows == VECTOR_ROWS[platform.machine()]


def test_the_vector_line_names_the_advised_vector_kernels_once(monkeypatch):
    monkeypatch.setattr(text, "kernels", lambda kind: HAND_TABLE)
    lines = advice().describe()
    wrapped = [x for x in lines if "kernel_fpu_begin()" in x]
    assert wrapped == [
        "avx stores from vector registers: a kernel patch must wrap each batch in "
        "kernel_fpu_begin()/kernel_fpu_end() (arch/x86/include/asm/fpu/api.h), which turn "
        "preemption off (each batch is then non-preemptible for as long as its worst batch "
        "above) and save the task's user FPU state once per kernel entry (XSAVE, not in "
        "these figures); rep stos, movnti and clzero need none of it."
    ]
    # Under the budgets' answers, before the kernels by extent.
    at = EXPECTED.index("")
    assert lines[at : at + 2] == ["", wrapped[0]]
    assert lines[:at] + lines[at + 2 :] == EXPECTED
    # Nothing advised from vector registers, no line.
    plain = advice(batch=(BATCH[0],), batch_fits=(True,), best_kernel=BEST[1:])
    assert not any("kernel_fpu" in x for x in plain.describe())


def test_arm64_vector_kernels_name_kernel_neon_begin(monkeypatch):
    monkeypatch.setattr(text, "kernels", lambda kind: HAND_TABLE)
    assert vector_context_line(["neon", "stnp"]) == (
        "neon stores from vector registers: a kernel patch must wrap each batch in "
        "kernel_neon_begin()/kernel_neon_end() (arch/arm64/include/asm/neon.h), which save "
        "the task's FP/SIMD registers first (not in these figures); stp, stnp, DC ZVA and "
        "MOPS need none of it."
    )
    assert vector_context_line(["stnp", "unknown"]) is None
    two = vector_context_line(["sse2-nt", "avx", "stosb"])
    assert two.startswith("avx, sse2-nt store from vector registers: ")  # table order


# The tie rules (pagezero/advise_ties.py), figures worked by hand ---------------------


def rate(gbps, spread=0.0, typical=0.1, **more):
    return {"bytes_per_sec": gbps * 1e9, "spread_pct": spread, "typical_worst_ms": typical,
            "p90_worst_ms": typical, "max_worst_ms": 2 * typical, **more}  # fmt: skip


ORDER = ["generic", "stosq", "stosb", "movnti", "avx"]


def test_a_cells_spread_between_runs_after_the_runs_load():
    # Run 1 ran everything at half speed (load factor 0.5: the median of its ratios to
    # the cells' medians); c alone also moved: 80, 30 and 60, i.e. 80, 60 and 60 once
    # run 1 is divided by its factor: stdev 11.547 over mean 66.667, 17.3205%.
    medians = {
        "a": {0: 100, 1: 50, 2: 100},
        "b": {0: 90, 1: 45, 2: 90},
        "c": {0: 80, 1: 30, 2: 60},
        "zero": {0: 0, 1: 0, 2: 0},  # no median to compare a run with: no spread
        "once": {2: 70},
    }
    spreads = run_spreads(medians)
    assert spreads["a"] == pytest.approx(0.0, abs=1e-9)
    assert spreads["c"] == pytest.approx(17.3205, abs=1e-4)
    assert spreads["zero"] is None and spreads["once"] is None


def test_sweep_noise_is_the_median_spread():
    assert sweep_noise([4.0, None, 1.0, 2.0, 3.0]) == 2.5
    assert sweep_noise([3.0, 1.0, 2.0]) == 2.0
    assert sweep_noise([]) is None


def test_the_tolerance_is_twice_the_larger_noise_or_the_floor():
    assert tolerance_pct(rate(1, spread=1), rate(1, spread=2)) == 5.0
    assert tolerance_pct(rate(1, spread=3), rate(1, spread=1)) == 6.0
    # The sweep's noise, when known, stands for the cell's own spread.
    assert tolerance_pct(rate(1, spread=9, noise_pct=4.0), rate(1, noise_pct=4.0)) == 8.0
    assert tolerance_pct(rate(1, spread=4, noise_pct=None), rate(1)) == 8.0
    assert tolerance_pct({"bytes_per_sec": 1}, {"bytes_per_sec": 2}) == 5.0


def test_a_difference_of_exactly_the_tolerance_is_a_tie():
    assert tied(rate(100), rate(95))
    assert not tied(rate(100), rate(94.9))
    assert tied(rate(100, spread=4), rate(92))


def test_a_budget_met_exactly_with_the_floor_added_fits():
    # 2.857142... ms + 5% is 3 ms; whatever the noise, only the floor is added.
    assert fits_budget(rate(1, p90_worst_ms=3.0 / 1.05), 3.0)
    assert fits_budget(rate(1, p90_worst_ms=3.0 / 1.05, spread=30), 3.0)
    assert not fits_budget(rate(1, p90_worst_ms=3.0 / 1.05 + 1e-9), 3.0)


def test_the_kernel_rule_puts_names_outside_the_table_last():
    assert choose_kernel(["zz", "movnti"], ORDER, "stosb") == "movnti"
    assert choose_kernel(["zz"], ORDER, "stosb") == "zz"


def test_the_kernel_rule_orders_names_outside_the_table_by_name():
    # A set's order changes between processes (string hashing is salted): kernels
    # missing from the table were chosen between by it ("aa" or "zz" by the seed).
    code = (
        "from pagezero.studies.advise.ties import choose_kernel; "
        "print(choose_kernel(['zz', 'aa', 'mm'], ['stosb'], 'stosb'))"
    )
    for seed in ("1", "2", "3", "6"):
        out = run_python("-c", code, env=dict(os.environ, PYTHONHASHSEED=seed))
        assert out.stdout.strip() == "aa", (seed, out.stderr)
    assert choose_kernel(["zz", "aa", "stosb"], ORDER, "stosb") == "stosb"


def test_a_budget_row_in_full():
    cells = {
        ("avx", 8 << 20): rate(91, typical=0.1),
        ("movnti", 32 << 20): rate(89, spread=1.5, typical=0.4),
        ("zz", 32 << 20): rate(88, typical=0.4),
        ("avx", 32 << 20): rate(90, typical=0.4),
        ("stosb", 32 << 20): rate(60, typical=0.5),
        ("avx", 128 << 20): rate(92, typical=1.4),
    }
    row, fits = batch_for_budget(cells, 1, ORDER, "stosb")
    assert fits
    assert row == {
        "budget_ms": 1.0,
        "batch_bytes": 32 << 20,
        "kernel": "movnti",
        "bytes_per_sec": 89e9,
        "worst_ms": 0.4,
        "typical_worst_ms": 0.4,
        "p90_worst_ms": 0.4,
        "max_worst_ms": 0.8,
        "checked_against": "p90_worst_ms",
        "fits": True,
        "spread_pct": 1.5,
        # By batch, then table order, names outside the table last.
        "tied": [
            {"batch_bytes": 8 << 20, "kernel": "avx", "bytes_per_sec": 91e9},
            {"batch_bytes": 32 << 20, "kernel": "avx", "bytes_per_sec": 90e9},
            {"batch_bytes": 32 << 20, "kernel": "zz", "bytes_per_sec": 88e9},
        ],
    }


def test_nothing_fits_the_quickest_batch_then_the_fastest_of_them():
    cells = {
        ("generic", 8 << 20): rate(30, typical=0.3),
        ("avx", 8 << 20): rate(40, typical=0.3),
        ("avx", 4 << 20): rate(50, typical=0.35),
    }
    row, fits = batch_for_budget(cells, 0.1, ORDER, "stosb")
    assert not fits
    assert (row["batch_bytes"], row["kernel"], row["fits"], row["tied"]) == (
        8 << 20, "avx", False, []
    )  # fmt: skip


def test_a_kernels_range_rate_is_its_median_over_the_range():
    cells = {("avx", e): rate(r) for e, r in [(1 << 20, 10), (2 << 20, 20), (4 << 20, 60)]}
    cells |= {("aa", 1 << 20): rate(9.6), ("zz", 1 << 20): rate(9.7)}
    [row] = best_kernels(cells, [512 << 10, 1 << 20, 2 << 20, 4 << 20], ORDER, "stosb")
    assert row == {
        "min_bytes": 1 << 20,  # 512KB has no cell: left out
        "max_bytes": 4 << 20,
        "kernel": "avx",
        "bytes_per_sec": 20e9,
        "tied": ["aa", "zz"],  # outside the table: by name
        "pooled": False,
    }


def steps(rates, spreads=None):
    es = [(64 << 10) << i for i in range(len(rates))]  # 64KB, 128KB, ...
    spreads = spreads or [0.0] * len(rates)
    return {e: rate(r, spread=s) for e, r, s in zip(es, rates, spreads)}


def test_a_clean_step_is_its_exact_ratio():
    # Below 64KB and rates of 0 are no part of the fit.
    curve = steps([30, 30, 30, 30, 30, 60, 60, 60]) | {32 << 10: rate(1), 16 << 20: rate(0)}
    assert knee(curve) == (2 << 20, pytest.approx(2.0), [])


def test_the_neighbour_that_moves_lends_its_noise():
    # Moving the split from 2MB (the sixth extent) down to 1MB moves the 1MB cell to the
    # upper side, and costs log 2 in the fit; 60% noise on that cell (a tolerance of
    # log 2.2) ties the two, and the smaller is taken, the step then 60/30 still.
    noisy_1mb = steps([30, 30, 30, 30, 30, 60, 60, 60], [0, 0, 0, 0, 60, 0, 0, 0])
    assert knee(noisy_1mb) == (1 << 20, pytest.approx(2.0), [2 << 20])
    # Noise on the 2MB cell ties the split above it, which moves that cell down.
    noisy_2mb = steps([30, 30, 30, 30, 30, 60, 60, 60], [0, 0, 0, 0, 0, 60, 0, 0])
    assert knee(noisy_2mb) == (2 << 20, pytest.approx(2.0), [4 << 20])
    # 40% (log 1.8 < log 2) ties nothing.
    quiet = steps([30, 30, 30, 30, 30, 60, 60, 60], [0, 0, 0, 0, 40, 40, 0, 0])
    assert knee(quiet) == (2 << 20, pytest.approx(2.0), [])


def test_a_falling_curve_returns_its_best_split_without_ties():
    extent, step, ties = knee(steps([60, 60, 60, 30, 30, 30], [80] * 6))
    assert step <= 1 and ties == []


def test_spreads_do_not_depend_on_the_rates_scale():
    # The same medians in GB/s and in bytes/sec: the same spreads (a rate below 1 is
    # still a rate).
    medians = {"a": {0: 100, 1: 50, 2: 100}, "b": {0: 90, 1: 45, 2: 90}, "c": {0: 80, 1: 30, 2: 60}}
    small = {c: {r: v * 1e-9 for r, v in m.items()} for c, m in medians.items()}
    assert run_spreads(small) == pytest.approx(run_spreads(medians))


def test_a_run_with_most_cells_at_zero_keeps_a_factor_of_one():
    # Run 1 measured a and b at 0: its load factor (the median of its ratios, 0) is
    # taken as 1, so c's 40 stays 40: 80, 40, 80, stdev 23.094 over 66.667, 34.641%.
    medians = {"a": {0: 100, 1: 0, 2: 100}, "b": {0: 90, 1: 0, 2: 90}, "c": {0: 80, 1: 40, 2: 80}}
    assert run_spreads(medians)["c"] == pytest.approx(34.641, abs=1e-3)


def test_two_runs_have_a_spread():
    # c: 80 and 60 (both runs' factors 1): stdev 14.142 over 70, 20.203%.
    medians = {"a": {0: 100, 1: 100}, "b": {0: 90, 1: 90}, "c": {0: 80, 1: 60}}
    assert run_spreads(medians)["c"] == pytest.approx(20.203, abs=1e-3)


def test_a_cell_without_a_spread_has_a_row_spread_of_zero():
    bare = {
        "bytes_per_sec": 1e9,
        "typical_worst_ms": 1.0,
        "p90_worst_ms": 1.0,
        "max_worst_ms": 2.0,
    }
    row, _ = batch_for_budget({("avx", 1 << 20): bare}, 2.0, ORDER, "stosb")
    assert row["spread_pct"] == 0.0


def test_the_floor_added_to_a_batch_is_in_percent():
    # 2.86 ms plus 5% is 3.003 ms: over a 3 ms budget; 2.85 ms plus 5%, 2.9925 ms.
    assert not fits_budget(rate(1, p90_worst_ms=2.86), 3.0)
    assert fits_budget(rate(1, p90_worst_ms=2.85), 3.0)


def test_a_budgets_kernel_is_clear_pages_when_tied_though_later_in_the_table():
    cells = {("generic", 1 << 20): rate(50), ("stosb", 1 << 20): rate(49)}
    row, _ = batch_for_budget(cells, 1.0, ORDER, "stosb")
    assert row["kernel"] == "stosb"


def test_tied_batches_are_listed_in_table_order_not_by_name():
    cells = {("stosq", 1 << 20): rate(50), ("movnti", 1 << 20): rate(49.5),
             ("avx", 1 << 20): rate(49)}  # fmt: skip
    row, _ = batch_for_budget(cells, 1.0, ORDER, "stosb")
    assert row["kernel"] == "stosq"
    assert [t["kernel"] for t in row["tied"]] == ["movnti", "avx"]


def test_a_knee_just_above_the_smallest_extent_and_its_upper_neighbour():
    # 30 at 64KB, 60 from 128KB: the knee is 128KB. 60% noise on the 128KB cell ties
    # the split above it (that cell moved down costs log 2 < log 2.2); the smaller stays.
    assert knee(steps([30, 60, 60, 60])) == (128 << 10, pytest.approx(2.0), [])
    noisy = steps([30, 60, 60, 60], [0, 60, 0, 0])
    assert knee(noisy) == (128 << 10, pytest.approx(2.0), [256 << 10])


def test_a_knee_at_the_third_extent_ties_the_second():
    noisy = steps([30, 30, 60, 60], [0, 60, 0, 0])
    assert knee(noisy) == (128 << 10, pytest.approx(2.0), [256 << 10])


def test_the_knees_noise_is_in_percent():
    # Moving a cell costs log 2 = 0.6931; 2 x 50.2% noise allows log 2.004 = 0.6951,
    # 2 x 49.8% only log 1.996 = 0.6912.
    assert knee(steps([30, 60, 60, 60], [0, 50.2, 0, 0]))[2] == [256 << 10]
    assert knee(steps([30, 60, 60, 60], [0, 49.8, 0, 0]))[2] == []


def test_the_knee_does_not_depend_on_the_rates_scale():
    curve = steps([30, 30, 30, 30, 30, 60, 60, 60], [0, 0, 0, 0, 60, 0, 0, 0])
    # 30 and 60 GB/s as 0.03 and 0.06 bytes/sec: rates below 1 are rates all the same.
    tiny = {e: dict(c, bytes_per_sec=c["bytes_per_sec"] * 1e-12) for e, c in curve.items()}
    assert knee(tiny) == (1 << 20, pytest.approx(2.0), [2 << 20]) == knee(curve)


def test_a_neighbouring_split_that_does_not_rise_never_ties():
    # 30, 30, 60, 30: the knee is before the 60 (levels 30 and the geometric middle of
    # 60 and 30, a step of sqrt 2). Either neighbour fits as well (the same cost) but
    # has no step at all (30 below, 30 above): no tie.
    assert knee(steps([30, 30, 60, 30])) == (256 << 10, pytest.approx(math.sqrt(2)), [])


def test_several_knee_ties_and_several_tied_kernels_are_listed():
    line = line_of(knee_advice(knee_tied=(1 * MB, 16 * MB)), "Knee: ")
    assert line.endswith("; tied within noise: 1MB, 16MB (the smallest is taken).")
    tied = [{"batch_bytes": 1 * MB, "kernel": k, "bytes_per_sec": 1} for k in ("avx", "gen")]
    batch = (dict(BATCH[0], tied=tied),)
    cells = CELLS | {("gen", 64 * KB): cell(1)}
    lines = advice(batch=batch, batch_fits=(True,), cells=cells).describe(explain=True)
    assert lines[-1] == "      tied: 1MB avx, gen"


def test_no_cells_means_no_noise_known():
    adv = advice(cells={}, knee_step=1.0)
    assert "the sweep's noise, unknown with one run, twice" in line_of(adv, "Ties: ", True)


def test_no_clear_step_is_no_knee_in_json_either():
    # The text says "none clear" below KNEE_CLEAR_STEP (1.3); the JSON says null, with the
    # step and where it was, so a script is not handed a knee the text denies.
    doc = knee_advice(knee_step=1.25, knee_tied=()).to_json()
    assert doc["knee_bytes"] is None
    assert (doc["knee_step"], doc["knee_split_bytes"]) == (1.25, 4 * MB)
    assert doc["knee_extents"] == [64 * KB, 1 * MB, 4 * MB, 16 * MB]
    assert knee_advice(knee_step=1.3).to_json()["knee_bytes"] == 4 * MB


def test_a_measured_cache_is_said_beside_the_llc_and_no_knee_is_placed_against_sysfs():
    cache = {"cache_bytes": 4 * MB, "source": "measured", "llc_bytes": 16 * MB}
    line = line_of(knee_advice(cache=cache), "Knee: ")
    assert line.endswith(
        "from there); the LLC is 16MB (sysfs); the cache this run has is 4MB (measured)."
    )
    assert advice(cache=cache).to_json()["cache"] == cache


def test_the_streaming_range_starts_at_the_cache_else_a_clear_knee_else_nowhere():
    from pagezero.studies.advise.study import _streaming_from

    # Intel Xeon VM: no knee (1.00x), the measured cache 64MB: from 64MB on.
    assert _streaming_from(64 * MB, 1 * MB, 1.0) == 64 * MB
    # No cache known: a clear knee starts it; a step under 1.3x is no knee, and no range.
    assert _streaming_from(None, 32 * MB, 2.0) == 32 * MB
    assert _streaming_from(None, 32 * MB, 1.25) is None


def test_the_kernel_rule_puts_the_portable_rows_after_the_architectures():
    # glibc's memset() and the C loop come first in the table, but a kernel cannot call
    # them: among tied kernels they are chosen only when nothing else ties.
    from pagezero.studies.advise.study import kernel_order

    rows = [
        kernel_row("default", arch="any", temporal=True),
        kernel_row("generic", arch="any", temporal=True),
        kernel_row("x86-64-movnti"),
        kernel_row("x86-64-avx-nt"),
    ]
    order = kernel_order(rows)
    assert order == ["x86-64-movnti", "x86-64-avx-nt", "default", "generic"]
    assert choose_kernel(["default", "x86-64-avx-nt"], order, "x86-64-stosb") == "x86-64-avx-nt"
    assert choose_kernel(["generic", "default"], order, "x86-64-stosb") == "default"
