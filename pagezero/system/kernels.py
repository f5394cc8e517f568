"""The kernel registry as the C core declares it (``arch/*/kernels.def``), and its kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pagezero import _core

if TYPE_CHECKING:
    from pagezero._core import _Readable, _Writable

KINDS = ("clear", "copy")

# The kind of kernel each benchmark runs: the one table for every module.
KERNEL_KIND = {"memset": "clear", "memcpy": "copy", "batch": "clear", "folio": "clear"}


@dataclass(frozen=True)
class Kernel:
    """One row of the kernel registry: a clearing (memset) or copy (memcpy) kernel.

    Attributes
    ----------
    kind, name, description, arch : str
        ``"clear"`` or ``"copy"``; its name (``x86-64-stosb``); one line; ``"x86-64"``/``"any"``.
    temporal, zero_only : bool
        False for non-temporal stores; True when it writes only zeros (``clzero``, ``DC ZVA``).
    features, available, reason : tuple of str, bool, str or None
        The CPU features it needs (/proc/cpuinfo's names); whether this CPU can run it; why not.
    unit, align, clear_pages : int, int, bool
        Bytes per iteration of its loop, and of alignment it needs; Linux's ``clear_page()`` /
        ``clear_pages()`` uses it on this CPU (docs/kernels.rst).
    """

    kind: str
    name: str
    description: str
    arch: str
    temporal: bool
    zero_only: bool
    features: tuple[str, ...]
    available: bool
    reason: str | None
    unit: int
    align: int
    clear_pages: bool = False  # rows without the flag read as False


_FIELDS = frozenset(Kernel.__dataclass_fields__)


def kernels(kind: str = "clear") -> tuple[Kernel, ...]:
    """The registered kernels of one kind, in table order.

    Parameters
    ----------
    kind : {"clear", "copy"}
        Clearing (memset) or copy (memcpy) kernels.

    Returns
    -------
    tuple of Kernel
        This architecture's and the portable ones, unavailable ones included.

    Raises
    ------
    ValueError
        For another `kind`.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kernel kind {kind!r} (expected 'clear' or 'copy')")
    return tuple(
        Kernel(**{k: v for k, v in row.items() if k in _FIELDS})
        for row in _core.kernels()
        if row["kind"] == kind
    )


def find_kernel(name: str, kind: str = "clear") -> Kernel:
    """The kernel called `name`, available on this CPU or not.

    Parameters
    ----------
    name, kind : str
        A kernel's name and kind, as :func:`kernels` lists them.

    Returns
    -------
    Kernel

    Raises
    ------
    ValueError
        For an unknown kind or name; the message names the known kernels.
    """
    table = kernels(kind)
    if found := next((k for k in table if k.name == name), None):
        return found
    raise ValueError(f"unknown {kind} kernel {name!r} (known: {', '.join(k.name for k in table)})")


def clear_pages_kernel() -> str:
    """The clear kernel clear_pages() uses here, as the registry marks it ("default" unmarked)."""
    return next((k.name for k in kernels("clear") if k.available and k.clear_pages), "default")


def nontemporal_kernel(widest: bool = False) -> str | None:
    """An available non-temporal any-value clear kernel (the first, or the `widest`), or None."""
    table = [k for k in kernels("clear") if k.available and not k.temporal and not k.zero_only]
    if not table:
        return None
    return max(reversed(table), key=lambda k: k.unit).name if widest else table[0].name


def kernel_roles() -> dict[str, tuple[str, ...]]:
    """Kernels by a study's role: "clear_pages", "streaming" (the widest, if any), "portable"."""
    return {
        "clear_pages": (clear_pages_kernel(),),
        "streaming": tuple(n for n in (nontemporal_kernel(widest=True),) if n),
        "portable": tuple(k.name for k in kernels("clear") if k.arch == "any"),
    }


def _check_name(name: object) -> None:
    if not isinstance(name, str):
        raise ValueError(f"kernel must be a name (str), not {name!r}")


def fill(buffer: _Writable, value: int, kernel: str = "default") -> None:
    """Set every byte of a buffer to `value` with the named kernel.

    Parameters
    ----------
    buffer, value, kernel : writable buffer, int, str
        Any writable C-contiguous buffer (bytearray, mmap, numpy array, Region); the byte, 0
        to 255; a clear kernel's name (:func:`kernels`).

    Raises
    ------
    ValueError
        A value outside 0..255, an unknown kernel, a zeros-only kernel asked for another value,
        or a read-only or non-contiguous buffer.
    pagezero.UnavailableError
        For a kernel this CPU cannot run (it is never executed).
    """
    _check_name(kernel)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise ValueError(f"fill value must be an int in 0..255, not {value!r}")
    _core.fill(buffer, value, kernel)


def clear(buffer: _Writable, kernel: str = "default") -> None:
    """Zero a buffer with the named clear kernel: :func:`fill` with the value 0.

    Parameters
    ----------
    buffer, kernel
        As :func:`fill` takes them; it raises as :func:`fill` does.
    """
    fill(buffer, 0, kernel)


def copy(dst: _Writable, src: _Readable, kernel: str = "default") -> None:
    """Copy `src` into `dst` with the named copy kernel.

    Parameters
    ----------
    dst, src, kernel : buffer, buffer, str
        C-contiguous buffers of one length, `dst` writable; a copy kernel (``kernels("copy")``).

    Raises
    ------
    ValueError
        For an unknown kernel, buffers of different lengths, or a read-only `dst`.
    pagezero.UnavailableError
        For a kernel this CPU cannot run.
    """
    _check_name(kernel)
    _core.copy(dst, src, kernel)
