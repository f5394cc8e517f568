"""folio_zero_user() orders, the plan: every argument of a folio run checked
before anything is mapped or cleared (pagezero.measure.policy.folios runs it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero.measure.conditions import Conditions, check_loops
from pagezero.measure.policy.orders import (
    PAGE_SIZE,
    batch_bytes,
    check_fault,
    check_kernel,
    check_strategy,
    default_kernel,
    nt_kernel_for,
    pages,
)
from pagezero.system.backing import BACKINGS
from pagezero.units import format_size, parse_size

__all__ = ["FolioPlan", "plan_folio", "FOLIO_BACKINGS"]

FOLIO_BACKINGS: tuple[str, ...] = BACKINGS
_HUGETLB_SHIFTS = {2 << 20: 21, 1 << 30: 30}


@dataclass(frozen=True)
class FolioPlan:
    """A checked folio run, made by plan_folio() and run by run_folio().

    Attributes
    ----------
    nbytes : int
        The folio's bytes.
    strategy : str
        One of STRATEGIES.
    fault_index : int
        The faulting page.
    kernel : str
        The clear kernel for cached stores.
    nt_kernel : str or None
        The non-temporal kernel; None unless the strategy uses one.
    batch : int, str or None
        The batch as given: a preset name or a size.
    batch_bytes : int
        The most cleared at once, in bytes.
    loops : int
        The timed clears.
    backing : str
        As asked: "auto", "hugetlb", "thp" or "4KB".
    cold : str
        How the baseline evicts: "clflush" or "evict".
    conditions : Conditions
        Cache, node and counters.
    """

    nbytes: int
    strategy: str
    fault_index: int
    kernel: str
    nt_kernel: str | None  # None unless the strategy uses one
    batch: int | str | None
    batch_bytes: int
    loops: int
    backing: str  # as asked: auto, hugetlb, thp, 4KB
    cold: str  # clflush or evict
    conditions: Conditions = Conditions(threads_mode=None)

    cache = property(lambda self: self.conditions.cache)
    node = property(lambda self: self.conditions.node)
    counters = property(lambda self: self.conditions.counters)

    @property
    def nr_pages(self) -> int:
        """The folio's 4KB pages."""
        return self.nbytes // PAGE_SIZE

    def params(self, backing: str) -> dict[str, Any]:
        """The result's params.

        Parameters
        ----------
        backing : str
            The backing used: "hugetlb", "thp" or "4KB".

        Returns
        -------
        dict
            size, strategy, fault_index, kernel, nt_kernel, batch,
            batch_bytes, loops, backing, cold and the conditions' params.
        """
        p = {
            "size": self.nbytes,
            "strategy": self.strategy,
            "fault_index": self.fault_index,
            "kernel": self.kernel,
            "nt_kernel": self.nt_kernel,
            "batch": self.batch,
            "batch_bytes": self.batch_bytes,
            "loops": self.loops,
            "backing": backing,
            "cold": self.cold,
        }
        p.update(self.conditions.params())
        return p


def plan_folio(
    size: int | str = "2MB",
    strategy: str = "neighbourhood-last",
    fault_index: int = 0,
    kernel: str | None = None,
    nt_kernel: str | None = None,
    loops: int = 10,
    batch: int | str | None = "32MB",
    backing: str = "auto",
    cold: str = "auto",
    cache: str = "hot",
    node: int | None = None,
    counters: bool = False,
) -> FolioPlan:
    """Check every argument of a folio run.

    Parameters
    ----------
    size, strategy, fault_index, kernel, nt_kernel, loops, batch
        As for folio().
    backing, cold, cache, node, counters
        As for folio().

    Returns
    -------
    FolioPlan
        The checked run, for run_folio().

    Raises
    ------
    ValueError
        On the first bad argument.
    UnavailableError
        For a kernel this machine cannot run, or a strategy needing a
        non-temporal kernel where there is none.
    """
    nbytes = parse_size(size, what="folio size")
    nr = pages(nbytes, "folio size")
    if nr & (nr - 1):
        raise ValueError(
            f"invalid folio size {size!r}: not a power-of-two number of "
            f"{format_size(PAGE_SIZE)} pages"
        )
    check_strategy(strategy)
    check_fault(fault_index, nr)
    check_loops(loops, "folio")
    b_bytes = batch_bytes(batch, nbytes)
    pages(b_bytes, "batch")
    if backing not in FOLIO_BACKINGS:
        raise ValueError(f"unknown backing {backing!r} (expected {', '.join(FOLIO_BACKINGS)})")
    if backing == "hugetlb" and nbytes not in _HUGETLB_SHIFTS:
        raise ValueError(f"hugetlb backing needs a 2MB or 1GB folio, not {format_size(nbytes)}")
    methods = _core.cold_methods()
    if cold == "auto":
        cold = methods[0]
    elif cold not in methods:
        raise ValueError(
            f"unknown or unavailable cold method {cold!r} (here: auto, {', '.join(methods)})"
        )
    # One folio, one thread.
    c = Conditions.check(cache, 1, None, node, None, counters)
    kernel = check_kernel(kernel or default_kernel()).name
    nt = nt_kernel_for(strategy, nt_kernel)
    return FolioPlan(
        nbytes, strategy, fault_index, kernel, nt, batch, b_bytes, loops, backing, cold, c
    )
