"""The perf bench mem workloads: memset and memcpy.

Arguments are checked and parsed here; the run itself (mapping, prefault,
timed loops) is one call into the C core with the GIL released.
"""
import os
import statistics
from dataclasses import dataclass, replace

from . import _core
from .kernels import find_kernel
from .sysinfo import llc_bytes, machine
from .region import thp_mode
from .results import Result
from .units import parse_page, parse_size, format_page, format_size

__all__ = ["memset", "memcpy", "plan", "run", "Plan", "CLOCKS", "MAX_LOOPS", "CACHE_STATES",
           "THREADS_MODES", "scaling", "thread_rates", "thread_spread", "numa_nodes",
           "node_cpus", "choose_cpus"]

CLOCKS = _core.clocks()
MAX_LOOPS = 10_000_000
# hot: the same buffer again and again, as perf (the default, for parity);
# cold: every chunk flushed from the caches before its timed call.
CACHE_STATES = ("hot", "cold")
THREADS_MODES = ("shared", "private")
# Parts of a shared region start on 4KB boundaries (csrc/threads.c).
_PART_ALIGN = 4096
_NODE_DIR = "/sys/devices/system/node"


def numa_nodes(root=_NODE_DIR):
    """The machine's NUMA nodes, from sysfs (a machine without the directory has node 0)."""
    try:
        nodes = sorted(int(e[4:]) for e in os.listdir(root)
                       if e.startswith("node") and e[4:].isdigit())
    except OSError:
        nodes = []
    return nodes or [0]


def _parse_cpulist(text):
    cpus = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def node_cpus(node, root=_NODE_DIR):
    """The CPUs of `node`, from its sysfs cpulist; ValueError for a node that does not exist."""
    check_node(node, "node", root)
    try:
        with open(os.path.join(root, f"node{node}", "cpulist")) as f:
            return _parse_cpulist(f.read())
    except OSError:
        # No sysfs node directory at all: a single-node machine, every CPU is node 0's.
        return set(range(os.cpu_count() or 1))


def check_node(node, what="node", root=_NODE_DIR):
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{what} must be an int, not {node!r}")
    nodes = numa_nodes(root)
    if node not in nodes:
        if nodes == [0]:
            raise ValueError(f"{what} {node} does not exist: this machine has only node 0 "
                             f"(one NUMA node; {root} lists no other), so only {what} 0 "
                             f"can be asked for")
        raise ValueError(f"{what} {node} does not exist: this machine's nodes are "
                         f"{', '.join(map(str, nodes))}")
    return node


def choose_cpus(threads, cpu_node=None):
    """Distinct CPUs for `threads` threads: the lowest allowed ones (of `cpu_node`, if given).
    ValueError when there are fewer."""
    allowed = set(os.sched_getaffinity(0))
    where = "allowed to this process (os.sched_getaffinity)"
    if cpu_node is not None:
        check_node(cpu_node, "cpu_node")
        allowed &= node_cpus(cpu_node)
        where = f"of node {cpu_node} allowed to this process"
    if threads > len(allowed):
        raise ValueError(f"{threads} threads need {threads} distinct CPUs, and only "
                         f"{len(allowed)} are {where}")
    return tuple(sorted(allowed)[:threads])


