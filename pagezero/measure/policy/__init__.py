"""Clearing policies replayed in user space: clear_pages()'s batches between resched points
(batch()), folio_zero_user()'s orders (folio()). See docs/policies.rst."""

from __future__ import annotations

import contextlib
import functools
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pagezero.measure.policy.orders as orders
from pagezero import _core, interrupt
from pagezero.measure.conditions import Conditions, arguments, check_bool, check_loops
from pagezero.measure.policy.orders import PAGE_SIZE, Step
from pagezero.measure.policy.orders import PRESETS as PRESETS
from pagezero.measure.policy.orders import STRATEGIES as STRATEGIES
from pagezero.measure.policy.orders import clear_folio as clear_folio
from pagezero.measure.policy.orders import clear_order as clear_order
from pagezero.measure.policy.orders import default_kernel as default_kernel
from pagezero.measure.policy.orders import default_nt_kernel as default_nt_kernel
from pagezero.results.resultset import Result, result_type
from pagezero.system import hugepages
from pagezero.system.backing import (
    Backing,
    backing_details,
    check_backing,
    kernel_backing,
    map_backed,
    observed_backing,
)
from pagezero.system.machine import eviction_cache, machine
from pagezero.system.memory import region
from pagezero.units import format_size, parse_size

# Every batch of every pass is recorded (8 bytes each): bound the buffer.
MAX_BATCH_RECORDS = 1 << 25
_BATCH_STATS = ("max", "p99", "median", "mean", "typical_worst")
_BATCH_COLD_TIMING = "per batch: flush, clock, clear, clock; a pass leaves the flushes out"


def _ms(stat: str, doc: str) -> functools.cached_property[float]:
    """A BatchResult's batch_ns[stat] in ms (a typed property: batch_ns is frozen)."""
    ms = functools.cached_property(lambda self: self.batch_ns[stat] / 1e6)
    ms.__doc__ = doc
    return ms


@result_type("batch")
@dataclass(frozen=True)
class BatchResult(Result):
    """A batch run (pagezero.batch()): its samples are whole passes (ns, yields included).

    Attributes
    ----------
    batch_bytes : int
        The bytes each batch clears.
    batches_per_loop : int
        The batches of one pass (per thread).
    pass_worst_ns : tuple of int
        Each pass's slowest batch, in ns.
    batch_ns : mapping of str to float
        Over every batch of every pass (ns, yields left out): "max", "p99", "median", "mean",
        and "typical_worst" (the slowest batch position, median over passes).
    """

    batch_bytes: int = 0
    batches_per_loop: int = 0
    pass_worst_ns: tuple[int, ...] = ()
    # None only until __post_init__ freezes it into a mapping: every reader sees a mapping.
    batch_ns: Mapping[str, float] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if "backing" not in self.params:
            # Saved before batch() chose its pages: those runs cleared 4KB pages, THP refused.
            object.__setattr__(self, "params", {**self.params, "backing": "4KB"})
        super().__post_init__()
        object.__setattr__(self, "pass_worst_ns", tuple(self.pass_worst_ns))
        object.__setattr__(self, "batch_ns", MappingProxyType(dict(self.batch_ns or {})))
        if self.batch_bytes <= 0 or self.batches_per_loop <= 0:
            raise ValueError("a BatchResult needs batch_bytes and batches_per_loop")
        if len(self.pass_worst_ns) != len(self.samples):
            raise ValueError("pass_worst_ns needs one value per pass")

    worst_ms = _ms("max", "The slowest batch of all passes, in ms.")
    p99_ms = _ms("p99", "The 99th percentile of every batch of every pass, in ms.")
    median_ms = _ms("median", "The median of every batch of every pass, in ms.")
    typical_worst_ms = _ms("typical_worst", "The typical worst (docs/glossary.rst), in ms.")


