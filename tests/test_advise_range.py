"""advise's judgement of a range of extents as one (beyond the LLC): each kernel's gap
to the fastest paired within runs, or without per-run medians the geometric means, and
the rows and budgets that take the range's kernel. Cells made up, figures worked by hand."""

import math

import pytest

from pagezero.studies.advise.choices import _paired_gaps as paired_gaps
from pagezero.studies.advise.choices import batch_for_budget, best_kernels, judge_range
from pagezero.studies.advise.ties import tied

KB, MB = 1 << 10, 1 << 20
GBPS = 1e9
ORDER = ["default", "generic", "x86-64-stosq", "x86-64-stosb", "x86-64-movnti", "x86-64-avx-nt"]
CLEAR_PAGES = "x86-64-stosb"
RANGE = [32 * MB, 64 * MB, 128 * MB]


def cell(gbps, spread=0.0, typical=0.1, **more):
    return {
        "bytes_per_sec": gbps * GBPS,
        "spread_pct": spread,
        "typical_worst_ms": typical,
        "p90_worst_ms": typical,
        "max_worst_ms": typical * 2,
        **more,
    }


def _streaming(rates_by_extent):
    """Cells of avx-nt, movnti and stosb at 32, 64 and 128MB from (nt, movnti, stosb) rates."""
    cells = {}
    for e, (nt, movnti, stosb) in zip([32 * MB, 64 * MB, 128 * MB], rates_by_extent):
        cells[("x86-64-avx-nt", e)] = cell(nt)
        cells[("x86-64-movnti", e)] = cell(movnti)
        cells[(CLEAR_PAGES, e)] = cell(stosb)
    return cells


