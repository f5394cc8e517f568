"""The fault workloads of perf bench mem mmap: what the kernel's own page
clearing achieves, fault by fault.

Every first touch of an anonymous page makes the kernel zero it, so mapping a
region and faulting every page in measures the kernel's clearing rate plus its
fault overhead. Arguments are checked here; each run is one call into the C
core (csrc/fault.c), which times mmap + faulting in C with the GIL released
and leaves munmap outside the timing, as perf does.

headroom() sets that rate beside the best user-space clear of the same extent,
measured in the same run: how much faster the hardware clears than the fault
path does.
"""

import contextlib
import errno
from dataclasses import dataclass

from . import _core, hugepages, interrupt
from .bench import check_clock, memset
from .conditions import MAX_FAULT_THREADS, check_int, check_loops
from .fault_reading import page_report, thread_rates, thread_spread
from .kernels import kernels
from .region import thp_mode
from .results import Result, ResultSet
from .runs import check_runs, in_processes
from .sysinfo import machine
from .units import format_page, format_size, parse_page, parse_size

__all__ = [
    "faults",
    "headroom",
    "measure_headroom",
    "plan",
    "run",
    "FaultPlan",
    "Headroom",
    "WORKLOADS",
    "describe",
    "page_report",
    "thread_rates",
    "check_workload",
    "check_latency",
    "check_hugepages",
    "reserved",
    "latency_unit",
    "MAX_THREADS",
    "fault_pass",
]

WORKLOADS = tuple(name for name, _ in _core.fault_workloads())
_DESCRIPTIONS = dict(_core.fault_workloads())
MAX_THREADS = MAX_FAULT_THREADS  # conditions.py holds every limit
MAX_SEED = 2**32 - 1

# Latency is sampled once per fault for hugetlb and THP. A 4KB fault lasts
# about a microsecond and a clock read tens of ns, so 4KB faults are timed in
# groups of this many pages, keeping the reads' cost near 1%.
_GROUP_4KB = 16


def describe(function):
    """A workload's one-line description (perf's for demand and populate)."""
    return _DESCRIPTIONS[check_workload(function)]


def check_workload(function):
    if function not in WORKLOADS:
        raise ValueError(f"unknown workload {function!r} (expected one of: {', '.join(WORKLOADS)})")
    return function


def latency_unit(shift, thp, nbytes):
    """Bytes per latency sample: one fault for hugetlb and THP, a group of
    4KB faults otherwise (or one, where the size is not a whole number of groups)."""
    if shift != 12:
        return 1 << shift
    unit = (2 << 20) if thp else (_GROUP_4KB << 12)
    return unit if nbytes % unit == 0 else 1 << 12


@dataclass(frozen=True)
class FaultPlan:
    """Checked, parsed arguments of a fault run, for any workload."""

    nbytes: int  # each thread's region
    shift: int
    thp: object  # None, True or False, as given
    loops: int
    threads: int
    seed: int
    clock: str
    latency: bool

    @property
    def page(self):
        return format_page(self.shift)

    @property
    def hugetlb(self):
        return self.shift != 12

    @property
    def hugepages_needed(self):
        """Hugepages the run maps at once (0 for 4KB pages)."""
        return self.threads * (self.nbytes >> self.shift) if self.hugetlb else 0

    @property
    def lat_unit(self):
        return latency_unit(self.shift, self.thp, self.nbytes) if self.latency else 0

    def params(self):
        return {
            "size": self.nbytes,
            "page": self.page,
            "loops": self.loops,
            "threads": self.threads,
            "seed": self.seed,
            "thp": self.thp,
            "latency": self.latency,
        }


