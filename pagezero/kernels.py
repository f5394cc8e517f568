"""The kernel registry, as the C core declares it (arch/*/kernels.def).

There is no list of kernels in Python: this module only wraps the rows the
extension returns, and reaches the kernels for direct use.
"""
from dataclasses import dataclass

from . import _core

__all__ = ["Kernel", "kernels", "find_kernel", "clear", "fill", "copy"]

KINDS = ("clear", "copy")


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
    clear_pages: bool = False  # the one Linux's clear_page() uses on this CPU


def _check_kind(kind):
    if kind not in KINDS:
        raise ValueError(f"unknown kernel kind {kind!r} (expected 'clear' or 'copy')")


def kernels(kind="clear"):
    """The registered kernels of one kind ('clear' or 'copy'), in table order,
    including those this CPU cannot run (available=False, with the reason)."""
    _check_kind(kind)
    return tuple(Kernel(**row) for row in _core.kernels() if row["kind"] == kind)


def find_kernel(name, kind="clear"):
    """The kernel called `name`; ValueError naming the known ones otherwise."""
    table = kernels(kind)
    for k in table:
        if k.name == name:
            return k
    known = ", ".join(k.name for k in table)
    raise ValueError(f"unknown {kind} kernel {name!r} (known: {known})")


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