def test_the_range_from_pooled_from_on_is_judged_by_its_geometric_mean():
    # movnti trails avx-nt by 8%, 4% and 9%: per extent it is tied at 64MB
    # only (the floor is 5%), and the choice flips from extent to extent.
    # Over the range its gap is 1 - (92 * 96 * 91)^(1/3) / 100 = 7.0%: not tied.
    cells = _streaming([(100, 92, 70), (100, 96, 70), (100, 91, 70)])
    extents = [32 * MB, 64 * MB, 128 * MB]
    per_extent = best_kernels(cells, extents, ORDER, CLEAR_PAGES)
    assert [r["kernel"] for r in per_extent] == ["x86-64-avx-nt", "x86-64-movnti", "x86-64-avx-nt"]
    assert not any(r["pooled"] for r in per_extent)
    [row] = best_kernels(cells, extents, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert (row["min_bytes"], row["max_bytes"], row["kernel"]) == (
        32 * MB,
        128 * MB,
        "x86-64-avx-nt",
    )
    assert row["tied"] == [] and row["pooled"] is True
    assert row["bytes_per_sec"] == 100 * GBPS


def test_a_kernel_tied_over_the_range_is_chosen_by_the_kernel_rule():
    # movnti 3%, 6% and 4% behind: 4.3% over the range, within the 5% floor,
    # and first in the table of the tied.
    cells = _streaming([(100, 97, 70), (100, 94, 70), (100, 96, 70)])
    [row] = best_kernels(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES, 32 * MB)
    assert (row["kernel"], row["tied"]) == ("x86-64-movnti", ["x86-64-avx-nt"])
    assert row["bytes_per_sec"] == 96 * GBPS  # the kernel's median over the range


def test_the_pooled_range_is_its_own_row_and_below_it_extents_stand_alone():
    cells = _streaming([(100, 80, 70), (100, 80, 70), (100, 80, 70)])
    cells.update({("x86-64-avx-nt", 16 * MB): cell(60), (CLEAR_PAGES, 16 * MB): cell(40)})
    rows = best_kernels(cells, [16 * MB, 32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES, 32 * MB)
    assert [(r["min_bytes"], r["max_bytes"], r["kernel"], r["pooled"]) for r in rows] == [
        (16 * MB, 16 * MB, "x86-64-avx-nt", False),
        (32 * MB, 128 * MB, "x86-64-avx-nt", True),
    ]


def test_one_extent_from_pooled_from_on_is_judged_alone():
    cells = _streaming([(100, 92, 70), (100, 96, 70), (100, 91, 70)])
    rows = best_kernels(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES, 128 * MB)
    assert [(r["min_bytes"], r["kernel"], r["pooled"]) for r in rows] == [
        (32 * MB, "x86-64-avx-nt", False),
        (64 * MB, "x86-64-movnti", False),
        (128 * MB, "x86-64-avx-nt", False),
    ]


def test_a_kernel_missing_from_one_extent_of_the_range_is_left_out_of_it():
    # movnti would be fastest over the extents it has, but 128MB lacks it.
    cells = _streaming([(100, 120, 70), (100, 120, 70), (100, 120, 70)])
    del cells[("x86-64-movnti", 128 * MB)]
    [row] = best_kernels(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES, 32 * MB)
    assert row["kernel"] == "x86-64-avx-nt" and row["tied"] == []


def _paired(per_kernel, noise=10.0):
    """Cells at 32, 64 and 128MB with per-run medians: {kernel: [rates of runs 0..n-1]},
    the same at every extent; a wide sweep noise, so that single cells tie widely."""
    cells = {}
    for e in (32 * MB, 64 * MB, 128 * MB):
        for k, rates in per_kernel.items():
            c = cell(sorted(rates)[len(rates) // 2], spread=noise)
            c["noise_pct"] = noise
            c["run_medians"] = {run: r * GBPS for run, r in enumerate(rates)}
            cells[(k, e)] = c
    return cells


def test_a_range_judges_each_kernel_by_its_gap_paired_within_runs():
    # movnti is 8% behind avx-nt in every run, while the runs move 20% together:
    # between runs each cell spreads widely (a tolerance of 20% would tie it),
    # paired within runs the gap is known to well under a percent: not tied.
    cells = _paired(
        {"x86-64-avx-nt": [100, 80, 120, 90, 110], "x86-64-movnti": [92, 73.6, 110.4, 82.8, 101.2]}
    )
    assert tied(cells[("x86-64-avx-nt", 64 * MB)], cells[("x86-64-movnti", 64 * MB)])
    kernel, ties = judge_range(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES)
    assert (kernel, ties) == ("x86-64-avx-nt", ["x86-64-avx-nt"])
    [row] = best_kernels(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES, 32 * MB)
    assert (row["kernel"], row["tied"], row["pooled"]) == ("x86-64-avx-nt", [], True)


def test_a_gap_within_twice_its_standard_error_is_a_tie():
    # movnti is 8% behind on the mean of its paired log ratios, but they
    # scatter (-20% to +5%): twice their standard error exceeds the gap.
    cells = _paired(
        {"x86-64-avx-nt": [100, 100, 100, 100, 100], "x86-64-movnti": [80, 105, 85, 104, 90]}
    )
    kernel, ties = judge_range(cells, [32 * MB, 64 * MB, 128 * MB], ORDER, CLEAR_PAGES)
    # Tied: the first in the table of the two.
    assert kernel == "x86-64-movnti" and set(ties) == {"x86-64-avx-nt", "x86-64-movnti"}


def test_a_range_measured_in_fewer_than_three_runs_is_judged_by_geometric_means():
    cells = _paired({"x86-64-avx-nt": [100, 100], "x86-64-movnti": [92, 92]}, noise=3.0)
    # 8% apart, against a tolerance of 6% between single cells: not tied.
    assert judge_range(cells, [32 * MB, 64 * MB], ORDER, CLEAR_PAGES)[0] == "x86-64-avx-nt"
    cells = _paired({"x86-64-avx-nt": [100, 100], "x86-64-movnti": [92, 92]}, noise=5.0)
    assert judge_range(cells, [32 * MB, 64 * MB], ORDER, CLEAR_PAGES)[0] == "x86-64-movnti"


def test_a_budgets_batch_beyond_the_llc_takes_the_ranges_kernel():
    # At 64MB alone movnti (first in the table) is tied with avx-nt; over the
    # range, paired within runs, it is 8% behind: the budget takes avx-nt, as
    # the best kernel beyond the LLC does.
    cells = _paired(
        {"x86-64-avx-nt": [100, 80, 120, 90, 110], "x86-64-movnti": [92, 73.6, 110.4, 82.8, 101.2]}
    )
    for c in cells.values():
        c["p90_worst_ms"] = 0.5
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES)
    assert fits and (row["batch_bytes"], row["kernel"]) == (128 * MB, "x86-64-movnti")
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert fits and (row["batch_bytes"], row["kernel"]) == (128 * MB, "x86-64-avx-nt")
    # Where the range's kernel does not fit at that batch, a kernel that fits does.
    cells[("x86-64-avx-nt", 128 * MB)]["p90_worst_ms"] = 2.0
    row, _ = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert (row["batch_bytes"], row["kernel"]) == (128 * MB, "x86-64-movnti")


def test_where_the_ranges_kernel_does_not_fit_the_next_tied_over_the_range_does():
    # Over the range movnti and avx-nt are tied (movnti's gaps scatter) and stosb,
    # 8% behind in every run, is not; movnti, first in the table, is the range's.
    # At 128MB movnti does not fit: avx-nt, tied with it over the range, takes the
    # batch, not stosb, which that one cell alone would tie (clear_pages()'s).
    cells = _paired(
        {
            "x86-64-avx-nt": [100, 100, 100, 100, 100],
            "x86-64-movnti": [80, 105, 85, 104, 90],
            CLEAR_PAGES: [92, 92, 92, 92, 92],
        }
    )
    for c in cells.values():
        c["p90_worst_ms"] = 0.5
    cells[("x86-64-movnti", 128 * MB)]["p90_worst_ms"] = 2.0
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-movnti"
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert fits and (row["batch_bytes"], row["kernel"]) == (128 * MB, "x86-64-avx-nt")


# The paired gaps, worked by hand ------------------------------------------------------


def test_the_paired_gap_and_its_standard_error():
    # movnti at 90%, 80% and 100% of avx-nt in runs 0, 1, 2 at every extent: the
    # log ratios -0.10536, -0.22314, 0; their mean -0.10950 is a gap of
    # 1 - e^-0.10950 = 10.372%; their stdev 0.11163 over sqrt 3 is 6.445%.
    cells = _paired({"x86-64-avx-nt": [100, 100, 100], "x86-64-movnti": [90, 80, 100]})
    gaps = paired_gaps(cells, RANGE)
    assert gaps["x86-64-avx-nt"] == (0.0, 0.0)
    assert gaps["x86-64-movnti"] == (
        pytest.approx(10.3719, abs=1e-4),
        pytest.approx(6.4449, abs=1e-4),
    )
    # Tied: 10.37% is within twice 6.445%; the first in the table of the two.
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-movnti"


def test_three_runs_are_enough_to_pair():
    # 8% behind in each of three runs: paired, not tied; by geometric means and a
    # sweep noise of 10% (a tolerance of 20%), tied, and first in the table.
    cells = _paired({"x86-64-avx-nt": [100, 80, 120], "x86-64-movnti": [92, 73.6, 110.4]})
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES) == ("x86-64-avx-nt", ["x86-64-avx-nt"])


def test_the_standard_error_widens_the_tie_beyond_the_floor():
    # Log ratios -0.2, -0.1, 0: a gap of 1 - e^-0.1 = 9.516%, a standard error of
    # 0.1 / sqrt 3 = 5.774%: within 2 x 5.774 = 11.55%, a tie; shrink the scatter to
    # -0.13, -0.1, -0.07 (a standard error of 1.732%): twice is 3.46%, no tie.
    wide = [100 * math.exp(x) for x in (-0.2, -0.1, 0.0)]
    narrow = [100 * math.exp(x) for x in (-0.13, -0.1, -0.07)]
    tied_cells = _paired({"x86-64-avx-nt": [100] * 3, "x86-64-movnti": wide})
    untied = _paired({"x86-64-avx-nt": [100] * 3, "x86-64-movnti": narrow})
    assert "x86-64-movnti" in judge_range(tied_cells, RANGE, ORDER, CLEAR_PAGES)[1]
    assert "x86-64-movnti" not in judge_range(untied, RANGE, ORDER, CLEAR_PAGES)[1]


def test_clear_pages_kernel_is_chosen_when_tied_over_the_range():
    cells = _paired(
        {"x86-64-avx-nt": [100, 90, 110], CLEAR_PAGES: [98, 88, 108], "generic": [97, 87, 107]}
    )
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES)[0] == CLEAR_PAGES
    one_run = _paired({"x86-64-avx-nt": [100], CLEAR_PAGES: [98], "generic": [97]})
    assert judge_range(one_run, RANGE, ORDER, CLEAR_PAGES)[0] == CLEAR_PAGES


def test_a_kernel_with_a_run_measured_at_zero_is_left_out_of_the_pairing():
    cells = _paired({"x86-64-avx-nt": [100, 80, 120], "x86-64-movnti": [92, 73.6, 110.4]})
    cells |= {
        (CLEAR_PAGES, e): cell(50, run_medians={0: 50 * GBPS, 1: 0.0, 2: 50 * GBPS}) for e in RANGE
    }
    assert set(paired_gaps(cells, RANGE)) == {"x86-64-avx-nt", "x86-64-movnti"}
    # Every kernel with a zero run: nothing to pair, the geometric means decide.
    zeros = {c: dict(v, run_medians={0: 0.0, 1: 1.0, 2: 1.0}) for c, v in cells.items()}
    assert paired_gaps(zeros, RANGE) is None


def test_the_judgement_does_not_depend_on_the_rates_scale():
    # The same rates in bytes per picosecond: rates below 1 are rates all the same.
    cells = _paired({"x86-64-avx-nt": [100, 80, 120], "x86-64-movnti": [92, 73.6, 110.4]})
    tiny = {
        c: dict(
            v,
            bytes_per_sec=v["bytes_per_sec"] * 1e-12,
            run_medians={r: m * 1e-12 for r, m in v["run_medians"].items()},
        )
        for c, v in cells.items()
    }
    assert judge_range(tiny, RANGE, ORDER, CLEAR_PAGES) == judge_range(
        cells, RANGE, ORDER, CLEAR_PAGES
    )
    assert judge_range(tiny, RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-avx-nt"


# Without per-run medians: the geometric means, tied as single cells are ------------------


def test_the_geometric_means_are_tied_by_the_sweeps_noise_not_the_cells_spread():
    # movnti 8% behind at every extent; each cell spreads 20% (a tolerance of 40%),
    # but the sweep's noise is 1% (the 5% floor): not tied.
    cells = {
        (k, e): cell(r, spread=20.0, noise_pct=1.0)
        for e in RANGE
        for k, r in (("x86-64-avx-nt", 100), ("x86-64-movnti", 92))
    }
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-avx-nt"


def test_without_a_sweep_noise_the_median_spread_of_the_range_decides():
    # One run (noise_pct None): movnti's spreads 2, 4 and 30% have the median 4%, a
    # tolerance of 8%: 7% behind is tied, 9% is not.
    spreads = (2, 4, 30)

    def cells(behind):
        out = {}
        for k, r in (("x86-64-avx-nt", 100), ("x86-64-movnti", 100 - behind)):
            out |= {(k, e): cell(r, spread=s, noise_pct=None) for e, s in zip(RANGE, spreads)}
        return out

    assert judge_range(cells(7), RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-movnti"
    assert judge_range(cells(9), RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-avx-nt"


def test_a_cell_without_a_spread_counts_as_none_and_a_zero_rate_as_the_slowest():
    cells = {
        (k, e): cell(r) for e in RANGE for k, r in (("x86-64-avx-nt", 100), ("x86-64-movnti", 96))
    }
    for c in cells.values():
        del c["spread_pct"]
    cells[(CLEAR_PAGES, 32 * MB)] = cell(0)
    cells |= {(CLEAR_PAGES, e): cell(1e-9) for e in RANGE[1:]}
    kernel, ties = judge_range(cells, RANGE, ORDER, CLEAR_PAGES)
    assert (kernel, sorted(ties)) == ("x86-64-movnti", ["x86-64-avx-nt", "x86-64-movnti"])


def test_a_gap_between_twice_and_three_times_its_standard_error_is_not_tied():
    # Log ratios -0.16928, -0.1, -0.03072: a gap of 9.516%, a standard error of
    # 0.06928 / sqrt 3 = 4%: beyond twice it (8%), within three times (12%).
    ratios = [100 * math.exp(x) for x in (-0.16928, -0.1, -0.03072)]
    cells = _paired({"x86-64-avx-nt": [100] * 3, "x86-64-movnti": ratios})
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES) == ("x86-64-avx-nt", ["x86-64-avx-nt"])


def test_rows_and_budgets_beyond_the_llc_take_clear_pages_kernel_when_tied_there():
    # stosq, earlier in the table, is tied too: clear_pages()'s kernel is taken.
    cells = _paired(
        {
            "x86-64-avx-nt": [100, 90, 110],
            CLEAR_PAGES: [98, 88, 108],
            "x86-64-stosq": [97, 87, 107],
        }
    )
    [row] = best_kernels(cells, RANGE, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert (row["kernel"], row["tied"]) == (CLEAR_PAGES, ["x86-64-stosq", "x86-64-avx-nt"])
    budget, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert fits and (budget["batch_bytes"], budget["kernel"]) == (128 * MB, CLEAR_PAGES)


def test_geometric_means_do_not_depend_on_the_rates_scale():
    # One run, rates in bytes per picosecond: movnti 8% behind with a sweep noise of
    # 1% is not tied, as in bytes per second.
    cells = {
        (k, e): cell(r * 1e-12 / GBPS, noise_pct=1.0)
        for e in RANGE
        for k, r in (("x86-64-avx-nt", 100 * GBPS), ("x86-64-movnti", 92 * GBPS))
    }
    assert judge_range(cells, RANGE, ORDER, CLEAR_PAGES)[0] == "x86-64-avx-nt"


def test_a_range_no_kernel_was_measured_across_is_judged_extent_by_extent():
    # A sweep a signal cut short: avx-nt has 32 and 64MB, movnti only 128MB.
    cells = {
        ("x86-64-avx-nt", 32 * MB): cell(100),
        ("x86-64-avx-nt", 64 * MB): cell(100),
        ("x86-64-movnti", 128 * MB): cell(90),
    }
    rows = best_kernels(cells, RANGE, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert [(r["min_bytes"], r["max_bytes"], r["kernel"], r["pooled"]) for r in rows] == [
        (32 * MB, 64 * MB, "x86-64-avx-nt", False),
        (128 * MB, 128 * MB, "x86-64-movnti", False),
    ]
    row, fits = batch_for_budget(cells, 1.0, ORDER, CLEAR_PAGES, pooled_from=32 * MB)
    assert fits and (row["batch_bytes"], row["kernel"]) == (64 * MB, "x86-64-avx-nt")
