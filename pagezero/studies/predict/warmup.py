"""Runs still warming up: leading runs much slower than the runs after them.

On a VM the first touch of guest memory since boot also faults on the host, so demand faults
over freshly reserved hugepages run five to ten times slower the first time (1.9 against
10.8 GB/s for 2MB pages on a Zen 4 VM); a run that lands on pages nobody touched yet pays
for it. Such a run measures the host, not the guest's fault path, and would drag the fault
rate and the remainder down.

The rule: the first run is warming up when its rate is below WARM_FRACTION of the median
rate of the runs after it; then the same for the next one, as long as at least MIN_KEPT runs
would remain. Only leading runs are dropped: a slow run in the middle is the machine's
spread, kept and shown in the interval.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

# Half the rate of the rest: far beyond the 3-5% between runs of a warm machine, and well
# above the five-to-tenfold of a host's first touch.
WARM_FRACTION = 0.5
MIN_KEPT = 1


def warming_runs(rates: Sequence[float]) -> int:
    """How many leading runs of `rates` (bytes/sec, in the order run) are still warming up."""
    if any(not r > 0 for r in rates):
        raise ValueError(f"run rates must be positive, not {list(rates)!r}")
    n = 0
    while len(rates) - n - 1 >= MIN_KEPT:
        rest = statistics.median(rates[n + 1 :])
        if rates[n] >= WARM_FRACTION * rest:
            break
        n += 1
    return n
