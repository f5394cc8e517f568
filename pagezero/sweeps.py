"""Sweeps: a benchmark over a grid of its parameters, repeated, interleaved.

Every repetition visits every grid point once, in an order shuffled anew
for each repetition, so that slow drift of the machine (thermal, a noisy
neighbour) spreads over all points instead of landing on the last ones.
Warm-up runs are made and thrown away. Repetitions can be spread over
several fresh worker processes run one after the other (never at the same
time): one process can land on a lucky or unlucky physical placement of its
buffers, as pyperf's workers and measuring "three repeats in four sessions"
guard against. Ctrl-C keeps what was measured: the ResultSet comes back
marked interrupted.
"""
import inspect
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import bench, fault, policy
from .kernels import find_kernel
from .results import ResultSet
from .sysinfo import cache_bytes, llc_bytes, machine
from .units import parse_size

__all__ = ["sweep", "default_sizes", "BENCHMARKS", "register"]


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: object         # run(**params) -> Result
    check: object       # check(**params): raises ValueError / UnavailableError


def _check_mem(benchmark):
    kind = "clear" if benchmark == "memset" else "copy"

    def check(function="default", **params):
        bench.plan(benchmark, **params)
        kernel = find_kernel(function, kind)
        if not kernel.available:
            from ._core import UnavailableError
            raise UnavailableError(f"kernel '{function}' is not available: {kernel.reason}")
    return check


BENCHMARKS = {}


def register(name, run, check=None):
    """Make a benchmark sweepable: run(**params) returns a Result; check(**params)
    raises on a bad point before anything runs (default: no check)."""
    BENCHMARKS[name] = Benchmark(name, run, check or (lambda **params: None))


def _check_mmap(size="1GB", page="4KB", function="demand", loops=10, threads=1, seed=0,
                thp=False, clock="ns", latency=False, reserve=False):
    p = fault.plan(size, page, loops, threads, seed, thp, clock, latency)
    fault.check_workload(function)
    fault.check_latency(p, function)


def _check_batch(**params):
    policy.plan_batch(**params)


def _check_folio(**params):
    policy.plan_folio(**params)


register("memset", bench.memset, _check_mem("memset"))
register("memcpy", bench.memcpy, _check_mem("memcpy"))
register("mmap", fault.faults, _check_mmap)
register("batch", policy.batch, _check_batch)
register("folio", policy.folio, _check_folio)


def _points(benchmark, grid):
    """The grid's points as dicts, checked; ValueError on the first bad one."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r} (known: {', '.join(sorted(BENCHMARKS))})")
    b = BENCHMARKS[benchmark]
    if not isinstance(grid, dict) or not grid:
        raise ValueError("the grid is empty: give at least one parameter with its values")
    known = list(inspect.signature(b.run).parameters)
    for name, values in grid.items():
        if name not in known:
            raise ValueError(f"{benchmark} has no parameter {name!r} (its parameters: "
                             f"{', '.join(known)})")
        if isinstance(values, (list, tuple)) and not values:
            raise ValueError(f"grid parameter {name!r} has no values")
    names = list(grid)
    axes = [v if isinstance(v, (list, tuple)) else [v] for v in grid.values()]
    points = [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    for p in points:
        try:
            b.check(**p)
        except ValueError as e:
            raise ValueError(f"grid point {p}: {e}") from None
    return points


def _progress(total, enabled):
    if enabled is None:
        enabled = sys.stderr.isatty()
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="run", leave=False)


def run_here(benchmark, points, repetitions, warmup, seed, process, progress):
    """Warm up, then run each repetition's shuffled pass over the points in this process."""
    b = BENCHMARKS[benchmark]
    results, runs = [], []
    bar = _progress(len(points) * (warmup + len(repetitions)), progress)
    try:
        for _ in range(warmup):
            for p in points:
                b.run(**p)
                bar.update()
        for rep in repetitions:
            order = list(points)
            random.Random(seed + rep).shuffle(order)
            for p in order:
                results.append(b.run(**p))
                runs.append({"repetition": rep, "process": process})
                bar.update()
    except KeyboardInterrupt:
        return ResultSet(results, runs, machine(), interrupted="SIGINT")
    finally:
        bar.close()
    return ResultSet(results, runs, machine())


def _run_workers(benchmark, points, repeat, warmup, processes, seed, progress):
    """Spread the repetitions over `processes` fresh interpreters, one at a time."""
    collected, runs, interrupted = [], [], False
    with tempfile.TemporaryDirectory(prefix="pagezero-sweep-") as tmp:
        for proc in range(processes):
            reps = list(range(proc, repeat, processes))
            if not reps:
                continue
            out = os.path.join(tmp, f"worker{proc}.json")
            spec = {"benchmark": benchmark, "points": points, "repetitions": reps,
                    "warmup": warmup, "seed": seed, "process": proc, "output": out,
                    "progress": progress}
            try:
                # -m from a directory that is not the source tree (see tests/conftest.py).
                subprocess.run([sys.executable, "-m", "pagezero._sweep_worker"], input=json.dumps(spec),
                               text=True, check=True, cwd=tmp)
            except KeyboardInterrupt:
                interrupted = True
            except subprocess.CalledProcessError as e:
                raise RuntimeError(f"sweep worker {proc} failed with status {e.returncode}") from None
            if os.path.exists(out):
                part = ResultSet.load(out)
                collected += part.results
                runs += part.runs
                interrupted = interrupted or part.interrupted
            if interrupted:
                break
    return ResultSet(collected, runs, machine(), interrupted=interrupted)


def sweep(benchmark, grid, repeat=3, warmup=1, processes=1, progress=None, seed=0):
    """Run `benchmark` ("memset", "memcpy", ...) at every point of `grid`.

    grid: {parameter: [values]} (a single value stands for a list of one),
        e.g. {"function": ["default", "generic"],
              "size": ["1GB"], "chunk": ["4KB", "2MB", "32MB"], "loops": [3]}.
    repeat: repetitions of the whole grid; warmup: passes thrown away first.
    processes: spread the repetitions over this many fresh processes, run one
        after the other.
    progress: a tqdm bar on stderr (default: when stderr is a terminal).

    Every point is checked before anything runs. Returns a ResultSet; after
    Ctrl-C, the part measured, with interrupted=True.
    """
    points = _points(benchmark, grid)
    for name, value in (("repeat", repeat), ("processes", processes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, not {value!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative int, not {warmup!r}")
    if processes == 1:
        return run_here(benchmark, points, list(range(repeat)), warmup, seed, 0, progress)
    return _run_workers(benchmark, points, repeat, warmup, processes, seed, progress)


def default_sizes(info=None, low="4KB", high=None):
    """Extents from `low` to beyond the LLC: powers of two, made dense around
    each cache size (half, three quarters, equal, one and a half, twice), as
    pmbw does, so the steps at L1, L2 and the LLC are resolved."""
    info = info if info is not None else machine()
    llc = llc_bytes(info) or 32 << 20
    lo = parse_size(low)
    hi = parse_size(high) if high is not None else max(8 * llc, 256 << 20)
    sizes = {1 << s for s in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 1 << s <= hi}
    for cache in (cache_bytes(info, 1, "Data"), cache_bytes(info, 2), llc):
        if cache:
            for f in (0.5, 0.75, 1.0, 1.5, 2.0):
                s = int(cache * f) // 4096 * 4096
                if lo <= s <= hi:
                    sizes.add(s)
    return sorted(sizes)
