"""Clearing policies: clear_pages() batches and folio_zero_user() orders.

The seeds argue about policy: how much to clear per call (the preemption
batch: 8MB in the series, 32MB as merged in Linux 7.0), in which order to
clear a huge page's subpages, and with which stores. This module replays
those choices in user space:

- batch(): clear a region in batches of B pages, timing every batch, to
  weigh throughput against the worst batch (the latency a batch constant
  bounds under a cooperative preemption model).
- folio(): clear a folio in one strategy's order, then time the touch of
  the fault neighbourhood right after, against a cold baseline.
- clear_order(): the steps a strategy takes, without clearing, from the
  same C walk the timed loops run.

Arguments are checked by plan_batch()/plan_folio() before anything runs;
run_batch()/run_folio() make one C call each (GIL released).
"""
import contextlib
import os
import statistics
from dataclasses import dataclass, fields
from types import MappingProxyType

from . import _core, hugepages
from .bench import CACHE_STATES, _check_threads, check_node, choose_cpus
from .kernels import find_kernel, kernels
from .sysinfo import llc_bytes, machine
from .region import region
from .results import Result
from .units import format_size, parse_size

__all__ = [
    "STRATEGIES", "PRESETS", "PAGE_SIZE", "NEIGHBOURHOOD_RADIUS",
    "Step", "BatchResult", "FolioResult", "FolioMemory",
    "batch", "plan_batch", "run_batch", "folio", "plan_folio", "run_folio",
    "clear_order", "clear_folio", "default_kernel", "default_nt_kernel",
]

_CONSTANTS = _core.policy_constants()
PAGE_SIZE = _CONSTANTS["page_size"]
NEIGHBOURHOOD_RADIUS = _CONSTANTS["neighbourhood_radius"]
LINE_SIZE = _CONSTANTS["line_size"]

STRATEGIES = _core.strategies()

# Batch presets: what each kernel generation clears between resched points.
# None: the whole region in one call (preempt=full|lazy need no batch).
PRESETS = {
    "page": PAGE_SIZE,          # clear_page() one page at a time: an arch without clear_pages()
    "8MB": 8 << 20,             # ARCH_PAGE_CONTIG_NR in the series (v6-v8): ~1ms at ~10GB/s
    "32MB": 32 << 20,           # PROCESS_PAGES_NON_PREEMPT_BATCH as merged in Linux 7.0: ~3ms
    "extent": None,             # preempt=full|lazy: the whole extent at once
}

FOLIO_BACKINGS = ("auto", "hugetlb", "4KB")
MAX_LOOPS = 100_000
# Every batch of every pass is recorded (8 bytes each): bound the buffer.
MAX_BATCH_RECORDS = 1 << 25

_HUGETLB_SHIFTS = {2 << 20: 21, 1 << 30: 30}


def _check_loops(loops):
    if isinstance(loops, bool) or not isinstance(loops, int):
        raise ValueError(f"loops must be an int, not {loops!r}")
    if not 1 <= loops <= MAX_LOOPS:
        raise ValueError(f"loops must be between 1 and {MAX_LOOPS}, not {loops}")


def default_kernel():
    """The kernel the Linux clear_pages() uses on this CPU: rep stosb with ERMS,
    else rep stosq on x86-64 (its ALTERNATIVE_2); elsewhere memset(), which
    the arm64 clear_page rework adopts."""
    for name in ("x86-64-stosb", "x86-64-stosq"):
        for k in kernels("clear"):
            if k.name == name and k.available:
                return name
    return "default"


def default_nt_kernel():
    """The first available non-temporal clear kernel in registry order (on
    x86-64: movnti, the 2012 clear_page_nocache), or None."""
    for k in kernels("clear"):
        if k.available and not k.temporal and not k.zero_only:
            return k.name
    return None


def _kernel(name, what="kernel"):
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a name (str), not {name!r}")
    k = find_kernel(name, "clear")
    if not k.available:
        raise _core.UnavailableError(f"kernel {name!r} is not available: {k.reason}")
    return k


