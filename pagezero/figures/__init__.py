"""The figures of pagezero, as PNG (for mail) and SVG (for report.html): one module per
figure (rates, bars, compare, scaling), and what they share (palette, families, labels,
common). Every figure draws one statistic, the median of per-run medians with the
between-run interval, as the tables and `pagezero compare` give it."""

from pagezero.figures.bars import bars_figure, plot_bars
from pagezero.figures.common import STATISTIC, statistic_words
from pagezero.figures.compare import comparison_figure, plot_comparison, plot_variants
from pagezero.figures.families import FAMILIES, family_of, group_by_family
from pagezero.figures.labels import BATCHES, overlapping
from pagezero.figures.palette import PALETTE, kernel_colour, kernel_marker
from pagezero.figures.rates import ENVELOPE_LABEL, extent_of, plot_rates, rates_figure
from pagezero.figures.scaling import plot_scaling, scaling_figure

__all__ = [
    "plot_rates",
    "plot_bars",
    "plot_comparison",
    "plot_variants",
    "plot_scaling",
    "extent_of",
    "rates_figure",
    "bars_figure",
    "comparison_figure",
    "scaling_figure",
    "kernel_colour",
    "kernel_marker",
    "family_of",
    "group_by_family",
    "overlapping",
    "statistic_words",
    "PALETTE",
    "FAMILIES",
    "BATCHES",
    "STATISTIC",
    "ENVELOPE_LABEL",
]
