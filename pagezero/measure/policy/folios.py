"""folio_zero_user() orders: clear a folio in one strategy's order, then time
the touch of the fault neighbourhood right after, against a cold baseline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pagezero import _core, interrupt
from pagezero.measure.conditions import Conditions, arguments, check_loops, evict_bytes
from pagezero.measure.policy.orders import (
    PAGE_SIZE,
    batch_bytes,
    bind,
    check_base_page,
    check_fault,
    check_kernel,
    check_strategy,
    default_kernel,
    nt_kernel_for,
    pages,
)
from pagezero.measure.policy.results import FolioResult
from pagezero.system import hugepages
from pagezero.system.backing import (
    BACKINGS,
    Backing,
    backing_details,
    kernel_backing,
    map_backed,
)
from pagezero.system.machine import eviction_cache, machine
from pagezero.system.memory import region
from pagezero.units import format_size, parse_size

FOLIO_BACKINGS: tuple[str, ...] = BACKINGS
_HUGETLB_SHIFTS = {2 << 20: 21, 1 << 30: 30}


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
    check_base_page("folio()")
    nbytes = parse_size(a["size"], what="folio size")
    nr = pages(nbytes, "folio size")
    if nr & (nr - 1):
        raise ValueError(
            f"invalid folio size {a['size']!r}: not a power-of-two number of "
            f"{format_size(PAGE_SIZE)} pages"
        )
    strategy, backing, cold = check_strategy(a["strategy"]), a["backing"], a["cold"]
    check_fault(a["fault_index"], nr)
    check_loops(a["loops"], "folio")
    b_bytes = batch_bytes(a["batch"], nbytes)
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
    c = Conditions.check(a["cache"], 1, None, a["node"], None, a["counters"])
    kernel = check_kernel(a["kernel"] or default_kernel()).name
    nt = nt_kernel_for(strategy, a["nt_kernel"])
    fault, batch, loops = a["fault_index"], a["batch"], a["loops"]
    return FolioPlan(nbytes, strategy, fault, kernel, nt, batch, b_bytes, loops, backing, cold, c)


def _free_hugepages(nbytes: int, node: int | None = None) -> int:
    """Hugepages of nbytes a new mapping can have now (free, less those
    promised), and with a node no more than that node has free."""
    available = next((p.available for p in hugepages.pools().values() if p.page_bytes == nbytes), 0)
    on_node = None if node is None else hugepages.node_free(format_size(nbytes), node)
    return available if on_node is None else min(available, on_node)


def _scrub_bytes() -> int:
    # Read before every clear so the folio starts cache-cold: twice the cache the run has
    # (machine.eviction_cache(): measured where it was, else sysfs's LLC; 64MB unknown). On a
    # VM sysfs can give the socket's L3 (480 MiB on an Intel Xeon VM): 960 MiB read per clear.
    cache = eviction_cache()["bytes"] or 0
    return max(2 * cache, 16 << 20) if cache else 64 << 20


class FolioMemory:
    """The folio, and the scrub buffer read before each clear, mapped once for several runs.

    A hugetlb page of its own size when asked or (auto) free, else as
    kernel_backing() chooses: 2MB hugetlb pages, THP, or 4KB pages aligned to
    min(size, 2MB). .backing says which, .page_label in words.
    """

    folio: memoryview
    scrub: memoryview
    backing: str
    page_label: str

    def __init__(self, nbytes: int, backing: str, node: int | None = None) -> None:
        self.regions: list[Any] = []
        self.node = node
        self.note: str | None = None
        populate = node is None
        own = nbytes in _HUGETLB_SHIFTS and backing in ("auto", "hugetlb")
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
        if backing == "auto" and _free_hugepages(nbytes, node) == 0:
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
            # A folio is aligned to its size; 2MB alignment is what a 4KB-page
            # mapping can usefully mimic (the physical pages are scattered anyway).
            align = min(nbytes, 2 << 20)
            reg = region(nbytes + align, page="4KB", thp=False, populate=populate)
            off = (-reg.address) % align
            self.page_label = "4KB pages, THP refused"
        else:
            # Whole 2MB pages: THP mappings of 2MB or more start on a 2MB
            # boundary (csrc/region.c), and so does every hugetlb mapping.
            reg = region(
                -(-nbytes // (2 << 20)) * (2 << 20), populate=populate, **used.region_args()
            )
            off = 0
            self.page_label = "2MB hugetlb pages" if used.how == "hugetlb" else "2MB THP"
        self.regions.append(reg)
        self.folio = memoryview(reg)[off : off + nbytes]

    def bind(self, node: int) -> None:
        """mbind the folio to `node`: the whole mapping on huge pages (mbind takes whole
        hugetlb pages only), the folio's range on 4KB pages."""
        bind(self.regions[0] if self.backing != "4KB" else self.folio, node)
        self.node = node

    def details(self) -> dict[str, Any]:
        """What the result's details say of the folio's backing, read after its first touch."""
        return backing_details(Backing(self.backing, self.note), [self.folio])

    def close(self) -> None:
        """Release the views and unmap the folio and the scrub buffer."""
        for view in ("folio", "scrub"):
            if hasattr(self, view):
                getattr(self, view).release()
        for reg in self.regions:
            reg.close()