def _check_strategy(name):
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")
    return name


def _pages(nbytes, what):
    if nbytes % PAGE_SIZE:
        raise ValueError(f"invalid {what} {format_size(nbytes)}: not a whole number of "
                         f"{format_size(PAGE_SIZE)} pages")
    return nbytes // PAGE_SIZE


def _batch_bytes(value, extent):
    """A preset name or a size, in bytes (None: the whole extent)."""
    if isinstance(value, str) and value in PRESETS:
        b = PRESETS[value]
        return extent if b is None else b
    if value is None:
        return extent
    try:
        return parse_size(value, what="batch")
    except ValueError as e:
        raise ValueError(f"{e} (or a preset: {', '.join(PRESETS)})") from None


# Steps ----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One clear a strategy decides on: pages [first, first + count)."""

    first: int
    count: int
    nontemporal: bool


def clear_order(strategy, nr_pages, fault_index=0, batch="32MB"):
    """The steps `strategy` takes over `nr_pages` pages for a fault at
    `fault_index`, clearing at most `batch` (preset or size) at once. Nothing
    is cleared: this is the C walk the timed loops run, recording."""
    _check_strategy(strategy)
    if isinstance(nr_pages, bool) or not isinstance(nr_pages, int) or nr_pages < 1:
        raise ValueError(f"nr_pages must be a positive int, not {nr_pages!r}")
    _check_fault(fault_index, nr_pages)
    batch_pages = max(1, _pages(_batch_bytes(batch, nr_pages * PAGE_SIZE), "batch"))
    return tuple(Step(*s) for s in _core.clear_order(strategy, nr_pages, fault_index,
                                                       batch_pages))


def clear_folio(buffer, strategy, fault_index=0, kernel=None, nt_kernel=None, batch="32MB",
                record=False):
    """Zero a writable buffer of whole 4KB pages in `strategy`'s order, untimed,
    through the same clearing callback the timed loops use. With record,
    return the steps executed."""
    _check_strategy(strategy)
    kernel = _kernel(kernel or default_kernel()).name
    nt = _nt_kernel(strategy, nt_kernel)
    nbytes = memoryview(buffer).nbytes
    batch_pages = max(1, _pages(_batch_bytes(batch, nbytes), "batch"))
    steps = _core.clear_folio(buffer, strategy, fault_index, batch_pages, kernel, nt, record)
    return None if steps is None else tuple(Step(*s) for s in steps)


def _check_fault(fault_index, nr_pages):
    if isinstance(fault_index, bool) or not isinstance(fault_index, int):
        raise ValueError(f"fault index must be an int, not {fault_index!r}")
    if not 0 <= fault_index < nr_pages:
        raise ValueError(f"fault index {fault_index} is outside the folio "
                         f"(0..{nr_pages - 1}, {nr_pages} pages)")


def _nt_kernel(strategy, nt_kernel):
    if strategy != "nocache-except-target":
        return None
    name = nt_kernel or default_nt_kernel()
    if name is None:
        raise _core.UnavailableError("strategy 'nocache-except-target' needs a non-temporal "
                                     "clear kernel and this machine has none available")
    k = _kernel(name, "nt_kernel")
    if k.temporal:
        raise ValueError(f"nt_kernel {name!r} uses temporal stores; nocache-except-target "
                         "needs a non-temporal one")
    return name


# Results --------------------------------------------------------------------


def _base_fields(result):
    return {f.name: getattr(result, f.name) for f in fields(Result)}


