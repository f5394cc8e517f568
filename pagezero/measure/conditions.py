"""The conditions a benchmark runs under, checked once and recorded once.

Every benchmark (memset/memcpy, batch, folio; mmap for its threads) runs a
clear under the same conditions: a cache state, a number of threads and how
they share the memory, the NUMA node of the memory and of the CPUs, and
whether hardware counters are read. The plain run (perf's conditions: hot,
one unpinned thread, no placement, no counters) is Conditions() itself, so
a run with default conditions and one with `node=0` go through the same
Python function.

The limits on loops and threads live here too, one table for every
benchmark.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero.system.machine import llc_bytes
from pagezero.system.numa import check_node, node_cpus, numa_nodes

__all__ = [
    "Conditions",
    "CACHE_STATES",
    "THREADS_MODES",
    "MAX_LOOPS",
    "MAX_FAULT_THREADS",
    "check_loops",
    "check_int",
    "check_node",
    "choose_cpus",
    "numa_nodes",
    "node_cpus",
    "evict_bytes",
]

# hot: the same buffer again and again, as perf (the default, for parity);
# cold: every chunk flushed from the caches before its timed call.
CACHE_STATES = ("hot", "cold")
# shared: one region split into parts; private: a region per thread.
THREADS_MODES = ("shared", "private")

# The most loops a run may ask for, per benchmark. batch and folio record
# every batch / touch of every loop, so they are bounded lower.
MAX_LOOPS = {
    "memset": 10_000_000,
    "memcpy": 10_000_000,
    "mmap": 10_000_000,
    "batch": 100_000,
    "folio": 100_000,
}
# mmap's threads are not pinned, so they are not bounded by the CPUs this
# process may run on; the others pin one thread per CPU.
MAX_FAULT_THREADS = 1024


def check_int(name: str, value: object, low: int, high: int) -> int:
    """Check an integer argument's type and range.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : int
        The value (a bool is refused).
    low, high : int
        The inclusive range.

    Returns
    -------
    int
        `value`.

    Raises
    ------
    ValueError
        Naming `name`, for a non-int or a value outside low..high.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


def check_loops(loops: object, benchmark: str) -> int:
    """Check a loop count: an int from 1 to ``MAX_LOOPS[benchmark]``.

    Parameters
    ----------
    loops : int
        Loops asked for.
    benchmark : str
        ``"memset"``, ``"memcpy"``, ``"mmap"``, ``"batch"`` or ``"folio"``.

    Returns
    -------
    int
        `loops`.

    Raises
    ------
    ValueError
        For a non-int or a count out of range.
    """
    return check_int("loops", loops, 1, MAX_LOOPS[benchmark])


def choose_cpus(threads: int, cpu_node: int | None = None) -> tuple[int, ...]:
    """Distinct CPUs to pin `threads` threads to.

    Parameters
    ----------
    threads : int
        Threads, one per CPU.
    cpu_node : int, optional
        Take the CPUs of this NUMA node only.

    Returns
    -------
    tuple of int
        The lowest CPU numbers this process may run on (``os.sched_getaffinity``),
        of `cpu_node` if given.

    Raises
    ------
    ValueError
        When there are fewer such CPUs than threads, or `cpu_node` does not exist.
    """
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
    """Check a count of pinned threads: at least one, at most the CPUs this process may
    run on.

    Parameters
    ----------
    threads : int
        Threads asked for.

    Returns
    -------
    int
        `threads`.

    Raises
    ------
    ValueError
        For a non-int, fewer than 1, or more than ``os.sched_getaffinity`` allows.
    """
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
    """Bytes read to evict the caches where there is no flush by address.

    Returns
    -------
    int
        Twice the LLC's size in bytes (32MB assumed when sysfs gives no LLC size).
    """
    return 2 * (llc_bytes() or (32 << 20))