def plan(size="1GB", page="4KB", loops=10, threads=1, seed=0, thp=False, clock="ns", latency=False):
    """Check every argument of a fault run except the workload; ValueError on
    the first bad one, MappingError when the regions cannot fit in memory."""
    nbytes = parse_size(size)
    shift = parse_page(page)
    if nbytes % (1 << shift):
        raise ValueError(
            f"invalid size {size!r}: not a whole number of {format_page(shift)} "
            f"pages (each page is mapped and faulted whole)"
        )
    thp_mode(thp, shift)
    check_loops(loops, "mmap")
    # mmap's threads are not pinned: bounded by MAX_FAULT_THREADS, not by the
    # CPUs, so they are not conditions.Conditions' pinned threads.
    check_int("threads", threads, 1, MAX_FAULT_THREADS)
    check_int("seed", seed, 0, MAX_SEED)
    check_clock(clock, threads)
    if not isinstance(latency, bool):
        raise ValueError(f"latency must be True or False, not {latency!r}")
    if shift == 12:
        # Refuse before mapping anything: overcommit would accept the regions
        # and the OOM killer would answer half-way through the run.
        avail = _core.mem_available()
        if threads * nbytes > avail:
            raise _core.MappingError(
                errno.ENOMEM,
                f"size ({format_size(nbytes)}) is too large for {threads} thread(s): "
                f"{threads * nbytes} bytes needed, only {avail} available "
                f"(MemAvailable in /proc/meminfo); use a smaller size or fewer threads",
            )
    return FaultPlan(nbytes, shift, thp, loops, threads, seed, clock, latency)


def check_latency(p, function):
    if p.latency and function == "populate":
        raise ValueError(
            "populate faults every page inside mmap(MAP_POPULATE): there is no "
            "fault to time on its own; use demand or populate-write for latencies"
        )


def check_hugepages(p):
    """MappingError naming the sysfs file unless the run's hugepages are free."""
    if p.hugetlb:
        hugepages.check_available(p.page, p.hugepages_needed)


@contextlib.contextmanager
def reserved(p, reserve=True):
    """Around a run: with reserve, grow the pool by what the run lacks (root
    only) and give it back afterwards; without, check the pool is big enough."""
    if not p.hugetlb:
        yield
    elif reserve:
        with hugepages.reserve(p.page, p.hugepages_needed):
            yield
    else:
        check_hugepages(p)
        yield


def run(p, function):
    """Run plan `p` with workload `function`: one call into the C core.

    SIGINT, SIGTERM or SIGHUP during the call stop it within one loop: it
    raises Interrupted whose partial is the Result of the loops completed
    (None when none), marked with the signal.
    """
    check_workload(function)
    check_latency(p, function)
    check_hugepages(p)
    raw = _core.bench_fault(
        function,
        p.nbytes,
        p.shift,
        thp_mode(p.thp, p.shift),
        p.loops,
        p.threads,
        p.seed,
        p.clock,
        p.lat_unit,
    )

    def result(raw):
        return Result(
            benchmark="mmap",
            function=function,
            params=p.params(),
            bytes_per_loop=p.nbytes * p.threads,
            clock=p.clock,
            samples=raw["wall"],
            clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
            machine=machine(),
            details={
                "thread_samples": raw["threads"],
                "pages": raw["pages"],
                "latency": raw["latency"],
            },
            interrupted=raw["interrupted"],
        )

    return interrupt.finish(raw, result)


def faults(
    size="1GB",
    page="4KB",
    function="demand",
    loops=10,
    threads=1,
    seed=0,
    thp=False,
    clock="ns",
    latency=False,
    reserve=False,
    runs=1,
):
    """Time `loops` rounds of mapping `size` bytes and faulting every page in,
    as perf bench mem mmap.

    Parameters
    ----------
    size : int or str
        Bytes per round (and per thread), or a string such as "1GB".
    page : {"4KB", "2MB", "1GB"}
        "4KB", or "2MB" / "1GB" hugetlb (needs free hugepages: see reserve).
    function : {"demand", "populate", "populate-write"}
        "demand" (write one byte per page), "populate" (MAP_POPULATE) or
        "populate-write" (MADV_POPULATE_WRITE, Linux 5.14+).
    loops : int
        The timed rounds, one sample each.
    threads : int
        That many threads each map and fault their own `size` bytes at
        once; samples then run from the first start to the last end, and
        thread_rates() gives each thread's own rate.
    seed : int
        0 writes byte 0 of each page; otherwise a random byte of each,
        thread t drawing as rand() does after srand(seed + t) (perf's -r).
    thp : bool or None
        For 4KB pages, False refuses transparent huge pages, True asks for
        them, None leaves the system's policy. page_report() says what came.
    clock : str
        The clock, as memset()'s.
    latency : bool
        Also time each fault (groups of 16 for 4KB pages): the
        distribution is in result.details["latency"] (ns).
    reserve : bool
        Grow the hugepage pool by what the run lacks for its duration
        (root only), giving it back afterwards.
    runs : int
        1 (default) measures here; N > 1 measures in N fresh processes, one
        after the other, each with its own mapping, prefault and loops
        (pagezero.runs).

    Returns
    -------
    Result or ResultSet
        A Result (benchmark "mmap") when runs is 1; else a ResultSet of N
        Results, runs[i]["process"] = i.

    Raises
    ------
    ValueError
        For a bad argument.
    UnavailableError
        For a clock this machine cannot run.
    MappingError
        When a mapping is refused (hugepages lacking, for one).
    Interrupted
        When a stop signal cuts the run short.
    """
    if check_runs(runs) > 1:
        return in_processes("mmap", locals())
    p = plan(size, page, loops, threads, seed, thp, clock, latency)
    check_workload(function)
    check_latency(p, function)
    with reserved(p, reserve):
        return run(p, function)


