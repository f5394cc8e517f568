"""A fault run's plan: its arguments checked and parsed before anything is mapped.

What perf bench mem mmap takes (size, page size, loops, threads, seed) and
what pagezero adds (THP choice, clock, fault latencies), checked once for
every workload of csrc/fault.c; and the hugepages a hugetlb run needs, checked
or reserved around it. pagezero.measure.fault runs the plans.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero.measure.conditions import MAX_FAULT_THREADS, check_int, check_loops
from pagezero.measure.mem_plan import check_clock
from pagezero.system import hugepages
from pagezero.system.memory import thp_mode
from pagezero.units import format_page, format_size, parse_page, parse_size

__all__ = [
    "WORKLOADS",
    "MAX_SEED",
    "describe",
    "check_workload",
    "latency_unit",
    "FaultPlan",
    "plan",
    "check_latency",
    "check_hugepages",
    "reserved",
]

WORKLOADS: tuple[str, ...] = tuple(name for name, _ in _core.fault_workloads())
_DESCRIPTIONS: dict[str, str] = dict(_core.fault_workloads())
MAX_SEED = 2**32 - 1

# Latency is sampled once per fault for hugetlb and THP. A 4KB fault lasts
# about a microsecond and a clock read tens of ns, so 4KB faults are timed in
# groups of this many pages, keeping the reads' cost near 1%.
_GROUP_4KB = 16


def describe(function: str) -> str:
    """A workload's one-line description (perf's for demand and populate).

    Parameters
    ----------
    function : str
        One of WORKLOADS.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For an unknown workload.
    """
    return _DESCRIPTIONS[check_workload(function)]


def check_workload(function: str) -> str:
    """Check a workload's name.

    Parameters
    ----------
    function : str
        ``"demand"``, ``"populate"`` or ``"populate-write"`` (WORKLOADS).

    Returns
    -------
    str
        `function`, unchanged.

    Raises
    ------
    ValueError
        For an unknown workload, listing the known ones.
    """
    if function not in WORKLOADS:
        raise ValueError(f"unknown workload {function!r} (expected one of: {', '.join(WORKLOADS)})")
    return function


def latency_unit(shift: int, thp: bool | None, nbytes: int) -> int:
    """Bytes per latency sample.

    Parameters
    ----------
    shift : int
        The page size's shift (12 for 4KB pages).
    thp : bool or None
        The THP choice for 4KB pages (True asks).
    nbytes : int
        The region's size, in bytes.

    Returns
    -------
    int
        Bytes: one fault for hugetlb and THP, a group of 4KB faults otherwise
        (or one, where the size is not a whole number of groups).
    """
    if shift != 12:
        return 1 << shift
    unit = (2 << 20) if thp else (_GROUP_4KB << 12)
    return unit if nbytes % unit == 0 else 1 << 12


@dataclass(frozen=True)
class FaultPlan:
    """Checked, parsed arguments of a fault run, for any workload.

    Build one with :func:`plan`.

    Attributes
    ----------
    nbytes : int
        Each thread's region, in bytes.
    shift : int
        The page size's shift (12, 21 or 30).
    thp : bool or None
        The THP choice, as given.
    loops, threads, seed : int
        As faults() takes them.
    clock : str
        The clock.
    latency : bool
        Time each fault (or group of 4KB faults).
    """

    nbytes: int  # each thread's region
    shift: int
    thp: bool | None  # None, True or False, as given
    loops: int
    threads: int
    seed: int
    clock: str
    latency: bool

    @property
    def page(self) -> str:
        """The page size, as a string ("4KB", "2MB", "1GB")."""
        return format_page(self.shift)

    @property
    def hugetlb(self) -> bool:
        """True for hugetlb pages (2MB or 1GB)."""
        return self.shift != 12

    @property
    def hugepages_needed(self) -> int:
        """Hugepages the run maps at once (0 for 4KB pages)."""
        return self.threads * (self.nbytes >> self.shift) if self.hugetlb else 0

    @property
    def lat_unit(self) -> int:
        """Bytes per latency sample (latency_unit), 0 without latencies."""
        return latency_unit(self.shift, self.thp, self.nbytes) if self.latency else 0

    def params(self) -> dict[str, Any]:
        """The plan as a Result's params.

        Returns
        -------
        dict
            size (bytes, each thread's), page (a string), loops, threads,
            seed, thp and latency.
        """
        return {
            "size": self.nbytes,
            "page": self.page,
            "loops": self.loops,
            "threads": self.threads,
            "seed": self.seed,
            "thp": self.thp,
            "latency": self.latency,
        }


def plan(
    size: int | str = "1GB",
    page: str = "4KB",
    loops: int = 10,
    threads: int = 1,
    seed: int = 0,
    thp: bool | None = False,
    clock: str = "ns",
    latency: bool = False,
) -> FaultPlan:
    """Check every argument of a fault run except the workload.

    Parameters
    ----------
    size, page, loops, threads, seed, thp, clock, latency
        As faults() takes them.

    Returns
    -------
    FaultPlan

    Raises
    ------
    ValueError
        On the first bad argument.
    UnavailableError
        For a clock this machine cannot run.
    MappingError
        When 4KB regions of `threads` x `size` bytes cannot fit in memory
        (MemAvailable in /proc/meminfo).
    """
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


def check_latency(p: FaultPlan, function: str) -> None:
    """Check that workload `function` has faults to time, when `p` asks for latencies.

    Parameters
    ----------
    p : FaultPlan
        The run's plan.
    function : str
        The workload.

    Raises
    ------
    ValueError
        For latencies with "populate", whose faults all happen inside mmap().
    """
    if p.latency and function == "populate":
        raise ValueError(
            "populate faults every page inside mmap(MAP_POPULATE): there is no "
            "fault to time on its own; use demand or populate-write for latencies"
        )


def check_hugepages(p: FaultPlan) -> None:
    """Check that the run's hugepages are free (nothing to check for 4KB pages).

    Parameters
    ----------
    p : FaultPlan
        The run's plan.

    Raises
    ------
    MappingError
        Naming the sysfs file to write, when the pool lacks free hugepages.
    """
    if p.hugetlb:
        hugepages.check_available(p.page, p.hugepages_needed, can_reserve=True)


@contextlib.contextmanager
def reserved(p: FaultPlan, reserve: bool = True) -> Iterator[None]:
    """Around a run, the hugepages it needs.

    Parameters
    ----------
    p : FaultPlan
        The run's plan.
    reserve : bool
        Grow the pool by what the run lacks (root only) and give it back
        afterwards; without, only check the pool is big enough.

    Raises
    ------
    MappingError
        When the pool lacks hugepages (and cannot be grown).
    """
    if not p.hugetlb:
        yield
    elif reserve:
        with hugepages.reserve(p.page, p.hugepages_needed):
            yield
    else:
        check_hugepages(p)
        yield