@dataclass(frozen=True)
class BatchPlan:
    """A checked batch run, made by plan_batch() and run by run_batch()."""

    nbytes: int  # the region's bytes (per thread)
    batch: int | str | None  # as given: a preset name or a size
    batch_bytes: int
    kernel: str
    loops: int
    yield_between: bool  # sched_yield() after each batch
    conditions: Conditions = Conditions(threads_mode=None)
    backing: str = "auto"  # as asked: auto, hugetlb, thp or 4KB

    threads = property(lambda self: self.conditions.threads)
    node = property(lambda self: self.conditions.node)

    @property
    def batches_per_loop(self) -> int:  # of one pass (per thread), the last one maybe partial
        return -(-self.nbytes // self.batch_bytes)

    def params(self, backing: str | None = None) -> dict[str, Any]:
        """The result's params, with the backing used (default: as asked)."""
        p = {"size": self.nbytes, "batch": self.batch, "batch_bytes": self.batch_bytes}
        p.update(kernel=self.kernel, loops=self.loops, **{"yield": self.yield_between})
        return {**p, "backing": backing or self.backing, **self.conditions.params()}


def plan_batch(*args: Any, **kwargs: Any) -> BatchPlan:
    """batch()'s arguments, checked (ValueError on the first bad one)."""
    a = arguments(batch, args, kwargs)
    nbytes = parse_size(a["size"])
    orders.pages(nbytes, "size")
    b_bytes = orders.batch_bytes(a["batch"], nbytes)
    orders.pages(b_bytes, "batch")
    if b_bytes > nbytes:
        raise ValueError(
            f"invalid batch {a['batch']!r}: larger than the region ({format_size(nbytes)})"
        )
    loops, threads, yield_between = a["loops"], a["threads"], a["yield_between"]
    check_loops(loops, "batch")
    check_backing(a["backing"])
    check_bool("yield_between", yield_between)
    # Each thread clears its own region: there is no threads mode to choose.
    c = Conditions.check(a["cache"], threads, None, a["node"], None, a["counters"])
    kernel = orders.check_kernel(a["kernel"]).name
    p = BatchPlan(nbytes, a["batch"], b_bytes, kernel, loops, yield_between, c, a["backing"])
    if p.batches_per_loop * loops * threads > MAX_BATCH_RECORDS:
        raise ValueError(
            f"{p.batches_per_loop * loops * threads} batches to record ({loops} loops of "
            f"{p.batches_per_loop}, {threads} thread(s)); at most {MAX_BATCH_RECORDS}: use a "
            "larger batch, a smaller size or fewer loops"
        )
    return p


def _buffers(
    p: BatchPlan, buffers: Any, stack: contextlib.ExitStack
) -> tuple[list[memoryview], Backing]:
    """One view of p.nbytes per thread, of `buffers` or fresh mappings, and the Backing used."""
    bound = None
    if buffers is None:
        # Not populated when bound to a node: bind() comes first, the C core faults them in.
        fresh = functools.partial(orders.backed_region, p.nbytes, populate=p.node is None)

        def mapper(used: Backing) -> list[Any]:
            return [stack.enter_context(fresh(used)) for _ in range(p.threads)]

        buffers, used = map_backed(mapper, p.nbytes, p.threads, p.node, p.backing)
        # The whole of each region: mbind takes whole hugetlb pages only.
        bound = buffers
    else:
        if p.threads == 1 and not isinstance(buffers, (list, tuple)):
            buffers = [buffers]
        used = observed_backing(buffers) if p.backing == "auto" else Backing(p.backing)
    if len(buffers) != p.threads:
        raise ValueError(f"{len(buffers)} buffers given for {p.threads} threads")
    views = [stack.enter_context(memoryview(b)[: p.nbytes]) for b in buffers]
    if p.node is not None:
        for b in bound if bound is not None else views:
            orders.bind(b, p.node)
    return views, used


def run_batch(
    p: BatchPlan, buffer: Any = None, steps: list[Step] | None = None
) -> BatchResult | None:
    """Plan `p` on `buffer` (one per thread) or fresh mappings; thread 0's steps into `steps`."""
    c = p.conditions
    with contextlib.ExitStack() as stack:
        views, used = _buffers(p, buffer, stack)
        cpus = c.cpus()
        walk = dict(
            yield_between=p.yield_between, record=steps is not None, cpus=cpus, **c.cold_args()
        )
        raw = _core.bench_batch(views, p.kernel, p.batch_bytes // PAGE_SIZE, p.loops, **walk)
        # After the prefault (the C core's, for regions bound to a node): what THP gave.
        got = backing_details(used, views)

    def make_result(d: dict[str, Any]) -> BatchResult:
        return BatchResult(
            benchmark="batch",
            function=p.kernel,
            params=p.params(used.how),
            bytes_per_loop=p.nbytes * p.threads,
            clock="ns",
            samples=d["samples"],
            machine=machine(),
            details={**c.details(d, _BATCH_COLD_TIMING, (p.nbytes,) * p.threads, cpus), **got},
            batch_bytes=p.batch_bytes,
            batches_per_loop=d["batches"],
            pass_worst_ns=d["pass_worst"],
            batch_ns={k: d[k] for k in _BATCH_STATS},
            interrupted=d["interrupted"],
        )

    # A signal raises Interrupted here, carrying the passes completed before it.
    if steps is not None:
        steps += (Step(*s) for s in raw["steps"])
    return interrupt.finish(raw, make_result)


def batch(
    size: int | str = "1GB",
    batch: int | str | None = "32MB",
    kernel: str | None = None,
    loops: int = 10,
    yield_between: bool = False,
    cache: str = "hot",
    threads: int = 1,
    node: int | None = None,
    counters: bool = False,
    backing: str = "auto",
    runs: int = 1,
) -> BatchResult | None:
    """Clear `size` bytes in batches, timing every batch (docs/policies.rst, "Batches").

    Parameters
    ----------
    size : int or str
        The region's bytes (per thread), or a string such as "1GB".
    batch : int or str
        A preset (PRESETS) or a size: whole 4KB pages, no larger than size.
    kernel : str or None
        A clear kernel (default: the one clear_pages() uses here).
    loops : int
        The timed passes over the region.
    yield_between : bool
        sched_yield() after each batch, standing in for the kernel's cond_resched().
    cache : {"hot", "cold"}
        "cold" flushes each batch before its clock read, outside a pass's time.
    threads : int
        Pinned threads, each clearing its own region of `size`, passes started together.
    node : int or None
        Bind the regions to this NUMA node (mbind) before their first touch.
    counters : bool
        Read hardware counters around each pass into details["counters"] (summed over threads).
    backing : {"auto", "hugetlb", "thp", "4KB"}
        The pages standing for the kernel's direct map ("auto": 2MB hugetlb, else THP, else 4KB).

    Raises
    ------
    ValueError
        For a bad argument (checked by plan_batch() before anything runs).
    UnavailableError, MappingError
        For a kernel this machine cannot run, counters without a PMU; for a refused mapping.
    Interrupted
        When a stop signal cuts the run short.
    """
    return run_batch(plan_batch(**locals()))


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
            f"{format_size(PAGE_SIZE)} pages"
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
        batch_pages = max(1, p.batch_bytes // PAGE_SIZE)
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
