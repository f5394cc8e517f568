"""folio_zero_user() replayed in user space (folio()). See docs/policies.rst."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import pagezero.measure.policy.orders as orders
from pagezero import _core, interrupt
from pagezero.measure.conditions import Conditions, arguments, check_loops
from pagezero.results.resultset import Result, result_type
from pagezero.system import hugepages
from pagezero.system.backing import (
    Backing,
    backing_details,
    check_backing,
    kernel_backing,
    map_backed,
)
from pagezero.system.machine import eviction_cache, machine
from pagezero.system.memory import region
from pagezero.units import format_size, parse_size

_OWN_PAGES = (2 << 20, 1 << 30)  # folio sizes a hugetlb page of their own can hold
_FOLIO_COLD_TIMING = "the whole folio flushed before each clear, outside its clock"


@result_type("folio")
@dataclass(frozen=True)
class FolioResult(Result):
    """A folio run (pagezero.folio()): its samples are the clears (ns).

    Attributes
    ----------
    touch_ns, cold_ns : tuple of int
        Per loop, the neighbourhood's touch right after the clear, and once evicted (ns).
    touch_lines : int
        The cache lines each touch reads.
    neighbourhood : tuple of (int, int)
        The pages touched: (first page, page count).
    backing : str
        The folio's pages: "hugetlb", "thp" or "4KB".
    cold_method : str
        How the baseline evicts: "clflush" or "evict".
    """

    touch_ns: tuple[int, ...] = ()
    cold_ns: tuple[int, ...] = ()
    touch_lines: int = 0
    neighbourhood: tuple[int, ...] = ()
    backing: str = ""
    cold_method: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("touch_ns", "cold_ns", "neighbourhood"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not (len(self.touch_ns) == len(self.cold_ns) == len(self.samples)):
            raise ValueError("touch_ns and cold_ns need one value per loop")
        if self.touch_lines <= 0 or len(self.neighbourhood) != 2:
            raise ValueError("a FolioResult needs touch_lines and the neighbourhood")

    @property
    def touch_ns_per_line(self) -> float:
        """Median over loops of the touch right after the clear, ns per line."""
        return statistics.median(self.touch_ns) / self.touch_lines

    @property
    def cold_ns_per_line(self) -> float:
        """Median over loops of the same touch with the neighbourhood evicted."""
        return statistics.median(self.cold_ns) / self.touch_lines

    @property
    def clear_bytes_per_sec(self) -> float:
        """Median over loops of the clearing rate, in bytes/sec (bytes_per_sec is total/total)."""
        rates = self.rates
        if rates is None:
            # A folio is timed in ns, so it has rates: only a file that says otherwise.
            raise ValueError(f"a folio result timed by the {self.clock} clock has no rate")
        return statistics.median(rates)


@dataclass(frozen=True)
class FolioPlan:
    """A checked folio run, made by plan_folio() and run by run_folio()."""

    nbytes: int
    strategy: str
    fault_index: int  # the faulting page
    kernel: str  # for cached stores
    nt_kernel: str | None  # None unless the strategy uses one
    batch: int | str | None  # as given: a preset name or a size
    batch_bytes: int  # the most cleared at once
    loops: int
    backing: str  # as asked: auto, hugetlb, thp, 4KB
    cold: str  # how the baseline evicts: clflush or evict
    conditions: Conditions = Conditions(threads_mode=None)

    node = property(lambda self: self.conditions.node)

    def params(self, backing: str) -> dict[str, Any]:
        """The result's params, with the backing used."""
        named = ("strategy", "fault_index", "kernel", "nt_kernel", "batch", "batch_bytes", "loops")
        p = {"size": self.nbytes, **{k: getattr(self, k) for k in named}, "backing": backing}
        return {**p, "cold": self.cold, **self.conditions.params()}


