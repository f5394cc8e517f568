"""A sweep's worker processes: fresh interpreters (pagezero.runs.worker), one after
the other, each given a JSON spec (benchmark, points, its repetitions) and saving
a ResultSet the sweep reads back. Each runs in a session of its own, so a stop
signal reaches it once, from the sweep, which passes it on and waits for the save.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from pagezero.interrupt import STOP_SIGNALS, as_interrupted, deferred
from pagezero.results.resultset import ResultSet
from pagezero.runs.progress import Progress, run_finished
from pagezero.runs.registry import BENCHMARKS
from pagezero.system.machine import machine

# How long a stopped worker may take to save: it stops within a loop, so only one that hangs.
WORKER_STOP_S = 60


def _stop_worker(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Pass a stop signal on to a worker, wait, signals held, until it saved (a second Ctrl-C
    does not skip the wait)."""
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


def _wait(proc: subprocess.Popen[bytes]) -> int:
    """Wait for a worker to end: not Popen.wait() alone, which on KeyboardInterrupt waits
    0.25 s more for a child it assumes the Ctrl-C reached too (bpo-25942); WNOWAIT
    leaves the worker for Popen.wait() to reap."""
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    return proc.wait()


def _importable(benchmark: str) -> dict[str, str | None]:
    """What a worker imports to run `benchmark`: {"module", "qualname", "path"};
    ValueError when a fresh interpreter cannot import its run function (one
    defined in __main__, a lambda, a function inside a function)."""
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
        # Started with the stop signals held, which it inherits: one sent to it while its
        # interpreter starts waits until its handlers are in place (worker._run) instead of
        # ending it with a traceback; and this process cannot stop between Popen and wait.
        with deferred():
            # -m from a directory that is not the source tree (see tests/conftest.py).
            proc = subprocess.Popen(
                [sys.executable, "-m", "pagezero.runs.worker", spec_file],
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
    # A worker a stop signal ended saved what it measured (if anything) and exited 128 + signum.
    by_signal = {128 + s: signal.Signals(s).name for s in STOP_SIGNALS}
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
    """The repetitions over `processes` fresh interpreters, one at a time (process i runs
    repetitions i, i + processes, ...), each end a step of `progress` (None: a run of the
    ambient one). A worker that dies loses its own only (``rs.lost``); RuntimeError if all."""
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
