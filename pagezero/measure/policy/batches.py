"""clear_pages() replayed in user space: batches between resched points. See docs/policies.rst."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pagezero.measure.policy.orders as orders
from pagezero import _core, interrupt
from pagezero.measure.conditions import Conditions, arguments, check_bool, check_loops
from pagezero.results.resultset import Result, result_type
from pagezero.system.backing import (
    Backing,
    backing_details,
    check_backing,
    map_backed,
    observed_backing,
)
from pagezero.system.machine import machine
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
    p: BatchPlan, buffer: Any = None, steps: list[orders.Step] | None = None
) -> BatchResult | None:
    """Plan `p` on `buffer` (one per thread) or fresh mappings; thread 0's steps into `steps`."""
    c = p.conditions
    with contextlib.ExitStack() as stack:
        views, used = _buffers(p, buffer, stack)
        cpus = c.cpus()
        walk = dict(
            yield_between=p.yield_between, record=steps is not None, cpus=cpus, **c.cold_args()
        )
        raw = _core.bench_batch(views, p.kernel, p.batch_bytes // orders.PAGE_SIZE, p.loops, **walk)
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
        steps += (orders.Step(*s) for s in raw["steps"])
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
