"""The figures, PNG for mail and SVG for report.html, drawn as the tables are (docs/figures.rst)."""

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
