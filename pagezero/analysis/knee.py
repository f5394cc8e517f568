"""Where a kernel's rate steps over extents (bytes per call), and a kernels-by-extent row."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Below this, the cost of each call, not the cache, sets the rate: no knee there.
KNEE_MIN_EXTENT = 64 << 10
# A step smaller than this is no knee, in words or JSON (it still is the largest step).
KNEE_CLEAR_STEP = 1.3
# A kernel within this of the fastest is named as tied with it (the extents answers).
TIE = 0.05


def is_clear_step(step: float) -> bool:
    """Whether a step (upper level / lower level) is a knee, for text and JSON alike."""
    return step >= KNEE_CLEAR_STEP


def clear_knee(knee_bytes: int, step: float) -> int | None:
    """The knee where its step is clear (is_clear_step()), else None."""
    return int(knee_bytes) if is_clear_step(step) else None


def fit_cost(logs: Sequence[float], k: int) -> float:
    """Least absolute deviation of a one-step fit of `logs` split before index k."""
    sides = [(side, statistics.median(side)) for side in (logs[:k], logs[k:])]
    return sum(sum(abs(x - m) for x in side) for side, m in sides)


def find_knee(points: Iterable[tuple[int, float]]) -> tuple[int, float]:
    """(extent, rate) pairs' knee (docs/policies.rst): (its extent, the levels' ratio)."""
    pts = sorted((e, r) for e, r in points if e >= KNEE_MIN_EXTENT and r > 0)
    if len(pts) < 2:
        raise ValueError("finding a knee needs rates at two extents of 64KB or more")
    logs = [math.log(r) for _, r in pts]
    fits = []
    for k in range(1, len(pts)):
        rise = statistics.median(logs[k:]) - statistics.median(logs[:k])
        fits.append((rise <= 0, fit_cost(logs, k), k, rise))
    _, _, k, rise = min(fits)
    return pts[k][0], math.exp(rise)


def range_row(
    kernel: str, extents: Sequence[int], rate: Callable[[str, int], float]
) -> dict[str, Any]:
    """A kernels-by-extent row: min_bytes, max_bytes, kernel, and its median rate over them."""
    median = float(statistics.median(rate(kernel, e) for e in extents))
    return dict(min_bytes=extents[0], max_bytes=extents[-1], kernel=kernel, bytes_per_sec=median)
