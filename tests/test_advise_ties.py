"""advise's tie rules on made-up cells: what counts as tied, and what is chosen among ties."""

import statistics

import pytest

from pagezero.studies.advise.choices import batch_for_budget, best_kernels
from pagezero.studies.advise.ties import (
    CHECKED_AGAINST,
    TIE_FLOOR_PCT,
    choose_kernel,
    fits_budget,
    knee,
    run_spreads,
    sweep_noise,
    tied,
    tolerance_pct,
)

KB, MB = 1 << 10, 1 << 20
GBPS = 1e9
ORDER = ["default", "generic", "x86-64-stosq", "x86-64-stosb", "x86-64-movnti", "x86-64-avx-nt"]
CLEAR_PAGES = "x86-64-stosb"


def cell(gbps, spread=0.0, typical=0.1, worst=None, p90=None):
    """A made-up cell; its 90th-percentile worst batch (what a budget is
    checked against) is the typical worst unless given."""
    return {
        "bytes_per_sec": gbps * GBPS,
        "spread_pct": spread,
        "typical_worst_ms": typical,
        "p90_worst_ms": typical if p90 is None else p90,
        "max_worst_ms": typical * 2 if worst is None else worst,
    }


# What counts as tied ---------------------------------------------------------------


def test_the_floor_ties_small_differences_when_runs_agree():
    assert tolerance_pct(cell(100), cell(99)) == TIE_FLOOR_PCT
    assert tied(cell(100), cell(100 - TIE_FLOOR_PCT + 0.1))
    assert not tied(cell(100), cell(100 - TIE_FLOOR_PCT - 0.1))


def test_a_noisy_cell_widens_the_tie_to_twice_its_spread():
    # 10% apart: not tied on the floor, tied when either side spreads 5% between runs.
    assert not tied(cell(100), cell(90))
    assert tied(cell(100, spread=5), cell(90))
    assert tied(cell(100), cell(90, spread=5))
    assert not tied(cell(100, spread=4), cell(90))


def test_the_sweeps_noise_outweighs_a_cells_own_spread():
    # Three runs' spread is rough: a cell that happened to spread 20% tied with a kernel
    # 30% faster. With the sweep's noise (the median spread, 2%) only the floor ties.
    spreads = [1.0, 2.0, 2.0, 3.0, 20.0]
    noise = sweep_noise(spreads + [None])
    assert noise == 2.0
    assert tied(cell(100), cell(70, spread=20))
    assert not tied(dict(cell(100), noise_pct=noise), dict(cell(70, spread=20), noise_pct=noise))
    assert sweep_noise([None]) is None
    # No sweep noise (one run): the cell's own spread decides, as before.
    assert tied(dict(cell(100), noise_pct=None), dict(cell(70, spread=20), noise_pct=None))


def test_a_batch_fits_when_its_p90_worst_with_the_floor_added_does():
    # The 90th percentile holds the noise between visits: only the floor is added,
    # whatever the sweep's noise.
    def at(p90, noise):
        return fits_budget(dict(cell(100, typical=1.0, p90=p90), noise_pct=noise), 3.0)

    assert at(2.85, 1.0) and at(2.85, 20.0)  # 2.85 ms + 5% = 2.9925 ms
    assert not at(2.9, 1.0)  # 2.9 ms + 5% = 3.045 ms
    # A typical worst well inside the budget does not make a batch fit whose
    # p90 does not (a 128MB batch here: 2.8 ms typical, over 3 ms in a quarter of visits).
    cells = {
        ("x86-64-stosb", 64 * MB): cell(40, typical=1.4, p90=1.6),
        ("x86-64-stosb", 128 * MB): cell(40, typical=2.8, p90=3.1),
    }
    row, fits = batch_for_budget(cells, 3.0, ORDER, CLEAR_PAGES)
    assert fits and row["batch_bytes"] == 64 * MB
    assert (row["p90_worst_ms"], row["typical_worst_ms"]) == (1.6, 1.4)


# The kernel rule ---------------------------------------------------------------------


