"""Where a sweep's and runs=N's points run: here (run_here()) or in fresh worker processes."""

from __future__ import annotations

import ctypes
import json
import os
import pkgutil
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero import interrupt
from pagezero._core import UnavailableError
from pagezero.measure import fault, mem, policy
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs.progress import Progress, current, run_finished, shown
from pagezero.system.kernels import KERNEL_KIND, find_kernel
from pagezero.system.machine import machine


@dataclass(frozen=True)
class Benchmark:
    """A sweepable benchmark: ``run(**params)``, a Result; ``check(**params)``, raising first."""

    name: str
    run: Callable[..., Any]
    check: Callable[..., Any]


BENCHMARKS: dict[str, Benchmark] = {}


def register(name: str, run: Callable[..., Any], check: Callable[..., Any] | None = None) -> None:
    """Make `run(**params) -> Result` sweepable as `name` (docs/measuring.rst, "Sweeps")."""
    BENCHMARKS[name] = Benchmark(name, run, check or (lambda **params: None))


def _check_mem(benchmark: str) -> Callable[..., None]:
    def check(function: str = "default", **params: Any) -> None:
        mem.plan(benchmark, **params)
        kernel = find_kernel(function, KERNEL_KIND[benchmark])
        if not kernel.available:
            raise UnavailableError(f"kernel '{function}' is not available: {kernel.reason}")

    return check


def _check_mmap(function: str = "demand", reserve: bool = False, **params: Any) -> None:
    fault.check_latency(fault.plan(**params), fault.check_workload(function))


register("memset", mem.memset, _check_mem("memset"))
register("memcpy", mem.memcpy, _check_mem("memcpy"))
register("mmap", fault.faults, _check_mmap)
register("batch", policy.batch, policy.plan_batch)
register("folio", policy.folio, policy.plan_folio)


def _partial(stop: interrupt.Interrupted) -> list[Result]:
    """The Results a stop signal's Interrupted carries (the loops of the run it cut short)."""
    if isinstance(stop.partial, Result):
        return [stop.partial]
    return list(stop.partial.results) if isinstance(stop.partial, ResultSet) else []


def run_here(
    benchmark: str,
    points: Sequence[Mapping[str, Any]],
    repetitions: Sequence[int],
    warmup: int,
    seed: int,
    process: int,
    progress: Progress | bool | None,
) -> ResultSet:
    """Warm up, then each repetition's shuffled pass over the points, here; stopped: the part."""
    b = BENCHMARKS[benchmark]
    results: list[Result] = []
    runs: list[dict[str, Any]] = []
    own = shown(progress, f"pagezero sweep {benchmark}", len(points) * (warmup + len(repetitions)))
    # None and no bar: the points and passes are notes of the ambient Progress, if any.
    ambient = current() if own is None and progress is None else None

    def point_done(i: int, what: str) -> None:
        text = f"{benchmark} {what} point {i + 1} of {len(points)}"
        if own is not None:
            own.tick(text)
        elif ambient is not None:
            ambient.note(text)

    measuring: dict[str, Any] | None = None  # the run description of the point being measured
    try:
        for _ in range(warmup):
            for i, p in enumerate(points):
                b.run(**p)
                point_done(i, "warm-up")
        for n, rep in enumerate(repetitions):
            order = list(points)
            random.Random(seed + rep).shuffle(order)
            for i, p in enumerate(order):
                measuring = {"repetition": rep, "process": process, "pid": os.getpid()}
                results.append(b.run(**p))
                runs.append(measuring)
                measuring = None
                point_done(i, f"pass {n + 1} of {len(repetitions)},")
            if ambient is not None:
                run_finished(f"{benchmark} pass {n + 1} of {len(repetitions)} done")
    except KeyboardInterrupt as e:
        stop = interrupt.as_interrupted(e)
        if measuring is not None:  # a warm-up's loops are thrown away, stopped or not
            cut = _partial(stop)
            results += cut
            runs += [measuring] * len(cut)
        return ResultSet(results, runs, machine(), interrupted=stop.signame)
    finally:
        if own is not None and own is not progress:
            own.close()
    return ResultSet(results, runs, machine())