@dataclass(frozen=True)
class BatchResult(Result):
    """A batch run: samples are whole passes (ns, yields included); the batch
    figures summarise every batch of every pass (ns, without the yields)."""

    batch_bytes: int = 0
    batches_per_loop: int = 0
    pass_worst_ns: tuple = ()           # each pass's slowest batch
    batch_ns: MappingProxyType = None   # max, p99, median, mean, typical_worst

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "pass_worst_ns", tuple(self.pass_worst_ns))
        object.__setattr__(self, "batch_ns", MappingProxyType(dict(self.batch_ns or {})))
        if self.batch_bytes <= 0 or self.batches_per_loop <= 0:
            raise ValueError("a BatchResult needs batch_bytes and batches_per_loop")
        if len(self.pass_worst_ns) != len(self.samples):
            raise ValueError("pass_worst_ns needs one value per pass")

    @property
    def worst_ms(self):
        """The slowest batch of all passes, in ms."""
        return self.batch_ns["max"] / 1e6

    @property
    def p99_ms(self):
        return self.batch_ns["p99"] / 1e6

    @property
    def median_ms(self):
        return self.batch_ns["median"] / 1e6

    @property
    def typical_worst_ms(self):
        """The slowest batch position, median over passes: what a batch costs
        when no other task takes the CPU in the middle of it."""
        return self.batch_ns["typical_worst"] / 1e6

    def to_dict(self):
        d = super().to_dict()
        d["batch"] = {"batch_bytes": self.batch_bytes, "batches_per_loop": self.batches_per_loop,
                      "pass_worst_ns": list(self.pass_worst_ns),
                      "batch_ns": dict(self.batch_ns)}
        return d

    @classmethod
    def from_dict(cls, d):
        base = Result.from_dict(d)
        try:
            b = d["batch"]
            return cls(**_base_fields(base), batch_bytes=b["batch_bytes"],
                       batches_per_loop=b["batches_per_loop"],
                       pass_worst_ns=b["pass_worst_ns"], batch_ns=b["batch_ns"])
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a pagezero batch result: {e}") from None


