"""Runs or loops still warming up (a VM host's first touch): docs/measuring.rst, "Warm first"."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

# Half the rate of the rest: far beyond the 3-5% between runs of a warm machine, and well
# above the five-to-tenfold of a host's first touch.
WARM_FRACTION = 0.5
# Loops within one process vary more than runs (a first loop in a fresh process on a loaded
# machine can take twice as long: its page tables, the allocator's lists): a loop is warming
# up below a quarter of the rest's rate, still well above a host's first touch.
WARM_LOOP_FRACTION = 0.25
MIN_KEPT = 1


def warming_runs(rates: Sequence[float], fraction: float = WARM_FRACTION) -> int:
    """How many leading runs (or loops) of `rates` (any rate: bytes/sec, 1/duration; in the
    order run) are still warming up: below `fraction` of the median rate after them."""
    if any(not r > 0 for r in rates):
        raise ValueError(f"run rates must be positive, not {list(rates)!r}")
    n = 0
    while len(rates) - n - 1 >= MIN_KEPT:
        rest = statistics.median(rates[n + 1 :])
        if rates[n] >= fraction * rest:
            break
        n += 1
    return n
