"""A sweep's worker process (`python -m pagezero.runs.worker SPEC`): a JSON spec in,
a ResultSet file out; the run function imported by the module and name the spec
gives (workers._importable), so one a program registered runs here too.

A stop signal saves the points measured, marked with it, and exits 128 + signum
(the sweep reads "stopped", not "failed"); an error goes, in one line, to the
spec's error file, and the status is 1.
"""

from __future__ import annotations

import ctypes
import json
import os
import pkgutil
import shutil
import signal
import sys
from typing import Any

from pagezero.interrupt import STOP_SIGNALS, as_interrupted, deferred, signals_interrupt
from pagezero.runs.sweeps import BENCHMARKS, register, run_here


def _benchmark(spec: dict[str, Any]) -> None:
    """Register the spec's benchmark here, by importing its run function."""
    where = spec["import"]
    if where["path"] and where["path"] not in sys.path:
        # After the installed packages: pagezero itself still comes from them.
        sys.path.append(where["path"])
    target = pkgutil.resolve_name(f"{where['module']}:{where['qualname']}")
    if spec["benchmark"] not in BENCHMARKS or BENCHMARKS[spec["benchmark"]].run is not target:
        register(spec["benchmark"], target)


def _measure(spec: dict[str, Any]) -> int:
    rs, late = None, None
    try:
        with signals_interrupt():
            keys = ("benchmark", "points", "repetitions", "warmup", "seed", "process", "progress")
            rs = run_here(*(spec[k] for k in keys))
            # Held signals: a second one cannot leave the file half written.
            with deferred():
                rs.save(spec["output"])
    except KeyboardInterrupt as e:
        # A signal that came as run_here returned, or was held during the save.
        late = as_interrupted(e)
        if rs is not None:
            with deferred():
                rs.save(spec["output"])
    if rs is not None and rs.interrupted:
        return 128 + getattr(signal, rs.interrupted, signal.SIGINT)
    return late.exit_status if late else 0


# prctl(2): have the kernel send this process a signal when its parent ends.
_PR_SET_PDEATHSIG = 1


def _end_with_parent(spec: dict[str, Any]) -> None:
    """Stop, as a stop signal would, when the sweep that started this worker ends: one killed
    outright (SIGKILL, the OOM killer) cannot pass a signal on, and the worker would clear
    memory for nobody. SIGTERM arrives once the stop signals are unblocked; a parent that
    ended before prctl() took effect is caught by its pid."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != spec["parent"]:
        os.kill(os.getpid(), signal.SIGTERM)


def main() -> int:
    """Measure the spec named by ``sys.argv[1]``; the exit status (0, 128 + signum, or 1)."""
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    _end_with_parent(spec)
    status = _run(spec)
    if os.getppid() != spec["parent"]:
        # Nobody will read the results: the dead sweep's folder goes, as the sweep would remove it.
        shutil.rmtree(os.path.dirname(os.path.abspath(spec["output"])), ignore_errors=True)
    return status


def _run(spec: dict[str, Any]) -> int:
    try:
        with signals_interrupt():
            # The sweep starts this process with the stop signals held (workers._run_worker):
            # one sent meanwhile arrives now, as an Interrupted.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            _benchmark(spec)
            return _measure(spec)
    except KeyboardInterrupt as e:
        return as_interrupted(e).exit_status  # before anything was measured
    except Exception as e:
        reason = f"{type(e).__name__}: {e}".splitlines()[0]
        with open(spec["error"], "w") as f:
            f.write(reason + "\n")
        print(f"pagezero: error: worker process {spec['process']}: {reason}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
