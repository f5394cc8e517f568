"""Statistics of samples (docs/measuring.rst), what a point is (point_key()), and its figure."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.units import format_gbps, format_size, parse_size

if TYPE_CHECKING:
    from pagezero.results.result import Result
    from pagezero.results.resultset import ResultSet


def grouped(items: Iterable[Any], key: Callable[[Any], Hashable]) -> dict[Any, list[Any]]:
    """Items by key(item), the keys in first-seen order."""
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def is_rate(unit: str | None) -> bool:
    """Whether values in `unit` are amounts per time (bytes/sec), averaged over their times."""
    return unit == "bytes/sec"


def _costs(values: Iterable[float], unit: str | None) -> list[float]:
    """Values as costs that add up as time does: a rate's reciprocal, any other unit as it is."""
    values = [float(v) for v in values]
    if not is_rate(unit):
        return values
    if any(v <= 0 for v in values):
        raise ValueError("a rate must be positive to average it as time")
    return [1.0 / v for v in values]


def relative_spread(values: Iterable[float], unit: str | None = None) -> float:
    """Stdev in % of the mean of the costs `values` stand for; 0.0 for under two or a mean of 0."""
    costs = _costs(values, unit)
    if len(costs) < 2:
        return 0.0
    mean = statistics.fmean(costs)
    return 100.0 * statistics.stdev(costs) / mean if mean else 0.0


