"""A report table's cell carries the figure's statistic and interval: the
median of per-run medians and the spread the figures draw around it."""

from pagezero.figures.common import interval
from pagezero.studies.report.words import SPREAD_MARK, cell_text

LLC = 32 << 20


def _cell(median, spread_pct, spread_of="runs", size=1 << 30):
    return {"median": median, "spread_pct": spread_pct, "spread_of": spread_of, "size": size}


def test_a_cell_gives_the_median_and_the_figures_interval():
    cell = _cell(45.24e9, 3.4)
    lo, hi = interval(cell)
    assert cell_text(cell, LLC) == "45.2 +-3%"
    assert round(100 * (hi - cell["median"]) / cell["median"]) == 3


def test_a_wide_spread_beyond_the_llc_is_marked_after_the_interval():
    assert cell_text(_cell(45.24e9, 7.6), LLC) == "45.2 +-8%" + SPREAD_MARK
    # Within the LLC the same spread is not marked; one run's loops never are.
    assert cell_text(_cell(45.24e9, 7.6, size=1 << 20), LLC) == "45.2 +-8%"
    assert cell_text(_cell(0.456e9, 7.6, spread_of="loops"), LLC) == "0.46 +-8%"


def test_a_point_not_measured_is_a_dash():
    assert cell_text(None, LLC) == "-"
