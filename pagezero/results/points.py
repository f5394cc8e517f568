"""What a measured point is (every grouping goes by point_key()), and its figure: the median of
its runs' medians and their spread (docs/measuring.rst, "Results" and "Statistics")."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagezero.results.summary import relative_spread
from pagezero.units import format_gbps, format_size, parse_size

if TYPE_CHECKING:
    from pagezero.results.result import Result
    from pagezero.results.resultset import ResultSet

# What identifies a point: benchmark, function, unit, params_key().
PointKey = tuple[str, str, str, tuple[tuple[str, str], ...]]

__all__ = ["point_key", "params_key", "identity_params", "point_summary", "summarize_points"]
__all__ += ["describe", "title", "point_names", "format_figure", "NOT_IDENTITY", "SIZE_PARAMS"]
__all__ += ["variant_key"]

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
    known: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        known.setdefault(r.benchmark, []).append(identity_params(r.params))
    told = {
        b: {k for p in ps for k in p if any(q.get(k) != p[k] for q in ps)}
        for b, ps in known.items()
    }
    keys = {b: ["size", "page", *sorted(ks - {"size", "page"})] for b, ks in told.items()}
    return [describe(r, keys[r.benchmark]) for r in results]
