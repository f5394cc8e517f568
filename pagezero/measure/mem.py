"""The perf bench mem workloads: memset and memcpy.

Arguments are checked and parsed here; the run itself (mapping, prefault,
timed loops) is one call into the C core with the GIL released.
"""

from __future__ import annotations

import os
from typing import Any

from pagezero import _core, interrupt
from pagezero.measure.conditions import (
    CACHE_STATES,
    THREADS_MODES,
    check_node,
    check_threads,
    choose_cpus,
    evict_bytes,
    node_cpus,
    numa_nodes,
)
from pagezero.measure.conditions import MAX_LOOPS as _MAX_LOOPS
from pagezero.measure.mem_plan import CLOCKS, Plan, check_fill_value, check_hugepages, plan
from pagezero.results.resultset import Result, ResultSet
from pagezero.results.summary import spread
from pagezero.runs.processes import check_runs, in_processes
from pagezero.system.backing import huge_details
from pagezero.system.kernels import find_kernel
from pagezero.system.machine import machine
from pagezero.system.memory import thp_mode

__all__ = [
    "memset",
    "memcpy",
    "plan",
    "run",
    "Plan",
    "CLOCKS",
    "MAX_LOOPS",
    "CACHE_STATES",
    "THREADS_MODES",
    "scaling",
    "thread_rates",
    "thread_spread",
    "numa_nodes",
    "node_cpus",
    "choose_cpus",
    "check_node",
]

MAX_LOOPS = _MAX_LOOPS["memset"]  # the limits live in conditions.py


def run(p: Plan, function: str) -> Result | None:
    """Run plan `p` with the named kernel: one call into the C core, whatever the conditions.

    Parameters
    ----------
    p : Plan
        The checked arguments.
    function : str
        A kernel's name, of the plan's kind (clear for memset, copy for memcpy).

    Returns
    -------
    Result or None
        One sample per loop. When a program's own handler takes a stop
        signal and returns, the loops completed, or None for none
        (pagezero.interrupt.finish).

    Raises
    ------
    ValueError
        For a kernel that can only write zeros asked for another value.
    UnavailableError
        For a kernel this machine cannot run; counters without a PMU.
    MappingError
        When the buffers cannot be mapped (hugepages lacking, for one).
    Interrupted
        When a signal stops the run, carrying the loops it completed
        (pagezero.interrupt.finish).
    """
    kernel = find_kernel(function, p.kind)
    fill_value = check_fill_value(p.value) if p.kind == "clear" else 0
    if kernel.zero_only and fill_value != 0:
        raise ValueError(f"kernel {function!r} can only write zeros (value must be 0)")
    check_hugepages(p)
    c = p.conditions
    cpus = c.cpus()
    raw = _core.bench_mem(
        p.kind,
        function,
        p.nbytes,
        chunk=p.chunk,
        page_shift=p.shift,
        thp=thp_mode(p.thp, p.shift),
        loops=p.loops,
        clock=p.clock,
        value=fill_value,
        offset=p.offset,
        cold=c.cold,
        evict_bytes=evict_bytes() if c.cold else 0,
        threads=c.threads,
        mode=p.threads_mode,
        cpus=cpus,
        node=-1 if c.node is None else c.node,
        counters=c.counters,
    )

    def result(raw: dict[str, Any]) -> Result:
        return Result(
            benchmark=p.benchmark,
            function=function,
            params=p.params(),
            bytes_per_loop=p.total_bytes,
            clock=p.clock,
            samples=raw["samples"],
            clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
            machine=machine(),
            details={
                **c.details(
                    raw,
                    "per chunk: flush, clock, clear, clock; samples sum the chunks",
                    p.thread_bytes(),
                    cpus,
                ),
                **huge_details(raw.get("huge_pages")),
            },
            interrupted=raw["interrupted"],
        )

    return interrupt.finish(raw, result)


# Reading a Result of several threads ---------------------------------------


