"""The kernel's own mappings, for the studies that stand for its clearing.

The kernel clears a page through its direct map, which the architecture maps
with 2MB and 1GB pages: clear_pages() pays almost no TLB misses. A user-space
buffer on 4KB pages pays one per 4KB once the buffer outgrows the L2 TLB's
reach, so a study on 4KB pages beyond the L2 measures the TLB as much as the
stores (benchmarks/page_sizes.py measures it: clearing 1GB on an EPYC VM,
2MB pages ran every kernel 1.11-1.29x as fast as 4KB pages). The studies that
stand for the kernel (the report's extents and chunks, advise, batch, folio)
therefore clear buffers on 2MB pages, the best way this machine can give them:

1. hugetlb, when the 2MB pool has enough pages available to a new mapping;
2. else transparent huge pages, asked with MADV_HUGEPAGE before the first
   touch (the C core's THP mode "on"), and checked afterwards in
   /proc/self/smaps, since the kernel may still fall back to 4KB pages;
3. else 4KB pages, with a line saying so.

perf bench mem memset and memcpy keep perf's 4KB pages for parity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero._core import MappingError, UnavailableError
from pagezero.system import hugepages
from pagezero.units import format_size

__all__ = [
    "Backing",
    "BACKINGS",
    "kernel_backing",
    "chosen_backing",
    "check_backing",
    "observed_backing",
    "backing_details",
    "huge_bytes",
    "huge_share",
    "huge_details",
    "thp_warning",
    "THP_SYSFS",
    "THP_MIN_SHARE",
]

SMAPS = "/proc/self/smaps"
THP_SYSFS = "/sys/kernel/mm/transparent_hugepage/enabled"
# Kernels with multi-size THP ("mm: thp: introduce multi-size THP sysfs
# interface", 6.8) have a switch per size; "inherit" defers to THP_SYSFS.
THP_2MB_SYSFS = "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"
# Below this share of a THP buffer on huge pages, its figures are said to be
# partly 4KB ones.
THP_MIN_SHARE = 0.95
# What batch() and folio() take: auto is kernel_backing()'s choice.
BACKINGS: tuple[str, ...] = ("auto", "hugetlb", "thp", "4KB")
_HUGE = 2 << 20

# What smaps is scanned for: (address, length) pairs, or objects with the
# buffer protocol (numpy arrays, Regions, memoryviews), which have no type.
Span = Any


@dataclass(frozen=True)
class Backing:
    """How a buffer standing for the kernel's direct map is mapped.

    Parameters
    ----------
    how : str
        ``"hugetlb"``, ``"thp"`` or ``"4KB"``.
    note : str or None
        Why not hugetlb, when not (a line for the reader).
    """

    how: str  # "hugetlb", "thp" or "4KB"
    note: str | None = None  # why not hugetlb, when not (a line for the reader)

    @property
    def page(self) -> str:
        """The page size the mapping asks for: "2MB" for hugetlb, else "4KB"."""
        return "2MB" if self.how == "hugetlb" else "4KB"

    @property
    def thp(self) -> bool | None:
        """The THP mode of the mapping (pagezero.system.memory's thp): True asks, False refuses."""
        return None if self.how == "hugetlb" else self.how == "thp"

    def region_args(self) -> dict[str, Any]:
        """The arguments of pagezero.region() and memset() for this backing.

        Returns
        -------
        dict
            ``{"page": str, "thp": bool or None}``.
        """
        return {"page": self.page, "thp": self.thp}

    @property
    def label(self) -> str:
        """For table headings: "2MB hugetlb", "2MB THP" or "4KB"."""
        return {"hugetlb": "2MB hugetlb", "thp": "2MB THP", "4KB": "4KB"}[self.how]


def check_backing(backing: str) -> str:
    """Check a backing's name.

    Parameters
    ----------
    backing : str
        One of BACKINGS: ``"auto"``, ``"hugetlb"``, ``"thp"``, ``"4KB"``.

    Returns
    -------
    str
        `backing`, unchanged.

    Raises
    ------
    ValueError
        For anything not in BACKINGS.
    """
    if backing not in BACKINGS:
        raise ValueError(f"unknown backing {backing!r} (expected {', '.join(BACKINGS)})")
    return backing


def _bracketed(path: str) -> str | None:
    """The bracketed word of a THP sysfs file ("always", "madvise", "never",
    "inherit"), or None when the file is missing or unreadable."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else None


def thp_mode(thp_path: str = THP_SYSFS, size_path: str = THP_2MB_SYSFS) -> str | None:
    """Whether 2MB THP can be had by asking.

    The 2MB size's own switch wins over the global one unless it says
    "inherit" (or the kernel has none).

    Parameters
    ----------
    thp_path : str
        The global THP switch (sysfs file).
    size_path : str
        The 2MB size's own switch (sysfs file, multi-size THP kernels).

    Returns
    -------
    str or None
        ``"always"``, ``"madvise"``, ``"never"``, or None without THP.
    """
    own = _bracketed(size_path)
    return own if own not in (None, "inherit") else _bracketed(thp_path)


def _hugetlb_available(node: int | None) -> int:
    """2MB hugepages a new mapping can have now: the pool's available pages,
    and with a node no more than the node has free (the pool's reservation
    does not look at nodes, see hugepages.check_node_available)."""
    try:
        available: int = hugepages.pool("2MB").available
    except MappingError:
        return 0
    on_node = None if node is None else hugepages.node_free("2MB", node)
    return available if on_node is None else min(available, on_node)


def kernel_backing(
    nbytes: int,
    buffers: int = 1,
    node: int | None = None,
    refused: str | None = None,
    thp_path: str = THP_SYSFS,
    size_path: str = THP_2MB_SYSFS,
) -> Backing:
    """The best mapping this machine gives now for buffers standing for the kernel's direct map.

    Parameters
    ----------
    nbytes : int
        Each buffer's size, in bytes.
    buffers : int
        How many buffers of `nbytes`.
    node : int or None
        The NUMA node the buffers will be bound to (its free 2MB pages count).
    refused : str or None
        Why hugetlb is out of the question (e.g. its mapping failed), to
        choose between the other two.
    thp_path, size_path : str
        The THP sysfs switches (see thp_mode).

    Returns
    -------
    Backing
        hugetlb, thp or 4KB; its note says why not hugetlb.
    """
    if refused is None:
        needed = hugepages.pages_needed(nbytes, "2MB", buffers)
        available = _hugetlb_available(node)
        if available >= needed:
            return Backing("hugetlb")
        where = "" if node is None else f" on node {node}"
        refused = f"{needed} 2MB hugepages needed, {available} available{where}"
    mode = thp_mode(thp_path, size_path)
    if mode in ("always", "madvise"):
        return Backing("thp", f"{refused}: transparent huge pages asked with MADV_HUGEPAGE")
    return Backing(
        "4KB",
        f"{refused}, and transparent huge pages are "
        f"{mode or 'not available'} ({thp_path}): 4KB pages, whose TLB "
        f"misses clear_pages() does not pay",
    )


def chosen_backing(backing: str, nbytes: int, buffers: int = 1, node: int | None = None) -> Backing:
    """The Backing for `backing` as asked.

    Parameters
    ----------
    backing : str
        One of BACKINGS: "auto" is kernel_backing()'s choice, "hugetlb" the
        2MB pool, "thp" transparent huge pages, "4KB" refuses THP.
    nbytes : int
        Each buffer's size, in bytes.
    buffers : int
        How many buffers of `nbytes`.
    node : int or None
        The NUMA node the buffers will be bound to.

    Returns
    -------
    Backing

    Raises
    ------
    ValueError
        For an unknown `backing`.
    MappingError
        For "hugetlb" when the 2MB pool (or the node's share) is too small,
        naming the file to write.
    UnavailableError
        For "thp" where THP is off.
    """
    check_backing(backing)
    if backing == "auto":
        return kernel_backing(nbytes, buffers, node)
    if backing == "hugetlb":
        needed = hugepages.pages_needed(nbytes, "2MB", buffers)
        hugepages.check_available("2MB", needed)
        if node is not None:
            hugepages.check_node_available("2MB", needed, node)
    elif backing == "thp" and thp_mode() not in ("always", "madvise"):
        raise UnavailableError(
            f"transparent huge pages are {thp_mode() or 'not available'} "
            f"here ({THP_SYSFS}, {THP_2MB_SYSFS}): no THP backing"
        )
    return Backing(backing)


def _huge_bytes(spans: Sequence[Span], smaps: str) -> int:
    """Bytes on huge pages (THP's AnonHugePages, hugetlb's Private_ and
    Shared_Hugetlb) of the smaps entries that overlap any of `spans`
    (buffers or (address, length) pairs), each entry once, at most the
    spans' total. One scanner for C and Python: csrc/region.c
    pz_smaps_scan_file(), which counts an entry whole (anonymous neighbours
    with the same flags merge into one entry, so the rest of an entry is
    usually another of the caller's buffers)."""
    pages = _core.smaps_pages(spans, smaps)
    huge: int = pages["anon_huge"] + pages["hugetlb"]
    return min(huge, _total(spans))


def _total(spans: Sequence[Span]) -> int:
    return sum(s[1] if isinstance(s, tuple) else memoryview(s).nbytes for s in spans)


def huge_bytes(address: int, length: int, smaps: str = SMAPS) -> int:
    """Bytes of [address, address + length) that smaps shows on huge pages.

    Parameters
    ----------
    address : int
        The span's start address.
    length : int
        The span's length, in bytes.
    smaps : str
        The smaps file to read.

    Returns
    -------
    int
        Bytes on huge pages (THP or hugetlb), at most `length`.
    """
    return _huge_bytes([(address, length)], smaps)


def huge_share(*buffers: Any, smaps: str = SMAPS) -> float:
    """The share of buffers, together, that is on huge pages now.

    Parameters
    ----------
    *buffers : Region or buffer
        pagezero Regions or other objects with the buffer protocol.
    smaps : str
        The smaps file to read.

    Returns
    -------
    float
        The share, 0..1 (0 for no bytes).
    """
    spans = [(r.address, r.size) if hasattr(r, "address") else r for r in buffers]
    total = _total(spans)
    return _huge_bytes(spans, smaps) / total if total else 0.0


def huge_details(huge_pages: tuple[int, int] | None) -> dict[str, Any]:
    """A Result's details for a (bytes on huge pages, bytes) pair.

    Parameters
    ----------
    huge_pages : tuple of (int, int) or None
        Bytes on huge pages and the buffers' bytes; None when not measured.

    Returns
    -------
    dict
        ``huge_bytes`` and ``buffer_bytes`` (int, bytes) and ``huge_share``
        (float, 0..1); {} for None or no bytes.
    """
    if not huge_pages or not huge_pages[1]:
        return {}
    huge, total = huge_pages
    return {"huge_bytes": huge, "buffer_bytes": total, "huge_share": huge / total}


def observed_backing(buffers: Sequence[Span], smaps: str = SMAPS) -> Backing:
    """The Backing of buffers someone else mapped, as smaps shows it.

    Parameters
    ----------
    buffers : sequence
        Buffers, or (address, length) pairs.
    smaps : str
        The smaps file to read.

    Returns
    -------
    Backing
        hugetlb, THP when any of it is on transparent huge pages, else 4KB.
    """
    pages = _core.smaps_pages(buffers, smaps)
    return Backing("hugetlb" if pages["hugetlb"] else "thp" if pages["anon_huge"] else "4KB")


def backing_details(used: Backing, buffers: Sequence[Span], smaps: str = SMAPS) -> dict[str, Any]:
    """What a result's details say of its buffers' Backing.

    Parameters
    ----------
    used : Backing
        The backing the buffers were mapped with.
    buffers : sequence
        The buffers (or (address, length) pairs), already faulted in.
    smaps : str
        The smaps file to read.

    Returns
    -------
    dict
        ``backing_note`` (why not hugetlb) when there is one, and for THP the
        share smaps shows on huge pages (huge_details).
    """
    d = {"backing_note": used.note} if used.note else {}
    if used.how == "thp":
        d.update(huge_details((_huge_bytes(buffers, smaps), _total(buffers))))
    return d


def thp_warning(share: float, nbytes: int) -> str | None:
    """A line when a THP buffer got less than THP_MIN_SHARE of it on huge pages.

    Parameters
    ----------
    share : float
        The buffer's share on huge pages, 0..1 (huge_share).
    nbytes : int
        The buffer's size, in bytes.

    Returns
    -------
    str or None
        The warning, or None (always for buffers under 2MB, which cannot
        have any huge page).
    """
    if nbytes < _HUGE or share >= THP_MIN_SHARE:
        return None
    # Rounded down: 94.9% must not read "95%" beside a 95% threshold.
    return (
        f"only {math.floor(share * 100)}% of the {format_size(nbytes)} buffer is on huge "
        f"pages (THP asked; smaps): its figures are partly those of 4KB pages"
    )
