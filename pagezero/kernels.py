"""The kernel registry, as the C core declares it (arch/*/kernels.def).

There is no list of kernels in Python: this module only wraps the rows the
extension returns, and reaches the kernels for direct use.
"""
from dataclasses import dataclass

from . import _core

__all__ = ["Kernel", "kernels", "find_kernel", "clear", "fill", "copy", "KERNEL_KIND",
           "clear_pages_kernel", "nontemporal_kernel", "kernel_roles"]

KINDS = ("clear", "copy")

# The kind of kernel each benchmark runs: the one table for every module.
KERNEL_KIND = {"memset": "clear", "memcpy": "copy", "batch": "clear", "folio": "clear"}

# Until the registry marks it (a "clear_pages" flag on each row of
# _core.kernels()), the kernel the Linux clear_pages() uses on x86-64: rep
# stosb with ERMS, else rep stosq (arch/x86/include/asm/page_64.h, its
# ALTERNATIVE_2); elsewhere memset(), which arm64's clear_page rework adopts.
_CLEAR_PAGES_FALLBACK = ("x86-64-stosb", "x86-64-stosq", "default")


@dataclass(frozen=True)
class Kernel:
    kind: str           # "clear" (memset) or "copy" (memcpy)
    name: str
    description: str
    arch: str           # "any" for the portable ones
    temporal: bool      # False: non-temporal (streaming) stores
    zero_only: bool     # can only write zeros (clzero, DC ZVA)
    features: tuple     # CPU features it needs, as /proc/cpuinfo names them
    available: bool     # this CPU can run it
    reason: str         # why not, when not available; else None
    unit: int           # bytes per loop iteration of its body
    align: int          # alignment its body needs; kernels.c handles the rest
    # What the Linux clear_pages() uses on this CPU, where the registry says
    # so (rows without the flag read as False).
    clear_pages: bool = False


_FIELDS = frozenset(Kernel.__dataclass_fields__)


def _check_kind(kind):
    if kind not in KINDS:
        raise ValueError(f"unknown kernel kind {kind!r} (expected 'clear' or 'copy')")


def kernels(kind="clear"):
    """The registered kernels of one kind ('clear' or 'copy'), in table order,
    including those this CPU cannot run (available=False, with the reason)."""
    _check_kind(kind)
    return tuple(Kernel(**{k: v for k, v in row.items() if k in _FIELDS})
                 for row in _core.kernels() if row["kind"] == kind)


def find_kernel(name, kind="clear"):
    """The kernel called `name`; ValueError naming the known ones otherwise."""
    table = kernels(kind)
    for k in table:
        if k.name == name:
            return k
    known = ", ".join(k.name for k in table)
    raise ValueError(f"unknown {kind} kernel {name!r} (known: {known})")


def clear_pages_kernel():
    """The available clear kernel the kernel's clear_pages() uses on this CPU:
    the registry's own choice where it marks one, else the fallback above."""
    table = [k for k in kernels("clear") if k.available]
    for k in table:
        if k.clear_pages:
            return k.name
    available = {k.name for k in table}
    return next(name for name in _CLEAR_PAGES_FALLBACK if name in available)


def nontemporal_kernel(widest=False):
    """The first available non-temporal clear kernel that can write any
    value, in registry order (on x86-64: movnti, the store of the 2012
    clear_page_nocache), or with `widest` the one with the widest body (the
    last of them), or None."""
    table = [k for k in kernels("clear") if k.available and not k.temporal and not k.zero_only]
    if not table:
        return None
    return max(reversed(table), key=lambda k: k.unit).name if widest else table[0].name


def kernel_roles():
    """Kernels by the role a study gives them, from the registry alone:
    "clear_pages" (what the Linux clear_pages() uses here), "streaming" (the
    widest non-temporal store), "portable" (the kernels of every arch)."""
    return {"clear_pages": (clear_pages_kernel(),),
            "streaming": tuple(n for n in (nontemporal_kernel(widest=True),) if n),
            "portable": tuple(k.name for k in kernels("clear") if k.arch == "any")}


def _check_name(name):
    if not isinstance(name, str):
        raise ValueError(f"kernel must be a name (str), not {name!r}")


def fill(buffer, value, kernel="default"):
    """Set every byte of a writable contiguous buffer to `value` (0..255)."""
    _check_name(kernel)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255, not {value!r}")
    _core.fill(buffer, value, kernel)


def clear(buffer, kernel="default"):
    """Zero a writable buffer (bytearray, memoryview, mmap, numpy array, Region)
    with the named clear kernel. Raises UnavailableError for a kernel this CPU
    cannot run (it is never executed)."""
    fill(buffer, 0, kernel)


def copy(dst, src, kernel="default"):
    """Copy `src` into the writable buffer `dst` of the same length."""
    _check_name(kernel)
    _core.copy(dst, src, kernel)