def _check_threads(threads):
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ValueError(f"threads must be an int, not {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    allowed = len(os.sched_getaffinity(0))
    if threads > allowed:
        raise ValueError(f"threads ({threads}) is more than the {allowed} CPUs this process "
                         f"may run on (os.sched_getaffinity)")


def _check_loops(loops):
    if isinstance(loops, bool) or not isinstance(loops, int):
        raise ValueError(f"loops must be an int, not {loops!r}")
    if not 1 <= loops <= MAX_LOOPS:
        raise ValueError(f"loops must be between 1 and {MAX_LOOPS}, not {loops}")


def _check_clock(clock):
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (expected one of: {', '.join(CLOCKS)})")


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

    benchmark: str      # "memset" or "memcpy"
    kind: str           # the kernel kind it runs: "clear" or "copy"
    nbytes: int
    chunk: int          # as given: 0 means the whole extent
    shift: int
    thp: object         # None, True or False, as given
    loops: int
    clock: str
    value: object       # as given: an int or "loop" (memset only)
    cache: str = "hot"
    threads: int = 1
    threads_mode: str = "shared"
    node: object = None       # NUMA node for the buffers, or None
    cpu_node: object = None   # NUMA node whose CPUs run the threads, or None
    counters: bool = False
    offset: int = 0           # buffers start this far past a page boundary

    @property
    def plain(self):
        """Today's loop (bench.c): hot, one thread, no placement, no counters."""
        return (self.cache == "hot" and self.threads == 1 and self.node is None
                and self.cpu_node is None and not self.counters)

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
        p = {"size": self.nbytes, "page": format_page(self.shift), "chunk": self.chunk,
             "loops": self.loops, "thp": self.thp}
        if self.kind == "clear":
            p["value"] = self.value
        # Only what differs from perf's conditions: older results keep their labels.
        if self.cache != "hot":
            p["cache"] = self.cache
        if self.threads != 1:
            p["threads"] = self.threads
            p["threads_mode"] = self.threads_mode
        if self.node is not None:
            p["node"] = self.node
        if self.cpu_node is not None:
            p["cpu_node"] = self.cpu_node
        if self.counters:
            p["counters"] = True
        if self.offset:
            p["offset"] = self.offset
        return p


def plan(benchmark, size="1GB", page="4KB", chunk=0, loops=10, clock="ns", value=0, thp=False,
         cache="hot", threads=1, threads_mode="shared", node=None, cpu_node=None,
         counters=False, offset=0):
    """Check every argument of a run except the function; ValueError on the first bad one."""
    if benchmark not in ("memset", "memcpy"):
        raise ValueError(f"unknown benchmark {benchmark!r} (expected memset or memcpy)")
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = parse_page(page)
    thp_mode(thp, shift)
    _check_loops(loops)
    _check_clock(clock)
    kind = "clear" if benchmark == "memset" else "copy"
    if kind == "clear":
        check_fill_value(value)
    if cache not in CACHE_STATES:
        raise ValueError(f"unknown cache state {cache!r} (expected hot or cold)")
    _check_threads(threads)
    if threads_mode not in THREADS_MODES:
        raise ValueError(f"unknown threads mode {threads_mode!r} (expected shared or private)")
    if threads > 1 and clock == "cycles":
        raise ValueError("the cycles clock counts the thread that opened it only: "
                         "use ns or tsc with more than one thread")
    if threads > 1 and threads_mode == "shared" and nbytes // threads < _PART_ALIGN:
        raise ValueError(f"size ({format_size(nbytes)}) is too small for {threads} threads: "
                         f"each needs at least 4KB of it")
    if node is not None:
        check_node(node, "node")
    if cpu_node is not None:
        choose_cpus(threads, cpu_node)
    if not isinstance(counters, bool):
        raise ValueError(f"counters must be True or False, not {counters!r}")
    p = Plan(benchmark, kind, nbytes, chunk_bytes, shift, thp, loops, clock, value,
             cache, threads, threads_mode, node, cpu_node, counters)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 4096:
        raise ValueError(f"offset must be an int in 0..4095 (bytes), not {offset!r}")
    if offset and not p.plain:
        raise ValueError("offset applies to hot single-thread runs without node or counters")
    return replace(p, offset=offset)


def run(p, function):
    """Run plan `p` with the named kernel: one call into the C core."""
    kernel = find_kernel(function, p.kind)
    fill_value = check_fill_value(p.value) if p.kind == "clear" else 0
    if kernel.zero_only and fill_value != 0:
        raise ValueError(f"kernel {function!r} can only write zeros (value must be 0)")
    details = {}
    if p.plain:
        samples = _core.bench_mem(p.kind, function, p.nbytes, p.chunk or p.nbytes, p.shift,
                                  thp_mode(p.thp, p.shift), p.loops, p.clock, fill_value,
                                  p.offset)
    else:
        samples, details = _run_conditions(p, function, fill_value)
    return Result(
        benchmark=p.benchmark,
        function=function,
        params=p.params(),
        bytes_per_loop=p.total_bytes,
        clock=p.clock,
        samples=samples,
        clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
        machine=machine(),
        details=details,
    )


def _run_conditions(p, function, fill_value):
    """Cold caches, threads, a node or counters: csrc/threads.c."""
    # Pin only when asked for more than one thread or for a node's CPUs: one
    # unpinned thread is what the plain loop measures too.
    cpus = choose_cpus(p.threads, p.cpu_node) if p.threads > 1 or p.cpu_node is not None else ()
    llc = llc_bytes() or (32 << 20)
    raw = _core.bench_threads(p.kind, function, p.nbytes, p.chunk or p.nbytes, p.shift,
                              thp_mode(p.thp, p.shift), p.loops, p.clock, fill_value,
                              cold=p.cache == "cold", evict_bytes=2 * llc,
                              threads=p.threads, mode=p.threads_mode, cpus=cpus,
                              node=-1 if p.node is None else p.node, counters=p.counters)
    details = {"thread_samples": raw["thread_samples"], "thread_bytes": p.thread_bytes(),
               "cpus": cpus}
    if p.cache == "cold":
        # How the lines left the caches, and what a sample then covers.
        details["cold_method"] = raw["cold_method"]
        details["cold_timing"] = "per chunk: flush, clock, clear, clock; samples sum the chunks"
    if raw["counters"] is not None:
        details["counters"] = raw["counters"]
        if os.environ.get("PAGEZERO_FAKE_COUNTERS"):
            details["counters_source"] = "fake (PAGEZERO_FAKE_COUNTERS)"
    return raw["samples"], details


# Reading a Result of several threads ---------------------------------------


def thread_rates(result):
    """Each thread's rate in bytes/sec over all its loops (None for the cycles clock)."""
    if result.clock_hz is None or "thread_samples" not in result.details:
        return None
    return tuple(n * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
                 for n, s in zip(result.details["thread_bytes"], result.details["thread_samples"]))


def thread_spread(result):
    """(mean per-thread rate, its standard deviation across threads in %), as perf's
    "/thread ( +- x% )"."""
    rates = thread_rates(result)
    if not rates:
        return None, None
    mean = statistics.fmean(rates)
    stdev = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return mean, 100.0 * stdev / mean if mean else 0.0


def scaling(size="1GB", function="default", max_threads=None, threads_mode="shared",
            loops=5, **kwargs):
    """memset with 1, 2, ... max_threads threads (default: every allowed CPU).
    Returns a ResultSet, one Result per thread count; plot.plot_scaling draws it."""
    from .results import ResultSet

    max_threads = max_threads or len(os.sched_getaffinity(0))
    _check_threads(max_threads)
    return ResultSet([memset(size, function=function, loops=loops, threads=n,
                             threads_mode=threads_mode, **kwargs)
                      for n in range(1, max_threads + 1)])


def memset(size="1GB", page="4KB", chunk=0, function="default", loops=10,
           clock="ns", value=0, thp=False, cache="hot", threads=1, threads_mode="shared",
           node=None, cpu_node=None, counters=False, offset=0):
    """Time `loops` passes of clearing `size` bytes, as perf bench mem memset.

    size, chunk: ints or strings such as "4KB", "1GB" (powers of 1024); chunk 0
        clears the whole extent in one call, otherwise each pass clears the
        region in chunk-sized calls.
    page: "4KB", "2MB" or "1GB" (hugetlb; needs reserved hugepages).
    function: a clear kernel's name (pagezero.kernels()).
    clock: "ns" (CLOCK_MONOTONIC_RAW), "timeval", "cycles" (needs a PMU) or "tsc".
    value: the fill byte (0: the subject is zeroing), or "loop" to write the
        loop index as perf does, for side-by-side parity.
    thp: for 4KB pages, False refuses transparent huge pages (MADV_NOHUGEPAGE),
        True asks for them, None leaves the system's policy.

    cache: "hot" (default, perf's conditions: the same buffer every loop, so
        extents that fit a cache are timed from it) or "cold": every chunk is
        flushed from the caches (clflushopt, else clflush, else evicted by
        reading twice the LLC; details["cold_method"] says which) outside the
        timing, and the clock is read around each chunk, a loop's sample
        being the sum: as a page fault finds a page it has not touched lately.
    threads: that many threads, each pinned to its own allowed CPU, started
        together behind a barrier every loop; threads_mode "shared" splits one
        region of `size` into disjoint 4KB-aligned parts, "private" gives
        each thread its own region of `size`. A sample is the first start to
        the last end (cold: the slowest thread's sum); thread_rates() and
        thread_spread() read the per-thread samples.
    node: bind the buffers to this NUMA node (mbind); cpu_node: run the
        threads on that node's CPUs. A node the machine lacks is a ValueError.
    counters: read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses,
        cycles and instructions around each loop into details["counters"]
        (per-loop deltas summed over threads); UnavailableError without a PMU.
    offset: start the buffer this many bytes (0..4095) past a page boundary.
        perf maps its buffers since the 2025 series ("Switch from zalloc() to
        mmap()"); older perf, Debian's 6.1 among them, malloc()s them, 16
        bytes in: rep stosq runs several percent slower there (hot, one
        thread only).

    The buffer is mapped populated and prefaulted before timing; each loop's
    time is a sample of the returned Result.
    """
    return run(plan("memset", size, page, chunk, loops, clock, value, thp, cache, threads,
                    threads_mode, node, cpu_node, counters, offset), function)


def memcpy(size="1GB", page="4KB", chunk=0, function="default", loops=10,
           clock="ns", thp=False, cache="hot", threads=1, threads_mode="shared",
           node=None, cpu_node=None, counters=False, offset=0):
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.
    Same arguments as memset(), with a copy kernel's name as function
    (cold flushes source and destination chunks)."""
    return run(plan("memcpy", size, page, chunk, loops, clock, 0, thp, cache, threads,
                    threads_mode, node, cpu_node, counters, offset), function)
