"""The advice as words and JSON (pagezero/advice_text.py), from an Advice made by hand,
and advise's tie rules (pagezero/advise_ties.py) on cells whose answer is worked out here.

The expected text is written out in full, figures worked out by hand from the cells
(medians, GB/s, the knee's share of the LLC), so a changed word, number format or
branch shows as a difference, not only a missing keyword.
"""

import math
import os

import pytest
from conftest import run_python

from pagezero.studies.advise.choices import batch_for_budget, best_kernels
from pagezero.studies.advise.text import Advice
from pagezero.studies.advise.ties import (
    choose_kernel,
    fits_budget,
    knee,
    run_spreads,
    sweep_noise,
    tied,
    tolerance_pct,
)

KB, MB = 1 << 10, 1 << 20


def cell(gbps, noise=2.0, typical=0.1, worst=0.2):
    return {
        "bytes_per_sec": gbps * 1e9,
        "spread_pct": 1.5,
        "noise_pct": noise,
        "typical_worst_ms": typical,
        "p90_worst_ms": typical,
        "max_worst_ms": worst,
    }


CELLS = {
    ("stosb", 64 * KB): cell(10),
    ("stosb", 1 * MB): cell(12),
    ("stosb", 4 * MB): cell(30),
    ("stosb", 16 * MB): cell(34),
    ("avx", 64 * KB): cell(11),
    ("avx", 1 * MB): cell(12.5),
    ("avx", 4 * MB): cell(29),
    ("avx", 16 * MB): cell(33),
}

BEST = (
    {"min_bytes": 64 * KB, "max_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 11.75e9,
     "tied": ["stosb"]},
    {"min_bytes": 4 * MB, "max_bytes": 4 * MB, "kernel": "stosb", "bytes_per_sec": 30e9,
     "tied": []},
    {"min_bytes": 16 * MB, "max_bytes": 16 * MB, "kernel": "stosb", "bytes_per_sec": 34e9},
)  # fmt: skip