def _import_benchmark(spec: dict[str, Any]) -> None:
    """Register the spec's benchmark here, by importing its run function."""
    where = spec["import"]
    if where["path"] and where["path"] not in sys.path:
        # After the installed packages: pagezero itself still comes from them.
        sys.path.append(where["path"])
    target = pkgutil.resolve_name(f"{where['module']}:{where['qualname']}")
    if spec["benchmark"] not in BENCHMARKS or BENCHMARKS[spec["benchmark"]].run is not target:
        register(spec["benchmark"], target)


def _measure(spec: dict[str, Any]) -> int:
    """run_here() the spec, its ResultSet saved; the exit status (_worker's signals_interrupt)."""
    rs, late = None, None
    try:
        keys = ("benchmark", "points", "repetitions", "warmup", "seed", "process", "progress")
        rs = run_here(*(spec[k] for k in keys))
        # Held signals: a second one cannot leave the file half written.
        with interrupt.deferred():
            rs.save(spec["output"])
    except KeyboardInterrupt as e:
        # A signal that came as run_here returned, or was held during the save.
        late = interrupt.as_interrupted(e)
        if rs is not None:
            with interrupt.deferred():
                rs.save(spec["output"])
    if rs is not None and rs.interrupted:
        return 128 + getattr(signal, rs.interrupted, signal.SIGINT)
    return late.exit_status if late else 0


# prctl(2): have the kernel send this process a signal when its parent ends.
_PR_SET_PDEATHSIG = 1


def _end_with_parent(spec: dict[str, Any]) -> None:
    """SIGTERM when the sweep that started this worker ends (even killed), or has ended already."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != spec["parent"]:
        os.kill(os.getpid(), signal.SIGTERM)


def worker_main() -> int:
    """A worker: measure the spec ``sys.argv[1]`` names, save its ResultSet; the exit status."""
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    _end_with_parent(spec)
    status = _worker(spec)
    if os.getppid() != spec["parent"]:
        # Nobody will read the results: the dead sweep's folder goes, as the sweep would remove it.
        shutil.rmtree(os.path.dirname(os.path.abspath(spec["output"])), ignore_errors=True)
    return status


def _worker(spec: dict[str, Any]) -> int:
    try:
        with interrupt.signals_interrupt():
            # The sweep starts this process with the stop signals held (_run_worker):
            # one sent meanwhile arrives now, as an Interrupted.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt.STOP_SIGNALS)
            _import_benchmark(spec)
            return _measure(spec)
    except KeyboardInterrupt as e:
        return interrupt.as_interrupted(e).exit_status  # before anything was measured
    except Exception as e:
        reason = f"{type(e).__name__}: {e}".splitlines()[0]
        with open(spec["error"], "w") as f:
            f.write(reason + "\n")
        print(f"pagezero: error: worker process {spec['process']}: {reason}", file=sys.stderr)
        return 1


# A worker's command: -c, since importing pagezero loads this module before -m could run it.
_WORKER_MAIN = "import sys; from pagezero.runs.workers import worker_main; sys.exit(worker_main())"
# How long a stopped worker may take to save: it stops within a loop, so only one that hangs.
WORKER_STOP_S = 60


def _stop_worker(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Pass a stop signal on to a worker, wait, signals held, until it saved (a second too)."""
    sent = done = False
    while not done:
        try:
            with interrupt.deferred():
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


def _wait(proc: subprocess.Popen[bytes]) -> int:
    """Wait for a worker: Popen.wait() alone waits 0.25 s more on KeyboardInterrupt (bpo-25942)."""
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    return proc.wait()


