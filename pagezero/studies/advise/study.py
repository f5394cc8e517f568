"""pagezero advise: one sweep of clear kernels x extents, analysed (docs/policies.rst)."""

from __future__ import annotations

import math
import signal
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, cast

from pagezero.analysis.cache import MeasuredCache, run_cache
from pagezero.analysis.knee import clear_knee
from pagezero.interrupt import Interrupted
from pagezero.measure.policy import default_kernel, plan_batch, run_batch
from pagezero.results.points import point_summary
from pagezero.runs.processes import check_runs
from pagezero.runs.sweeps import register, sweep
from pagezero.studies.advise.choices import batch_for_budget, best_kernels
from pagezero.studies.advise.text import Advice
from pagezero.studies.advise.ties import knee, run_spreads, sweep_noise
from pagezero.studies.cache import measure_cache
from pagezero.system.backing import Backing, map_backed
from pagezero.system.kernels import Kernel, kernels
from pagezero.system.machine import machine
from pagezero.system.memory import region

if TYPE_CHECKING:
    from pagezero.measure.policy import BatchResult
    from pagezero.results.resultset import ResultSet

__all__ = ["Advice", "advise", "DEFAULT_BUDGETS_MS", "SWEEPS", "cells_from_results"]

DEFAULT_BUDGETS_MS: tuple[float, ...] = (1.0, 3.0)

KB, MB = 1 << 10, 1 << 20

# The region is several times the LLC and the largest extent: every extent is cleared from
# cold memory. Runs, rounds and passes: docs/policies.rst, "Runs". About 80 s.
_EXTENTS = (4 * KB, 64 * KB, 1 * MB, 4 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 128 * MB)
_QUICK_EXTENTS = (64 * KB, 1 * MB, 8 * MB, 32 * MB)
SWEEPS: dict[str, dict[str, Any]] = {
    "default": dict(region=256 * MB, runs=5, rounds=4, passes=2, extents=_EXTENTS),
    "quick": dict(region=64 * MB, runs=1, rounds=1, passes=2, extents=_QUICK_EXTENTS),
}
# One region per process, shared by its cells (docs/policies.rst, "Runs"): a run's placement
# moves every cell alike, which run_spreads' load factor takes out.
_REGIONS: dict[int, Any] = {}


def _check_budgets(budgets_ms: Iterable[float]) -> tuple[float, ...]:
    out = tuple(budgets_ms)
    for b in out:
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 < b < math.inf:
            raise ValueError(f"latency budget must be a positive number of ms, not {b!r}")
    if not out:
        raise ValueError("at least one latency budget is needed")
    return tuple(float(b) for b in out)


def _shared_region(nbytes: int) -> Any:
    if nbytes not in _REGIONS:
        # The pages chosen now, or (another process took them since) the next choice.
        _REGIONS[nbytes], _ = map_backed(lambda used: region(nbytes, **used.region_args()), nbytes)
    return _REGIONS[nbytes]


def _release_regions() -> None:
    while _REGIONS:
        _REGIONS.popitem()[1].close()


def advise_cell(size: int, batch: int, kernel: str, loops: int) -> BatchResult | None:
    """One cell of the advice sweep: pagezero.batch() on this process's shared region."""
    return run_batch(plan_batch(size, batch, kernel, loops), _shared_region(size))


register("advise-cell", advise_cell, lambda **point: plan_batch(**point))


def advise(
    quick: bool = False,
    budgets_ms: Iterable[float] = DEFAULT_BUDGETS_MS,
    progress: IO[str] | None = None,
    runs: int | None = None,
    cache: MeasuredCache | None = None,
) -> Advice:
    """Sweep this machine and return an Advice (docs/policies.rst, "Advice").

    Parameters
    ----------
    quick : bool
        A few-second sweep of one run in this process (smoke tests: not measurements).
    budgets_ms : iterable of float
        The latency budgets, in ms (positive, finite).
    progress : file or None
        A file to report on (e.g. sys.stderr, with a progress bar on a terminal), or None.
    runs : int or None
        Runs (fresh processes) to measure over: default SWEEPS' (3 at least), 1 with quick.
    cache : MeasuredCache or None
        The cache the run has; None: measure_cache() (with quick: sysfs's LLC).

    Returns
    -------
    Advice
        The advice for this machine.

    Raises
    ------
    ValueError
        For a bad budget or run count.
    Interrupted
        On a stop signal; its partial is the Advice so far (None when too few for a knee).
    """
    budgets = _check_budgets(budgets_ms)
    cfg = dict(SWEEPS["quick" if quick else "default"])
    runs = cfg["runs"] if runs is None else runs
    if check_runs(runs) < 3 and not quick:
        # Fewer give no usable spread between runs, and ties then rest on the floor alone.
        raise ValueError(f"advise needs at least 3 runs (not {runs}); --quick may use fewer")
    if cache is None and quick:
        cache = run_cache(machine())  # sysfs's LLC: a fresh machine() has no measured cache
    elif cache is None:
        if progress:
            print("pagezero advise: measuring the cache this run has", file=progress, flush=True)
        cache = measure_cache()
    cfg["runs"], cfg["cache"] = runs, cache
    names = [k.name for k in kernels("clear") if k.available]
    grid = dict(
        size=[cfg["region"]], batch=list(cfg["extents"]), kernel=names, loops=[cfg["passes"]]
    )
    if progress:
        sizes = f"{len(names)} kernels x {len(cfg['extents'])} extents, {cfg['runs']} run(s)"
        print(f"pagezero advise: {sizes}", file=progress, flush=True)
    start = time.monotonic()
    # `rounds` repetitions of the grid per process; warmup=0: each batch() makes an untimed
    # pass before timing. progress None: a bar on a terminal.
    try:
        repeat, bar = runs * cfg["rounds"], None if progress else False
        rs = sweep("advise-cell", grid, repeat=repeat, warmup=0, processes=runs, progress=bar)
    finally:
        _release_regions()  # one run measures here (quick): its region goes now
    seconds = time.monotonic() - start
    if rs.interrupted:
        try:
            partial = _analyse(rs, budgets, cfg, seconds, rs.interrupted)
        except ValueError:
            partial = None  # too little to analyse (no knee from one extent)
        signum = getattr(signal, str(rs.interrupted), signal.SIGINT)  # its name, as sweeps keep it
        raise Interrupted(signum, partial=partial)
    return _analyse(rs, budgets, cfg, seconds)