def test_kernel_rule_prefers_clear_pages_among_the_tied():
    assert (
        choose_kernel(["x86-64-avx-nt", CLEAR_PAGES, "generic"], ORDER, CLEAR_PAGES) == CLEAR_PAGES
    )


def test_kernel_rule_else_takes_the_first_in_the_table():
    assert (
        choose_kernel(["x86-64-avx-nt", "x86-64-movnti", "x86-64-stosq"], ORDER, CLEAR_PAGES)
        == "x86-64-stosq"
    )


# best kernels by extent ------------------------------------------------------------


def test_best_kernel_without_ties_is_the_fastest():
    cells = {
        ("generic", 4 * KB): cell(10),
        (CLEAR_PAGES, 4 * KB): cell(20),
        ("x86-64-avx-nt", 4 * KB): cell(30),
    }
    [row] = best_kernels(cells, [4 * KB], ORDER, CLEAR_PAGES)
    assert (row["kernel"], row["tied"]) == ("x86-64-avx-nt", [])
    assert row["bytes_per_sec"] == 30 * GBPS


def test_best_kernel_takes_clear_pages_when_tied_and_names_the_others():
    cells = {
        ("generic", 4 * KB): cell(29.5),
        (CLEAR_PAGES, 4 * KB): cell(29.2),
        ("x86-64-avx-nt", 4 * KB): cell(30),
        ("x86-64-stosq", 4 * KB): cell(20),
    }
    [row] = best_kernels(cells, [4 * KB], ORDER, CLEAR_PAGES)
    assert row["kernel"] == CLEAR_PAGES
    # In table order, the chosen one left out; stosq, 33% slower, is not tied.
    assert row["tied"] == ["generic", "x86-64-avx-nt"]


def test_best_kernel_without_clear_pages_among_tied_takes_the_first_in_the_table():
    cells = {
        ("x86-64-avx-nt", 128 * MB): cell(90),
        ("x86-64-movnti", 128 * MB): cell(88),
        (CLEAR_PAGES, 128 * MB): cell(70),
    }
    [row] = best_kernels(cells, [128 * MB], ORDER, CLEAR_PAGES)
    assert (row["kernel"], row["tied"]) == ("x86-64-movnti", ["x86-64-avx-nt"])
    assert row["bytes_per_sec"] == 88 * GBPS


def test_best_kernel_ranges_join_extents_with_the_same_choice():
    es = [4 * KB, 1 * MB, 64 * MB, 128 * MB]
    cells = {}
    for e, (nt, movnti, stosb) in zip(es, [(10, 11, 20), (50, 49, 50), (90, 89, 70), (91, 80, 72)]):
        cells.update(
            {
                ("x86-64-avx-nt", e): cell(nt),
                ("x86-64-movnti", e): cell(movnti),
                (CLEAR_PAGES, e): cell(stosb),
            }
        )
    rows = best_kernels(cells, es, ORDER, CLEAR_PAGES)
    assert [(r["min_bytes"], r["max_bytes"], r["kernel"], r["tied"]) for r in rows] == [
        (4 * KB, 1 * MB, CLEAR_PAGES, ["x86-64-movnti", "x86-64-avx-nt"]),
        (64 * MB, 64 * MB, "x86-64-movnti", ["x86-64-avx-nt"]),
        (128 * MB, 128 * MB, "x86-64-avx-nt", []),
    ]


# The budget rule -------------------------------------------------------------------


def test_budget_without_ties_takes_the_fastest_that_fits():
    cells = {
        ("generic", 8 * MB): cell(30, typical=0.3),
        ("generic", 32 * MB): cell(60, typical=0.6),
        ("x86-64-avx-nt", 128 * MB): cell(90, typical=1.5),
    }
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert fits and (row["batch_bytes"], row["kernel"], row["tied"]) == (32 * MB, "generic", [])
    row, fits = batch_for_budget(cells, 3, ORDER, CLEAR_PAGES)
    assert fits and row["batch_bytes"] == 128 * MB