def thread_rates(result: Result) -> tuple[float, ...] | None:
    """Each thread's rate over all its loops.

    Parameters
    ----------
    result : Result
        A memset/memcpy Result.

    Returns
    -------
    tuple of float or None
        One rate per thread, in bytes/sec (``inf`` for samples summing to 0);
        None for the cycles clock or a run without per-thread samples.
    """
    if result.clock_hz is None or "thread_samples" not in result.details:
        return None
    return tuple(
        n * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
        for n, s in zip(result.details["thread_bytes"], result.details["thread_samples"])
    )


def thread_spread(result: Result) -> tuple[float, float] | tuple[None, None]:
    """The threads' mean rate and how far they spread, as perf's "/thread ( +- x% )".

    Parameters
    ----------
    result : Result
        A memset/memcpy Result of several threads, measured with a clock.

    Returns
    -------
    tuple of (float, float), or (None, None)
        The mean per-thread rate in bytes/sec, and its standard deviation
        across threads in % of that mean; (None, None) without per-thread
        rates (the cycles clock).
    """
    return spread(thread_rates(result) or ())  # None: no rates, as spread(()) says


def scaling(
    size: int | str = "1GB",
    function: str = "default",
    max_threads: int | None = None,
    threads_mode: str = "shared",
    loops: int = 5,
    **kwargs: Any,
) -> ResultSet:
    """memset with 1, 2, ... max_threads threads.

    Parameters
    ----------
    size : int or str
        Bytes, or a string such as "1GB".
    function : str
        A clear kernel's name.
    max_threads : int or None
        The most threads; None for every CPU this process may run on.
    threads_mode : {"shared", "private"}
        As memset()'s.
    loops : int
        The timed passes of each thread count.
    **kwargs
        memset()'s other arguments.

    Returns
    -------
    ResultSet
        One Result per thread count; plot.plot_scaling draws it.

    Raises
    ------
    ValueError, UnavailableError, MappingError, Interrupted
        As memset().
    """
    max_threads = max_threads or len(os.sched_getaffinity(0))
    check_threads(max_threads)
    # memset's Results (runs=1), or what run() and kwargs make of them: kept as they come.
    measured: list[Any] = [
        memset(size, function=function, loops=loops, threads=n, threads_mode=threads_mode, **kwargs)
        for n in range(1, max_threads + 1)
    ]
    return ResultSet(measured)