def plan_folio(*args: Any, **kwargs: Any) -> FolioPlan:
    """folio()'s arguments, checked (ValueError on the first bad one)."""
    a = arguments(folio, args, kwargs)
    orders.check_base_page("folio()")
    nbytes = parse_size(a["size"], what="folio size")
    nr = orders.pages(nbytes, "folio size")
    if nr & (nr - 1):
        raise ValueError(
            f"invalid folio size {a['size']!r}: not a power-of-two number of "
            f"{format_size(orders.PAGE_SIZE)} pages"
        )
    strategy, backing, cold = orders.check_strategy(a["strategy"]), a["backing"], a["cold"]
    orders.check_fault(a["fault_index"], nr)
    check_loops(a["loops"], "folio")
    b_bytes = orders.batch_bytes(a["batch"], nbytes)
    orders.pages(b_bytes, "batch")
    if check_backing(backing) == "hugetlb" and nbytes not in _OWN_PAGES:
        raise ValueError(f"hugetlb backing needs a 2MB or 1GB folio, not {format_size(nbytes)}")
    methods = _core.cold_methods()
    if cold == "auto":
        cold = methods[0]
    elif cold not in methods:
        raise ValueError(
            f"unknown or unavailable cold method {cold!r} (here: auto, {', '.join(methods)})"
        )
    c = Conditions.check(a["cache"], 1, None, a["node"], None, a["counters"])
    kernel = orders.check_kernel(a["kernel"]).name
    nt = orders.nt_kernel_for(strategy, a["nt_kernel"])
    fault, batch, loops = a["fault_index"], a["batch"], a["loops"]
    return FolioPlan(nbytes, strategy, fault, kernel, nt, batch, b_bytes, loops, backing, cold, c)


def _scrub_bytes() -> int:
    """The bytes read before every clear so the folio starts cache-cold (docs/policies.rst)."""
    cache = eviction_cache()["bytes"] or 0
    return max(2 * cache, 16 << 20) if cache else 64 << 20


class FolioMemory:
    """The folio and the scrub buffer, mapped once for several runs (pages: docs/policies.rst)."""

    folio: memoryview
    scrub: memoryview
    backing: str
    page_label: str

    def __init__(self, nbytes: int, backing: str, node: int | None = None) -> None:
        self.regions: list[Any] = []
        self.node = node
        self.note: str | None = None
        populate = node is None
        own = nbytes in _OWN_PAGES and backing in ("auto", "hugetlb")
        if own and self._own_page(nbytes, backing, node, populate):
            pass
        elif own and nbytes == 2 << 20:
            # The 2MB page was kernel_backing's hugetlb choice: the rest is the same choice.
            used = kernel_backing(nbytes, node=node, refused="no free 2MB hugetlb page")
            self._map(nbytes, used, populate)
        else:
            # The backing asked, or (auto, its hugetlb pages taken since the look) the next.
            map_backed(lambda b: self._map(nbytes, b, populate), nbytes, node=node, backing=backing)
        if node is not None:
            try:
                self.bind(node)
            except ValueError:
                self.close()
                raise
        scrub = region(_scrub_bytes(), page="4KB", thp=False)
        self.regions.append(scrub)
        self.scrub = memoryview(scrub)

    def _own_page(self, nbytes: int, backing: str, node: int | None, populate: bool) -> bool:
        """Map the folio as one hugetlb page of its size; False when auto finds none."""
        if backing == "hugetlb" and node is not None:
            # The pool's reservation does not look at nodes: check node's own.
            hugepages.check_node_available(format_size(nbytes), 1, node)
        if backing == "auto" and hugepages.available_pages(format_size(nbytes), node) == 0:
            return False
        try:
            reg = region(nbytes, page=format_size(nbytes), populate=populate)
        except _core.MappingError:
            if backing == "hugetlb":
                raise
            return False
        self.regions.append(reg)
        self.folio = memoryview(reg)
        self.backing, self.page_label = "hugetlb", f"one {format_size(nbytes)} hugetlb page"
        return True

    def _map(self, nbytes: int, used: Backing, populate: bool) -> None:
        self.backing, self.note = used.how, used.note
        if used.how == "4KB":
            # 2MB: what a 4KB-page mapping can mimic of a folio's alignment to its size.
            align = min(nbytes, 2 << 20)
            reg = region(nbytes + align, page="4KB", thp=False, populate=populate)
            off = (-reg.address) % align
            self.page_label = "4KB pages, THP refused"
        else:
            reg, off = orders.backed_region(nbytes, used, populate), 0
            self.page_label = "2MB hugetlb pages" if used.how == "hugetlb" else "2MB THP"
        self.regions.append(reg)
        self.folio = memoryview(reg)[off : off + nbytes]

    def bind(self, node: int) -> None:
        """mbind the folio to `node`: its range on 4KB pages, else all (whole hugetlb pages)."""
        orders.bind(self.regions[0] if self.backing != "4KB" else self.folio, node)
        self.node = node

    def close(self) -> None:
        """Release the views and unmap the folio and the scrub buffer."""
        for view in ("folio", "scrub"):
            if hasattr(self, view):
                getattr(self, view).release()
        for reg in self.regions:
            reg.close()


