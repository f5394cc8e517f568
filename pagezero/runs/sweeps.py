"""Sweeps: a benchmark over a grid of its parameters (docs/measuring.rst, "Sweeps")."""

from __future__ import annotations

import errno
import inspect
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pagezero._core import MappingError
from pagezero.results.resultset import ResultSet
from pagezero.runs.progress import Progress, shown
from pagezero.runs.workers import BENCHMARKS as BENCHMARKS
from pagezero.runs.workers import register as register
from pagezero.runs.workers import run_here, run_workers
from pagezero.system import hugepages
from pagezero.system.backing import Backing, kernel_backing
from pagezero.system.machine import cache_bytes, llc_bytes, machine
from pagezero.units import format_size, parse_size


def _points(benchmark: str, grid: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The grid's points as dicts, checked; ValueError on the first bad one."""
    if benchmark not in BENCHMARKS:
        raise ValueError(
            f"unknown benchmark {benchmark!r} (known: {', '.join(sorted(BENCHMARKS))})"
        )
    b = BENCHMARKS[benchmark]
    if not isinstance(grid, dict) or not grid:
        raise ValueError("the grid is empty: give at least one parameter with its values")
    known = [name for name in inspect.signature(b.run).parameters if name != "runs"]
    for name, values in grid.items():
        if name == "runs":
            raise ValueError(
                "runs is not a grid parameter: a sweep's fresh processes are its processes"
            )
        if name not in known:
            raise ValueError(
                f"{benchmark} has no parameter {name!r} (its parameters: {', '.join(known)})"
            )
        if isinstance(values, (list, tuple)) and not values:
            raise ValueError(f"grid parameter {name!r} has no values")
    axes = [v if isinstance(v, (list, tuple)) else [v] for v in grid.values()]
    points = [dict(zip(grid, combo)) for combo in itertools.product(*axes)]
    for p in points:
        try:
            b.check(**p)
        except ValueError as e:
            raise ValueError(f"grid point {p}: {e}") from None
    return points


def lost_lines(rs: ResultSet) -> list[str]:
    """One ``pagezero: warning: worker process N lost (...)`` line per worker a sweep lost."""
    return [
        f"pagezero: warning: worker process {x['process']} lost (repetitions "
        f"{', '.join(map(str, x['repetitions']))}): {x['reason']}"
        for x in rs.lost
    ]


def sweep(
    benchmark: str,
    grid: Mapping[str, Any],
    repeat: int = 3,
    warmup: int = 1,
    processes: int = 1,
    progress: Progress | bool | None = None,
    seed: int = 0,
) -> ResultSet:
    """Run `benchmark` at every point of `grid`, every point checked before anything runs.

    Parameters
    ----------
    benchmark : str
        A registered benchmark: "memset", "memcpy", "mmap", "batch", "folio", ...
    grid : dict
        {parameter: [values]}, a single value standing for a list of one, e.g.
        ``{"function": ["default", "generic"], "chunk": ["4KB", "2MB"], "loops": [3]}``.
    repeat : int
        Repetitions of the grid, each in an order shuffled by random.Random(seed + repetition).
    warmup : int
        Passes thrown away first.
    processes : int
        Spread the repetitions over this many fresh processes, one after the other.
    progress : bool, Progress or None
        True: on stderr (docs/measuring.rst, "Progress"); a Progress: one unit per point;
        None: notes on the ambient Progress, else a bar where stderr is a terminal; False: none.
    seed : int
        The shuffles' base seed.

    Returns
    -------
    ResultSet
        Each run naming its repetition, process and pid; after a stop signal, the part
        measured, marked. A worker that dies loses its repetitions only (``rs.lost``).

    Raises
    ------
    ValueError
        For an unknown benchmark, a bad point (the first), repeat, warmup or processes, or
        (processes > 1) a run function a worker cannot import.
    RuntimeError
        When every worker process died and nothing was measured.
    """
    points = _points(benchmark, grid)
    for name, value in (("repeat", repeat), ("processes", processes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, not {value!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative int, not {warmup!r}")
    if processes == 1:
        return run_here(benchmark, points, list(range(repeat)), warmup, seed, 0, progress)
    own = shown(progress, f"pagezero sweep {benchmark}", len(points) * (warmup + repeat))
    try:
        # None and no bar: each worker's end is a run of the ambient Progress, if any.
        shows = own if own is not None else (None if progress is None else False)
        return run_workers(benchmark, points, repeat, warmup, processes, seed, shows)
    finally:
        if own is not None and own is not progress:
            own.close()


def default_sizes(
    info: Mapping[str, Any] | None = None, low: int | str = "4KB", high: int | str | None = None
) -> list[int]:
    """Powers of two from `low` to `high` (default: 8 x LLC, >= 256MB), and 0.5-2 x each cache."""
    info = info if info is not None else machine()
    llc = llc_bytes(info) or 32 << 20
    lo = parse_size(low)
    hi = parse_size(high) if high is not None else max(8 * llc, 256 << 20)
    powers = {1 << s for s in range(lo.bit_length() - 1, hi.bit_length())}
    caches = (cache_bytes(info, 1, "Data"), cache_bytes(info, 2), llc)
    near = {int(c * f) // 4096 * 4096 for c in caches if c for f in (0.5, 0.75, 1.0, 1.5, 2.0)}
    return sorted(s for s in powers | near if lo <= s <= hi)


# kernel_backing()'s first choice for memset's and memcpy's page and thp, chosen up front: a
# pool another process may empty before a sweep maps them.
_HUGETLB = Backing("hugetlb")
_REGION_BENCHMARKS = ("memset", "memcpy")


def _pages_gone(rs: ResultSet | None, error: Exception | None) -> str | None:
    """Why a sweep's pages could not be mapped (a MappingError here or in a worker), or None."""
    if isinstance(error, MappingError):
        why = str(error.strerror or error)
    else:
        # A worker's reason: its error's type and message (workers._worker); all lost: RuntimeError.
        reasons = [x["reason"] for x in rs.lost] if rs is not None else [str(error)]
        found = [r.partition("MappingError: ")[2] for r in reasons if "MappingError: " in r]
        if not found:
            return None
        why = re.sub(r"^\[Errno \d+\] ", "", found[0])
    # The shortage, without the pool's counts and the command that would grow it.
    return why.split(" (")[0]


def _swept(
    benchmark: str, grid: dict[str, Any], runs: int, warmup: int, progress: Any, notes: list[str]
) -> ResultSet | None:
    """One shape's sweep, on kernel_backing()'s choice if its hugetlb pages are gone (see notes)."""
    region = benchmark in _REGION_BENCHMARKS
    left_out = ("function", "thp", "loops", "reserve", "page" if region else "")
    shape = ", ".join(
        f"{k} {format_size(v[0]) if k in ('size', 'chunk') else v[0]}"
        for k, v in grid.items()
        if k not in left_out and v[0] != 0
    )
    what = f"the {benchmark} sweep of {shape}"
    while True:
        asked = {k: grid.get(k, [None])[0] for k in _HUGETLB.region_args()}
        hugetlb = region and asked == _HUGETLB.region_args()
        rs, error = None, None
        try:
            if hugetlb:  # gone already: no worker started to find it out
                hugepages.check_available("2MB", hugepages.pages_needed(grid["size"][0], "2MB"))
            rs = sweep(
                benchmark, grid, repeat=runs, warmup=warmup, processes=runs, progress=progress
            )
        except (MappingError, RuntimeError) as e:
            error = e
        why = _pages_gone(rs, error)
        if why is None:
            if error is not None:
                raise error
            return rs
        if not hugetlb:
            notes.append(f"{what} not measured: {why}")
            return None
        instead = kernel_backing(grid["size"][0], refused=why)
        notes.append(
            f"{what} asked for {_HUGETLB.label} pages and ran on {instead.label} pages "
            f"instead: {why}"
        )
        grid.update({k: [v] for k, v in instead.region_args().items()})


def sweep_points(
    benchmark: str,
    points: Sequence[Mapping[str, Any]],
    runs: int,
    warmup: int,
    progress: Any = None,
    notes: list[str] | None = None,
) -> ResultSet:
    """Points not on a grid: a sweep per shape (_swept), merged; MappingError if none measured."""
    measured: list[ResultSet] = []  # the last one alone may be interrupted: it ends them
    notes = notes if notes is not None else []
    shapes: dict[tuple[Any, ...], list[str]] = {}
    for p in points:
        key = tuple(sorted((k, v) for k, v in p.items() if k != "function"))
        shapes.setdefault(key, []).append(p["function"])
    for key, functions in shapes.items():
        grid = {k: [v] for k, v in key}
        grid["function"] = functions
        rs = _swept(benchmark, grid, runs, warmup, progress, notes)
        if rs is not None:
            measured.append(rs)
            if rs.interrupted:
                break
    if shapes and not measured:
        raise MappingError(errno.ENOMEM, f"nothing measured: {notes[-1]}")
    results = [r for rs in measured for r in rs.results]
    run_rows = [run for rs in measured for run in rs.runs]
    return ResultSet(results, run_rows, machine(), measured[-1].interrupted if measured else None)
