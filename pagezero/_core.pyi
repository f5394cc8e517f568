"""Types of pagezero's C core (csrc/py/*.c), from its docstring signatures (held to the
built module by tests/test_typing.py). Sizes are bytes, clock samples in the clock's unit,
``*_ns`` nanoseconds; the benchmarks' dicts are open, their keys in each docstring."""

from collections.abc import Sequence
from typing import Any

from _typeshed import ReadableBuffer, WriteableBuffer
from numpy.typing import NDArray
from typing_extensions import Self

# Any object with the buffer protocol, numpy arrays named too: numpy's stubs give ndarray
# __buffer__ (PEP 688) from Python 3.12 on only, and pagezero is checked for 3.10.
_Writable = WriteableBuffer | NDArray[Any]
_Readable = ReadableBuffer | NDArray[Any]

# The architecture whose kernels this build has: "x86-64", "arm64" or "generic".
ARCH: str
# {"compiler", "flags", "test_switches"}: how it was built (results record it); a test
# build reads the PAGEZERO_* switches (csrc/switches.h) at import, a release build none.
BUILD: dict[str, str | bool]
# Region(thp=...) and bench_mem/bench_fault(thp=...): leave THP to the system, ask, refuse.
THP_SYSTEM: int
THP_ON: int
THP_OFF: int
# bench_mem(value=VALUE_LOOP): fill with the loop index, as perf's memset(dst, i, size).
VALUE_LOOP: int
# bench_mem(settle=N): the fewest untimed loops, how close (%) two must agree (mem_bench.h).
SETTLE_MIN_LOOPS: int
SETTLE_TOLERANCE_PCT: int

class PagezeroError(Exception):
    """Base class of pagezero's own errors."""

class UnavailableError(PagezeroError):
    """This machine cannot run what was asked (a kernel, a clock, the counters)."""

class MappingError(PagezeroError, OSError):
    """A region could not be mapped; an OSError whose errno says why."""

class Region:
    """An anonymous mapping (4KB pages, THP or hugetlb) exposing the buffer protocol."""

    def __init__(
        self,
        size: int,
        page_shift: int = 12,
        thp: int = 0,
        populate: bool = True,
        guard: bool = False,
    ) -> None: ...
    @property
    def size(self) -> int:
        """Usable bytes (the request rounded up to the page size)."""
    @property
    def page_size(self) -> int:
        """The page size asked for, in bytes."""
    @property
    def address(self) -> int:
        """Address of the first usable byte (0 once closed)."""
    @property
    def closed(self) -> bool:
        """True once unmapped."""
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    # The buffer protocol: memoryview(region), and a buffer wherever the functions take one.
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...

# A (first_page, page_count, nontemporal) step of a clearing strategy.
_Steps = tuple[tuple[int, int, bool], ...]

# csrc/py/kernels.c
def kernels() -> tuple[dict[str, Any], ...]: ...
def cpu_features() -> tuple[str, ...]: ...
def fill(buffer: _Writable, value: int, kernel: str) -> None: ...
def copy(dst: _Writable, src: _Readable, kernel: str) -> None: ...
def check_clock(name: str) -> None: ...
def clocks() -> tuple[str, ...]: ...
def tsc_hz() -> float: ...

# csrc/py/mem.c
def bench_mem(
    kind: str,
    kernel: str,
    size: int,
    *,
    chunk: int = 0,
    page_shift: int = 12,
    thp: int = 0,
    loops: int = 1,
    clock: str = "ns",
    value: int = 0,
    offset: int = 0,
    cold: bool = False,
    flush: str | None = "",
    evict_bytes: int = 0,
    threads: int = 1,
    mode: str = "shared",
    cpus: Sequence[int] = (),
    node: int = -1,
    counters: bool = False,
    settle: int = 0,
) -> dict[str, Any]: ...
def split_region(
    size: int, threads: int, page_shift: int = 12, thp: int = 0
) -> tuple[int, tuple[int, ...]]: ...
def run_threads_on(
    buffer: _Writable,
    kernel: str,
    threads: int,
    chunk: int,
    loops: int,
    value: int,
    value_step: int,
    cold: bool,
    flush: str | None,
    evict_bytes: int = 0,
) -> list[tuple[int, str, int, int]]: ...

# csrc/py/fault.c
def fault_workloads() -> tuple[tuple[str, str], ...]: ...

# Its dict: wall, threads, thread_cpu (per thread, per loop: CPU ns), pages, latency,
# loops_done, interrupted, profile: None; {"refused": errno, "stage": "open" | "mmap"}; or
# {event, kernel_ips, kernel_periods (loop-major), loops ({kernel, user, user_period, other,
# other_period, lost} per completed loop), user, user_period, other, other_period, lost,
# format_lost}: the completed loops only.
def bench_fault(
    workload: str,
    size: int,
    page_shift: int,
    thp: int,
    loops: int,
    threads: int,
    seed: int,
    clock: str,
    lat_unit: int,
    touch: str = "write",
    profile: bool = False,
) -> dict[str, Any]: ...
def fault_pass(
    workload: str,
    size: int,
    page_shift: int,
    thp: int,
    seed: int,
    lat_unit: int = 0,
    touch: str = "write",
) -> tuple[Region, dict[str, int]]: ...

# csrc/py/policy.c
def strategies() -> tuple[str, ...]: ...
def cold_methods() -> tuple[str, ...]: ...
def policy_constants() -> dict[str, int]: ...
def clear_order(strategy: str, nr_pages: int, fault_index: int, batch_pages: int) -> _Steps: ...
def clear_folio(
    buffer: _Writable,
    strategy: str,
    fault_index: int,
    batch_pages: int,
    kernel: str,
    nt_kernel: str | None = None,
    record: bool = False,
) -> _Steps | None: ...
def bench_folio(
    folio: _Writable,
    scrub: _Readable,
    strategy: str,
    fault_index: int,
    batch_pages: int,
    kernel: str,
    loops: int,
    baseline: str,
    *,
    nt_kernel: str | None = None,
    cold: bool = False,
    flush: str | None = "",
    evict_bytes: int = 0,
    counters: bool = False,
    trace: bool = False,
) -> dict[str, Any]: ...

# csrc/py/batch.c
def bench_batch(
    buffers: Sequence[_Writable],
    kernel: str,
    batch_pages: int,
    loops: int,
    *,
    yield_between: bool = False,
    record: bool = False,
    cpus: Sequence[int] = (),
    cold: bool = False,
    flush: str | None = "",
    evict_bytes: int = 0,
    counters: bool = False,
    trace: bool = False,
) -> dict[str, Any]: ...

# csrc/py/system.c
def mem_available() -> int: ...
def cache_methods() -> tuple[tuple[str, bool], ...]: ...
def counter_names() -> tuple[str, ...]: ...
def switches() -> dict[str, str]: ...

# Test builds only (BUILD["test_switches"]): read the switches from the environment again.
def _read_switches() -> None: ...
def numa_bind(buffer: _Writable, node: int) -> None: ...
def numa_policy(buffer: _Writable) -> tuple[int, int, int]: ...

# csrc/py/region.c
def smaps_pages(
    spans: Sequence[_Readable | tuple[int, int]],
    smaps: str = "/proc/self/smaps",
) -> dict[str, int]: ...
