"""The perf bench mem workloads: memset and memcpy.

Arguments are checked and parsed here; the run itself (mapping, prefault,
timed loops) is one call into the C core with the GIL released.
"""

import os
from dataclasses import dataclass

from . import _core, hugepages, interrupt
from .conditions import (
    CACHE_STATES,
    THREADS_MODES,
    Conditions,
    check_loops,
    check_node,
    check_threads,
    choose_cpus,
    evict_bytes,
    node_cpus,
    numa_nodes,
)
from .conditions import MAX_LOOPS as _MAX_LOOPS
from .kernels import KERNEL_KIND, find_kernel
from .mappings import huge_details
from .region import thp_mode
from .results import Result
from .runs import check_runs, in_processes
from .stats import spread
from .sysinfo import machine
from .units import format_page, format_size, parse_page, parse_size

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

CLOCKS = _core.clocks()
MAX_LOOPS = _MAX_LOOPS["memset"]  # the limits live in conditions.py
# Parts of a shared region start on 4KB boundaries (csrc/mem_bench.c).
_PART_ALIGN = 4096


def check_clock(clock, threads=1):
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (expected one of: {', '.join(CLOCKS)})")
    if threads > 1 and clock == "cycles":
        raise ValueError(
            "the cycles clock counts the thread that opened it only: "
            "use ns or tsc with more than one thread"
        )
    return clock


def check_fill_value(value):
    """The fill byte, or VALUE_LOOP for perf's memset(dst, loop_index, size)."""
    if value == "loop":
        return _core.VALUE_LOOP
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255 or 'loop', not {value!r}")
    return value


@dataclass(frozen=True)
class Plan:
    """Checked, parsed arguments of a memset/memcpy run, for any function."""

    benchmark: str  # "memset" or "memcpy"
    nbytes: int
    chunk: int  # as given: 0 means the whole extent
    shift: int
    thp: object  # None, True or False, as given
    loops: int
    clock: str
    value: object  # as given: an int or "loop" (memset only)
    conditions: Conditions = Conditions()
    offset: int = 0  # buffers start this far past a page boundary

    @property
    def kind(self):
        """The kernel kind it runs: "clear" or "copy"."""
        return KERNEL_KIND[self.benchmark]

    # The conditions, by the names callers have always read.
    cache = property(lambda self: self.conditions.cache)
    threads = property(lambda self: self.conditions.threads)
    threads_mode = property(lambda self: self.conditions.threads_mode)
    node = property(lambda self: self.conditions.node)
    cpu_node = property(lambda self: self.conditions.cpu_node)
    counters = property(lambda self: self.conditions.counters)

    @property
    def total_bytes(self):
        """Bytes one loop clears over all threads."""
        return self.nbytes * (self.threads if self.threads_mode == "private" else 1)

    def thread_bytes(self):
        """Bytes each thread clears per loop (the C core's split of a shared region)."""
        if self.threads_mode == "private" or self.threads == 1:
            return (self.nbytes,) * self.threads
        part = self.nbytes // self.threads // _PART_ALIGN * _PART_ALIGN
        return (part,) * (self.threads - 1) + (self.nbytes - part * (self.threads - 1),)

    def params(self):
        p = {
            "size": self.nbytes,
            "page": format_page(self.shift),
            "chunk": self.chunk,
            "loops": self.loops,
            "thp": self.thp,
        }
        if self.kind == "clear":
            p["value"] = self.value
        p.update(self.conditions.params())
        if self.offset:
            p["offset"] = self.offset
        return p