def test_budget_among_ties_takes_the_largest_batch_then_the_kernel_rule():
    cells = {
        ("x86-64-avx-nt", 8 * MB): cell(91, typical=0.1),  # the fastest
        ("x86-64-movnti", 32 * MB): cell(89, typical=0.4),
        ("x86-64-avx-nt", 32 * MB): cell(90, typical=0.4),
        (CLEAR_PAGES, 32 * MB): cell(60, typical=0.5),  # not tied
        ("x86-64-avx-nt", 128 * MB): cell(92, typical=1.4),
    }  # does not fit
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert fits
    # 32MB is the largest tied batch; of its tied kernels movnti comes first in the table.
    assert (row["batch_bytes"], row["kernel"]) == (32 * MB, "x86-64-movnti")
    assert [(t["batch_bytes"], t["kernel"]) for t in row["tied"]] == [
        (8 * MB, "x86-64-avx-nt"),
        (32 * MB, "x86-64-avx-nt"),
    ]


def test_budget_takes_clear_pages_when_tied_at_the_largest_batch():
    cells = {
        ("x86-64-avx-nt", 16 * MB): cell(80, typical=0.2),
        ("x86-64-movnti", 16 * MB): cell(79, typical=0.2),
        (CLEAR_PAGES, 16 * MB): cell(78, typical=0.2),
    }
    row, _ = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert row["kernel"] == CLEAR_PAGES
    assert {t["kernel"] for t in row["tied"]} == {"x86-64-avx-nt", "x86-64-movnti"}


def test_budget_nothing_fits_gives_the_smallest_p90_worst_and_no_ties():
    cells = {
        ("generic", 8 * MB): cell(30, typical=0.3),
        ("generic", 32 * MB): cell(60, typical=0.6),
    }
    row, fits = batch_for_budget(cells, 0.1, ORDER, CLEAR_PAGES)
    assert not fits and row["fits"] is False
    assert (row["batch_bytes"], row["tied"]) == (8 * MB, [])


def test_budget_is_checked_against_the_p90_worst_not_the_maximum():
    # The slowest batch ever seen (max 5 ms, a pass another task interrupted)
    # does not decide; the worst of 9 visits in 10 (0.8 ms) does, and the row says so.
    cells = {("generic", 32 * MB): cell(60, typical=0.6, worst=5.0, p90=0.8)}
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert fits and row["checked_against"] == CHECKED_AGAINST == "p90_worst_ms"
    assert row["p90_worst_ms"] == 0.8
    assert row["typical_worst_ms"] == row["worst_ms"] == 0.6
    assert row["max_worst_ms"] == 5.0


# The knee ----------------------------------------------------------------------------


def _curve(rates, spread=0.0):
    es = [64 * KB, 1 * MB, 4 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 128 * MB]
    return {e: cell(r, spread) for e, r in zip(es, rates)}


def test_a_clear_knee_has_no_ties():
    extent, step, tied_extents = knee(_curve([30, 31, 30, 29, 30, 60, 62, 61]))
    assert (extent, tied_extents) == (32 * MB, [])
    assert step == pytest.approx(61 / 30, rel=0.05)


def test_a_point_halfway_up_ties_two_knees_and_the_smaller_is_taken():
    # 16MB sits between the levels (geometric middle): splitting before or
    # after it fits equally well.
    extent, _, tied_extents = knee(_curve([30, 31, 30, 29, 42.4, 60, 62, 61]))
    assert extent == 16 * MB and tied_extents == [32 * MB]


def test_a_falling_curve_has_no_knee_to_tie():
    extent, step, tied_extents = knee(_curve([60, 55, 50, 45, 40, 35, 30, 30]))
    assert step <= 1 and tied_extents == []


# The noise between runs ----------------------------------------------------------------


def test_a_run_the_whole_machine_slowed_does_not_count_as_noise():
    # Run 1 ran at half speed for every cell (another task on the CPU): the
    # cells' order within each run is the same, so their spread is none.
    medians = {
        ("a", 1): {0: 100, 1: 50, 2: 100},
        ("b", 1): {0: 90, 1: 45, 2: 90},
        ("a", 2): {0: 80, 1: 40, 2: 80},
    }
    assert all(s == pytest.approx(0, abs=1e-9) for s in run_spreads(medians).values())