def run_folio(p: FolioPlan, memory: FolioMemory | None = None) -> FolioResult | None:
    """Plan `p`: one C call, on `memory` (shared by runs) or its own; None as interrupt.finish()."""
    c = p.conditions
    mem = memory or FolioMemory(p.nbytes, p.backing, p.node)
    if p.node is not None and mem.node != p.node:
        mem.bind(p.node)
    try:
        batch_pages = max(1, p.batch_bytes // orders.PAGE_SIZE)
        walk = (p.strategy, p.fault_index, batch_pages, p.kernel, p.loops)
        raw = _core.bench_folio(
            mem.folio, mem.scrub, *walk, p.cold, nt_kernel=p.nt_kernel, **c.cold_args()
        )
        # After the first touch: what THP gave.
        got = backing_details(Backing(mem.backing, mem.note), [mem.folio])
    finally:
        if memory is None:
            mem.close()

    def make_result(d: dict[str, Any]) -> FolioResult:
        return FolioResult(
            benchmark="folio",
            function=p.kernel,
            params=p.params(mem.backing),
            bytes_per_loop=p.nbytes,
            clock="ns",
            samples=d["clear"],
            machine=machine(),
            details={**c.details(d, _FOLIO_COLD_TIMING, (p.nbytes,)), **got},
            touch_ns=d["touch"],
            cold_ns=d["cold"],
            touch_lines=d["touch_lines"],
            neighbourhood=d["neighbourhood"],
            backing=mem.backing,
            cold_method=p.cold,
            interrupted=d["interrupted"],
        )

    # A signal raises Interrupted here, carrying the loops completed before it.
    return interrupt.finish(raw, make_result)


def folio(
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
    runs: int = 1,
) -> FolioResult | None:
    """Clear a folio in `strategy`'s order and time the fault neighbourhood's touch right after
    (docs/policies.rst, "Folio orders").

    Parameters
    ----------
    size : int or str
        "2MB", "1GB" or any power-of-two number of 4KB pages.
    strategy : str
        One of STRATEGIES.
    fault_index : int
        The faulting page (0 = the first, the common case).
    kernel, nt_kernel : str or None
        Kernels for cached and non-temporal stores (default: clear_pages()'s, default_nt_kernel()).
    loops : int
        The timed clears.
    batch : int or str
        The most clear_pages() clears at once, as batch() takes it.
    backing : {"auto", "hugetlb", "thp", "4KB"}
        The folio's pages ("auto": a hugetlb page of its size when one is free, else as batch()).
    cold : {"auto", "clflush", "evict"}
        How the baseline evicts the neighbourhood ("auto": clflush where it exists).
    cache : {"hot", "cold"}
        "cold" also flushes the whole folio before each clear, outside its timing.
    node : int or None
        Bind the folio to this NUMA node (mbind) before its first touch.
    counters : bool
        Read hardware counters around each clear into details["counters"].

    Raises
    ------
    ValueError, UnavailableError, MappingError, Interrupted
        As batch() (arguments checked by plan_folio() before anything runs).
    """
    return run_folio(plan_folio(**locals()))
