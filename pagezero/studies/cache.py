"""Measuring the cache a run has: the temporal kernels over a ladder of extents, each cleared
hot, extended until the memory plateau and twice the cache (analysis.cache reads the fall)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import IO, Any

from pagezero.analysis.cache import MeasuredCache, extents_to_add, llc_source, measured_cache
from pagezero.figures.plots import extent_of
from pagezero.measure.mem import SETTLE_MIN_LOOPS, SETTLE_TOLERANCE_PCT
from pagezero.results.points import summarize_points
from pagezero.results.resultset import merged
from pagezero.runs.sweeps import sweep_points
from pagezero.system.backing import Backing, kernel_backing
from pagezero.system.kernels import kernels
from pagezero.system.machine import cache_bytes, llc_bytes, machine
from pagezero.units import format_size

KB, MB = 1 << 10, 1 << 20

# Below this extent, a loop clears the extent repeatedly over a region of this size (chunk =
# extent), long enough that the clock reads around it do not count.
SMALL_REGION = 256 * KB

# How many times the ladder may be doubled past its top to reach the plateau.
MOST_EXTENSIONS = 3

# Each point is timed once its hot buffer has settled (memset's settle), in at most
# SETTLE_LOOPS loops and SETTLE_BYTES of clearing: climbs took 8-14 loops on an Intel Xeon VM
# (16-64MB), 8-20 on an AMD EPYC VM (1-8MB); 1GB bounds one beyond the cache to about 0.1 s.
SETTLE_LOOPS = 64
SETTLE_BYTES = 1 << 30
# Settled loops agree, so three give a median that one disturbed loop does not move.
TIMED_LOOPS = 3


def temporal_kernels(functions: Sequence[str] | None = None) -> list[str]:
    """The available temporal clear kernels (among `functions` when given), in table order."""
    names = [k.name for k in kernels("clear") if k.available and k.temporal]
    return [n for n in names if functions is None or n in functions]


def rates_of(rs: Any, functions: Sequence[str]) -> dict[str, dict[int, float]]:
    """{kernel: {extent: median rate}} of an extents sweep's results, for `functions`."""
    rates: dict[str, dict[int, float]] = {}
    for first, summary in summarize_points(rs).values():
        if first.function in functions:
            rates.setdefault(first.function, {})[extent_of(first)] = summary["median"]
    return rates


def cache_of(rates: Mapping[str, Mapping[int, float]], info: Mapping[str, Any]) -> MeasuredCache:
    """measured_cache() of the temporal kernels' rates, beside the machine() dict's LLC."""
    temporal = {k: by for k, by in rates.items() if k in temporal_kernels()}
    return measured_cache(
        temporal, llc_bytes(info), llc_source(info), above_bytes=cache_bytes(info, 2) or 0
    )


def extend(
    rs: Any,
    functions: Sequence[str],
    info: Mapping[str, Any],
    runs: int,
    progress: IO[str] | None = None,
    notes: list[str] | None = None,
) -> Any:
    """`rs` with larger extents swept (all `functions`) until the plateau and twice the cache."""
    memory = (info.get("memory") or {}).get("available_bytes")
    above = cache_bytes(info, 2) or 0
    temporal = temporal_kernels(functions)
    for _ in range(MOST_EXTENSIONS):
        if rs.interrupted:
            break
        add = extents_to_add(rates_of(rs, temporal), memory, above, most=1)
        if not add:
            break
        rs = merged([rs, sweep_extents(add, functions, runs, progress, notes)[0]])
    return rs


def sweep_extents(
    extents: Sequence[int], functions: Sequence[str], runs: int, progress: Any, notes: Any = None
) -> tuple[Any, Backing]:
    """(extent_points()' memset sweep on the largest region's pages, its Backing)."""
    backing = kernel_backing(max(*extents, SMALL_REGION))
    points = extent_points(extents, functions, backing.region_args())
    # No warm-up pass: it would map and unmap buffers of its own, warming nothing a timed
    # point uses; each point settles its own buffer instead (extent_points).
    return sweep_points("memset", points, runs, 0, progress, notes), backing


def default_ladder(info: Mapping[str, Any]) -> list[int]:
    """Powers of two from twice the L2 (1MB if unknown) to twice sysfs's LLC (256MB at least)."""
    low = 2 * (cache_bytes(info, 2) or 512 << 10)
    high = max(2 * (llc_bytes(info) or 0), 256 * MB)
    memory = (info.get("memory") or {}).get("available_bytes")
    if memory:
        high = min(high, memory // 4)
    return [1 << s for s in range(low.bit_length() - 1, high.bit_length()) if low <= 1 << s <= high]


def measure_cache(
    info: Mapping[str, Any] | None = None,
    runs: int = 3,
    progress: IO[str] | None = None,
    extents: Sequence[int] | None = None,
) -> MeasuredCache:
    """Measure the cache a run has: the temporal kernels' fall over extents, beside sysfs.

    Parameters
    ----------
    info : dict or None
        A machine() dict (this machine's when None).
    runs : int
        Fresh processes per point (one process's placement can fake a fall).
    progress : file or None
        Where the sweeps report progress.
    extents : sequence of int or None
        The ladder in bytes (default_ladder()), doubled past its top until the plateau.

    Returns
    -------
    MeasuredCache
        The measured cache; cache_bytes None where no temporal kernel falls.
    """
    info = info if info is not None else machine()
    functions = temporal_kernels()
    if not functions:
        return MeasuredCache(None, None, llc_bytes(info), llc_source(info))
    rs, _ = sweep_extents(extents or default_ladder(info), functions, runs, progress)
    rs = extend(rs, functions, info, runs, progress)
    return cache_of(rates_of(rs, functions), info)


def extent_points(extents, functions, region_args):
    """memset points clearing each extent in one call, settled first (small ones repeated)."""
    points = []
    for e in extents:
        size = max(e, SMALL_REGION)
        settle = max(2, min(SETTLE_LOOPS, SETTLE_BYTES // size))
        chunk = e if e < size else 0
        points.append(dict(size=size, chunk=chunk, loops=TIMED_LOOPS, settle=settle, **region_args))
    return [dict(p, function=f) for p in points for f in functions]


def settle_line(rs: Any) -> str | None:
    """The untimed loops the extents needed to settle, where more than SETTLE_MIN_LOOPS."""
    by: dict[int, list[int]] = {}
    bound = 0
    for r in rs.results:
        if "settle_loops" in r.details:
            by.setdefault(extent_of(r), []).append(r.details["settle_loops"])
            bound += not r.details["settled"]
    if not by:
        return None
    medians = {e: statistics.median(v) for e, v in sorted(by.items())}
    more = [f"{format_size(e)} {m:g}" for e, m in medians.items() if m > SETTLE_MIN_LOOPS]
    points = sum(len(v) for v in by.values())
    return (
        f"Each point was timed once its own buffer had settled: untimed loops until two in a "
        f"row agree within {SETTLE_TOLERANCE_PCT}%, {SETTLE_MIN_LOOPS} at least (fewer where "
        f"{format_size(SETTLE_BYTES)} of clearing bounds them). Loops needed, median over "
        f"kernels and runs, where more: {', '.join(more) or 'none'}; the bound ended "
        f"{bound} of {points} points."
    )
