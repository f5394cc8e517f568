"""Plots of result sets, as PNG and SVG: the figures of :mod:`pagezero.figures`,
under the name they were first imported by.

Rates are drawn in GB/s (10^9 bytes per second) against extents on a log2
axis, with the machine's cache sizes and the kernel's clearing batch sizes
(8MB in "mm: folio_zero_user: clear contiguous pages" v6-v8 (2025), 32MB
as merged in Linux 7.0) marked, since those are where the curves are expected
to bend. The machine, kernel release, pages and date are in every footer.
"""

from pagezero.figures import (
    BATCHES,
    extent_of,
    plot_bars,
    plot_comparison,
    plot_rates,
    plot_scaling,
)

# pagezero.store.history draws with these two.
from pagezero.figures.common import pyplot as _pyplot  # noqa: F401
from pagezero.figures.common import save as _save  # noqa: F401

__all__ = ["plot_rates", "plot_bars", "plot_comparison", "plot_scaling", "extent_of", "BATCHES"]
