"""A memset/memcpy run's plan: its arguments checked and parsed before anything is mapped.

What perf bench mem memset and memcpy take (size, page size, chunk, loops,
clock, fill value) and what pagezero adds (THP choice, offset, and the
conditions of pagezero.measure.conditions), checked once for every kernel; and the
hugepages a hugetlb run needs. pagezero.measure.mem runs the plans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero.measure.conditions import Conditions, check_loops
from pagezero.system import hugepages
from pagezero.system.kernels import KERNEL_KIND
from pagezero.system.memory import thp_mode
from pagezero.units import format_page, format_size, parse_page, parse_size

__all__ = ["CLOCKS", "check_clock", "check_fill_value", "Plan", "plan", "check_hugepages"]

CLOCKS: tuple[str, ...] = _core.clocks()
# Parts of a shared region start on 4KB boundaries (csrc/mem_bench.c).
_PART_ALIGN = 4096


def check_clock(clock: str, threads: int = 1) -> str:
    """Check a clock's name against the threads that will read it.

    Parameters
    ----------
    clock : str
        One of CLOCKS: ``"ns"``, ``"timeval"``, ``"cycles"``, ``"tsc"``.
    threads : int
        The threads of the run.

    Returns
    -------
    str
        `clock`, unchanged.

    Raises
    ------
    ValueError
        For an unknown clock, or "cycles" with more than one thread (it counts
        the thread that opened it only).
    """
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (expected one of: {', '.join(CLOCKS)})")
    if threads > 1 and clock == "cycles":
        raise ValueError(
            "the cycles clock counts the thread that opened it only: "
            "use ns or tsc with more than one thread"
        )
    return clock


def check_fill_value(value: int | str) -> int:
    """The fill byte to pass to the C core.

    Parameters
    ----------
    value : int or "loop"
        A byte, 0..255, or "loop" for perf's memset(dst, loop_index, size).

    Returns
    -------
    int
        `value`, or the C core's VALUE_LOOP for "loop".

    Raises
    ------
    ValueError
        For anything else (a bool among them).
    """
    if value == "loop":
        loop: int = _core.VALUE_LOOP
        return loop
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255 or 'loop', not {value!r}")
    return value


@dataclass(frozen=True)
class Plan:
    """Checked, parsed arguments of a memset/memcpy run, for any function.

    Build one with :func:`plan`.

    Attributes
    ----------
    benchmark : {"memset", "memcpy"}
        The benchmark.
    nbytes : int
        The buffer's size, in bytes.
    chunk : int
        Bytes per call; 0 means the whole extent.
    shift : int
        The page size's shift (12, 21 or 30).
    thp : bool or None
        The THP choice, as given.
    loops : int
        The timed passes.
    clock : str
        The clock.
    value : int or "loop"
        The fill byte, as given (memset only).
    conditions : Conditions
        Cache state, threads, NUMA placement, counters.
    offset : int
        Buffers start this many bytes past a page boundary.
    """

    benchmark: str  # "memset" or "memcpy"
    nbytes: int
    chunk: int  # as given: 0 means the whole extent
    shift: int
    thp: bool | None  # None, True or False, as given
    loops: int
    clock: str
    value: int | str  # as given: an int or "loop" (memset only)
    conditions: Conditions = Conditions()
    offset: int = 0  # buffers start this far past a page boundary

    @property
    def kind(self) -> str:
        """The kernel kind it runs: "clear" or "copy"."""
        return KERNEL_KIND[self.benchmark]

    # The conditions, by the names callers have always read.
    cache = property(lambda self: self.conditions.cache)
    threads = property(lambda self: self.conditions.threads)

    @property
    def threads_mode(self) -> str:
        """ "shared" or "private" (plan() refuses None, which Conditions take)."""
        mode = self.conditions.threads_mode
        assert mode is not None, "a memset/memcpy Plan has a threads mode"
        return mode

    node = property(lambda self: self.conditions.node)
    cpu_node = property(lambda self: self.conditions.cpu_node)
    counters = property(lambda self: self.conditions.counters)

    @property
    def total_bytes(self) -> int:
        """Bytes one loop clears over all threads."""
        return self.nbytes * (self.threads if self.threads_mode == "private" else 1)

    def thread_bytes(self) -> tuple[int, ...]:
        """Bytes each thread clears per loop (the C core's split of a shared region).

        Returns
        -------
        tuple of int
            One size in bytes per thread: `nbytes` each in private mode, else
            4KB-aligned parts, the last taking the rest.
        """
        threads: int = self.threads
        if self.threads_mode == "private" or threads == 1:
            return (self.nbytes,) * threads
        part = self.nbytes // threads // _PART_ALIGN * _PART_ALIGN
        return (part,) * (threads - 1) + (self.nbytes - part * (threads - 1),)

    def params(self) -> dict[str, Any]:
        """The plan as a Result's params.

        Returns
        -------
        dict
            size, chunk and offset in bytes, page as a string, loops, thp,
            value (memset only) and the conditions that differ from the defaults.
        """
        p: dict[str, Any] = {
            "size": self.nbytes,
            "page": format_page(self.shift),
            "chunk": self.chunk,
            "loops": self.loops,
            "thp": self.thp,
        }
        if self.kind == "clear":
            p["value"] = self.value
        p.update(self.conditions.params())
        if self.offset:
            p["offset"] = self.offset
        return p


def plan(
    benchmark: str,
    size: int | str = "1GB",
    page: str = "4KB",
    chunk: int | str = 0,
    loops: int = 10,
    clock: str = "ns",
    value: int | str = 0,
    thp: bool | None = False,
    cache: str = "hot",
    threads: int = 1,
    threads_mode: str | None = "shared",
    node: int | None = None,
    cpu_node: int | None = None,
    counters: bool = False,
    offset: int = 0,
) -> Plan:
    """Check every argument of a run except the function.

    Parameters
    ----------
    benchmark : {"memset", "memcpy"}
        The benchmark.
    size, page, chunk, loops, clock, value, thp
        As pagezero.memset() takes them.
    cache, threads, threads_mode, node, cpu_node, counters, offset
        As pagezero.memset() takes them.

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        On the first bad argument.
    UnavailableError
        For a clock this machine cannot run.
    """
    if benchmark not in ("memset", "memcpy"):
        raise ValueError(f"unknown benchmark {benchmark!r} (expected memset or memcpy)")
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = parse_page(page)
    thp_mode(thp, shift)
    check_loops(loops, benchmark)
    if KERNEL_KIND[benchmark] == "clear":
        check_fill_value(value)
    if threads_mode is None:
        # Conditions take None for benchmarks whose mode is fixed; the C core's
        # memset and memcpy need one (it took None for a TypeError).
        raise ValueError("unknown threads mode None (expected shared or private)")
    c = Conditions.check(cache, threads, threads_mode, node, cpu_node, counters)
    check_clock(clock, c.threads)
    if c.threads > 1 and c.threads_mode == "shared" and nbytes // c.threads < _PART_ALIGN:
        raise ValueError(
            f"size ({format_size(nbytes)}) is too small for {c.threads} threads: "
            f"each needs at least 4KB of it"
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 4096:
        raise ValueError(f"offset must be an int in 0..4095 (bytes), not {offset!r}")
    return Plan(benchmark, nbytes, chunk_bytes, shift, thp, loops, clock, value, c, offset)


def check_hugepages(p: Plan) -> None:
    """Check, before mapping anything, that the run's hugepages are free.

    So a bound prefault never meets an empty node. Nothing to check for 4KB
    pages.

    Parameters
    ----------
    p : Plan
        The run's plan.

    Raises
    ------
    MappingError
        With pagezero.system.hugepages' message, unless the pool, and with a node
        that node, has the run's pages free.
    """
    if p.shift == 12:
        return
    page = format_page(p.shift)
    buffers = (p.threads if p.threads_mode == "private" else 1) * (2 if p.kind == "copy" else 1)
    needed = hugepages.pages_needed(p.nbytes + p.offset, page, buffers)
    hugepages.check_available(page, needed)
    if p.node is not None:
        hugepages.check_node_available(page, needed, p.node)
