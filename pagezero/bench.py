"""The perf bench mem workloads: memset and memcpy.

Arguments are checked and parsed here; the run itself (mapping, prefault,
timed loops) is one call into the C core with the GIL released.
"""
from . import _core
from .kernels import find_kernel
from .machine import machine
from .region import thp_mode
from .results import Result
from .units import parse_page, parse_size, format_page, format_size

__all__ = ["memset", "memcpy", "CLOCKS", "MAX_LOOPS"]

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


def _parse_value(value):
    """The fill byte, or VALUE_LOOP for perf's memset(dst, loop_index, size)."""
    if value == "loop":
        return _core.VALUE_LOOP
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255 or 'loop', not {value!r}")
    return value


def _run(benchmark, kind, size, page, chunk, function, loops, clock, value, thp):
    nbytes = parse_size(size)
    chunk_bytes = parse_size(chunk, what="chunk", allow_zero=True)
    if chunk_bytes > nbytes:
        raise ValueError(f"invalid chunk {chunk!r}: larger than the size ({format_size(nbytes)})")
    shift = parse_page(page)
    thp_flag = thp_mode(thp, shift)
    _check_loops(loops)
    _check_clock(clock)
    kernel = find_kernel(function, kind)
    fill_value = _parse_value(value) if kind == "clear" else 0
    if kernel.zero_only and fill_value != 0:
        raise ValueError(f"kernel {function!r} can only write zeros (value must be 0)")

    samples = _core.bench_mem(kind, function, nbytes, chunk_bytes or nbytes, shift,
                              thp_flag, loops, clock, fill_value)
    params = {
        "size": nbytes,
        "page": format_page(shift),
        "chunk": chunk_bytes,
        "loops": loops,
        "thp": thp,
    }
    if kind == "clear":
        params["value"] = value
    return Result(
        benchmark=benchmark,
        function=function,
        params=params,
        bytes_per_loop=nbytes,
        clock=clock,
        samples=samples,
        clock_hz=_core.tsc_hz() if clock == "tsc" else None,
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
    return _run("memset", "clear", size, page, chunk, function, loops, clock, value, thp)


def memcpy(size="1GB", page="4KB", chunk=0, function="default", loops=10,
           clock="ns", thp=False):
    """Time `loops` passes of copying `size` bytes, as perf bench mem memcpy.
    Same arguments as memset(), with a copy kernel's name as function."""
    return _run("memcpy", "copy", size, page, chunk, function, loops, clock, 0, thp)
