"""The figures of pagezero, as PNG (for mail) and SVG (for report.html).

One module per figure (rates, bars, compare, scaling), and what they share: palette (one
colour-blind-safe colour per kernel, in the registry's order), families (kernel families
from the registry's facts), labels (cache and batch marks whose labels never overlap) and
common (the footer naming machine, kernel, pages and date, and the words of the one
statistic every figure draws: the median of per-run medians with the between-run interval,
as the tables and `pagezero compare` give). Rates are drawn in GB/s (10^9 bytes per second)
against extents on a log2 axis, with the cache sizes and the kernel's clearing batch sizes
marked, where the curves are expected to bend.
"""

from pagezero.figures.bars import bars_figure, plot_bars
from pagezero.figures.common import STATISTIC, statistic_words
from pagezero.figures.compare import comparison_figure, plot_comparison
from pagezero.figures.families import FAMILIES, family_of, group_by_family
from pagezero.figures.labels import BATCHES, overlapping
from pagezero.figures.palette import PALETTE, kernel_colour, kernel_marker
from pagezero.figures.rates import ENVELOPE_LABEL, extent_of, plot_rates, rates_figure
from pagezero.figures.scaling import plot_scaling, scaling_figure

__all__ = [
    "plot_rates",
    "plot_bars",
    "plot_comparison",
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
