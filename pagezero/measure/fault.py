"""A fault run, as perf bench mem mmap: its plan, the C call, reading its Result.

A first touch of an anonymous page makes the kernel zero it, so faulting a
region in measures the kernel's clearing rate plus its fault overhead; the C
core (csrc/fault.c) times mmap + faulting, munmap left out as perf does.
headroom() sets that rate beside the best user-space clear of the same extent.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pagezero import _core, interrupt
from pagezero.measure import profile as inside
from pagezero.measure.conditions import (
    MAX_FAULT_THREADS,
    arguments,
    check_int,
    check_loops,
    check_threads,
)
from pagezero.measure.conditions import thread_rates as thread_rates
from pagezero.measure.conditions import thread_spread as thread_spread
from pagezero.measure.mem import check_clock, memset
from pagezero.measure.warmup import WARM_LOOP_FRACTION, warming_runs
from pagezero.results.resultset import Result, ResultSet
from pagezero.system import hugepages
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine
from pagezero.system.memory import check_page, thp_mode
from pagezero.units import format_page, format_size, parse_page, parse_size

WORKLOADS: tuple[str, ...] = tuple(name for name, _ in _core.fault_workloads())
# How each page is touched: "write" (one store: the kernel's clearing of a write fault, what
# the studies measure) or "perf" (perf bench mem mmap's mmap_page_touch after every workload,
# a read then a write: `pagezero mem mmap`, for parity).
TOUCHES: tuple[str, ...] = ("write", "perf")
_DESCRIPTIONS: dict[str, str] = dict(_core.fault_workloads())
MAX_THREADS = MAX_FAULT_THREADS
MAX_SEED = 2**32 - 1

# Latency is sampled once per fault for hugetlb and THP. A 4KB fault lasts
# about a microsecond and a clock read tens of ns, so 4KB faults are timed in
# groups of this many pages, keeping the reads' cost near 1%.
_GROUP_4KB = 16


def check_workload(function: str) -> str:
    """`function`, checked to be one of WORKLOADS."""
    if function not in WORKLOADS:
        raise ValueError(f"unknown workload {function!r} (expected one of: {', '.join(WORKLOADS)})")
    return function


def describe(function: str) -> str:
    """A workload's one-line description (perf's for demand and populate)."""
    return _DESCRIPTIONS[check_workload(function)]


def latency_unit(shift: int, thp: bool | None, nbytes: int) -> int:
    """Bytes per latency sample: one fault for hugetlb and THP, else a group of 4KB
    faults (one where the size is not a whole number of groups)."""
    if shift != 12:
        return 1 << shift
    unit = (2 << 20) if thp else (_GROUP_4KB << 12)
    return unit if nbytes % unit == 0 else 1 << 12


@dataclass(frozen=True)
class FaultPlan:
    """A fault run's checked arguments, for any workload (made by plan())."""

    nbytes: int  # each thread's region
    shift: int
    thp: bool | None  # None, True or False, as given
    loops: int
    threads: int
    seed: int
    clock: str
    latency: bool
    touch: str = "write"
    profile: bool = False  # sample where the CPU is in the timed loops (measure.profile)

    @property
    def page(self) -> str:
        return format_page(self.shift)

    @property
    def hugetlb(self) -> bool:
        return self.shift != 12

    @property
    def hugepages_needed(self) -> int:
        """Hugepages the run maps at once (0 for 4KB pages)."""
        return self.threads * (self.nbytes >> self.shift) if self.hugetlb else 0

    @property
    def lat_unit(self) -> int:
        """Bytes per latency sample, 0 without latencies."""
        return latency_unit(self.shift, self.thp, self.nbytes) if self.latency else 0

    def params(self) -> dict[str, Any]:
        rest = ("loops", "threads", "seed", "thp", "latency")
        p = {"size": self.nbytes, "page": self.page, **{k: getattr(self, k) for k in rest}}
        if self.touch != "write":  # a point of its own; write-only files keep their identity
            p["touch"] = self.touch
        return p


