"""Fault runs as perf bench mem mmap, and headroom(): docs/measuring.rst, "Fault workloads"."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pagezero.measure.conditions as conditions
from pagezero import _core, interrupt
from pagezero.measure import profile as inside
from pagezero.measure.conditions import thread_spread  # cli.mem reads it here too
from pagezero.measure.mem import WARM_LOOP_FRACTION, check_clock, memset, warming_runs
from pagezero.results.resultset import Result, ResultSet
from pagezero.system import hugepages
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine
from pagezero.system.memory import check_page, thp_mode
from pagezero.units import format_page, format_size, parse_page, parse_size

_DESCRIPTIONS: dict[str, str] = dict(_core.fault_workloads())
WORKLOADS: tuple[str, ...] = tuple(_DESCRIPTIONS)
# One store per page (what the studies measure), or perf's mmap_page_touch (for parity).
TOUCHES: tuple[str, ...] = ("write", "perf")
MAX_SEED = 2**32 - 1

# 4KB faults are timed in groups of this many, keeping the clock reads' cost near 1%.
_GROUP_4KB = 16
_THP_ASKED = {True: "4KB with THP", False: "4KB (THP refused)", None: "4KB (system THP policy)"}


def check_workload(function: str) -> str:
    """`function`, checked to be one of WORKLOADS."""
    return conditions.check_choice("workload", function, WORKLOADS)


def describe(function: str) -> str:
    """A workload's one-line description (perf's for demand and populate)."""
    return _DESCRIPTIONS[check_workload(function)]


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

    page = property(lambda self: format_page(self.shift))
    hugetlb = property(lambda self: self.shift != 12)

    @property
    def hugepages_needed(self) -> int:
        """Hugepages the run maps at once (0 for 4KB pages)."""
        return self.threads * (self.nbytes >> self.shift) if self.hugetlb else 0

    @property
    def lat_unit(self) -> int:
        """Bytes per latency sample (0 without): a hugetlb or THP fault, or a group of 4KB ones."""
        if not self.latency:
            return 0
        if self.hugetlb:
            return 1 << self.shift
        unit = (2 << 20) if self.thp else (_GROUP_4KB << 12)
        return unit if self.nbytes % unit == 0 else 1 << 12

    def c_args(self) -> tuple[int, int, int, int, int, int, str, int, str]:
        """bench_fault()'s arguments after the workload."""
        rest = (self.loops, self.threads, self.seed, self.clock, self.lat_unit, self.touch)
        return (self.nbytes, self.shift, thp_mode(self.thp, self.shift), *rest)

    def params(self) -> dict[str, Any]:
        rest = ("loops", "threads", "seed", "thp", "latency")
        p = {"size": self.nbytes, "page": self.page, **{k: getattr(self, k) for k in rest}}
        if self.touch != "write":  # a point of its own; write-only files keep their identity
            p["touch"] = self.touch
        return p


def plan(*args: Any, **kwargs: Any) -> FaultPlan:
    """faults()'s arguments but the workload and reserve, checked before anything is mapped."""
    size, page, loops, threads, seed, thp, clock, latency, touch, profile = conditions.arguments(
        faults, args, kwargs, ["function", "reserve"]
    ).values()
    conditions.check_choice("touch", touch, TOUCHES)
    nbytes = parse_size(size)
    shift = check_page(parse_page(page), thp)
    if nbytes % (1 << shift):
        raise ValueError(
            f"invalid size {size!r}: not a whole number of {format_page(shift)} "
            f"pages (each page is mapped and faulted whole)"
        )
    thp_mode(thp, shift)
    conditions.check_loops(loops, "mmap")
    conditions.check_threads(threads)
    conditions.check_int("threads", threads, 1, conditions.MAX_FAULT_THREADS)
    conditions.check_int("seed", seed, 0, MAX_SEED)
    check_clock(clock, threads)
    conditions.check_bool("latency", latency)
    conditions.check_bool("profile", profile)
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
    """ValueError for an unknown workload, or latencies with "populate" (all inside mmap())."""
    if p.latency and check_workload(function) == "populate":
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
    """Around a run, the pool grown by what it lacks (root) or checked; yields if grown (warmed)."""
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
    """One untimed demand pass over fresh hugepages, which a VM's host faults in on first touch."""
    once = replace(p, loops=1, seed=0, clock="ns", latency=False, touch="write")
    interrupt.finish(_core.bench_fault("demand", *once.c_args()), lambda raw: None)


