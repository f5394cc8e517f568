"""Memory regions of a chosen page size, as buffers; the kernel's page sizes; sysfs's NUMA nodes."""

from __future__ import annotations

import os

from pagezero import _core
from pagezero.files import entries, read_int, read_text
from pagezero.units import format_size, parse_page, parse_size

_THP: dict[bool | None, int] = {None: _core.THP_SYSTEM, True: _core.THP_ON, False: _core.THP_OFF}
# THP's PMD size: 2MB over 4KB base pages, 32MB over 16KB, 512MB over 64KB; none before 4.6.
THP_PMD_SYSFS = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
# pagezero's "4KB" and THP pages, the C core's mappings and parts are laid out on (csrc/region.h).
SMALL_PAGE = 4 << 10
THP_PAGE = 2 << 20
NODE_DIR = "/sys/devices/system/node"


def base_page() -> int:
    """The kernel's base page in bytes (sysconf): 4KB on x86-64; 4KB, 16KB or 64KB on arm64."""
    return os.sysconf("SC_PAGE_SIZE")


def thp_pmd_size(path: str | None = None) -> int | None:
    """Bytes of a PMD-mapped transparent huge page (`path`: THP_PMD_SYSFS); None without THP."""
    return read_int(path or THP_PMD_SYSFS)


def check_page(shift: int, thp: bool | None = None) -> int:
    """`shift` and `thp`, or ValueError for 4KB on another base page, or thp=True on non-2MB THP."""
    base = base_page()
    if shift == 12 and base != SMALL_PAGE:
        raise ValueError(
            f"page size 4KB: this kernel's base page is {format_size(base)} (getpagesize()), "
            f"so a 4KB run would time {format_size(base)} pages; use a hugetlb page size "
            f"this kernel has (pagezero.hugepage_pools())"
        )
    if thp is True and (pmd := thp_pmd_size()) not in (None, THP_PAGE):
        raise ValueError(
            f"thp=True: this kernel's transparent huge pages are {format_size(pmd)} "
            f"({THP_PMD_SYSFS}), not the 2MB pagezero lays THP runs out on and reports"
        )
    return shift


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
    """Map an anonymous memory region with a chosen page size (docs/measuring.rst, "Python").

    Parameters
    ----------
    size, page : int or str, {"4KB", "2MB", "1GB"}
        Bytes or ``"8MB"``, a whole number of pages; the page size (2MB, 1GB: hugetlb pools).
    thp, populate, guard : bool or None, bool, bool
        4KB pages: True asks for transparent huge pages, False refuses them, None: the system's;
        map it populated (``MAP_POPULATE``); 4KB pages: ``PROT_NONE`` pages on both sides.

    Returns
    -------
    pagezero._core.Region
        A writable buffer with ``address`` and ``size``, unmapped by ``close()`` or ``with``.

    Raises
    ------
    ValueError
        A bad size, page or flag combination, or a page size this kernel does not have.
    pagezero.MappingError
        The kernel refused the mapping (too few free hugepages: the message says the fix).
    """
    shift = check_page(parse_page(page), thp)
    return _core.Region(parse_size(size), shift, thp_mode(thp, shift), bool(populate), bool(guard))


def listed_nodes(root: str = NODE_DIR) -> list[int]:
    """The nodes sysfs lists, ascending; [] without the directory."""
    return sorted(int(m[1]) for m in entries(root, r"node(\d+)"))


def numa_nodes(root: str = NODE_DIR) -> list[int]:
    """The machine's NUMA nodes, ascending; [0] without the sysfs directory."""
    return listed_nodes(root) or [0]


def node_cpus(node: int, root: str = NODE_DIR) -> set[int]:
    """The CPUs of a NUMA node, from its cpulist; ValueError for a node that does not exist."""
    check_node(node, "node", root)
    text = read_text(os.path.join(root, f"node{node}", "cpulist"))
    if text is None:
        # No sysfs node directory at all: a single-node machine, every CPU is node 0's.
        return set(range(os.cpu_count() or 1))
    ranges = (part.partition("-") for part in text.split(",") if part)  # "0-3,8-11"
    return {cpu for lo, _, hi in ranges for cpu in range(int(lo), int(hi or lo) + 1)}


def check_node(node: object, what: str = "node", root: str = NODE_DIR) -> int:
    """`node`, if this machine has it; else ValueError naming `what` and listing the nodes."""
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{what} must be an int, not {node!r}")
    nodes = numa_nodes(root)
    if node not in nodes:
        if nodes == [0]:
            raise ValueError(
                f"{what} {node} does not exist: this machine has only node 0 (one NUMA node; "
                f"{root} lists no other), so only {what} 0 can be asked for"
            )
        raise ValueError(
            f"{what} {node} does not exist: this machine's nodes are {', '.join(map(str, nodes))}"
        )
    return node
