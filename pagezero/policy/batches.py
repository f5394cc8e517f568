"""clear_pages() batches: clear a region B pages at a time, timing every batch.

Weighs throughput against the worst batch: the latency a batch constant
bounds under a cooperative preemption model.
"""
import contextlib
from dataclasses import dataclass

from .. import _core, interrupt
from ..conditions import Conditions, check_loops, evict_bytes
from ..region import region
from ..runs import check_runs, in_processes
from ..sysinfo import machine
from ..units import format_size, parse_size
from .orders import PAGE_SIZE, Step, batch_bytes, bind, check_kernel, default_kernel, pages
from .results import BatchResult

__all__ = ["BatchPlan", "plan_batch", "run_batch", "batch", "MAX_BATCH_RECORDS"]

# Every batch of every pass is recorded (8 bytes each): bound the buffer.
MAX_BATCH_RECORDS = 1 << 25
_BATCH_STATS = ("max", "p99", "median", "mean", "typical_worst")


@dataclass(frozen=True)
class BatchPlan:
    nbytes: int
    batch: object           # as given: a preset name or a size
    batch_bytes: int
    kernel: str
    loops: int
    yield_between: bool
    conditions: Conditions = Conditions(threads_mode=None)

    cache = property(lambda self: self.conditions.cache)
    threads = property(lambda self: self.conditions.threads)
    node = property(lambda self: self.conditions.node)
    counters = property(lambda self: self.conditions.counters)

    @property
    def batches_per_loop(self):
        return -(-self.nbytes // self.batch_bytes)

    def params(self):
        p = {"size": self.nbytes, "batch": self.batch, "batch_bytes": self.batch_bytes,
             "kernel": self.kernel, "loops": self.loops, "yield": self.yield_between}
        p.update(self.conditions.params())
        return p


def plan_batch(size="1GB", batch="32MB", kernel=None, loops=10, yield_between=False,
               cache="hot", threads=1, node=None, counters=False):
    """Check every argument of a batch run; ValueError on the first bad one."""
    nbytes = parse_size(size)
    pages(nbytes, "size")
    b_bytes = batch_bytes(batch, nbytes)
    pages(b_bytes, "batch")
    if b_bytes > nbytes:
        raise ValueError(f"invalid batch {batch!r}: larger than the region "
                         f"({format_size(nbytes)})")
    check_loops(loops, "batch")
    if not isinstance(yield_between, bool):
        raise ValueError(f"yield_between must be True or False, not {yield_between!r}")
    # Each thread clears its own region: there is no threads mode to choose.
    c = Conditions.check(cache, threads, None, node, None, counters)
    kernel = check_kernel(kernel or default_kernel()).name
    p = BatchPlan(nbytes, batch, b_bytes, kernel, loops, yield_between, c)
    if p.batches_per_loop * loops * threads > MAX_BATCH_RECORDS:
        raise ValueError(f"{p.batches_per_loop * loops * threads} batches to record ({loops} "
                         f"loops of {p.batches_per_loop}, {threads} thread(s)); "
                         f"at most {MAX_BATCH_RECORDS}: use a larger "
                         "batch, a smaller size or fewer loops")
    return p


def _buffers(p, buffers, stack):
    """One view of p.nbytes per thread: of `buffers` when given, else of fresh
    4KB-page mappings refusing THP (bound to p.node before their first touch,
    so no page starts elsewhere)."""
    if buffers is None:
        buffers = [stack.enter_context(region(p.nbytes, page="4KB", thp=False,
                                              populate=p.node is None))
                   for _ in range(p.threads)]
    elif p.threads == 1 and not isinstance(buffers, (list, tuple)):
        buffers = [buffers]
    if len(buffers) != p.threads:
        raise ValueError(f"{len(buffers)} buffers given for {p.threads} threads")
    views = [stack.enter_context(memoryview(b)[:p.nbytes]) for b in buffers]
    if p.node is not None:
        for v in views:
            bind(v, p.node)
    return views


def run_batch(p, buffer=None, record=False):
    """Run plan `p`: on `buffer` when given (whole 4KB pages, at least p.nbytes;
    with threads, a sequence of one such buffer per thread), else on fresh
    4KB-page mappings that refuse THP. With record, also return the steps of
    the timed passes (thread 0's): (result, steps). SIGINT, SIGTERM and SIGHUP
    stop it between batches: Interrupted, its partial the passes completed."""
    c = p.conditions
    with contextlib.ExitStack() as stack:
        views = _buffers(p, buffer, stack)
        cpus = c.cpus()
        raw = _core.bench_batch(views, p.kernel, p.batch_bytes // PAGE_SIZE, p.loops,
                                yield_between=p.yield_between, record=record, cpus=cpus,
                                cold=c.cold, evict_bytes=evict_bytes(), counters=c.counters)

    def make_result(d):
        return BatchResult(
            benchmark="batch", function=p.kernel, params=p.params(),
            bytes_per_loop=p.nbytes * p.threads, clock="ns", samples=d["samples"],
            machine=machine(),
            details=c.details(d, "per batch: flush, clock, clear, clock; a pass leaves "
                                 "the flushes out", (p.nbytes,) * p.threads, cpus),
            batch_bytes=p.batch_bytes, batches_per_loop=d["batches"],
            pass_worst_ns=d["pass_worst"], batch_ns={k: d[k] for k in _BATCH_STATS},
            interrupted=d["interrupted"],
        )

    # A signal raises Interrupted here, carrying the passes completed before it.
    r = interrupt.finish(raw, make_result)
    if record:
        return r, tuple(Step(*s) for s in raw["steps"])
    return r


def batch(size="1GB", batch="32MB", kernel=None, loops=10, yield_between=False, cache="hot",
          threads=1, node=None, counters=False, runs=1):
    """Clear `size` bytes of 4KB pages in batches, timing every batch.

    batch: a preset ("page", "8MB", "32MB", "extent") or a size, a whole
        number of 4KB pages no larger than size.
    kernel: a clear kernel (default: the one clear_pages() uses here).
    yield_between: sched_yield() after each batch, the user-space stand-in
        for the kernel's cond_resched().

    cache: "hot" (default: the region stays in cache from the last pass as far
        as it fits) or "cold": each batch's range is flushed (clflushopt, else
        clflush, else evicted; details["cold_method"]) before its clock read,
        and a pass's time leaves the flushes out.
    threads: that many threads, each pinned to its own allowed CPU and clearing
        its own region of `size` in batches, every pass started together
        behind a barrier. A sample is the first start to the last end (cold:
        the slowest thread's pass) over threads * size bytes;
        details["thread_samples"] holds each thread's passes
        (bench.thread_rates() reads them).
    node: bind the regions to this NUMA node (mbind) before their first touch.
    counters: read hardware counters around each pass into details["counters"]
        (summed over threads); UnavailableError without a PMU.

    Returns a BatchResult: bytes_per_sec over whole passes, and worst_ms,
    p99_ms, median_ms, typical_worst_ms over every batch (of every thread).
    runs: 1 (default) measures here and returns a BatchResult; N > 1 measures in N
        fresh processes, one after the other, each with its own mapping,
        prefault and loops, and returns a ResultSet of N BatchResults,
        runs[i]["process"] = i (pagezero.runs).
    """
    if check_runs(runs) > 1:
        return in_processes("batch", locals())
    return run_batch(plan_batch(size, batch, kernel, loops, yield_between, cache, threads,
                                node, counters))
