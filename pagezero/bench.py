"""The perf bench mem workloads: memset and memcpy.

Arguments are checked and parsed here; the run itself (mapping, prefault,
timed loops) is one call into the C core with the GIL released.
"""
from dataclasses import dataclass

from . import _core
from .kernels import find_kernel
from .sysinfo import machine
from .region import thp_mode
from .results import Result
from .units import parse_page, parse_size, format_page, format_size

__all__ = ["memset", "memcpy", "plan", "run", "Plan", "CLOCKS", "MAX_LOOPS"]

CLOCKS = _core.clocks()
MAX_LOOPS = 10_000_000


def _check_loops(loops):
    if isinstance(loops, bool) or not isinstance(loops, int):
        raise ValueError(f"loops must be an int, not {loops!r}")
    if not 1 <= loops <= MAX_LOOPS:
        raise ValueError(f"loops must be between 1 and {MAX_LOOPS}, not {loops}")


def _check_clock(clock):
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (expected one of: {', '.join(CLOCKS)})")


def check_fill_value(value):
    """The fill byte, or VALUE_LOOP for perf's memset(dst, loop_index, size)."""
    if value == "loop":
        return _core.VALUE_LOOP
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255 or 'loop', not {value!r}")
    return value


@dataclass(frozen=True)
class Plan:
    """Checked, parsed arguments of a memset/memcpy run, for any function."""

    benchmark: str      # "memset" or "memcpy"
    kind: str           # the kernel kind it runs: "clear" or "copy"
    nbytes: int
    chunk: int          # as given: 0 means the whole extent
    shift: int
    thp: object         # None, True or False, as given
    loops: int
    clock: str
    value: object       # as given: an int or "loop" (memset only)

    def params(self):
        p = {"size": self.nbytes, "page": format_page(self.shift), "chunk": self.chunk,
             "loops": self.loops, "thp": self.thp}
        if self.kind == "clear":
            p["value"] = self.value
        return p


def plan(benchmark, size="1GB", page="4KB", chunk=0, loops=10, clock="ns", value=0, thp=False):
    """Check every argument of a run except the function; ValueError on the first bad one."""
    if benchmark not in ("memset", "memcpy"):
        raise ValueError(f"unknown benchmark {benchmark!r} (expected memset or memcpy)")
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = parse_page(page)
    thp_mode(thp, shift)
    _check_loops(loops)
    _check_clock(clock)
    kind = "clear" if benchmark == "memset" else "copy"
    if kind == "clear":
        check_fill_value(value)
    return Plan(benchmark, kind, nbytes, chunk_bytes, shift, thp, loops, clock, value)


def run(p, function):
    """Run plan `p` with the named kernel: one call into the C core."""
    kernel = find_kernel(function, p.kind)
    fill_value = check_fill_value(p.value) if p.kind == "clear" else 0
    if kernel.zero_only and fill_value != 0:
        raise ValueError(f"kernel {function!r} can only write zeros (value must be 0)")
    samples = _core.bench_mem(p.kind, function, p.nbytes, p.chunk or p.nbytes, p.shift,
                              thp_mode(p.thp, p.shift), p.loops, p.clock, fill_value)
    return Result(
        benchmark=p.benchmark,
        function=function,
        params=p.params(),
        bytes_per_loop=p.nbytes,
        clock=p.clock,
        samples=samples,
        clock_hz=_core.tsc_hz() if p.clock == "tsc" else None,
        machine=machine(),
    )


def memset(size="1GB", page="4KB", chunk=0, function="default", loops=10,
           clock="ns", value=0, thp=False):
    """Time `loops` passes of clearing `size` bytes, as perf bench mem memset.

    size, chunk: ints or strings such as "4KB", "1GB" (powers of 1024); chunk 0
        clears the whole extent in one call, otherwise each pass clears the
        region in chunk-sized calls.
    page: "4KB", "2MB" or "1GB" (hugetlb; needs reserved hugepages).
    function: a clear kernel's name (pagezero.kernels()).
    clock: "ns" (CLOCK_MONOTONIC_RAW), "timeval", "cycles" (needs a PMU) or "tsc".
    value: the fill byte (0: the subject is zeroing), or "loop" to write the
        loop index as perf does, for side-by-side parity.
    thp: for 4KB pages, False refuses transparent huge pages (MADV_NOHUGEPAGE),
        True asks for them, None leaves the system's policy.

    The buffer is mapped populated and prefaulted before timing; each loop's
    time is a sample of the returned Result.
    """
    return run(plan("memset", size, page, chunk, loops, clock, value, thp), function)


def memcpy(size="1GB", page="4KB", chunk=0, function="default", loops=10,
           clock="ns", thp=False):
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.
    Same arguments as memset(), with a copy kernel's name as function."""
    return run(plan("memcpy", size, page, chunk, loops, clock, 0, thp), function)
