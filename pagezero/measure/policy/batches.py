"""clear_pages() batches: clear a region B pages at a time, timing every batch, to
weigh throughput against the worst batch (the latency a batch constant bounds
under a cooperative preemption model)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Literal, overload

from pagezero import _core, interrupt
from pagezero.measure.conditions import Conditions, arguments, check_loops, evict_bytes
from pagezero.measure.policy.orders import (
    PAGE_SIZE,
    Step,
    batch_bytes,
    bind,
    check_kernel,
    default_kernel,
    pages,
)
from pagezero.measure.policy.results import BatchResult
from pagezero.system.backing import (
    Backing,
    backing_details,
    check_backing,
    map_backed,
    observed_backing,
)
from pagezero.system.machine import machine
from pagezero.system.memory import region
from pagezero.units import format_size, parse_size

# Every batch of every pass is recorded (8 bytes each): bound the buffer.
MAX_BATCH_RECORDS = 1 << 25
_BATCH_STATS = ("max", "p99", "median", "mean", "typical_worst")
_HUGE = 2 << 20


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
    def batches_per_loop(self) -> int:
        """The batches of one pass (per thread), the last one maybe partial."""
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
    pages(nbytes, "size")
    b_bytes = batch_bytes(a["batch"], nbytes)
    pages(b_bytes, "batch")
    if b_bytes > nbytes:
        raise ValueError(
            f"invalid batch {a['batch']!r}: larger than the region ({format_size(nbytes)})"
        )
    loops, threads, yield_between = a["loops"], a["threads"], a["yield_between"]
    check_loops(loops, "batch")
    check_backing(a["backing"])
    if not isinstance(yield_between, bool):
        raise ValueError(f"yield_between must be True or False, not {yield_between!r}")
    # Each thread clears its own region: there is no threads mode to choose.
    c = Conditions.check(a["cache"], threads, None, a["node"], None, a["counters"])
    kernel = check_kernel(a["kernel"] or default_kernel()).name
    p = BatchPlan(nbytes, a["batch"], b_bytes, kernel, loops, yield_between, c, a["backing"])
    if p.batches_per_loop * loops * threads > MAX_BATCH_RECORDS:
        raise ValueError(
            f"{p.batches_per_loop * loops * threads} batches to record ({loops} "
            f"loops of {p.batches_per_loop}, {threads} thread(s)); "
            f"at most {MAX_BATCH_RECORDS}: use a larger "
            "batch, a smaller size or fewer loops"
        )
    return p


def _regions(p: BatchPlan, used: Backing, stack: contextlib.ExitStack) -> list[Any]:
    # Whole 2MB pages for THP, or a region under 2MB (or its last part) cannot
    # have one; mappings of 2MB or more asking for THP start on a 2MB boundary
    # (csrc/region.c). Not populated when bound to a node: bind() comes first,
    # the C core faults them in.
    size = -(-p.nbytes // _HUGE) * _HUGE if used.how == "thp" else p.nbytes
    return [
        stack.enter_context(region(size, populate=p.node is None, **used.region_args()))
        for _ in range(p.threads)
    ]


def _map(p: BatchPlan, stack: contextlib.ExitStack) -> tuple[list[Any], Backing]:
    """p.threads fresh regions of p.nbytes on the backing p asks for, and the Backing they got."""
    regions: tuple[list[Any], Backing] = map_backed(
        lambda used: _regions(p, used, stack), p.nbytes, p.threads, p.node, p.backing
    )
    return regions


def _buffers(
    p: BatchPlan, buffers: Any, stack: contextlib.ExitStack
) -> tuple[list[memoryview], Backing]:
    """One view of p.nbytes per thread, and the Backing used: of `buffers` when given
    (their backing as p says, for "auto" as smaps shows), else of fresh mappings."""
    bound = None
    if buffers is None:
        buffers, used = _map(p, stack)
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
            bind(b, p.node)
    return views, used


@overload
def run_batch(
    p: BatchPlan, buffer: Any = None, record: Literal[False] = False
) -> BatchResult | None: ...


@overload
def run_batch(
    p: BatchPlan, buffer: Any = None, *, record: Literal[True]
) -> tuple[BatchResult | None, tuple[Step, ...]]: ...


def run_batch(
    p: BatchPlan, buffer: Any = None, record: bool = False
) -> BatchResult | None | tuple[BatchResult | None, tuple[Step, ...]]:
    """Plan `p`: one C call, on `buffer` (whole 4KB pages; one per thread) or fresh mappings;
    with `record`, (result, thread 0's steps). None as interrupt.finish() says."""
    c = p.conditions
    with contextlib.ExitStack() as stack:
        views, used = _buffers(p, buffer, stack)
        cpus = c.cpus()
        raw = _core.bench_batch(
            views,
            p.kernel,
            p.batch_bytes // PAGE_SIZE,
            p.loops,
            yield_between=p.yield_between,
            record=record,
            cpus=cpus,
            cold=c.cold,
            evict_bytes=evict_bytes(),
            counters=c.counters,
        )
        # After the prefault (the C core's, for regions bound to a node): what THP gave.
        pages = backing_details(used, views)

    def make_result(d: dict[str, Any]) -> BatchResult:
        return BatchResult(
            benchmark="batch",
            function=p.kernel,
            params=p.params(used.how),
            bytes_per_loop=p.nbytes * p.threads,
            clock="ns",
            samples=d["samples"],
            machine=machine(),
            details={
                **c.details(
                    d,
                    "per batch: flush, clock, clear, clock; a pass leaves the flushes out",
                    (p.nbytes,) * p.threads,
                    cpus,
                ),
                **pages,
            },
            batch_bytes=p.batch_bytes,
            batches_per_loop=d["batches"],
            pass_worst_ns=d["pass_worst"],
            batch_ns={k: d[k] for k in _BATCH_STATS},
            interrupted=d["interrupted"],
        )

    # A signal raises Interrupted here, carrying the passes completed before it.
    r: BatchResult | None = interrupt.finish(raw, make_result)
    if record:
        return r, tuple(Step(*s) for s in raw["steps"])
    return r


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
    """Clear `size` bytes in batches, timing every batch.

    Parameters
    ----------
    size : int or str
        The region's bytes (per thread), or a string such as "1GB".
    batch : int or str
        A preset ("page", "8MB", "32MB", "extent") or a size, a whole
        number of 4KB pages no larger than size.
    kernel : str or None
        A clear kernel (default: the one clear_pages() uses here).
    loops : int
        The timed passes over the region.
    yield_between : bool
        sched_yield() after each batch, the user-space stand-in for the
        kernel's cond_resched().
    cache : {"hot", "cold"}
        "hot" (the region stays cached from the last pass as far as it fits) or
        "cold": each batch flushed before its clock read, outside a pass's time.
    threads : int
        That many pinned threads, each clearing its own region of `size`, passes
        started behind a barrier; a sample is the first start to the last end.
    node : int or None
        Bind the regions to this NUMA node (mbind) before their first touch.
    counters : bool
        Read hardware counters around each pass into details["counters"]
        (summed over threads).
    backing : {"auto", "hugetlb", "thp", "4KB"}
        The pages standing for the kernel's direct map: "auto" takes 2MB hugetlb
        pages when enough are free, else THP, else 4KB; params["backing"] says
        which, details["backing_note"] why not hugetlb.

    Raises
    ------
    ValueError
        For a bad argument (checked by plan_batch() before anything runs).
    UnavailableError
        For a kernel this machine cannot run; counters without a PMU.
    MappingError
        When the region cannot be mapped with the backing asked for.
    Interrupted
        When a stop signal cuts the run short.
    """
    return run_batch(plan_batch(**locals()))