# Headroom -------------------------------------------------------------------


@dataclass(frozen=True)
class Headroom:
    """A fault rate beside the best user-space clear of the same extent, the
    same page size, measured in the same run."""

    fault: Result
    clears: tuple  # one memset Result per clear kernel, chunk = the page size

    @property
    def fault_rate(self):
        """Bytes/sec one thread faulted in (the per-thread mean with threads)."""
        if self.fault.params["threads"] > 1:
            return thread_spread(self.fault)[0]
        return self.fault.bytes_per_sec

    @property
    def best(self):
        return max(self.clears, key=lambda r: r.bytes_per_sec)

    @property
    def ratio(self):
        """How many times faster user space clears the same extents."""
        return self.best.bytes_per_sec / self.fault_rate


def _clear_kernels(names):
    if names is None:
        return [k.name for k in kernels("clear") if k.available]
    return list(names)


def measure_headroom(fault, kernel_names=None, reserve=False):
    """Clear the fault run's extent (its size, page size and THP choice) with
    each clear kernel, chunk = one page, as many loops; return one memset
    Result per kernel, for Headroom(fault, clears).

    A stop signal raises Interrupted whose partial is a ResultSet of the
    clears measured before it (None when none)."""
    p = fault.params
    clear_plan = plan(p["size"], p["page"], p["loops"], 1, 0, p["thp"], fault.clock)
    clears = []
    try:
        with reserved(clear_plan, reserve):
            for name in _clear_kernels(kernel_names):
                clears.append(
                    memset(
                        size=p["size"],
                        page=p["page"],
                        chunk=1 << clear_plan.shift,
                        function=name,
                        loops=p["loops"],
                        clock=fault.clock,
                        thp=p["thp"],
                    )
                )
    except KeyboardInterrupt as e:
        stop = interrupt.as_interrupted(e)
        # The clear the signal cut short keeps its completed loops too.
        done = clears + ([stop.partial] if isinstance(stop.partial, Result) else [])
        stop.partial = ResultSet(done, interrupted=stop.signame) if done else None
        raise stop from None
    return tuple(clears)


def headroom(
    size="1GB",
    page="4KB",
    function="demand",
    loops=10,
    thp=False,
    clear_kernels=None,
    reserve=False,
):
    """Measure faults() and, right after, the best user-space clear of the same
    extent (each clear kernel, or those named, in page-sized calls over a
    region of the same size and page size). Returns a Headroom: .fault_rate,
    .best (the fastest clear's Result), .ratio.

    A stop signal raises Interrupted: during the faults its partial is their
    Result so far; during the clears, a ResultSet of the fault Result and the
    clears measured."""
    p = plan(size, page, loops, 1, 0, thp)
    check_workload(function)
    with reserved(p, reserve):
        fault = run(p, function)
        try:
            return Headroom(fault, measure_headroom(fault, clear_kernels))
        except interrupt.Interrupted as e:
            clears = e.partial.results if e.partial is not None else ()
            e.partial = ResultSet((fault, *clears), interrupted=e.signame)
            raise


# Inspection -------------------------------------------------------------------


def fault_pass(size, page="4KB", function="demand", thp=False, seed=0, latency=False):
    """One untimed pass of a workload that leaves its region mapped:
    returns (Region, pages), pages being the smaps counters a run reports.
    Close the Region (or use it in a with block) to unmap it. For tests and
    for looking at what a workload leaves behind."""
    p = plan(size, page, 1, 1, seed, thp, "ns", latency)
    check_workload(function)
    check_latency(p, function)
    return _core.fault_pass(function, p.nbytes, p.shift, thp_mode(thp, p.shift), seed, p.lat_unit)
