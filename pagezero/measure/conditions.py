"""The conditions a benchmark clears under, checked and recorded once, and the limits."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from pagezero import _core
from pagezero.results.points import spread
from pagezero.results.result import Result
from pagezero.system.machine import eviction_cache
from pagezero.system.memory import check_node, node_cpus

CACHE_STATES = ("hot", "cold")  # Conditions' fields say what each means
THREADS_MODES = ("shared", "private")

# The most loops a run may ask for: batch and folio record every batch / touch of every loop.
MAX_LOOPS = dict(
    memset=10_000_000, memcpy=10_000_000, mmap=10_000_000, batch=100_000, folio=100_000
)
# mmap's threads are not pinned, but as the others at most one per CPU this process may run on
# (a thread waiting for a CPU would time the scheduler), and the C core's team (PZ_MAX_THREADS).
MAX_FAULT_THREADS = 1024


def arguments(
    function: Callable[..., Any],
    args: Iterable[Any],
    kwargs: Mapping[str, Any],
    without: Iterable[str] = (),
) -> dict[str, Any]:
    """What `function`'s parameters but `without` and runs (1 here) get from (args, kwargs)."""
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.name not in without]
    bound = signature.replace(parameters=params).bind(*args, **kwargs)
    bound.apply_defaults()
    a = dict(bound.arguments)
    runs = a.pop("runs", 1)
    if runs != 1 or isinstance(runs, bool):
        raise ValueError(
            f"runs={runs!r} here: pagezero.measure measures one run in this process; "
            f"pagezero.{function.__name__}(..., runs=N) measures in N fresh processes"
        )
    return a


def check_choice(what: str, value: str, choices: Sequence[str]) -> str:
    """`value`, checked to be one of `choices`; the message names `what` and lists them."""
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r} (expected one of: {', '.join(choices)})")
    return value


def check_bool(name: str, value: object) -> bool:
    """`value`, checked to be True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")
    return value


def check_int(name: str, value: object, low: int, high: int) -> int:
    """`value`, checked to be an int (not a bool) in low..high; the message names `name`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


def check_loops(loops: object, benchmark: str) -> int:
    """`loops`, checked to be an int from 1 to ``MAX_LOOPS[benchmark]``."""
    return check_int("loops", loops, 1, MAX_LOOPS[benchmark])


def choose_cpus(threads: int, cpu_node: int | None = None) -> tuple[int, ...]:
    """The lowest `threads` CPUs this process may run on (of `cpu_node` if given)."""
    allowed = set(os.sched_getaffinity(0))
    where = "allowed to this process (os.sched_getaffinity)"
    if cpu_node is not None:
        check_node(cpu_node, "cpu_node")
        allowed &= node_cpus(cpu_node)
        where = f"of node {cpu_node} allowed to this process"
    if threads > len(allowed):
        raise ValueError(
            f"{threads} threads need {threads} distinct CPUs, and only {len(allowed)} are {where}"
        )
    return tuple(sorted(allowed)[:threads])


def check_threads(threads: object) -> int:
    """`threads`, checked to be at least 1 and at most the CPUs this process may run on."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ValueError(f"threads must be an int, not {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    allowed = len(os.sched_getaffinity(0))
    if threads > allowed:
        raise ValueError(
            f"threads ({threads}) is more than the {allowed} CPUs this process "
            f"may run on (os.sched_getaffinity)"
        )
    return threads


def evict_bytes() -> int:
    """Bytes read to evict the caches without a flush: twice machine.eviction_cache() (or 32MB)."""
    return 2 * (eviction_cache()["bytes"] or (32 << 20))


def thread_rates(result: Result) -> tuple[float, ...] | None:
    """Each thread's bytes/sec over its loops (inf for 0 time); None for cycles or no threads."""
    samples = result.details.get("thread_samples")
    if result.clock_hz is None or samples is None:
        return None
    # A fault run's threads each fault their own params["size"].
    sizes = result.details.get("thread_bytes") or (result.params["size"],) * len(samples)
    return tuple(
        n * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
        for n, s in zip(sizes, samples)
    )


def thread_spread(result: Result) -> tuple[float, float] | tuple[None, None]:
    """The threads' mean rate and its %stdev, perf's "/thread ( +- x% )"; else (None, None)."""
    return spread(thread_rates(result) or ())


@dataclass(frozen=True)
class Conditions:
    """How a run is measured besides its size; ``Conditions()`` is perf's plain run."""

    cache: str = "hot"  # hot: the same buffer every loop; cold: each chunk flushed first
    threads: int = 1  # each pinned to its own CPU when more than one
    threads_mode: str | None = "shared"  # shared: one region split; private; None: fixed
    node: int | None = None  # NUMA node for the memory (mbind), or None
    cpu_node: int | None = None  # NUMA node whose CPUs run the threads, or None
    counters: bool = False  # hardware counters (perf_event_open) around each loop

    @classmethod
    def check(cls, *args: Any, **kwargs: Any) -> Conditions:
        """Checked conditions, the only place they are checked (ValueError on the first bad one)."""
        c = cls(*args, **kwargs)
        check_choice("cache state", c.cache, CACHE_STATES)
        check_threads(c.threads)
        if c.threads_mode is not None:
            check_choice("threads mode", c.threads_mode, THREADS_MODES)
        if c.node is not None:
            check_node(c.node, "node")
        if c.cpu_node is not None:
            choose_cpus(c.threads, c.cpu_node)
        check_bool("counters", c.counters)
        return c

    cold = property(lambda self: self.cache == "cold")

    def cold_args(self) -> dict[str, Any]:
        """The C core's keywords for the cache state and counters (batch's and folio's)."""
        return {"cold": self.cold, "evict_bytes": evict_bytes(), "counters": self.counters}

    def cpus(self) -> tuple[int, ...]:
        """The CPUs to pin the threads to: none for one thread without a cpu_node (as perf)."""
        if self.threads > 1 or self.cpu_node is not None:
            return choose_cpus(self.threads, self.cpu_node)
        return ()

    def params(self) -> dict[str, Any]:
        """A Result's params: what differs from the defaults (a mode only with threads)."""
        with_mode = self.threads != 1 and self.threads_mode is not None
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if (with_mode if f.name == "threads_mode" else getattr(self, f.name) != f.default)
        }

    def details(
        self,
        raw: Mapping[str, Any],
        cold_timing: str,
        thread_bytes: Sequence[int],
        cpus: tuple[int, ...] = (),
    ) -> dict[str, Any]:
        """What the conditions add to a Result's details from the C core's answer `raw`."""
        d: dict[str, Any] = {}
        if self.threads > 1 or cpus:
            d.update(thread_samples=raw["thread_samples"], thread_bytes=tuple(thread_bytes))
            d["cpus"] = cpus
        if self.cold:
            d.update(cold_method=raw["cold_method"], cold_timing=cold_timing)
        if raw.get("counters") is not None:
            d["counters"] = raw["counters"]
            if "PAGEZERO_FAKE_COUNTERS" in _core.switches():
                d["counters_source"] = "fake (PAGEZERO_FAKE_COUNTERS)"
        return d