def plan(*args: Any, **kwargs: Any) -> FaultPlan:
    """faults()'s arguments but the workload and reserve, checked before anything is mapped."""
    size, page, loops, threads, seed, thp, clock, latency, touch, profile = arguments(
        faults, args, kwargs, ["function", "reserve"]
    ).values()
    if touch not in TOUCHES:
        raise ValueError(f"unknown touch {touch!r} (expected one of: {', '.join(TOUCHES)})")
    nbytes = parse_size(size)
    shift = check_page(parse_page(page), thp)
    if nbytes % (1 << shift):
        raise ValueError(
            f"invalid size {size!r}: not a whole number of {format_page(shift)} "
            f"pages (each page is mapped and faulted whole)"
        )
    thp_mode(thp, shift)
    check_loops(loops, "mmap")
    # Not pinned, but as memset's threads at most one per CPU this process may run on: a
    # thread waiting for a CPU would time the scheduler, not its faults (one check for both).
    check_threads(threads)
    check_int("threads", threads, 1, MAX_FAULT_THREADS)
    check_int("seed", seed, 0, MAX_SEED)
    check_clock(clock, threads)
    for name, flag in (("latency", latency), ("profile", profile)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False, not {flag!r}")
    if shift == 12:
        # Overcommit would accept the regions and the OOM killer answer half-way through.
        avail = _core.mem_available()
        if threads * nbytes > avail:
            raise _core.MappingError(
                errno.ENOMEM,
                f"size ({format_size(nbytes)}) is too large for {threads} thread(s): "
                f"{threads * nbytes} bytes needed, only {avail} available "
                f"(MemAvailable in /proc/meminfo); use a smaller size or fewer threads",
            )
    return FaultPlan(nbytes, shift, thp, loops, threads, seed, clock, latency, touch, profile)


def check_latency(p: FaultPlan, function: str) -> None:
    """ValueError for latencies with "populate", whose faults all happen inside mmap()."""
    if p.latency and function == "populate":
        raise ValueError(
            "populate faults every page inside mmap(MAP_POPULATE): there is no "
            "fault to time on its own; use demand or populate-write for latencies"
        )


def check_hugepages(p: FaultPlan) -> None:
    """MappingError, naming the sysfs file to write, when the pool lacks the run's hugepages."""
    if p.hugetlb:
        hugepages.check_available(p.page, p.hugepages_needed, can_reserve=True)


@contextlib.contextmanager
def reserved(p: FaultPlan, reserve: bool = True) -> Iterator[bool]:
    """Around a run, its hugepages: the pool grown by what it lacks (root) and given back
    after, or without `reserve` only checked. Yields whether the pool was grown: then it
    was warmed (warm()) before the block, and run(warmed=True) records it."""
    if not p.hugetlb:
        yield False
    elif reserve:
        before = hugepages.pool(p.page).total
        with hugepages.reserve(p.page, p.hugepages_needed) as grown:
            fresh = grown.total > before
            if fresh:
                warm(p)
            yield fresh
    else:
        check_hugepages(p)
        yield False


def warm(p: FaultPlan) -> None:
    """One untimed demand pass of `p`'s threads over freshly reserved hugepages: on a VM the
    host faults guest memory in on its first touch, five to ten times slower than the
    guest's own fault path (measure.warmup)."""
    raw = _core.bench_fault(
        "demand", p.nbytes, p.shift, thp_mode(p.thp, p.shift), 1, p.threads, 0, "ns", 0
    )
    interrupt.finish(raw, lambda raw: None)


def _without_warmup(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """raw without its leading loops still warming up (measure.warmup's rule on the loops'
    rates), and what was dropped: {"loops", "samples", "rule"}, or None."""
    wall = raw["wall"]
    n = warming_runs([1 / s for s in wall], WARM_LOOP_FRACTION) if wall and all(wall) else 0
    if not n:
        return raw, None
    # The latency percentiles pool every loop (too many samples to keep raw); each loop's
    # median goes with the loops kept.
    lat = raw["latency"]
    kept = dict(
        raw,
        wall=wall[n:],
        threads=tuple(t[n:] for t in raw["threads"]),
        pages=raw["pages"][n:],
        latency=lat and dict(lat, loop_p50_ns=lat["loop_p50_ns"][n:]),
        loops_done=raw["loops_done"] - n,
    )
    rule = (
        f"leading loops below {WARM_LOOP_FRACTION:g}x the median rate of the loops "
        "after them (a first touch the host also faults in, on a VM)"
    )
    return kept, {"loops": n, "samples": wall[:n], "rule": rule}


def run(p: FaultPlan, function: str, warmed: bool = False) -> Result | None:
    """Plan `p` with workload `function`: one C call; None as interrupt.finish() says.

    Leading loops far slower than the rest (measure.warmup) are left out of the samples,
    kept in details["warmup"]; `warmed` (what reserved() yields) is recorded in
    details["pool_warmed"]."""
    check_workload(function)
    check_latency(p, function)
    check_hugepages(p)
    # Kernel addresses that cannot be named are no profile: the C core then samples nothing.
    hidden = inside.refusal() if p.profile else None
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
        p.touch,
        profile=p.profile and not hidden,
    )

    def result(raw: dict[str, Any]) -> Result:
        raw, warmup = _without_warmup(raw)
        details = {
            "thread_samples": raw["threads"],
            "pages": raw["pages"],
            "latency": raw["latency"],
            "touch": p.touch,
        }
        if warmup:
            details["warmup"] = warmup
        if warmed:
            details["pool_warmed"] = True
        if p.profile:
            details["profile"] = {"refused": hidden} if hidden else inside.summarize(raw["profile"])
        return Result(
            benchmark="mmap",
            function=function,
            params=p.params(),
            bytes_per_loop=p.nbytes * p.threads,
            clock=p.clock,
            samples=raw["wall"],
            clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
            machine=machine(),
            details=details,
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
    touch: str = "write",
    profile: bool = False,
    reserve: bool = False,
    runs: int = 1,
) -> Result | None:
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
        That many threads each fault their own `size` bytes at once; a sample
        is the first start to the last end, thread_rates() each thread's rate.
    seed : int
        0 writes byte 0 of each page, else a random byte, thread t drawing as
        rand() after srand(seed + t) (perf's -r).
    thp : bool or None
        For 4KB pages, False refuses transparent huge pages, True asks for
        them, None leaves the system's policy. page_report() says what came.
    clock : str
        The clock, as memset()'s.
    latency : bool
        Also time each fault (groups of 16 for 4KB pages): the
        distribution is in details["latency"] (ns), over every loop, and
        each kept loop's median in its "loop_p50_ns".
    touch : {"write", "perf"}
        "write" (the default, what the studies of the kernel's clearing use):
        demand writes one byte per page, so each page takes one write fault
        that clears it. "perf": every workload then touches each page as perf
        bench mem mmap does, its byte read and written back plus the page's
        index; on arm64 (or perf built at -O0) the read faults in the shared
        zero page first and the write fault then allocates and clears a new
        page (hugetlb has no zero page: there the read fault clears the
        folio). Recorded in
        details["touch"] (and in params when "perf").
    profile : bool
        Also sample where each thread's CPU is during the timed loops (perf
        events: cycles, or cpu-clock without a PMU; kernel and user, about
        4 kHz) and name the kernel's routines from /proc/kallsyms:
        details["profile"] has "clearing_share" (0..1) and its
        "clearing_interval" (Wilson, over the samples), "clearing_routines",
        "groups" ({group: share}), "symbols", "samples", "event" and "lost";
        where sampling is refused, {"refused": why} and the run goes on
        (pagezero.measure.profile).
    reserve : bool
        Grow the hugepage pool by what the run lacks for its duration
        (root only), giving it back afterwards. A pool so grown is faulted
        in once, untimed, before the timed loops (details["pool_warmed"]):
        on a VM the host faults guest memory in on its first touch.

    Returns
    -------
    Result or None
        Its samples are the loops the rate counts: leading loops below a
        quarter of the median rate of those after them (measure.warmup) are
        left out, their samples kept in details["warmup"]. None when a program's
        own handler took a stop signal before the first loop completed.

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
    p = plan(size, page, loops, threads, seed, thp, clock, latency, touch, profile, runs)
    check_workload(function)
    check_latency(p, function)
    with reserved(p, reserve) as warmed:
        return run(p, function, warmed)


def page_report(result: Result) -> dict[str, Any]:
    """Which pages the kernel really gave a faults() Result, from the smaps counters read
    after each loop (the loop with the fewest huge pages counts): "asked", "got",
    "expected_bytes", "resident_bytes", "thp_bytes", "hugetlb_bytes", "fallback" (the
    pages differ from those asked for) and "text", one line saying it."""
    params = result.params
    shift = parse_page(params["page"])
    expected = result.bytes_per_loop
    loops = result.details["pages"]
    worst = min(loops, key=lambda pg: (pg["anon_huge"] + pg["hugetlb"], pg["rss"]))
    resident = min(pg["rss"] + pg["hugetlb"] for pg in loops)
    thp_bytes = worst["anon_huge"]
    if shift != 12:
        asked = f"{format_page(shift)} hugetlb"
        got = f"{format_size(worst['kernel_page'])} hugetlb" if worst["kernel_page"] else "?"
        fallback = worst["kernel_page"] != 1 << shift
    else:
        asked = {True: "4KB with THP", False: "4KB (THP refused)", None: "4KB (system THP policy)"}[
            params["thp"]
        ]
        if thp_bytes == 0:
            got = "4KB"
        elif thp_bytes >= worst["rss"]:
            got = "2MB THP"
        else:
            got = f"2MB THP for {format_size(thp_bytes)}, 4KB for the rest"
        fallback = (params["thp"] is True and thp_bytes < expected) or (
            params["thp"] is False and thp_bytes > 0
        )
    text = f"asked {asked}, got {got}"
    if resident < expected:
        text += f"; only {format_size(resident)} of {format_size(expected)} resident"
    return {
        "asked": asked,
        "got": got,
        "expected_bytes": expected,
        "resident_bytes": resident,
        "thp_bytes": thp_bytes,
        "hugetlb_bytes": worst["hugetlb"],
        "fallback": fallback,
        "text": text,
    }


@dataclass(frozen=True)
class Headroom:
    """A fault rate beside the best user-space clear of the same extent (:func:`headroom`).

    Attributes
    ----------
    fault : Result
        The faults() run.
    clears : tuple of Result
        One memset Result per clear kernel, chunk = the page size, measured right after.
    """

    fault: Result
    clears: tuple[Result, ...]

    @property
    def fault_rate(self) -> float | None:
        """Bytes/sec one thread faulted in (the per-thread mean with threads); None for cycles."""
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


def measure_headroom(
    fault: Result, kernel_names: Iterable[str] | None = None, reserve: bool = False
) -> tuple[Result, ...]:
    """The fault run's extent cleared by each clear kernel (default: every one available),
    chunk = one page, as many loops; Interrupted's partial is a ResultSet of those done."""
    p = fault.params
    clear_plan = plan(p["size"], p["page"], p["loops"], 1, 0, p["thp"], fault.clock)
    if kernel_names is None:
        kernel_names = [k.name for k in kernels("clear") if k.available]
    same = dict(size=p["size"], page=p["page"], loops=p["loops"], thp=p["thp"], clock=fault.clock)
    clears: list[Any] = []  # memset's Results, or None as run() says: kept as they come
    try:
        with reserved(clear_plan, reserve):
            for name in kernel_names:
                clears.append(memset(chunk=1 << clear_plan.shift, function=name, **same))
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
        before the first fault loop completed.

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
    with reserved(p, reserve) as warmed:
        fault = run(p, function, warmed)
        if fault is None:
            return None
        try:
            return Headroom(fault, measure_headroom(fault, clear_kernels))
        except interrupt.Interrupted as e:
            clears = e.partial.results if e.partial is not None else ()
            e.partial = ResultSet((fault, *clears), interrupted=e.signame)
            raise


def fault_pass(
    size: int | str,
    page: str = "4KB",
    function: str = "demand",
    thp: bool | None = False,
    seed: int = 0,
    latency: bool = False,
    touch: str = "write",
) -> tuple[Any, dict[str, Any]]:
    """One untimed pass of a workload, its region left mapped: (Region, its smaps counters)."""
    p = plan(size, page, 1, 1, seed, thp, "ns", latency, touch)
    check_workload(function)
    check_latency(p, function)
    return _core.fault_pass(
        function, p.nbytes, p.shift, thp_mode(thp, p.shift), seed, p.lat_unit, touch
    )
