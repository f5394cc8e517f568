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

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pagezero import _core, interrupt
from pagezero.measure.conditions import MAX_FAULT_THREADS
from pagezero.measure.fault_plan import (
    WORKLOADS,
    FaultPlan,
    check_hugepages,
    check_latency,
    check_workload,
    describe,
    latency_unit,
    plan,
    reserved,
)
from pagezero.measure.fault_reading import page_report, thread_rates, thread_spread
from pagezero.measure.mem import memset
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs.processes import check_runs, in_processes
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine
from pagezero.system.memory import thp_mode

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

MAX_THREADS = MAX_FAULT_THREADS  # conditions.py holds every limit


def run(p: FaultPlan, function: str) -> Result | None:
    """Run plan `p` with workload `function`: one call into the C core.

    Parameters
    ----------
    p : FaultPlan
        The checked arguments.
    function : str
        The workload (WORKLOADS).

    Returns
    -------
    Result or None
        Benchmark "mmap", one sample per loop. When a program's own handler
        takes a stop signal and returns, the loops completed, or None for
        none (pagezero.interrupt.finish).

    Raises
    ------
    ValueError
        For an unknown workload, or latencies with "populate".
    MappingError
        When the hugepages are lacking or a mapping is refused.
    Interrupted
        When SIGINT, SIGTERM or SIGHUP stops the call within one loop; its
        partial is the Result of the loops completed (None when none),
        marked with the signal.
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

    def result(raw: dict[str, Any]) -> Result:
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
    size: int | str = "1GB",
    page: str = "4KB",
    function: str = "demand",
    loops: int = 10,
    threads: int = 1,
    seed: int = 0,
    thp: bool | None = False,
    clock: str = "ns",
    latency: bool = False,
    reserve: bool = False,
    runs: int = 1,
) -> Result | ResultSet | None:
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
        (pagezero.runs.processes).

    Returns
    -------
    Result or ResultSet
        A Result (benchmark "mmap") when runs is 1 (None as run() says);
        else a ResultSet of N Results, runs[i]["process"] = i.

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
    """A fault rate beside the best user-space clear of the same extent.

    The same page size, measured in the same run (:func:`headroom`).

    Attributes
    ----------
    fault : Result
        The faults() run.
    clears : tuple of Result
        One memset Result per clear kernel, chunk = the page size.
    """

    fault: Result
    clears: tuple[Result, ...]  # one memset Result per clear kernel, chunk = the page size

    @property
    def fault_rate(self) -> float | None:
        """Bytes/sec one thread faulted in (the per-thread mean with threads).

        None for the cycles clock, which gives no rate (headroom() measures in ns).
        """
        if self.fault.params["threads"] > 1:
            return thread_spread(self.fault)[0]
        return self.fault.bytes_per_sec

    @property
    def best(self) -> Result:
        """The fastest clear's Result (one of the cycles clock, without a rate, ranks last)."""
        return max(self.clears, key=lambda r: r.bytes_per_sec or 0.0)

    @property
    def ratio(self) -> float | None:
        """How many times faster user space clears the same extents (None without rates)."""
        best, fault = self.best.bytes_per_sec, self.fault_rate
        return None if best is None or fault is None else best / fault


def _clear_kernels(names: Iterable[str] | None) -> list[str]:
    if names is None:
        return [k.name for k in kernels("clear") if k.available]
    return list(names)


def measure_headroom(
    fault: Result, kernel_names: Iterable[str] | None = None, reserve: bool = False
) -> tuple[Result, ...]:
    """Clear the fault run's extent with each clear kernel, chunk = one page.

    The same size, page size and THP choice as the fault run, as many loops.

    Parameters
    ----------
    fault : Result
        A faults() Result.
    kernel_names : iterable of str or None
        The clear kernels; None for every one available here.
    reserve : bool
        Grow the hugepage pool by what the clears lack (root only).

    Returns
    -------
    tuple of Result
        One memset Result per kernel, for Headroom(fault, clears).

    Raises
    ------
    Interrupted
        On a stop signal; its partial is a ResultSet of the clears measured
        before it (None when none).
    """
    p = fault.params
    clear_plan = plan(p["size"], p["page"], p["loops"], 1, 0, p["thp"], fault.clock)
    # memset's Results (runs=1), or None as run() says: kept as they come.
    clears: list[Any] = []
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
    size: int | str = "1GB",
    page: str = "4KB",
    function: str = "demand",
    loops: int = 10,
    thp: bool | None = False,
    clear_kernels: Iterable[str] | None = None,
    reserve: bool = False,
) -> Headroom | None:
    """Measure faults() and, right after, the best user-space clear of the same extent.

    The clears: each clear kernel, or those named, in page-sized calls over a
    region of the same size and page size.

    Parameters
    ----------
    size, page, function, loops, thp, reserve
        As faults() takes them.
    clear_kernels : iterable of str or None
        The clear kernels; None for every one available here.

    Returns
    -------
    Headroom or None
        ``.fault_rate`` (bytes/sec), ``.best`` (the fastest clear's Result),
        ``.ratio``; None when a program's own handler took a stop signal
        before the first fault loop completed (nothing to set the clears beside).

    Raises
    ------
    ValueError, UnavailableError, MappingError
        As faults().
    Interrupted
        On a stop signal: during the faults its partial is their Result so
        far; during the clears, a ResultSet of the fault Result and the
        clears measured.
    """
    p = plan(size, page, loops, 1, 0, thp)
    check_workload(function)
    with reserved(p, reserve):
        fault = run(p, function)
        if fault is None:
            return None
        try:
            return Headroom(fault, measure_headroom(fault, clear_kernels))
        except interrupt.Interrupted as e:
            clears = e.partial.results if e.partial is not None else ()
            e.partial = ResultSet((fault, *clears), interrupted=e.signame)
            raise


# Inspection -------------------------------------------------------------------


def fault_pass(
    size: int | str,
    page: str = "4KB",
    function: str = "demand",
    thp: bool | None = False,
    seed: int = 0,
    latency: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """One untimed pass of a workload that leaves its region mapped.

    For tests and for looking at what a workload leaves behind.

    Parameters
    ----------
    size, page, function, thp, seed, latency
        As faults() takes them.

    Returns
    -------
    tuple of (Region, dict)
        The Region (close it, or use it in a with block, to unmap it) and
        the smaps counters a run reports.

    Raises
    ------
    ValueError, MappingError
        As faults().
    """
    p = plan(size, page, 1, 1, seed, thp, "ns", latency)
    check_workload(function)
    check_latency(p, function)
    return _core.fault_pass(function, p.nbytes, p.shift, thp_mode(thp, p.shift), seed, p.lat_unit)