def cells_from_results(
    results: Sequence[BatchResult], runs: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, int], dict[str, Any]]:
    """{(kernel, extent): cell} from the sweep's results and runs (runs[i]["process"])."""
    # The figures of docs/policies.rst ("Ties", "Latencies"); spread_pct the passes' with one
    # run. Rates in bytes/sec, spreads in %, times in ms.
    by_cell: dict[tuple[str, int], dict[Any, dict[str, list[float]]]] = {}
    for r, run in zip(results, runs):
        cell = by_cell.setdefault((r.function, r.batch_bytes), {})
        this_run = cell.setdefault(run.get("process", 0), {"rates": [], "typical": [], "max": []})
        this_run["rates"].extend(r.values())
        this_run["typical"].append(r.typical_worst_ms)
        this_run["max"].append(r.worst_ms)
    run_medians: dict[Any, dict[Any, float]] = {
        key: {run: statistics.median(p["rates"]) for run, p in per_run.items()}
        for key, per_run in by_cell.items()
    }
    between = run_spreads(run_medians)
    noise = sweep_noise(between.values())  # None with one run: each cell's loops decide
    cells: dict[tuple[str, int], dict[str, Any]] = {}
    for key, per_run in by_cell.items():
        summary = point_summary([p["rates"] for p in per_run.values()], "bytes/sec")
        typical = statistics.median(statistics.median(p["typical"]) for p in per_run.values())
        visits = sorted(t for p in per_run.values() for t in p["typical"])
        cells[key] = {
            "bytes_per_sec": summary["median"],
            "spread_pct": summary["spread_pct"] if between[key] is None else between[key],
            "spread_of": summary["spread_of"],
            "runs": summary["runs"],
            "typical_worst_ms": typical,
            "p90_worst_ms": _p90(visits),
            "worst_ms": typical,
            "max_worst_ms": max(max(p["max"]) for p in per_run.values()),
            "noise_pct": noise,
            "run_medians": run_medians[key],
        }
    return cells


def _p90(values: Sequence[float]) -> float:
    """The 90th percentile of sorted `values`, interpolated (the value itself when one)."""
    if len(values) == 1:
        return float(values[0])
    return float(statistics.quantiles(values, n=10, method="inclusive")[8])


def _backing(results: Iterable[BatchResult]) -> str:
    """The pages the results' regions were on, in words ("4KB" where a result does not say)."""
    raw = (r.params.get("backing") or "4KB" for r in results)
    words = (Backing(b).label if b in ("hugetlb", "thp", "4KB") else b for b in raw)
    return " and ".join(dict.fromkeys(words)) or "4KB"


def _streaming_from(cache: int | None, knee_bytes: int, step: float) -> int | None:
    """Where best_kernels()' one range starts: the cache's size, else a clear knee, else None."""
    return cache or clear_knee(knee_bytes, step)


def _analyse(
    rs: ResultSet,
    budgets: Sequence[float],
    cfg: Mapping[str, Any],
    seconds: float,
    interrupted: str | None = None,
) -> Advice:
    """The Advice from the cells measured (all, or those before a signal)."""
    results = cast("tuple[BatchResult, ...]", rs.results)
    cells = cells_from_results(results, rs.runs)
    knee_kernel = default_kernel()
    order = kernel_order(kernels("clear"))
    if knee_kernel not in {k for k, _ in cells}:
        raise ValueError(f"nothing measured with {knee_kernel}")
    extents = sorted({e for _, e in cells})
    knee_bytes, step, knee_tied = knee({e: c for (k, e), c in cells.items() if k == knee_kernel})
    cache = cfg["cache"]
    # The measured cache where it differs from sysfs's LLC (which a VM may show whole).
    streaming = _streaming_from(cache.effective_bytes, knee_bytes, step)
    rows = [batch_for_budget(cells, b, order, knee_kernel, streaming) for b in budgets]
    return Advice(
        knee_bytes=knee_bytes,
        llc_bytes=cache.llc_bytes or 0,
        best_kernel=tuple(best_kernels(cells, extents, order, knee_kernel, streaming)),
        batch=tuple(r for r, _ in rows),
        knee_kernel=knee_kernel,
        knee_step=step,
        batch_fits=tuple(f for _, f in rows),
        extents=tuple(extents),
        region_bytes=cfg["region"],
        runs=len({run.get("process", 0) for run in rs.runs}),
        passes=cfg["rounds"] * cfg["passes"],
        rounds=cfg["rounds"],
        seconds=seconds,
        cells=cells,
        knee_tied=tuple(knee_tied),
        backing=_backing(results),
        interrupted=interrupted,
        cache=cache.to_json(),
    )


def kernel_order(rows: Iterable[Kernel]) -> list[str]:
    """The table order, the portable rows (memset(), the C loop: no kernel's) last."""
    return [k.name for k in rows if k.arch != "any"] + [k.name for k in rows if k.arch == "any"]