def _profile_after(profile: dict[str, Any] | None, first: int) -> dict[str, Any] | None:
    """bench_fault's raw profile less its `first` loops (None and refusals as they are)."""
    if not profile or "refused" in profile or not first:
        return profile
    kept, skip = profile["loops"][first:], sum(loop["kernel"] for loop in profile["loops"][:first])
    totals = ("user", "user_period", "other", "other_period", "lost")
    return dict(
        profile,
        kernel_ips=profile["kernel_ips"][skip:],
        kernel_periods=profile["kernel_periods"][skip:],
        loops=kept,
        **{k: sum(loop[k] for loop in kept) for k in totals},
    )


def _without_warmup(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """raw less its leading loops still warming up (mem.warming_runs), and those, or None."""
    wall = raw["wall"]
    n = warming_runs([1 / s for s in wall], WARM_LOOP_FRACTION) if wall and all(wall) else 0
    if not n:
        return raw, None
    # The latency percentiles pool every loop (too many samples to keep); loop medians are cut.
    lat = raw["latency"]
    kept = dict(
        raw,
        wall=wall[n:],
        threads=tuple(t[n:] for t in raw["threads"]),
        pages=raw["pages"][n:],
        latency=lat and dict(lat, loop_p50_ns=lat["loop_p50_ns"][n:]),
        loops_done=raw["loops_done"] - n,
        profile=_profile_after(raw.get("profile"), n),
    )
    if "thread_cpu" in raw:
        kept["thread_cpu"] = tuple(t[n:] for t in raw["thread_cpu"])
    rule = (
        f"leading loops below {WARM_LOOP_FRACTION:g}x the median rate of the loops "
        "after them (a first touch the host also faults in, on a VM)"
    )
    return kept, {"loops": n, "samples": wall[:n], "rule": rule}


def _profile_details(every: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """details["profile"]: the kept loops' summary, with every loop's share where some were not."""
    summary = inside.summarize(kept["profile"])
    if every is not kept and "refused" not in summary:
        share = inside.summarize(every["profile"])["clearing_share"]
        summary["all_loops"] = {"clearing_share": share, "loops": every["loops_done"]}
    return summary


def run(p: FaultPlan, function: str, warmed: bool = False) -> Result | None:
    """Plan `p` with workload `function`, one C call (None as interrupt.finish() says)."""
    check_latency(p, function)
    check_hugepages(p)
    # Kernel addresses that cannot be named are no profile: the C core then samples nothing.
    hidden = inside.refusal() if p.profile else None
    raw = _core.bench_fault(function, *p.c_args(), profile=p.profile and not hidden)

    def result(every: dict[str, Any]) -> Result:
        raw, warmup = _without_warmup(every)
        details = dict(thread_samples=raw["threads"], pages=raw["pages"], latency=raw["latency"])
        if "thread_cpu" in raw:  # the mean on-CPU time of a fault, without sampling's
            details["thread_cpu_ns"] = raw["thread_cpu"]
        details["touch"] = p.touch
        if warmup:
            details["warmup"] = warmup
        if warmed:
            details["pool_warmed"] = True
        if p.profile:
            details["profile"] = {"refused": hidden} if hidden else _profile_details(every, raw)
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
    """Time `loops` rounds of mapping `size` bytes and faulting every page in, as perf bench
    mem mmap (docs/measuring.rst, "Fault workloads").

    Parameters
    ----------
    size : int or str
        Bytes per round and per thread, or a string such as "1GB".
    page : {"4KB", "2MB", "1GB"}
        "4KB", or "2MB" / "1GB" hugetlb (needs free hugepages: see reserve).
    function : {"demand", "populate", "populate-write"}
        One byte written per page, MAP_POPULATE, or MADV_POPULATE_WRITE (Linux 5.14+).
    loops : int
        The timed rounds, one sample each.
    threads : int
        Threads each faulting their own `size` at once; a sample is first start to last end.
    seed : int
        0 writes byte 0 of each page, else a random byte (srand(seed + thread), perf's -r).
    thp : bool or None
        For 4KB pages: False refuses THP, True asks for it, None leaves the system's policy.
    clock : str
        The clock, as memset()'s.
    latency : bool
        Also time each fault (4KB ones in groups of 16) into details["latency"] (ns).
    touch : {"write", "perf"}
        One write fault per page, or perf's read-and-write touch after every workload.
    profile : bool
        Also sample where the CPU is in the timed loops into details["profile"].
    reserve : bool
        Grow the hugepage pool by what the run lacks (root), warmed untimed, for the run.

    Returns
    -------
    Result or None
        Without the leading loops still warming up (details["warmup"]); None when a program's
        own handler took a stop signal before the first loop completed.

    Raises
    ------
    ValueError
        For a bad argument.
    UnavailableError, MappingError
        For a clock this machine cannot run; for a refused mapping (hugepages lacking).
    Interrupted
        When a stop signal cuts the run short.
    """
    p = plan(size, page, loops, threads, seed, thp, clock, latency, touch, profile, runs=runs)
    check_latency(p, function)
    with reserved(p, reserve) as warmed:
        return run(p, function, warmed)


def on_cpu_rate(result: Result) -> float | None:
    """Bytes a faults() Result faulted per second of its threads' CPU time over its kept loops
    (details["thread_cpu_ns"]): the rate a sampled share of the fault's CPU time divides; None
    where the run has no CPU times (results saved before them)."""
    cpu = result.details.get("thread_cpu_ns") or ((),)
    seconds = sum(map(sum, cpu)) * 1e-9
    return result.bytes_per_loop * len(cpu[0]) / seconds if seconds else None


def page_report(result: Result) -> dict[str, Any]:
    """The pages a faults() Result asked and got (smaps; the loop with the fewest huge ones)."""
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
        asked = _THP_ASKED[params["thp"]]
        if thp_bytes == 0:
            got = "4KB"
        elif thp_bytes >= worst["rss"]:
            got = "2MB THP"
        else:
            got = f"2MB THP for {format_size(thp_bytes)}, 4KB for the rest"
        fallback = {True: thp_bytes < expected, False: thp_bytes > 0, None: False}[params["thp"]]
    text = f"asked {asked}, got {got}"
    if resident < expected:
        text += f"; only {format_size(resident)} of {format_size(expected)} resident"
    sizes = dict(expected_bytes=expected, resident_bytes=resident, thp_bytes=thp_bytes)
    sizes["hugetlb_bytes"] = worst["hugetlb"]
    return {"asked": asked, "got": got, **sizes, "fallback": fallback, "text": text}


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
    fault: Result,
    kernel_names: Iterable[str] | None = None,
    reserve: bool = False,
    measured: tuple[Result, ...] = (),
) -> tuple[Result, ...]:
    """Each clear kernel (default: all) on the fault's extent, a page a call; partial: +measured."""
    p = fault.params
    same = dict(size=p["size"], page=p["page"], loops=p["loops"], thp=p["thp"], clock=fault.clock)
    clear_plan = plan(**same)
    if kernel_names is None:
        kernel_names = [k.name for k in kernels("clear") if k.available]
    clears: list[Any] = []  # memset's Results, or None as run() says: kept as they come
    try:
        with reserved(clear_plan, reserve):
            for name in kernel_names:
                clears.append(memset(chunk=1 << clear_plan.shift, function=name, **same))
    except KeyboardInterrupt as e:
        stop = interrupt.as_interrupted(e)
        # The clear the signal cut short keeps its completed loops too.
        done = [*measured, *clears, *([stop.partial] if isinstance(stop.partial, Result) else [])]
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
    """Measure faults() and, right after, each clear kernel in page-sized calls on the same extent.

    Parameters
    ----------
    size, page, function, loops, thp, reserve
        As faults() takes them.
    clear_kernels : iterable of str or None
        The clear kernels; None for every one available here.

    Returns
    -------
    Headroom or None
        None when a program's own handler took a stop signal before the first fault loop ended.

    Raises
    ------
    ValueError, UnavailableError, MappingError
        As faults().
    Interrupted
        On a stop signal, its partial the faults' Result, or a ResultSet of it and the clears.
    """
    p = plan(size, page, loops, 1, 0, thp)
    check_workload(function)
    with reserved(p, reserve) as warmed:
        fault = run(p, function, warmed)
        if fault is None:
            return None
        return Headroom(fault, measure_headroom(fault, clear_kernels, measured=(fault,)))