def plan(
    benchmark,
    size="1GB",
    page="4KB",
    chunk=0,
    loops=10,
    clock="ns",
    value=0,
    thp=False,
    cache="hot",
    threads=1,
    threads_mode="shared",
    node=None,
    cpu_node=None,
    counters=False,
    offset=0,
):
    """Check every argument of a run except the function; ValueError on the first bad one."""
    if benchmark not in ("memset", "memcpy"):
        raise ValueError(f"unknown benchmark {benchmark!r} (expected memset or memcpy)")
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = parse_page(page)
    thp_mode(thp, shift)
    check_loops(loops, benchmark)
    if KERNEL_KIND[benchmark] == "clear":
        check_fill_value(value)
    c = Conditions.check(cache, threads, threads_mode, node, cpu_node, counters)
    check_clock(clock, c.threads)
    if c.threads > 1 and c.threads_mode == "shared" and nbytes // c.threads < _PART_ALIGN:
        raise ValueError(
            f"size ({format_size(nbytes)}) is too small for {c.threads} threads: "
            f"each needs at least 4KB of it"
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 4096:
        raise ValueError(f"offset must be an int in 0..4095 (bytes), not {offset!r}")
    return Plan(benchmark, nbytes, chunk_bytes, shift, thp, loops, clock, value, c, offset)


def check_hugepages(p):
    """For hugetlb pages, MappingError (pagezero.hugepages' message) unless the
    pool, and with a node that node, has the run's pages free: before
    mapping anything, so a bound prefault never meets an empty node."""
    if p.shift == 12:
        return
    page = format_page(p.shift)
    buffers = (p.threads if p.threads_mode == "private" else 1) * (2 if p.kind == "copy" else 1)
    needed = hugepages.pages_needed(p.nbytes + p.offset, page, buffers)
    hugepages.check_available(page, needed)
    if p.node is not None:
        hugepages.check_node_available(page, needed, p.node)


def run(p, function):
    """Run plan `p` with the named kernel: one call into the C core, whatever
    the conditions. A signal during the run raises Interrupted carrying the
    loops it completed (pagezero.interrupt.finish)."""
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
        mode=c.threads_mode,
        cpus=cpus,
        node=-1 if c.node is None else c.node,
        counters=c.counters,
    )

    def result(raw):
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


def thread_rates(result):
    """Each thread's rate in bytes/sec over all its loops (None for the cycles clock)."""
    if result.clock_hz is None or "thread_samples" not in result.details:
        return None
    return tuple(
        n * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
        for n, s in zip(result.details["thread_bytes"], result.details["thread_samples"])
    )


def thread_spread(result):
    """(mean per-thread rate, its standard deviation across threads in %), as perf's
    "/thread ( +- x% )"."""
    return spread(thread_rates(result))


def scaling(
    size="1GB", function="default", max_threads=None, threads_mode="shared", loops=5, **kwargs
):
    """memset with 1, 2, ... max_threads threads (default: every allowed CPU).
    Returns a ResultSet, one Result per thread count; plot.plot_scaling draws it."""
    from .results import ResultSet

    max_threads = max_threads or len(os.sched_getaffinity(0))
    check_threads(max_threads)
    return ResultSet(
        [
            memset(
                size, function=function, loops=loops, threads=n, threads_mode=threads_mode, **kwargs
            )
            for n in range(1, max_threads + 1)
        ]
    )


def memset(
    size="1GB",
    page="4KB",
    chunk=0,
    function="default",
    loops=10,
    clock="ns",
    value=0,
    thp=False,
    cache="hot",
    threads=1,
    threads_mode="shared",
    node=None,
    cpu_node=None,
    counters=False,
    offset=0,
    runs=1,
):
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
        (pagezero.runs).

    Returns
    -------
    Result or ResultSet
        A Result when runs is 1; else a ResultSet of N Results,
        runs[i]["process"] = i.

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
    size="1GB",
    page="4KB",
    chunk=0,
    function="default",
    loops=10,
    clock="ns",
    thp=False,
    cache="hot",
    threads=1,
    threads_mode="shared",
    node=None,
    cpu_node=None,
    counters=False,
    offset=0,
    runs=1,
):
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.
    Same arguments as memset(), runs included, with a copy kernel's name as
    function (cold flushes source and destination chunks)."""
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