def memset(
    size: int | str = "1GB",
    page: str = "4KB",
    chunk: int | str = 0,
    function: str = "default",
    loops: int = 10,
    clock: str = "ns",
    value: int | str = 0,
    thp: bool | None = False,
    cache: str = "hot",
    threads: int = 1,
    threads_mode: str | None = "shared",
    node: int | None = None,
    cpu_node: int | None = None,
    counters: bool = False,
    offset: int = 0,
    runs: int = 1,
) -> Result | ResultSet | None:
    """Time `loops` passes of clearing `size` bytes, as perf bench mem memset.

    The buffer is mapped populated and prefaulted before timing; each loop's
    time is a sample of the returned Result.

    Parameters
    ----------
    size, chunk : int or str
        Bytes, or strings such as "4KB", "1GB" (powers of 1024); chunk 0
        clears the whole extent in one call, otherwise each pass clears the
        region in chunk-sized calls.
    page : {"4KB", "2MB", "1GB"}
        The page size; 2MB and 1GB are hugetlb pages (needs reserved hugepages).
    function : str
        A clear kernel's name (pagezero.kernels()).
    loops : int
        The timed passes, one sample each.
    clock : {"ns", "timeval", "cycles", "tsc"}
        "ns" (CLOCK_MONOTONIC_RAW), "timeval", "cycles" (needs a PMU) or "tsc".
    value : int or "loop"
        The fill byte (0: the subject is zeroing), or "loop" to write the
        loop index as perf does, for side-by-side parity.
    thp : bool or None
        For 4KB pages, False refuses transparent huge pages (MADV_NOHUGEPAGE),
        True asks for them, None leaves the system's policy.
    cache : {"hot", "cold"}
        "hot" (default, perf's conditions: the same buffer every loop, so
        extents that fit a cache are timed from it) or "cold": every chunk is
        flushed from the caches (clflushopt, else clflush, else evicted by
        reading twice the LLC; details["cold_method"] says which) outside the
        timing, and the clock is read around each chunk, a loop's sample
        being the sum: as a page fault finds a page it has not touched lately.
    threads : int
        That many threads, each pinned to its own allowed CPU, started
        together behind a barrier every loop. A sample is the first start to
        the last end (cold: the slowest thread's sum); thread_rates() and
        thread_spread() read the per-thread samples.
    threads_mode : {"shared", "private"}
        "shared" splits one region of `size` into disjoint 4KB-aligned parts,
        "private" gives each thread its own region of `size`.
    node : int or None
        Bind the buffers to this NUMA node (mbind).
    cpu_node : int or None
        Run the threads on that node's CPUs.
    counters : bool
        Read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses,
        cycles and instructions around each loop into details["counters"]
        (per-loop deltas summed over threads).
    offset : int
        Start the buffer this many bytes (0..4095) past a page boundary.
        perf maps its buffers since "perf bench mem: Switch from zalloc() to
        mmap()" (2025); older perf, Debian's 6.1 among them, malloc()s them, 16
        bytes in: rep stosq runs several percent slower there. Under any
        conditions: every buffer (each thread's, memcpy's source) moves.
    runs : int
        1 (default) measures here; N > 1 measures in N fresh processes, one
        after the other, each with its own mapping, prefault and loops
        (pagezero.runs.processes).

    Returns
    -------
    Result or ResultSet
        A Result when runs is 1 (None as run() says); else a ResultSet of N
        Results, runs[i]["process"] = i.

    Raises
    ------
    ValueError
        For a bad argument, a NUMA node the machine lacks among them.
    UnavailableError
        For a kernel or clock this machine cannot run; counters without a PMU.
    MappingError
        When the buffer cannot be mapped (hugepages lacking, for one).
    Interrupted
        When a stop signal cuts the run short.
    """
    if check_runs(runs) > 1:
        return in_processes("memset", locals())
    return run(
        plan(
            "memset",
            size,
            page,
            chunk,
            loops,
            clock,
            value,
            thp,
            cache,
            threads,
            threads_mode,
            node,
            cpu_node,
            counters,
            offset,
        ),
        function,
    )


def memcpy(
    size: int | str = "1GB",
    page: str = "4KB",
    chunk: int | str = 0,
    function: str = "default",
    loops: int = 10,
    clock: str = "ns",
    thp: bool | None = False,
    cache: str = "hot",
    threads: int = 1,
    threads_mode: str | None = "shared",
    node: int | None = None,
    cpu_node: int | None = None,
    counters: bool = False,
    offset: int = 0,
    runs: int = 1,
) -> Result | ResultSet | None:
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.

    Parameters
    ----------
    size, page, chunk, loops, clock, thp, runs
        As memset() takes them.
    cache, threads, threads_mode, node, cpu_node, counters, offset
        As memset() takes them (cold flushes source and destination chunks;
        an offset moves both buffers).
    function : str
        A copy kernel's name (pagezero.kernels()).

    Returns
    -------
    Result or ResultSet
        A Result when runs is 1 (None as run() says); else a ResultSet of N
        Results, runs[i]["process"] = i.

    Raises
    ------
    ValueError, UnavailableError, MappingError, Interrupted
        As memset().
    """
    if check_runs(runs) > 1:
        return in_processes("memcpy", locals())
    return run(
        plan(
            "memcpy",
            size,
            page,
            chunk,
            loops,
            clock,
            0,
            thp,
            cache,
            threads,
            threads_mode,
            node,
            cpu_node,
            counters,
            offset,
        ),
        function,
    )
