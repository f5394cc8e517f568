"""Sizes as perf bench mem takes them (powers of 1024); GB/s and GB/sec (docs/glossary.rst)."""

from __future__ import annotations

import contextlib
import re

_UNITS = {"": 0, "B": 0, "KB": 10, "MB": 20, "GB": 30, "TB": 40}
_SIZE_RE = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")
MAX_SIZE = 2**63 - 1  # the C core's Py_ssize_t
GBPS = 1e9
PAGE_SHIFTS = {"4KB": 12, "2MB": 21, "1GB": 30}  # what perf bench mem -p accepts


def parse_size(value: int | str, what: str = "size", allow_zero: bool = False) -> int:
    """A size in bytes, from an int or a string as ``perf bench mem`` takes it.

    Parameters
    ----------
    value : int or str
        Bytes, or a whole number with an optional unit: ``"4KB"``, ``"1gb"`` (docs/measuring.rst).
    what, allow_zero : str, bool
        What the size is, for the error message (``"chunk"``); accept 0 (a chunk: the whole extent).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Naming `what`: not an int or str, negative, 0, a fraction, an unknown unit, or over 2**63-1.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what} must be an int or a string such as '4KB', not {value!r}")
    if isinstance(value, int):
        n = value
    else:
        m = _SIZE_RE.fullmatch(value)
        if m is None:
            raise ValueError(
                f"invalid {what} {value!r}: expected a whole number with an optional "
                "unit B, KB, MB, GB or TB"
            )
        unit = m.group(2).upper()
        if unit not in _UNITS:
            raise ValueError(
                f"invalid {what} {value!r}: unknown unit {m.group(2)!r} (use B, KB, MB, GB or TB)"
            )
        n = int(m.group(1)) << _UNITS[unit]
    if n < 0:
        raise ValueError(f"invalid {what} {value!r}: must not be negative")
    if n == 0 and not allow_zero:
        raise ValueError(f"invalid {what} {value!r}: must be at least 1 byte")
    if n > MAX_SIZE:
        raise ValueError(f"invalid {what} {value!r}: too large (more than 2**63-1 bytes)")
    return n


def format_size(n: int) -> str:
    """The shortest exact spelling of a size.

    Parameters
    ----------
    n : int
        Bytes.

    Returns
    -------
    str
        In the largest unit that divides `n`: 4096 gives ``"4KB"``, 1000 ``"1000B"``.
    """
    units = ("TB", "GB", "MB", "KB")
    unit = next((u for u in units if n and n % (1 << _UNITS[u]) == 0), "B")
    return f"{n >> _UNITS[unit]}{unit}"


def parse_page(value: int | str) -> int:
    """The shift (12, 21 or 30) of a page size of 4KB, 2MB or 1GB in any parse_size spelling."""
    with contextlib.suppress(ValueError):
        n = parse_size(value, what="page size")
        if n in (1 << shift for shift in PAGE_SHIFTS.values()):
            return n.bit_length() - 1
    raise ValueError(f"invalid page size {value!r}: expected 4KB, 2MB or 1GB")


def format_page(shift: int) -> str:
    """The page size of a shift: 21 gives "2MB"."""
    return format_size(1 << shift)


def format_rate(bytes_per_sec: float) -> str:
    """A rate as perf's print_bps() prints it (K = 1024), for lines reproducing perf's only."""
    x = float(bytes_per_sec)
    for unit in ("bytes", "KB", "MB"):
        if x < 1024.0:
            return f" {x:14f} {unit}/sec"
        x /= 1024.0
    return f" {x:14f} GB/sec"


def gbps(bytes_per_sec: float) -> float:
    """A rate in GB/s (10**9 bytes per second), pagezero's one unit of rates."""
    return bytes_per_sec / GBPS


def format_gbps(bytes_per_sec: float | None, digits: int = 1) -> str:
    """A rate as "12.3 GB/s", or "-" for None (not measured)."""
    return "-" if bytes_per_sec is None else f"{gbps(bytes_per_sec):.{digits}f} GB/s"