BATCH = (
    {"budget_ms": 1.0, "batch_bytes": 4 * MB, "kernel": "stosb", "bytes_per_sec": 30e9,
     "typical_worst_ms": 0.125, "p90_worst_ms": 0.25, "max_worst_ms": 0.5,
     "tied": [{"batch_bytes": 4 * MB, "kernel": "avx", "bytes_per_sec": 29e9},
              {"batch_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 12.5e9},
              {"batch_bytes": 1 * MB, "kernel": "stosb", "bytes_per_sec": 12e9}]},
    {"budget_ms": 0.05, "batch_bytes": 64 * KB, "kernel": "avx", "bytes_per_sec": 11e9,
     "typical_worst_ms": 0.0625, "p90_worst_ms": 0.875, "max_worst_ms": 1.25, "tied": []},
)  # fmt: skip


def advice(**changes):
    fields = dict(
        knee_bytes=4 * MB,
        llc_bytes=16 * MB,
        best_kernel=BEST,
        batch=BATCH,
        knee_kernel="stosb",
        knee_step=2.75,
        batch_fits=(True, False),
        extents=(64 * KB, 1 * MB, 4 * MB, 16 * MB),
        region_bytes=64 * MB,
        runs=3,
        passes=4,
        seconds=12.34,
        cells=CELLS,
        knee_tied=(1 * MB,),
        backing="2MB",
        rounds=2,
    )
    return Advice(**(fields | changes))


EXPECTED = [
    "From a sweep of 2 kernels x 4 extents (64KB to 16MB), clearing a 64MB region on 2MB "
    "pages in batches of each extent, 3 runs (fresh processes) of 4 passes each in 2 "
    "shuffled rounds, 12.3 s (GB/s = 10^9 bytes/s; medians over runs):",
    "Candidates within the noise between runs are tied (the larger of twice the sweep's "
    "noise, 2.0%, and 5%); among tied kernels, clear_pages()'s (stosb) if tied, else the "
    "first in the kernel table.",
    "",
    "Fastest kernel by extent:",
    "  64KB to 1MB      avx                  11.8 GB/s  (tied: stosb)",
    "  4MB              stosb                30.0 GB/s",
    "  16MB             stosb                34.0 GB/s",
    "",
    # stosb below 4MB: 10 and 12 GB/s, median 11; from 4MB: 30 and 34, median 32.
    "Knee: stosb (clear_pages() here) clears 2.8x faster from 4MB on (11.0 GB/s below, "
    "32.0 GB/s from there): from that extent the CPU stops allocating cache lines for its "
    "stores; the LLC is 16MB (sysfs), so the knee sits at 0.25x the LLC; tied within "
    "noise: 1MB (the smallest is taken).",
    "",
    "Batch for clear_pages() between resched points, by the worst batch of 9 visits in 10 "
    "(p90: per visit of a cell, the slowest batch position, each position's time the "
    "median over the visit's passes; its 90th percentile over every visit of every run, "
    "with 5% added, must fit the budget, so one visit another task interrupted does not "
    "decide; typical: the median over runs; max: the slowest batch of all runs); among "
    "tied, the largest batch:",
    "  1 ms: 4MB with stosb, 30.0 GB/s, worst batch p90 0.25 ms (typical 0.12 ms, max 0.50 ms)",
    "      tied: 4MB avx; 1MB every kernel",
    "  0.05 ms: nothing measured fits; closest: 64KB with avx, 11.0 GB/s, worst batch p90 "
    "0.88 ms (typical 0.06 ms, max 1.25 ms)",
]


def test_the_words_of_a_full_sweep():
    assert advice().describe() == EXPECTED


def test_a_range_judged_as_one_says_so_in_its_heading_and_its_row():
    pooled = BEST[:2] + (dict(BEST[2], tied=["avx"], pooled=True),)
    lines = advice(best_kernel=pooled).describe()
    at = EXPECTED.index("Fastest kernel by extent:")
    assert lines[:at] == EXPECTED[:at]
    assert lines[at : at + 4] == [
        "Fastest kernel by extent (from the cache's size on, one question judged over all "
        "its extents: which stores stream fastest to memory):",
        EXPECTED[at + 1],
        EXPECTED[at + 2],
        "  16MB             stosb                34.0 GB/s  (tied: avx)  (judged as one range, "
        "paired within runs)",
    ]
    assert lines[at + 4 :] == EXPECTED[at + 4 :]


def test_one_run_says_quick_and_that_the_noise_is_unknown():
    quick_cells = {c: dict(v, noise_pct=None) for c, v in CELLS.items()}
    lines = advice(runs=1, rounds=1, cells=quick_cells).describe()
    assert lines[0] == EXPECTED[0].replace(
        "3 runs (fresh processes) of 4 passes each in 2 shuffled rounds",
        "1 run of 4 passes (--quick: the noise between runs is unknown, ties judged by "
        "the passes' spread)",
    )
    assert lines[1] == EXPECTED[1].replace("2.0%", "unknown with one run")
    assert lines[2:] == EXPECTED[2:]


def test_one_round_is_not_named():
    assert advice(rounds=1).describe()[0] == EXPECTED[0].replace(" in 2 shuffled rounds", "")


def test_an_interrupted_sweep_says_so_second():
    lines = advice(interrupted="SIGINT").describe()
    assert lines[1] == (
        "Interrupted by SIGINT: from the 8 cells measured before it, partly with fewer runs."
    )
    assert lines[:1] + lines[2:] == EXPECTED


def test_a_knee_without_ties_or_llc():
    line = advice(knee_tied=(), llc_bytes=0).describe()[8]
    assert line == (
        "Knee: stosb (clear_pages() here) clears 2.8x faster from 4MB on (11.0 GB/s below, "
        "32.0 GB/s from there): from that extent the CPU stops allocating cache lines for "
        "its stores; the LLC size is unknown (sysfs gives none)."
    )


def test_a_step_below_the_clear_one_is_no_knee():
    # KNEE_CLEAR_STEP is 1.3: 1.25 is not a knee, 1.3 is.
    line = advice(knee_step=1.25).describe()[8]
    assert line == (
        "Knee: none clear for stosb (clear_pages() here): its largest step is only 1.25x, "
        "at 4MB; the LLC is 16MB (sysfs)."  # no knee is placed against the LLC
    )
    assert (
        advice(knee_step=1.3)
        .describe()[8]
        .startswith("Knee: stosb (clear_pages() here) clears 1.3x")
    )


def test_the_json_shape():
    doc = advice().to_json()
    assert doc == {
        "knee_bytes": 4 * MB,
        "knee_step": 2.75,
        "knee_split_bytes": 4 * MB,
        "knee_extents": [64 * KB, 1 * MB, 4 * MB, 16 * MB],
        "cache": None,
        "llc_bytes": 16 * MB,
        "best_kernel": [dict(r) for r in BEST],
        "batch": [dict(r) for r in BATCH],
        "knee_tied": [1 * MB],
        "runs": 3,
        "backing": "2MB",
    }
    assert advice(interrupted="SIGTERM").to_json()["interrupted"] == "SIGTERM"


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
    line = advice(knee_tied=(1 * MB, 16 * MB)).describe()[8]
    assert line.endswith("; tied within noise: 1MB, 16MB (the smallest is taken).")
    tied = [{"batch_bytes": 1 * MB, "kernel": k, "bytes_per_sec": 1} for k in ("avx", "gen")]
    batch = (dict(BATCH[0], tied=tied),)
    cells = CELLS | {("gen", 64 * KB): cell(1)}
    lines = advice(batch=batch, batch_fits=(True,), cells=cells).describe()
    assert lines[-1] == "      tied: 1MB avx, gen"


def test_no_cells_means_no_noise_known():
    lines = advice(cells={}, knee_step=1.0).describe()
    assert "the sweep's noise, unknown with one run, and 5%" in lines[1]


def test_no_clear_step_is_no_knee_in_json_either():
    # The text says "none clear" below KNEE_CLEAR_STEP (1.3); the JSON says null, with the
    # step and where it was, so a script is not handed a knee the text denies.
    doc = advice(knee_step=1.25, knee_tied=()).to_json()
    assert doc["knee_bytes"] is None
    assert (doc["knee_step"], doc["knee_split_bytes"]) == (1.25, 4 * MB)
    assert doc["knee_extents"] == [64 * KB, 1 * MB, 4 * MB, 16 * MB]
    assert advice(knee_step=1.3).to_json()["knee_bytes"] == 4 * MB


def test_a_measured_cache_is_said_beside_the_llc_and_no_knee_is_placed_against_sysfs():
    cache = {"cache_bytes": 4 * MB, "source": "measured", "llc_bytes": 16 * MB}
    line = advice(knee_tied=(), cache=cache).describe()[8]
    assert line.endswith(
        "its stores; the LLC is 16MB (sysfs); the cache this run has is 4MB (measured)."
    )
    assert advice(cache=cache).to_json()["cache"] == cache


def test_the_streaming_range_starts_at_the_cache_else_a_clear_knee_else_nowhere():
    from pagezero.studies.advise.study import _streaming_from

    # Intel Xeon VM: no knee (1.00x), the measured cache 64MB: from 64MB on.
    assert _streaming_from(64 * MB, 1 * MB, 1.0) == 64 * MB
    # No cache known: a clear knee starts it; a step under 1.3x is no knee, and no range.
    assert _streaming_from(None, 32 * MB, 2.0) == 32 * MB
    assert _streaming_from(None, 32 * MB, 1.25) is None
