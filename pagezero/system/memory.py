"""Memory regions with a chosen page size, usable as buffers from Python."""

from __future__ import annotations

from pagezero import _core
from pagezero.units import parse_page, parse_size

_THP: dict[bool | None, int] = {None: _core.THP_SYSTEM, True: _core.THP_ON, False: _core.THP_OFF}


def thp_mode(thp: bool | None, shift: int) -> int:
    """The C core's THP mode for `thp` (True asks, False refuses, None: the system's policy)."""
    if thp not in _THP:
        raise ValueError(f"thp must be None (system default), True or False, not {thp!r}")
    if thp is True and shift != 12:
        raise ValueError("thp=True applies to 4KB pages only")
    return _THP[thp]


def region(
    size: int | str,
    page: int | str = "4KB",
    thp: bool | None = None,
    populate: bool = True,
    guard: bool = False,
) -> _core.Region:
    """Map an anonymous memory region with a chosen page size.

    Parameters
    ----------
    size : int or str
        Bytes, or a size such as ``"8MB"`` (:func:`~pagezero.units.parse_size`); a whole
        number of pages.
    page : {"4KB", "2MB", "1GB"}
        The page size; 2MB and 1GB are hugetlb pages from the reserved pools.
    thp : bool or None
        4KB pages only: True asks for transparent huge pages, False refuses them,
        None leaves the system's policy.
    populate : bool
        Map it populated (``MAP_POPULATE``): every page faulted in now, not on first
        touch.
    guard : bool
        4KB pages only: ``PROT_NONE`` pages on both sides, so that a write past either
        end faults.

    Returns
    -------
    pagezero._core.Region
        A writable buffer (``memoryview(r)``, :func:`pagezero.clear`) with ``address``
        and ``size``, unmapped by ``close()`` or at the end of a ``with`` block.

    Raises
    ------
    ValueError
        For a bad size, page or flag combination.
    pagezero.MappingError
        When the kernel refuses the mapping (e.g. too few free hugepages); the message
        says how to fix it.
    """
    shift = parse_page(page)
    return _core.Region(parse_size(size), shift, thp_mode(thp, shift), bool(populate), bool(guard))
