"""perf bench mem's memset and memcpy: plan() checks every argument, run() makes the C call."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pagezero.measure.conditions as conditions
from pagezero import _core, interrupt
from pagezero.measure.conditions import THREADS_MODES, Conditions, evict_bytes
from pagezero.measure.conditions import thread_rates as thread_rates
from pagezero.measure.conditions import thread_spread as thread_spread
from pagezero.results.resultset import Result, ResultSet
from pagezero.system import hugepages
from pagezero.system.backing import huge_details
from pagezero.system.kernels import KERNEL_KIND, find_kernel
from pagezero.system.machine import machine
from pagezero.system.memory import check_page, thp_mode
from pagezero.units import format_page, format_size, parse_page, parse_size

CLOCKS: tuple[str, ...] = _core.clocks()
# settle=N: at least this many untimed loops (N permitting), until two in a row agree within
# SETTLE_TOLERANCE_PCT (csrc/mem_bench.h says why).
SETTLE_MIN_LOOPS: int = _core.SETTLE_MIN_LOOPS
SETTLE_TOLERANCE_PCT: int = _core.SETTLE_TOLERANCE_PCT

# Warm-up (docs/measuring.rst, "Warm first"): half the rate of the rest, far beyond the 3-5%
# between runs of a warm machine, and well above the five-to-tenfold of a host's first touch.
WARM_FRACTION = 0.5
# A loop is warming up below a quarter of the rest's rate, still well above a host's first
# touch: a fresh process's first loop on a loaded machine can take twice (page tables, lists).
WARM_LOOP_FRACTION = 0.25
MIN_KEPT = 1


def warming_runs(rates: Sequence[float], fraction: float = WARM_FRACTION) -> int:
    """How many leading runs (or loops) of `rates` (any rate: bytes/sec, 1/duration; in the
    order run) are still warming up: below `fraction` of the median rate after them."""
    if any(not r > 0 for r in rates):
        raise ValueError(f"run rates must be positive, not {list(rates)!r}")
    n = 0
    while len(rates) - n - 1 >= MIN_KEPT:
        rest = statistics.median(rates[n + 1 :])
        if rates[n] >= fraction * rest:
            break
        n += 1
    return n


def check_clock(clock: str, threads: int = 1) -> str:
    """`clock`, checked to be one of CLOCKS that `threads` threads can read."""
    conditions.check_choice("clock", clock, CLOCKS)
    if threads > 1 and clock == "cycles":
        raise ValueError(
            "the cycles clock counts the thread that opened it only: "
            "use ns or tsc with more than one thread"
        )
    return clock


def check_fill_value(value: int | str) -> int:
    """The fill byte for the C core: 0..255, or its VALUE_LOOP for "loop" (perf's loop index)."""
    if value == "loop":
        return _core.VALUE_LOOP
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255 or 'loop', not {value!r}")
    return value


@dataclass(frozen=True)
class Plan:
    """A memset/memcpy run's checked arguments, for any kernel (made by plan())."""

    benchmark: str  # "memset" or "memcpy"
    nbytes: int
    chunk: int  # as given: 0 means the whole extent
    shift: int
    thp: bool | None  # None, True or False, as given
    loops: int
    clock: str
    value: int | str  # as given: an int or "loop" (memset only)
    conditions: Conditions = Conditions()
    offset: int = 0  # buffers start this far past a page boundary
    settle: int = 0  # the most untimed loops to settle the buffer first (0: none)

    @property
    def kind(self) -> str:  # the kernel kind: clear or copy
        return KERNEL_KIND[self.benchmark]

    def params(self) -> dict[str, Any]:
        """The plan as a Result's params (conditions only where they differ from the defaults)."""
        p = dict(size=self.nbytes, page=format_page(self.shift), chunk=self.chunk)
        p.update(loops=self.loops, thp=self.thp)
        if self.kind == "clear":
            p["value"] = self.value
        p.update(self.conditions.params())
        p.update({k: v for k, v in (("offset", self.offset), ("settle", self.settle)) if v})
        return p


def plan(benchmark: str, *args: Any, **kwargs: Any) -> Plan:
    """memset's or memcpy's arguments but the kernel's name, checked before anything is mapped."""
    conditions.check_choice("benchmark", benchmark, ("memset", "memcpy"))
    a = conditions.arguments(memset if benchmark == "memset" else memcpy, args, kwargs)
    size, chunk, thp, offset, threads = a["size"], a["chunk"], a["thp"], a["offset"], a["threads"]
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = check_page(parse_page(a["page"]), thp)
    thp_mode(thp, shift)
    conditions.check_loops(a["loops"], benchmark)
    value = a.get("value", 0)
    if KERNEL_KIND[benchmark] == "clear":
        check_fill_value(value)
    # Conditions take None for benchmarks whose mode is fixed; memset and memcpy need one.
    conditions.check_choice("threads mode", a["threads_mode"], THREADS_MODES)
    c = Conditions.check(
        a["cache"], threads, a["threads_mode"], a["node"], a["cpu_node"], a["counters"]
    )
    check_clock(a["clock"], c.threads)
    align, parts = _core.split_region(nbytes, c.threads, shift, thp_mode(thp, shift))
    if c.threads_mode == "shared" and not parts[0]:
        raise ValueError(
            f"size ({format_size(nbytes)}) is too small for {c.threads} threads: "
            f"each needs at least {format_size(align)} of it, a whole page"
            + (" (thp=True: parts start on 2MB pages)" if thp is True else "")
        )
    conditions.check_int("offset", offset, 0, 4095)
    settle = a.get("settle", 0)  # memset's only
    if isinstance(settle, bool) or not isinstance(settle, int) or settle == 1 or settle < 0:
        raise ValueError(f"settle must be 0 or an int of at least 2 (loops), not {settle!r}")
    if settle and (c.cold or c.threads != 1):
        raise ValueError("settle is for one thread clearing a hot buffer (not cold, not threads)")
    return Plan(
        benchmark, nbytes, chunk_bytes, shift, thp, a["loops"], a["clock"], value, c, offset, settle
    )


def run(p: Plan, function: str) -> Result | None:
    """Plan `p` with the named kernel: one C call; None as interrupt.finish() says."""
    kernel = find_kernel(function, p.kind)
    fill_value = check_fill_value(p.value) if p.kind == "clear" else 0
    if kernel.zero_only and fill_value != 0:
        raise ValueError(f"kernel {function!r} can only write zeros (value must be 0)")
    c = p.conditions
    if p.shift != 12:  # MappingError before anything is mapped unless the hugepages are free
        buffers = (c.threads if c.threads_mode == "private" else 1) * (2 if p.kind == "copy" else 1)
        hugepages.check_mappable(p.nbytes + p.offset, format_page(p.shift), buffers, c.node)
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
        mode=c.threads_mode or "shared",  # plan() refuses None
        cpus=cpus,
        node=-1 if c.node is None else c.node,
        counters=c.counters,
        settle=p.settle,
    )

    def result(raw: dict[str, Any]) -> Result:
        timing = "per chunk: flush, clock, clear, clock; samples sum the chunks"
        return Result(
            benchmark=p.benchmark,
            function=function,
            params=p.params(),
            bytes_per_loop=sum(raw["thread_bytes"]),
            clock=p.clock,
            samples=raw["samples"],
            clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
            machine=machine(),
            details={
                **c.details(raw, timing, raw["thread_bytes"], cpus),
                **huge_details(raw.get("huge_pages")),
                **({k: raw[k] for k in ("settle_loops", "settled")} if p.settle else {}),
            },
            interrupted=raw["interrupted"],
        )

    return interrupt.finish(raw, result)


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
    settle: int = 0,
    runs: int = 1,
) -> Result | None:
    """Time `loops` passes of clearing `size` bytes (mapped and prefaulted first), as
    perf bench mem memset; docs/measuring.rst says how, and how it differs from perf.

    Parameters
    ----------
    size, chunk : int or str
        Bytes, or strings such as "4KB", "1GB" (powers of 1024); chunk 0: the whole extent.
    page : {"4KB", "2MB", "1GB"}
        The page size; 2MB and 1GB are hugetlb pages (needs reserved hugepages).
    function : str
        A clear kernel's name (pagezero.kernels()).
    loops : int
        The timed passes, one sample each.
    clock : {"ns", "timeval", "cycles", "tsc"}
        "ns" is CLOCK_MONOTONIC_RAW; "cycles" needs a PMU.
    value : int or "loop"
        The fill byte, or "loop": the loop index, as perf writes.
    thp : bool or None
        4KB pages: False refuses transparent huge pages, True asks, None: the system's policy.
    cache : {"hot", "cold"}
        "hot": the same buffer every loop (perf's); "cold": each chunk flushed, untimed, first.
    threads : int
        That many threads, each pinned to its own CPU (thread_rates() reads each one's).
    threads_mode : {"shared", "private"}
        "shared": one region split into whole pages; "private": a region of `size` each.
    node, cpu_node : int or None
        The NUMA node to bind the buffers to (mbind); the node whose CPUs run the threads.
    counters : bool
        Hardware counters per loop, summed over threads, in details["counters"].
    offset : int
        Start every buffer this many bytes (0..4095) past a page boundary.
    settle : int
        0, or the most untimed loops (2+; hot, one thread) first, until two in a row agree
        within SETTLE_TOLERANCE_PCT: details["settle_loops"] ran, details["settled"].

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
    return run(plan("memset", **locals()), function)


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
) -> Result | None:
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.

    Parameters
    ----------
    size, page, chunk, loops, clock, thp
        As memset() takes them.
    cache, threads, threads_mode, node, cpu_node, counters, offset
        As memset() takes them (cold flushes both buffers' chunks; an offset moves both).
    function : str
        A copy kernel's name (pagezero.kernels()).

    Raises
    ------
    ValueError, UnavailableError, MappingError, Interrupted
        As memset().
    """
    return run(plan("memcpy", **locals()), function)


def scaling(
    size: int | str = "1GB",
    function: str = "default",
    max_threads: int | None = None,
    threads_mode: str = "shared",
    loops: int = 5,
    **kwargs: Any,
) -> ResultSet:
    """memset with 1, 2, ... max_threads threads (default: every allowed CPU), one Result each."""
    max_threads = max_threads or len(os.sched_getaffinity(0))
    conditions.check_threads(max_threads)
    measured: list[Any] = [  # None too, as run() says: kept as they come
        memset(size, function=function, loops=loops, threads=n, threads_mode=threads_mode, **kwargs)
        for n in range(1, max_threads + 1)
    ]
    return ResultSet(measured)