def run_folio(p: FolioPlan, memory: FolioMemory | None = None) -> FolioResult | None:
    """Plan `p`: one C call, on `memory` (shared by several runs) or a FolioMemory of its own;
    None as interrupt.finish() says."""
    c = p.conditions
    own = memory is None
    mem = FolioMemory(p.nbytes, p.backing, p.node) if memory is None else memory
    if not own and p.node is not None and mem.node != p.node:
        mem.bind(p.node)
    try:
        raw = _core.bench_folio(
            mem.folio,
            mem.scrub,
            p.strategy,
            p.fault_index,
            max(1, p.batch_bytes // PAGE_SIZE),
            p.kernel,
            p.loops,
            p.cold,
            nt_kernel=p.nt_kernel,
            cold=c.cold,
            evict_bytes=evict_bytes(),
            counters=c.counters,
        )
        pages = mem.details()
    finally:
        if own:
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
            details={
                **c.details(
                    d, "the whole folio flushed before each clear, outside its clock", (p.nbytes,)
                ),
                **pages,
            },
            touch_ns=d["touch"],
            cold_ns=d["cold"],
            touch_lines=d["touch_lines"],
            neighbourhood=d["neighbourhood"],
            backing=mem.backing,
            cold_method=p.cold,
            interrupted=d["interrupted"],
        )

    # A signal raises Interrupted here, carrying the loops completed before it.
    r: FolioResult | None = interrupt.finish(raw, make_result)
    return r


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
    """Clear a folio in `strategy`'s order and measure the fault neighbourhood.

    Before each loop the folio is dirtied and pushed out of cache.

    Parameters
    ----------
    size : int or str
        "2MB", "1GB" or any power-of-two number of 4KB pages.
    strategy : str
        One of STRATEGIES (page-at-a-time, sequential, neighbourhood-last,
        nocache-except-target).
    fault_index : int
        The faulting page (0 = the first, the common case).
    kernel : str or None
        The clear kernel for cached stores (default: clear_pages()'s).
    nt_kernel : str or None
        The non-temporal one for nocache-except-target.
    loops : int
        The timed clears.
    batch : int or str
        The most clear_pages() clears at once (sequential, neighbourhood-last).
    backing : {"auto", "hugetlb", "thp", "4KB"}
        A 2MB/1GB hugetlb page, THP (MADV_HUGEPAGE before the first touch), an
        aligned run of 4KB pages, or "auto": a hugetlb page of the folio's size
        when one is free, else as batch() chooses. The result's backing says which.
    cold : {"auto", "clflush", "evict"}
        How the baseline evicts the neighbourhood: "clflush" (x86-64) or
        "evict" (reading twice the cache, machine()["eviction_cache"]);
        "auto" picks clflush where it exists.
    cache : {"hot", "cold"}
        "cold" also flushes the whole folio (details["cold_method"]) after the
        scrub, before each clear and outside its timing.
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