def _importable(benchmark: str) -> dict[str, str | None]:
    """What a worker imports to run `benchmark` ({"module", "qualname", "path"}), or ValueError."""
    run = BENCHMARKS[benchmark].run
    # Any callable may be registered: its attributes are whatever it has.
    module: Any = getattr(run, "__module__", None)
    qualname: Any = getattr(run, "__qualname__", None) or getattr(run, "__name__", None)
    why = None
    if module is None or qualname is None:
        why = "has no module and name to import it by"
    elif module == "__main__":
        why = "is defined in __main__ (the script itself)"
    elif "<" in qualname:
        why = f"is {'a lambda' if '<lambda>' in qualname else 'defined inside a function'}"
    else:
        target: Any = sys.modules.get(module)
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
    # The folder the module's top-level package sits in, for a module found only through this
    # interpreter's sys.path (a script's own); a package's module is its __init__.py, deeper.
    path = getattr(sys.modules[module], "__file__", None)
    if path:
        levels = module.count(".") + (os.path.basename(path) == "__init__.py")
        path = os.path.dirname(os.path.abspath(path))
        for _ in range(levels):
            path = os.path.dirname(path)
    return {"module": module, "qualname": qualname, "path": path}


def _lost_reason(status: int, error_file: str) -> str:
    if os.path.exists(error_file):
        with open(error_file) as f:
            return f.read().strip()
    if status < 0:
        return f"killed by {signal.Signals(-status).name}"
    if status == 0:
        return "exited without saving its results"
    return f"exited with status {status}"


def _run_worker(
    spec: Mapping[str, Any], tmp: str
) -> tuple[ResultSet | None, str | None, str | None]:
    """Run one worker: (its ResultSet, the signal that stopped it, why it was lost), or Nones."""
    out = spec["output"]
    spec_file = os.path.join(tmp, f"worker{spec['process']}.spec.json")
    with open(spec_file, "w") as f:
        json.dump(spec, f)
    proc, stopped = None, None
    try:
        # Started with the stop signals held (inherited): one sent as it starts waits for its
        # handlers (_worker), not a traceback; and this one cannot stop between Popen and wait.
        with interrupt.deferred():
            # From a directory that is not the source tree (see tests/conftest.py).
            proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER_MAIN, spec_file],
                cwd=tmp,
                # A session of its own: a stop signal reaches it once, passed on by the sweep.
                start_new_session=True,
            )
        _wait(proc)
    except KeyboardInterrupt as e:
        stop = interrupt.as_interrupted(e)
        stopped = stop.signame
        if proc is None:
            raise
        _stop_worker(proc, stop.signum)
    part = ResultSet.load(out) if os.path.exists(out) else None
    # A worker a stop signal ended saved what it measured (if anything) and exited 128 + signum.
    by_signal = {128 + s: signal.Signals(s).name for s in interrupt.STOP_SIGNALS}
    if proc.returncode in by_signal:
        stopped = stopped or (part.interrupted if part else None) or by_signal[proc.returncode]
    elif part is None and not stopped:
        # (One the sweep's own stop reached before it could save: not lost, stopped.)
        return None, None, _lost_reason(proc.returncode, spec["error"])
    return part, stopped, None


def run_workers(
    benchmark: str,
    points: Sequence[Mapping[str, Any]],
    repeat: int,
    warmup: int,
    processes: int,
    seed: int,
    progress: Progress | bool | None,
) -> ResultSet:
    """The repetitions over `processes` fresh interpreters in turn; a dead one's go to rs.lost."""
    where = _importable(benchmark)
    collected: list[Any] = []  # the workers' Results
    runs: list[Mapping[str, Any]] = []
    lost: list[dict[str, Any]] = []
    interrupted: str | None = None
    with tempfile.TemporaryDirectory(prefix="pagezero-sweep-") as tmp:
        for proc in range(processes):
            reps = list(range(proc, repeat, processes))
            if not reps:
                continue
            spec = dict(benchmark=benchmark, points=points, repetitions=reps, warmup=warmup)
            spec.update(seed=seed, process=proc, progress=False, parent=os.getpid())
            spec.update(output=f"{tmp}/worker{proc}.json", error=f"{tmp}/worker{proc}.error")
            spec["import"] = where
            part, interrupted, reason = _run_worker(spec, tmp)
            done = f"{benchmark} run {proc + 1} of {processes} done"
            if not interrupted and isinstance(progress, Progress):
                progress.step(done, len(points) * (warmup + len(reps)))
            elif not interrupted and progress is None:
                run_finished(done)
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
