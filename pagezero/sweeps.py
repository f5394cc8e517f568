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

A stop signal (SIGINT, SIGTERM, SIGHUP) ends a sweep within one loop of the
point it lands in: what the finished points measured, and the completed loops
of that point, come back in a ResultSet marked with the signal. Workers run
in a session of their own, so that the signal reaches each worker once, from
the sweep (a terminal's Ctrl-C would otherwise reach both); one sent to a
worker alone stops the sweep the same way.
"""

import inspect
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import bench, fault, policy
from .interrupt import STOP_SIGNALS, as_interrupted, deferred
from .kernels import find_kernel
from .results import Result, ResultSet
from .sysinfo import cache_bytes, llc_bytes, machine
from .units import parse_size

__all__ = ["sweep", "default_sizes", "BENCHMARKS", "register", "lost_lines"]

# How long a stopped worker may take to save what it measured: it stops within
# one loop, so this is only reached by a worker that hangs.
WORKER_STOP_S = 60


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: object  # run(**params) -> Result
    check: object  # check(**params): raises ValueError / UnavailableError


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
    raises on a bad point before anything runs (default: no check). For
    processes > 1, run must be importable by its module and name (a top-level
    function of a module, not of __main__): each worker imports it."""
    BENCHMARKS[name] = Benchmark(name, run, check or (lambda **params: None))


def _check_mmap(
    size="1GB",
    page="4KB",
    function="demand",
    loops=10,
    threads=1,
    seed=0,
    thp=False,
    clock="ns",
    latency=False,
    reserve=False,
):
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
        raise ValueError(
            f"unknown benchmark {benchmark!r} (known: {', '.join(sorted(BENCHMARKS))})"
        )
    b = BENCHMARKS[benchmark]
    if not isinstance(grid, dict) or not grid:
        raise ValueError("the grid is empty: give at least one parameter with its values")
    known = list(inspect.signature(b.run).parameters)
    for name, values in grid.items():
        if name == "runs" and name in known:
            raise ValueError(
                "runs is not a grid parameter: a sweep's fresh processes are its processes"
            )
        if name not in known:
            raise ValueError(
                f"{benchmark} has no parameter {name!r} (its parameters: {', '.join(known)})"
            )
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

    class Bar(tqdm):
        # No monitor thread (tqdm starts one even for a disabled bar): a
        # signal sent to the process goes to any thread that does not block
        # it, so a second thread would take the signals interrupt.deferred()
        # holds in the main thread while a result file or a pool is written.
        monitor_interval = 0

    return Bar(total=total, disable=not enabled, unit="run", leave=False)


def _partial(stop):
    """The Results a stop signal's Interrupted carries: the completed loops of the run it cut
    short."""
    if isinstance(stop.partial, Result):
        return [stop.partial]
    if isinstance(stop.partial, ResultSet):
        return list(stop.partial.results)
    return []


def run_here(benchmark, points, repetitions, warmup, seed, process, progress):
    """Warm up, then run each repetition's shuffled pass over the points in this
    process. A stop signal ends it: the ResultSet then holds what was measured,
    the point it cut short included, marked with the signal."""
    b = BENCHMARKS[benchmark]
    results, runs = [], []
    bar = _progress(len(points) * (warmup + len(repetitions)), progress)
    measuring = None  # the run description of the point being measured
    try:
        for _ in range(warmup):
            for p in points:
                b.run(**p)
                bar.update()
        for rep in repetitions:
            order = list(points)
            random.Random(seed + rep).shuffle(order)
            for p in order:
                measuring = {"repetition": rep, "process": process, "pid": os.getpid()}
                results.append(b.run(**p))
                runs.append(measuring)
                measuring = None
                bar.update()
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        if measuring is not None:  # a warm-up's loops are thrown away, stopped or not
            cut = _partial(stop)
            results += cut
            runs += [measuring] * len(cut)
        return ResultSet(results, runs, machine(), interrupted=stop.signame)
    finally:
        bar.close()
    return ResultSet(results, runs, machine())


def _stop_worker(proc, signum):
    """Pass a stop signal on to a worker and wait until it has saved what it
    measured. Signals are held meanwhile; one arriving before they are (a
    second Ctrl-C) does not skip the wait."""
    sent = done = False
    while not done:
        try:
            with deferred():
                if not sent:
                    proc.send_signal(signum)
                    sent = True
                try:
                    proc.wait(timeout=WORKER_STOP_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                done = True
        except KeyboardInterrupt:
            pass  # the sweep is stopping already


def _wait(proc):
    """Wait for a worker to end. Not Popen.wait() or communicate() alone: on
    KeyboardInterrupt they wait 0.25 s more for a child they assume the
    terminal's Ctrl-C reached too (CPython's subprocess, bpo-25942), which a
    worker in its own session never gets; here the signal comes through at
    once, to be passed on. WNOWAIT leaves the worker for Popen.wait() to reap."""
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    return proc.wait()


def _importable(benchmark):
    """What a worker imports to run `benchmark`: {"module", "qualname", "path"};
    ValueError when a fresh interpreter cannot import its run function (one
    defined in __main__, a lambda, a function inside a function)."""
    run = BENCHMARKS[benchmark].run
    module = getattr(run, "__module__", None)
    qualname = getattr(run, "__qualname__", None) or getattr(run, "__name__", None)
    why = None
    if module is None or qualname is None:
        why = "has no module and name to import it by"
    elif module == "__main__":
        why = "is defined in __main__ (the script itself)"
    elif "<" in qualname:
        why = f"is {'a lambda' if '<lambda>' in qualname else 'defined inside a function'}"
    else:
        target = sys.modules.get(module)
        for part in qualname.split("."):
            target = getattr(target, part, None)
        if target is not run:
            why = f"is not {module}.{qualname}"
    if why:
        raise ValueError(
            f"benchmark {benchmark!r} cannot run in a worker process: its run "
            f"function {why}; define it at the top level of an importable "
            f"module, or use processes=1"
        )
    # The folder the module's top-level package sits in, for a module found only
    # through this interpreter's sys.path (a script's own folder).
    path = getattr(sys.modules[module], "__file__", None)
    if path:
        path = os.path.dirname(os.path.abspath(path))
        for _ in range(module.count(".") + (os.path.basename(path) == "__init__.py")):
            path = os.path.dirname(path)
    return {"module": module, "qualname": qualname, "path": path}


def _lost_reason(status, error_file):
    if os.path.exists(error_file):
        with open(error_file) as f:
            return f.read().strip()
    if status < 0:
        return f"killed by {signal.Signals(-status).name}"
    if status == 0:
        return "exited without saving its results"
    return f"exited with status {status}"


def _run_worker(spec, tmp):
    """Run one worker process: (its ResultSet or None, the signal that stopped
    it or None, why it was lost or None)."""
    out = spec["output"]
    spec_file = os.path.join(tmp, f"worker{spec['process']}.spec.json")
    with open(spec_file, "w") as f:
        json.dump(spec, f)
    proc, stopped = None, None
    try:
        # Started with the stop signals held, which it inherits: one sent to it
        # while its interpreter starts waits until its handlers are in place
        # (_sweep_worker.main), instead of ending it with a traceback; and this
        # process cannot be stopped between starting it and waiting for it.
        with deferred():
            # -m from a directory that is not the source tree (see tests/conftest.py).
            proc = subprocess.Popen(
                [sys.executable, "-m", "pagezero._sweep_worker", spec_file],
                cwd=tmp,
                start_new_session=True,
            )
        _wait(proc)
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        stopped = stop.signame
        if proc is None:
            raise
        _stop_worker(proc, stop.signum)
    part = ResultSet.load(out) if os.path.exists(out) else None
    # A worker a stop signal ended saved what it measured (if anything) and
    # exited with the shell's status for the signal, 128 + signum.
    by_signal = {128 + s: signal.Signals(s).name for s in STOP_SIGNALS}
    if proc.returncode in by_signal:
        stopped = stopped or (part.interrupted if part else None) or by_signal[proc.returncode]
    elif part is None and not stopped:
        # (A worker the sweep's own stop reached before it could save has
        # nothing to give: not lost, stopped.)
        return None, None, _lost_reason(proc.returncode, spec["error"])
    return part, stopped, None


def _run_workers(benchmark, points, repeat, warmup, processes, seed, progress):
    """Spread the repetitions over `processes` fresh interpreters, one at a time.

    A worker that dies (an error, the OOM killer) loses its own repetitions
    only: the others' are kept, and the ResultSet's `lost` says which process,
    which repetitions and why. The workers after it still run, each being a
    fresh process; with nothing measured at all, RuntimeError."""
    where = _importable(benchmark)
    collected, runs, lost, interrupted = [], [], [], None
    with tempfile.TemporaryDirectory(prefix="pagezero-sweep-") as tmp:
        for proc in range(processes):
            reps = list(range(proc, repeat, processes))
            if not reps:
                continue
            spec = {
                "benchmark": benchmark,
                "import": where,
                "points": points,
                "repetitions": reps,
                "warmup": warmup,
                "seed": seed,
                "process": proc,
                "output": os.path.join(tmp, f"worker{proc}.json"),
                "error": os.path.join(tmp, f"worker{proc}.error"),
                "progress": progress,
            }
            part, interrupted, reason = _run_worker(spec, tmp)
            if reason is not None:
                lost.append({"process": proc, "repetitions": reps, "reason": reason})
            if part is not None:
                collected += part.results
                runs += part.runs
            if interrupted:
                break
    if lost and not collected and not interrupted:
        first = lost[0]
        raise RuntimeError(
            f"sweep worker {first['process']} failed: {first['reason']}"
            + (f" (and {len(lost) - 1} more)" if len(lost) > 1 else "")
        )
    return ResultSet(collected, runs, machine(), interrupted=interrupted, lost=lost)


def lost_lines(rs):
    """One line per worker process a ResultSet lost, for stderr."""
    return [
        f"pagezero: warning: worker process {x['process']} lost (repetitions "
        f"{', '.join(map(str, x['repetitions']))}): {x['reason']}"
        for x in rs.lost
    ]


def sweep(benchmark, grid, repeat=3, warmup=1, processes=1, progress=None, seed=0):
    """Run `benchmark` ("memset", "memcpy", ...) at every point of `grid`.

    Every point is checked before anything runs.

    Parameters
    ----------
    benchmark : str
        "memset", "memcpy", ...
    grid : dict
        {parameter: [values]} (a single value stands for a list of one),
        e.g. ``{"function": ["default", "generic"], "size": ["1GB"],
        "chunk": ["4KB", "2MB", "32MB"], "loops": [3]}``.
    repeat : int
        Repetitions of the whole grid.
    warmup : int
        Passes thrown away first.
    processes : int
        Spread the repetitions over this many fresh processes, run one
        after the other.
    progress : bool or None
        A tqdm bar on stderr (default: when stderr is a terminal).
    seed : int
        Each repetition runs the points in an order shuffled by
        random.Random(seed + repetition).

    Returns
    -------
    ResultSet
        Each run description naming its repetition, process and pid; after a
        stop signal, the part measured, with interrupted naming the signal. A
        worker process that dies loses its repetitions only: the ResultSet's
        `lost` lists such processes ({"process", "repetitions", "reason"}) and
        lost_lines() words them.

    Raises
    ------
    ValueError
        For an unknown benchmark or a bad point (the first one found).
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