@dataclass(frozen=True)
class FolioResult(Result):
    """A folio run: samples are the clears (ns); touch_ns and cold_ns the
    neighbourhood touch right after each clear and after evicting it."""

    touch_ns: tuple = ()
    cold_ns: tuple = ()
    touch_lines: int = 0
    neighbourhood: tuple = ()           # (first page, page count)
    backing: str = ""                   # "hugetlb" or "4KB"
    cold_method: str = ""               # "clflush" or "evict"

    def __post_init__(self):
        super().__post_init__()
        for name in ("touch_ns", "cold_ns", "neighbourhood"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not (len(self.touch_ns) == len(self.cold_ns) == len(self.samples)):
            raise ValueError("touch_ns and cold_ns need one value per loop")
        if self.touch_lines <= 0 or len(self.neighbourhood) != 2:
            raise ValueError("a FolioResult needs touch_lines and the neighbourhood")

    @property
    def touch_ns_per_line(self):
        """Median over loops of the touch right after the clear, ns per line."""
        return statistics.median(self.touch_ns) / self.touch_lines

    @property
    def cold_ns_per_line(self):
        """Median over loops of the same touch with the neighbourhood evicted."""
        return statistics.median(self.cold_ns) / self.touch_lines

    @property
    def clear_bytes_per_sec(self):
        """Median over loops of the clearing rate (bytes_per_sec is total/total)."""
        return statistics.median(self.rates)

    def to_dict(self):
        d = super().to_dict()
        d["folio"] = {"touch_ns": list(self.touch_ns), "cold_ns": list(self.cold_ns),
                      "touch_lines": self.touch_lines,
                      "neighbourhood": list(self.neighbourhood),
                      "backing": self.backing, "cold_method": self.cold_method}
        return d

    @classmethod
    def from_dict(cls, d):
        base = Result.from_dict(d)
        try:
            f = d["folio"]
            return cls(**_base_fields(base), touch_ns=f["touch_ns"], cold_ns=f["cold_ns"],
                       touch_lines=f["touch_lines"], neighbourhood=f["neighbourhood"],
                       backing=f["backing"], cold_method=f["cold_method"])
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a pagezero folio result: {e}") from None


# Batches --------------------------------------------------------------------


@dataclass(frozen=True)
class BatchPlan:
    nbytes: int
    batch: object           # as given: a preset name or a size
    batch_bytes: int
    kernel: str
    loops: int
    yield_between: bool
    cache: str = "hot"
    threads: int = 1
    node: object = None     # NUMA node for the regions, or None
    counters: bool = False

    @property
    def batches_per_loop(self):
        return -(-self.nbytes // self.batch_bytes)

    @property
    def plain(self):
        """The original loop (one thread, hot, no placement, no counters): no team, no thread."""
        return (self.cache == "hot" and self.threads == 1 and self.node is None
                and not self.counters)

    def params(self):
        p = {"size": self.nbytes, "batch": self.batch, "batch_bytes": self.batch_bytes,
             "kernel": self.kernel, "loops": self.loops, "yield": self.yield_between}
        _condition_params(p, self.cache, self.node, self.counters)
        if self.threads != 1:
            p["threads"] = self.threads
        return p


def _condition_params(p, cache, node, counters):
    # Only what differs from the plain loop, as bench.Plan.params: older results keep their labels.
    if cache != "hot":
        p["cache"] = cache
    if node is not None:
        p["node"] = node
    if counters:
        p["counters"] = True


def _check_conditions(cache, node, counters):
    if cache not in CACHE_STATES:
        raise ValueError(f"unknown cache state {cache!r} (expected hot or cold)")
    if node is not None:
        check_node(node, "node")
    if not isinstance(counters, bool):
        raise ValueError(f"counters must be True or False, not {counters!r}")


def _evict_bytes():
    # Evicting (where no flush instruction exists) reads twice the LLC, as memset's cold mode.
    return 2 * (llc_bytes() or (32 << 20))


def _counter_details(raw, details):
    if raw["counters"] is not None:
        details["counters"] = raw["counters"]
        if os.environ.get("PAGEZERO_FAKE_COUNTERS"):
            details["counters_source"] = "fake (PAGEZERO_FAKE_COUNTERS)"


def plan_batch(size="1GB", batch="32MB", kernel=None, loops=10, yield_between=False,
               cache="hot", threads=1, node=None, counters=False):
    """Check every argument of a batch run; ValueError on the first bad one."""
    nbytes = parse_size(size)
    _pages(nbytes, "size")
    batch_bytes = _batch_bytes(batch, nbytes)
    _pages(batch_bytes, "batch")
    if batch_bytes > nbytes:
        raise ValueError(f"invalid batch {batch!r}: larger than the region "
                         f"({format_size(nbytes)})")
    _check_loops(loops)
    if not isinstance(yield_between, bool):
        raise ValueError(f"yield_between must be True or False, not {yield_between!r}")
    _check_conditions(cache, node, counters)
    _check_threads(threads)
    kernel = _kernel(kernel or default_kernel()).name
    p = BatchPlan(nbytes, batch, batch_bytes, kernel, loops, yield_between, cache, threads,
                  node, counters)
    if p.batches_per_loop * loops * threads > MAX_BATCH_RECORDS:
        raise ValueError(f"{p.batches_per_loop * loops * threads} batches to record ({loops} "
                         f"loops of {p.batches_per_loop}, {threads} thread(s)); "
                         f"at most {MAX_BATCH_RECORDS}: use a larger "
                         "batch, a smaller size or fewer loops")
    return p


def _bind(buffer, node):
    try:
        _core.numa_bind(buffer, node)
    except OSError as e:
        raise ValueError(f"could not bind the region to node {node} (mbind: "
                         f"{e.strerror})") from None


def run_batch(p, buffer=None, record=False):
    """Run plan `p`: on `buffer` when given (whole 4KB pages, at least p.nbytes;
    with threads, a sequence of one such buffer per thread), else on fresh
    4KB-page mappings that refuse THP. With record, also return the steps of
    the timed passes (thread 0's): (result, steps)."""
    if not p.plain:
        return _run_batch_team(p, buffer, record)
    if buffer is None:
        with region(p.nbytes, page="4KB", thp=False) as reg:
            return run_batch(p, reg, record)
    view = memoryview(buffer)[:p.nbytes]
    try:
        d = _core.bench_batches(view, p.kernel, p.batch_bytes // PAGE_SIZE, p.loops,
                                p.yield_between, record)
    finally:
        view.release()
    r = BatchResult(
        benchmark="batch", function=p.kernel, params=p.params(), bytes_per_loop=p.nbytes,
        clock="ns", samples=d["samples"], machine=machine(),
        batch_bytes=p.batch_bytes, batches_per_loop=d["batches"],
        pass_worst_ns=d["pass_worst"],
        batch_ns={k: d[k] for k in ("max", "p99", "median", "mean", "typical_worst")},
    )
    if record:
        return r, tuple(Step(*s) for s in d["steps"])
    return r


def _run_batch_team(p, buffers, record):
    """Cold caches, threads, a node or counters: csrc/policy_bench.c's team."""
    with contextlib.ExitStack() as stack:
        if buffers is None:
            buffers = []
            for _ in range(p.threads):
                # With a node, bind before the first touch (the untimed pass), so no page
                # starts elsewhere.
                reg = stack.enter_context(region(p.nbytes, page="4KB", thp=False,
                                                 populate=p.node is None))
                if p.node is not None:
                    _bind(reg, p.node)
                buffers.append(reg)
        elif p.threads == 1 and not isinstance(buffers, (list, tuple)):
            buffers = [buffers]
        if len(buffers) != p.threads:
            raise ValueError(f"{len(buffers)} buffers given for {p.threads} threads")
        views = [stack.enter_context(memoryview(b)[:p.nbytes]) for b in buffers]
        if p.node is not None:
            for v in views:
                _bind(v, p.node)
        # One thread runs unpinned, as the plain loop does; several get distinct CPUs.
        cpus = choose_cpus(p.threads) if p.threads > 1 else ()
        d = _core.bench_batch_team(views, p.kernel, p.batch_bytes // PAGE_SIZE, p.loops,
                                   p.yield_between, record, cold=p.cache == "cold",
                                   evict_bytes=_evict_bytes(), cpus=cpus,
                                   counters=p.counters)
    details = {}
    if p.threads > 1:
        details.update(thread_samples=d["thread_samples"],
                       thread_bytes=(p.nbytes,) * p.threads, cpus=cpus)
    if p.cache == "cold":
        details["cold_method"] = d["cold_method"]
        details["cold_timing"] = ("per batch: flush, clock, clear, clock; a pass leaves "
                                  "the flushes out")
    _counter_details(d, details)
    r = BatchResult(
        benchmark="batch", function=p.kernel, params=p.params(),
        bytes_per_loop=p.nbytes * p.threads, clock="ns", samples=d["samples"],
        machine=machine(), details=details,
        batch_bytes=p.batch_bytes, batches_per_loop=d["batches"],
        pass_worst_ns=d["pass_worst"],
        batch_ns={k: d[k] for k in ("max", "p99", "median", "mean", "typical_worst")},
    )
    if record:
        return r, tuple(Step(*s) for s in d["steps"])
    return r


def batch(size="1GB", batch="32MB", kernel=None, loops=10, yield_between=False, cache="hot",
          threads=1, node=None, counters=False):
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
    """
    return run_batch(plan_batch(size, batch, kernel, loops, yield_between, cache, threads,
                                node, counters))


# Folios ---------------------------------------------------------------------


@dataclass(frozen=True)
class FolioPlan:
    nbytes: int
    strategy: str
    fault_index: int
    kernel: str
    nt_kernel: object       # None unless the strategy uses one
    batch: object
    batch_bytes: int
    loops: int
    backing: str            # as asked: auto, hugetlb, 4KB
    cold: str               # clflush or evict
    cache: str = "hot"
    node: object = None     # NUMA node for the folio, or None
    counters: bool = False

    @property
    def nr_pages(self):
        return self.nbytes // PAGE_SIZE

    def params(self, backing):
        p = {"size": self.nbytes, "strategy": self.strategy, "fault_index": self.fault_index,
             "kernel": self.kernel, "nt_kernel": self.nt_kernel, "batch": self.batch,
             "batch_bytes": self.batch_bytes, "loops": self.loops, "backing": backing,
             "cold": self.cold}
        _condition_params(p, self.cache, self.node, self.counters)
        return p


def plan_folio(size="2MB", strategy="neighbourhood-last", fault_index=0, kernel=None,
               nt_kernel=None, loops=10, batch="32MB", backing="auto", cold="auto",
               cache="hot", node=None, counters=False):
    """Check every argument of a folio run; ValueError on the first bad one."""
    nbytes = parse_size(size, what="folio size")
    nr = _pages(nbytes, "folio size")
    if nr & (nr - 1):
        raise ValueError(f"invalid folio size {size!r}: not a power-of-two number of "
                         f"{format_size(PAGE_SIZE)} pages")
    _check_strategy(strategy)
    _check_fault(fault_index, nr)
    _check_loops(loops)
    batch_bytes = _batch_bytes(batch, nbytes)
    _pages(batch_bytes, "batch")
    if backing not in FOLIO_BACKINGS:
        raise ValueError(f"unknown backing {backing!r} (expected {', '.join(FOLIO_BACKINGS)})")
    if backing == "hugetlb" and nbytes not in _HUGETLB_SHIFTS:
        raise ValueError(f"hugetlb backing needs a 2MB or 1GB folio, not {format_size(nbytes)}")
    methods = _core.cold_methods()
    if cold == "auto":
        cold = methods[0]
    elif cold not in methods:
        raise ValueError(f"unknown or unavailable cold method {cold!r} "
                         f"(here: auto, {', '.join(methods)})")
    _check_conditions(cache, node, counters)
    kernel = _kernel(kernel or default_kernel()).name
    nt = _nt_kernel(strategy, nt_kernel)
    return FolioPlan(nbytes, strategy, fault_index, kernel, nt, batch, batch_bytes, loops,
                     backing, cold, cache, node, counters)


def _free_hugepages(nbytes):
    """Hugepages of nbytes a new mapping can have now (free, less those promised)."""
    for p in hugepages.pools().values():
        if p.page_bytes == nbytes:
            return p.available
    return 0


def _scrub_bytes():
    # Read before every clear so the folio starts cache-cold: twice the LLC
    # (64MB when sysfs gives no LLC size).
    llc = llc_bytes() or 0
    return max(2 * llc, 16 << 20) if llc else 64 << 20


class FolioMemory:
    """The folio (a hugetlb page, or a run of 4KB pages aligned to min(size, 2MB),
    THP refused) and the scrub buffer read before each clear, mapped once so
    several runs (strategies) can share them; close() unmaps. .backing says
    which the folio got: "hugetlb" or "4KB". node: bind the folio to that
    NUMA node before its first touch."""

    def __init__(self, nbytes, backing, node=None):
        self.regions = []
        self.backing = "4KB"
        self.node = node
        populate = node is None
        if backing in ("auto", "hugetlb") and nbytes in _HUGETLB_SHIFTS:
            if backing == "hugetlb" or _free_hugepages(nbytes) > 0:
                try:
                    reg = region(nbytes, page=format_size(nbytes), populate=populate)
                    self.regions.append(reg)
                    self.folio = memoryview(reg)
                    self.backing = "hugetlb"
                except _core.MappingError:
                    if backing == "hugetlb":
                        raise
        if self.backing == "4KB":
            # A folio is aligned to its size; 2MB alignment is what a 4KB-page
            # mapping can usefully mimic (the physical pages are scattered anyway).
            align = min(nbytes, 2 << 20)
            reg = region(nbytes + align, page="4KB", thp=False, populate=populate)
            self.regions.append(reg)
            off = (-reg.address) % align
            self.folio = memoryview(reg)[off:off + nbytes]
        if node is not None:
            try:
                _bind(self.folio, node)
            except ValueError:
                self.close()
                raise
        scrub = region(_scrub_bytes(), page="4KB", thp=False)
        self.regions.append(scrub)
        self.scrub = memoryview(scrub)

    def close(self):
        for view in ("folio", "scrub"):
            if hasattr(self, view):
                getattr(self, view).release()
        for reg in self.regions:
            reg.close()


def run_folio(p, memory=None):
    """Run plan `p`, on `memory` (a FolioMemory of p's size) when given."""
    own = memory is None
    mem = FolioMemory(p.nbytes, p.backing, p.node) if own else memory
    if not own and p.node is not None and mem.node != p.node:
        _bind(mem.folio, p.node)
    try:
        d = _core.bench_folio(mem.folio, mem.scrub, p.strategy, p.fault_index,
                              max(1, p.batch_bytes // PAGE_SIZE), p.kernel, p.nt_kernel,
                              p.loops, p.cold, p.cache == "cold", "", p.counters,
                              _evict_bytes())
    finally:
        if own:
            mem.close()
    details = {}
    if p.cache == "cold":
        details["cold_method"] = d["cold_method"]
        details["cold_timing"] = "the whole folio flushed before each clear, outside its clock"
    _counter_details(d, details)
    return FolioResult(
        benchmark="folio", function=p.kernel, params=p.params(mem.backing),
        bytes_per_loop=p.nbytes, clock="ns", samples=d["clear"], machine=machine(),
        details=details,
        touch_ns=d["touch"], cold_ns=d["cold"], touch_lines=d["touch_lines"],
        neighbourhood=d["neighbourhood"], backing=mem.backing, cold_method=p.cold,
    )


def folio(size="2MB", strategy="neighbourhood-last", fault_index=0, kernel=None,
          nt_kernel=None, loops=10, batch="32MB", backing="auto", cold="auto", cache="hot",
          node=None, counters=False):
    """Clear a folio in `strategy`'s order and measure the fault neighbourhood.

    size: "2MB", "1GB" or any power-of-two number of 4KB pages.
    strategy: one of STRATEGIES (page-at-a-time, sequential, neighbourhood-last,
        nocache-except-target).
    fault_index: the faulting page (0 = the first, the common case).
    kernel: the clear kernel for cached stores (default: clear_pages()'s);
        nt_kernel: the non-temporal one for nocache-except-target.
    batch: the most clear_pages() clears at once (sequential, neighbourhood-last).
    backing: "hugetlb" (a 2MB/1GB hugetlb page), "4KB" (an aligned run of 4KB
        pages, THP refused) or "auto" (hugetlb when a page is free, else 4KB).
    cold: how the baseline evicts the neighbourhood: "clflush" (x86-64) or
        "evict" (reading twice the LLC); "auto" picks clflush where it exists.

    cache: "hot" (default) keeps the above; "cold" also flushes the whole folio
        by address (clflushopt, else clflush, else evicting; details["cold_method"])
        after the scrub and before each clear, outside its timing, so no line of
        it is left in any cache.
    node: bind the folio to this NUMA node (mbind) before its first touch.
    counters: read hardware counters around each clear into details["counters"];
        UnavailableError without a PMU.

    Before each loop the folio is dirtied and pushed out of cache. Returns a
    FolioResult: clearing rate, and touch_ns_per_line / cold_ns_per_line for
    the neighbourhood (fault +-2 pages, clamped) right after the clear and cold.
    """
    return run_folio(plan_folio(size, strategy, fault_index, kernel, nt_kernel, loops, batch,
                                backing, cold, cache, node, counters))
