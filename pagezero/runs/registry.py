"""The benchmarks a sweep can run, by name.

pagezero.runs.sweeps registers its own (memset, memcpy, mmap, batch, folio);
register() adds others. A worker process of a sweep finds a benchmark here
by the name its spec gives, after importing the run function
(pagezero.runs.worker), so one registered by a program runs there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Benchmark", "BENCHMARKS", "register"]


@dataclass(frozen=True)
class Benchmark:
    """A sweepable benchmark.

    Attributes
    ----------
    name : str
        Its name in BENCHMARKS.
    run : callable
        ``run(**params)`` measures one point and returns a Result. Typed
        open: the built-ins return a ResultSet for ``runs > 1``, which a
        sweep never passes.
    check : callable
        ``check(**params)`` raises ValueError (or UnavailableError) on a bad
        point, before anything runs.
    """

    name: str
    run: Callable[..., Any]  # run(**params) -> Result
    check: Callable[..., Any]  # check(**params): raises ValueError / UnavailableError


BENCHMARKS: dict[str, Benchmark] = {}


def register(name: str, run: Callable[..., Any], check: Callable[..., Any] | None = None) -> None:
    """Make a benchmark sweepable.

    Parameters
    ----------
    name : str
        The benchmark's name, as sweep() takes it (replaces one of that name).
    run : callable
        ``run(**params)`` returns a Result. For ``processes > 1``, it must be
        importable by its module and name (a top-level function of a module,
        not of ``__main__``): each worker imports it.
    check : callable or None
        ``check(**params)`` raises on a bad point before anything runs
        (default: no check).
    """
    BENCHMARKS[name] = Benchmark(name, run, check or (lambda **params: None))