def median_interval(
    values: Iterable[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """(low, high, level): the sign test's median interval, at `confidence` or else min..max."""
    import numpy as np
    from scipy import stats as sps

    xs = sorted(float(v) for v in values)
    n = len(xs)
    if not n:
        raise ValueError("no samples for an interval of the median")
    # Coverage of (x(j), x(n+1-j)) is 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2): the largest j
    # (1-based, at most the middle) whose coverage is enough, else 1.
    coverage = 1 - 2 * sps.binom.cdf(np.arange((n + 1) // 2), n, 0.5)  # falls with j
    j = max(1, int(np.count_nonzero(coverage >= confidence)))
    return xs[j - 1], xs[n - j], max(0.0, float(coverage[j - 1]))


def summarize(
    values: Iterable[float], confidence: float = 0.95, unit: str | None = None
) -> dict[str, Any]:
    """n, mean, mean_kind, stdev, stdev_pct, median, min, max, the mean's Student's t interval
    (ci_low, ci_high, confidence) and the median's (median_ci_low, _high, _level)."""
    from scipy import stats as sps

    values = [float(v) for v in values]
    if not values:
        raise ValueError("no samples to summarize")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("samples must be finite numbers")
    n = len(values)
    costs = _costs(values, unit)
    mean = statistics.fmean(costs)
    stdev = statistics.stdev(costs) if n > 1 else 0.0
    half = (sps.t.ppf((1 + confidence) / 2, n - 1) * stdev / math.sqrt(n)) if n > 1 else 0.0
    low, high = mean - half, mean + half
    stdev_pct = 100.0 * stdev / mean if mean else 0.0
    if is_rate(unit):
        # Back to rates: the mean time's interval inverted (ends swap; zero time: no upper rate).
        mean = 1.0 / mean
        stdev = mean * stdev_pct / 100.0  # the times' relative spread, as a rate's
        low, high = 1.0 / high, (1.0 / low if low > 0 else math.inf)
    m_low, m_high, m_level = median_interval(values, confidence)
    return {
        "n": n,
        "mean": mean,
        "mean_kind": "harmonic" if is_rate(unit) else "arithmetic",
        "stdev": stdev,
        "stdev_pct": stdev_pct,
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "ci_low": low,
        "ci_high": high,
        "confidence": confidence,
        "median_ci_low": m_low,
        "median_ci_high": m_high,
        "median_ci_level": m_level,
    }


def spread(rates: Sequence[float]) -> tuple[float, float] | tuple[None, None]:
    """(mean, stdev in % of it), as perf's "( +- x% )"; (None, None) for none."""
    return (statistics.fmean(rates), relative_spread(rates)) if rates else (None, None)


# What identifies a point: benchmark, function, unit, params_key().
PointKey = tuple[str, str, str, tuple[tuple[str, str], ...]]

# Parameters that say how long to measure, not what: never part of a point.
NOT_IDENTITY = ("loops",)

# Size parameters, read as bytes so that one size spelled two ways is one point ("llc" stays).
SIZE_PARAMS = ("size", "chunk", "page", "batch", "batch_bytes")


def _normal(name: str, value: Any) -> Any:
    if name in SIZE_PARAMS and isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            return parse_size(value, what=name, allow_zero=True)
        except ValueError:
            pass
    return value


def identity_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` as a point knows them: without NOT_IDENTITY, SIZE_PARAMS in bytes (int)."""
    return {k: _normal(k, v) for k, v in params.items() if k not in NOT_IDENTITY}


def params_key(params: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A hashable, order-free key of identity_params(params): sorted (name, JSON) pairs."""
    items = identity_params(params).items()
    return tuple(sorted((str(k), json.dumps(v, sort_keys=True, default=str)) for k, v in items))


def point_key(result: Result) -> PointKey:
    """(benchmark, function, unit, params_key()): equal for every run of one point."""
    return (result.benchmark, result.function, result.unit, params_key(result.params))


# A point without its function: where variants (kernels, workloads) stand side by side.
VariantKey = tuple[str, str, tuple[tuple[str, str], ...]]


def variant_key(result: Result) -> VariantKey:
    """point_key() without the function: equal for every function at one point (compare --by)."""
    return (result.benchmark, result.unit, params_key(result.params))


def point_summary(runs: Iterable[Sequence[float]], unit: str) -> dict[str, Any]:
    """A point's median of its runs' medians, spread_pct between them (loops, for one run), runs,
    spread_of ("runs" or "loops") and unit; empty runs left out, ValueError when none is left."""
    kept = [list(v) for v in runs if len(v)]
    if not kept:
        raise ValueError("a point needs at least one run")
    run_medians = [statistics.median(v) for v in kept]
    spread = relative_spread(run_medians if len(kept) > 1 else kept[0], unit)
    figure = {"median": statistics.median(run_medians), "spread_pct": spread, "runs": len(kept)}
    return dict(figure, spread_of="runs" if len(kept) > 1 else "loops", unit=unit)


def summarize_points(result_set: ResultSet) -> dict[PointKey, tuple[Result, dict[str, Any]]]:
    """{point_key: (its first Result, point_summary())}; a run is a process, pooling repetitions."""
    points: dict[PointKey, tuple[Result, dict[int, list[float]]]] = {}
    for result, run in zip(result_set.results, result_set.runs):
        first, by_process = points.setdefault(point_key(result), (result, {}))
        by_process.setdefault(run.get("process", 0), []).extend(result.values())
    return {
        key: (first, point_summary(by_process.values(), first.unit))
        for key, (first, by_process) in points.items()
    }


def format_figure(value: float | None, unit: str) -> str:
    """A figure as reprs print it: "66.41 GB/s" (10^9 bytes/s), "0.031 cycles/byte"."""
    if value is None:
        return f"no {unit}"
    return format_gbps(value, 2) if unit == "bytes/sec" else f"{value:.4g} {unit}"


def describe(result: Result, keys: Iterable[str] | None = None) -> str:
    """Benchmark, function and the identity params in `keys` (all if None), as label() has them."""
    params = identity_params(result.params)
    parts = [result.benchmark, result.function]
    for k in sorted(params) if keys is None else keys:
        v = params.get(k)
        if v is None:
            continue
        if k in SIZE_PARAMS and isinstance(v, int) and not isinstance(v, bool):
            v = format_size(v) if v else "0"
        parts.append(f"{k}={json.dumps(v).strip(chr(34))}")
    return " ".join(parts)


def title(result: Result) -> str:
    """What a repr names: "memset x86-64-stosb 1GB" (benchmark, function, size)."""
    size = identity_params(result.params).get("size")
    sized = [format_size(size)] if isinstance(size, int) and size > 0 else []
    return " ".join([result.benchmark, result.function, *sized])


def point_names(results: Sequence[Result]) -> list[str]:
    """describe() of each Result: size, page, and what tells the point from its benchmark's rest."""
    by_benchmark = grouped(results, lambda r: r.benchmark)
    known = {b: [identity_params(r.params) for r in rs] for b, rs in by_benchmark.items()}
    told = {
        b: {k for p in ps for k in p if any(q.get(k) != p[k] for q in ps)}
        for b, ps in known.items()
    }
    keys = {b: ["size", "page", *sorted(ks - {"size", "page"})] for b, ks in told.items()}
    return [describe(r, keys[r.benchmark]) for r in results]