@dataclass(frozen=True)
class Conditions:
    """How a run is measured besides its size; ``Conditions()`` is perf's plain run.

    Build checked ones with :meth:`check`.

    Attributes
    ----------
    cache : {"hot", "cold"}
        Hot: the same buffer every loop (perf's conditions). Cold: each chunk flushed
        from the caches before its timed call.
    threads : int
        Threads, each pinned to its own CPU when more than one.
    threads_mode : {"shared", "private"} or None
        Shared: one region split into parts; private: a region per thread. None for
        benchmarks where the mode is fixed (batch gives every thread its own region;
        folio and mmap have no choice to record).
    node : int or None
        NUMA node the memory is bound to (``mbind``), or None.
    cpu_node : int or None
        NUMA node whose CPUs run the threads, or None.
    counters : bool
        Read hardware counters (``perf_event_open``) around each loop.
    """

    cache: str = "hot"
    threads: int = 1
    threads_mode: str | None = "shared"
    node: int | None = None  # NUMA node for the memory, or None
    cpu_node: int | None = None  # NUMA node whose CPUs run the threads, or None
    counters: bool = False

    @classmethod
    def check(
        cls,
        cache: str = "hot",
        threads: int = 1,
        threads_mode: str | None = "shared",
        node: int | None = None,
        cpu_node: int | None = None,
        counters: bool = False,
    ) -> Conditions:
        """Checked conditions: the only place they are checked.

        Parameters
        ----------
        cache, threads, threads_mode, node, cpu_node, counters
            As the attributes.

        Returns
        -------
        Conditions

        Raises
        ------
        ValueError
            On the first bad value: an unknown cache state or threads mode, a thread
            count this process cannot pin, a node the machine lacks, too few CPUs on
            `cpu_node`, or a non-bool `counters`.
        """
        if cache not in CACHE_STATES:
            raise ValueError(f"unknown cache state {cache!r} (expected hot or cold)")
        check_threads(threads)
        if threads_mode is not None and threads_mode not in THREADS_MODES:
            raise ValueError(f"unknown threads mode {threads_mode!r} (expected shared or private)")
        if node is not None:
            check_node(node, "node")
        if cpu_node is not None:
            choose_cpus(threads, cpu_node)
        if not isinstance(counters, bool):
            raise ValueError(f"counters must be True or False, not {counters!r}")
        return cls(cache, threads, threads_mode, node, cpu_node, counters)

    @property
    def default(self) -> bool:
        """Hot, one thread, no placement, no counters: perf's conditions."""
        return (
            self.cache == "hot"
            and self.threads == 1
            and self.node is None
            and self.cpu_node is None
            and not self.counters
        )

    @property
    def cold(self) -> bool:
        """True for cache-cold runs."""
        return self.cache == "cold"

    def cpus(self) -> tuple[int, ...]:
        """The CPUs the threads are pinned to.

        Returns
        -------
        tuple of int
            Empty for one thread without a `cpu_node` (unpinned, as the plain loop),
            else distinct CPUs (:func:`choose_cpus`).
        """
        if self.threads > 1 or self.cpu_node is not None:
            return choose_cpus(self.threads, self.cpu_node)
        return ()

    def params(self) -> dict[str, Any]:
        """The conditions as a result's params.

        Returns
        -------
        dict
            Only what differs from the defaults, under the keys results have always
            carried, so that older results keep their labels.
        """
        p: dict[str, Any] = {}
        if self.cache != "hot":
            p["cache"] = self.cache
        if self.threads != 1:
            p["threads"] = self.threads
            if self.threads_mode is not None:
                p["threads_mode"] = self.threads_mode
        if self.node is not None:
            p["node"] = self.node
        if self.cpu_node is not None:
            p["cpu_node"] = self.cpu_node
        if self.counters:
            p["counters"] = True
        return p

    def details(
        self,
        raw: Mapping[str, Any],
        cold_timing: str,
        thread_bytes: Sequence[int],
        cpus: tuple[int, ...] = (),
    ) -> dict[str, Any]:
        """What a conditioned run adds to a Result's details.

        Parameters
        ----------
        raw : dict
            The C core's answer.
        cold_timing : str
            What a sample covers in cold mode (the clock is read around each chunk).
        thread_bytes : sequence of int
            Bytes each thread cleared per loop.
        cpus : tuple of int
            The CPUs the threads were pinned to.

        Returns
        -------
        dict
            Per-thread samples and bytes (several threads or pinned ones), how the
            cache was made cold and what a sample then covers, and the counters.
        """
        d: dict[str, Any] = {}
        if self.threads > 1 or cpus:
            d.update(
                thread_samples=raw["thread_samples"], thread_bytes=tuple(thread_bytes), cpus=cpus
            )
        if self.cold:
            d["cold_method"] = raw["cold_method"]
            d["cold_timing"] = cold_timing
        if raw.get("counters") is not None:
            d["counters"] = raw["counters"]
            if "PAGEZERO_FAKE_COUNTERS" in _core.switches():
                d["counters_source"] = "fake (PAGEZERO_FAKE_COUNTERS)"
        return d