def test_a_cell_that_moves_against_its_run_keeps_its_spread():
    medians = {
        ("a", 1): {0: 100, 1: 100, 2: 100},
        ("b", 1): {0: 90, 1: 90, 2: 90},
        ("c", 1): {0: 80, 1: 60, 2: 80},
    }
    spreads = run_spreads(medians)
    assert spreads[("a", 1)] == pytest.approx(0, abs=1e-9)
    assert spreads[("c", 1)] > 10


def test_one_run_has_no_spread_between_runs():
    assert run_spreads({("a", 1): {0: 100}}) == {("a", 1): None}


def test_only_a_neighbouring_split_ties_with_the_knee():
    # Very noisy extents: still, the knee may move by one extent at most.
    extent, _, tied_extents = knee(_curve([30, 31, 30, 29, 42.4, 60, 62, 61], spread=40))
    assert extent == 16 * MB and set(tied_extents) <= {32 * MB}


def test_budget_kernel_is_chosen_among_those_tied_at_its_batch():
    # 32MB is the largest batch tied with the fastest (avx-nt, 4% below it);
    # movnti is 8% below the fastest but within noise of avx-nt at 32MB, and
    # comes first in the table: the kernel rule picks it there.
    cells = {
        ("x86-64-avx-nt", 8 * MB): cell(100, typical=0.1),
        ("x86-64-avx-nt", 32 * MB): cell(96, typical=0.4),
        ("x86-64-movnti", 32 * MB): cell(92, typical=0.4),
    }
    row, _ = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert (row["batch_bytes"], row["kernel"]) == (32 * MB, "x86-64-movnti")
    assert [(t["batch_bytes"], t["kernel"]) for t in row["tied"]] == [
        (8 * MB, "x86-64-avx-nt"),
        (32 * MB, "x86-64-avx-nt"),
    ]


def test_a_pair_whose_order_changes_between_runs_is_tied_whichever_sweep_it_is():
    # A Zen 5 VM: advise's 4KB kernel was x86-64-avx512 in 2 sweeps of 5, x86-64-unrolled in 3.
    # The sweep's noise (1%) ties within 5%; these two swap places from run to run, so their
    # gap's standard error (3-4%) widens their tie. Both sweeps: the first in the table, tied.
    order = ["x86-64-unrolled", "x86-64-stosq", CLEAR_PAGES, "x86-64-avx512"]

    def at_4kb(kernel, runs):
        c = dict(cell(statistics.median(runs)), noise_pct=1.0)
        return (kernel, 4 * KB), dict(c, run_medians={r: v * GBPS for r, v in enumerate(runs)})

    sweeps = [
        # avx512 7% ahead by the medians: beyond the floor, but 10.1 to 12.0 against 10.0.
        {"x86-64-unrolled": [10.0] * 5, "x86-64-avx512": [10.2, 11.6, 10.7, 12.0, 10.1]},
        # unrolled 3% ahead.
        {"x86-64-unrolled": [10.3, 10.0, 10.6, 10.3, 10.1], "x86-64-avx512": [10.0] * 5},
    ]
    for sweep in sweeps:
        cells = dict(at_4kb(k, runs) for k, runs in sweep.items())
        cells.update([at_4kb(CLEAR_PAGES, [8.0] * 5)])  # 20% behind: not tied
        [row] = best_kernels(cells, [4 * KB], order, CLEAR_PAGES)
        assert (row["kernel"], row["tied"]) == ("x86-64-unrolled", ["x86-64-avx512"])


def test_a_pair_that_keeps_its_order_in_every_run_is_not_widened():
    # avx512 7% ahead in each run alike: its gap's standard error is 0, the floor decides.
    a = dict(cell(10.7), run_medians={r: 10.7 * GBPS for r in range(5)})
    b = dict(cell(10.0), run_medians={r: 10.0 * GBPS for r in range(5)})
    assert tolerance_pct(a, b) == TIE_FLOOR_PCT and not tied(a, b)
    # Fewer than three common runs know no error: the floor again.
    c = dict(cell(10.0), run_medians={0: 9.0 * GBPS, 1: 11.0 * GBPS})
    assert tolerance_pct(a, c) == TIE_FLOOR_PCT
