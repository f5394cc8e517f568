"""The benchmarks a sweep or runs=N runs, by name: pagezero's own (memset, memcpy,
mmap, batch, folio, measured in one process) and any register() adds. A worker
finds one here after importing its run function, so a program's runs there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pagezero._core import UnavailableError
from pagezero.measure import fault, mem, policy
from pagezero.system.kernels import KERNEL_KIND, find_kernel


@dataclass(frozen=True)
class Benchmark:
    """A sweepable benchmark: ``run(**params)`` measures one point and returns a Result;
    ``check(**params)`` raises ValueError (or UnavailableError) on a bad point first."""

    name: str
    run: Callable[..., Any]
    check: Callable[..., Any]


BENCHMARKS: dict[str, Benchmark] = {}


def register(name: str, run: Callable[..., Any], check: Callable[..., Any] | None = None) -> None:
    """Make `run(**params) -> Result` sweepable as `name`, `check(**params)` raising on a
    bad point first. For processes > 1 each worker imports `run` by its module and
    name: a top-level function of an importable module (not of ``__main__``)."""
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
