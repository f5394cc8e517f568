"""The figures of pagezero, as PNG (for mail) and SVG (for report.html): rates (rates against
extents, with the marks where they bend, and against threads), bars (points, and result sets
side by side), palette (a kernel's colour, marker and family) and common. Every figure draws
one statistic, the median of per-run medians with the between-run interval, as the tables
and `pagezero compare` give it."""

from pagezero.figures.bars import (
    bars_figure,
    comparison_figure,
    plot_bars,
    plot_comparison,
    plot_variants,
)
from pagezero.figures.common import STATISTIC, statistic_words
from pagezero.figures.palette import (
    FAMILIES,
    PALETTE,
    family_of,
    group_by_family,
    kernel_colour,
    kernel_marker,
)
from pagezero.figures.rates import (
    BATCHES,
    ENVELOPE_LABEL,
    extent_of,
    overlapping,
    plot_rates,
    plot_scaling,
    rates_figure,
    scaling_figure,
)

__all__ = ["plot_rates", "plot_bars", "plot_comparison", "plot_variants", "plot_scaling"]
__all__ += ["extent_of", "rates_figure", "bars_figure", "comparison_figure", "scaling_figure"]
__all__ += ["kernel_colour", "kernel_marker", "family_of", "group_by_family", "overlapping"]
__all__ += ["statistic_words", "PALETTE", "FAMILIES", "BATCHES", "STATISTIC", "ENVELOPE_LABEL"]
