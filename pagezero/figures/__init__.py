"""The figures of pagezero, as PNG (for mail) and SVG (for report.html), each drawing the median
of per-run medians with the between-run interval, as the tables do (docs/figures.rst)."""

from pagezero.figures.plots import (
    bars_figure,
    comparison_figure,
    extent_of,
    plot_bars,
    plot_comparison,
    plot_rates,
    plot_scaling,
    plot_variants,
    rates_figure,
    scaling_figure,
)

__all__ = ["plot_rates", "plot_bars", "plot_comparison", "plot_variants", "plot_scaling"]
__all__ += ["extent_of", "rates_figure", "bars_figure", "comparison_figure", "scaling_figure"]
