"""Memory regions with a chosen page size, usable as buffers from Python."""
from . import _core
from .units import parse_page, parse_size

__all__ = ["region", "thp_mode"]

_THP = {None: _core.THP_SYSTEM, True: _core.THP_ON, False: _core.THP_OFF}


def thp_mode(thp, shift):
    """The C core's THP mode for `thp` (None, True or False) on pages of 2**shift bytes."""
    if thp not in _THP:
        raise ValueError(f"thp must be None (system default), True or False, not {thp!r}")
    if thp is True and shift != 12:
        raise ValueError("thp=True applies to 4KB pages only")
    return _THP[thp]


def region(size, page="4KB", thp=None, populate=True, guard=False):
    """Map an anonymous region and return it as a pagezero._core.Region.

    page: "4KB", "2MB" or "1GB" (hugetlb). thp (4KB only): True asks for
    transparent huge pages, False refuses them, None leaves the system's
    policy. guard (4KB only): PROT_NONE pages on both sides, so a write past
    either end faults. The region supports the buffer protocol
    (memoryview(r)) and is unmapped by close() or a with block.
    """
    shift = parse_page(page)
    return _core.Region(parse_size(size), shift, thp_mode(thp, shift), bool(populate), bool(guard))
