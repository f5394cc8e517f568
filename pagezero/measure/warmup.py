"""Runs or loops still warming up: leading ones much slower than those after them.

On a VM the first touch of guest memory since boot also faults on the host, so demand faults
over freshly reserved hugepages run five to ten times slower the first time (1.9 against
10.8 GB/s for 2MB pages on a Zen 4 VM; `mem mmap -s 1GB -p 2MB -l 5` loops of 2264 against
116 ms); a run or loop that lands on pages nobody touched yet pays for it. It measures the
host, not the guest's fault path, and would drag the fault rate (and predict's remainder)
down. The fault runs (measure.fault) drop such loops, predict such runs.

The rule: the first is warming up when its rate is below WARM_FRACTION of the median rate
of those after it; then the same for the next one, as long as at least MIN_KEPT would
remain. Only leading ones are dropped: a slow one in the middle is the machine's spread,
kept and shown in the interval.
"""

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
