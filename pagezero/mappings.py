"""The kernel's own mappings, for the studies that stand for its clearing.

The kernel clears a page through its direct map, which the architecture maps
with 2MB and 1GB pages: clear_pages() pays almost no TLB misses. A user-space
buffer on 4KB pages pays one per 4KB once the buffer outgrows the L2 TLB's
reach, so a study on 4KB pages beyond the L2 measures the TLB as much as the
stores (measured on a Zen 4 VM, clearing 1GB: rep stosb 53-62 GB/s on 4KB
pages against 76 GB/s on THP). The studies that stand for the kernel (the
report's extents and chunks, advise, batch, folio) therefore clear buffers on
2MB pages, the best way this machine can give them:

1. hugetlb, when the 2MB pool has enough pages available to a new mapping;
2. else transparent huge pages, asked with MADV_HUGEPAGE before the first
   touch (the C core's THP mode "on"), and checked afterwards in
   /proc/self/smaps, since the kernel may still fall back to 4KB pages;
3. else 4KB pages, with a line saying so.

perf bench mem memset and memcpy keep perf's 4KB pages for parity.
"""

import math
from dataclasses import dataclass

from . import _core, hugepages
from ._core import MappingError, UnavailableError
from .units import format_size

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
BACKINGS = ("auto", "hugetlb", "thp", "4KB")
_HUGE = 2 << 20


@dataclass(frozen=True)
class Backing:
    """How a buffer standing for the kernel's direct map is mapped."""

    how: str  # "hugetlb", "thp" or "4KB"
    note: str = None  # why not hugetlb, when not (a line for the reader)

    @property
    def page(self):
        """The page size the mapping asks for: "2MB" for hugetlb, else "4KB"."""
        return "2MB" if self.how == "hugetlb" else "4KB"

    @property
    def thp(self):
        """The THP mode of the mapping (pagezero.region's thp): True asks, False refuses."""
        return None if self.how == "hugetlb" else self.how == "thp"

    def region_args(self):
        """{"page": ..., "thp": ...}: the arguments of pagezero.region() and memset()."""
        return {"page": self.page, "thp": self.thp}

    @property
    def label(self):
        """For table headings: "2MB hugetlb", "2MB THP" or "4KB"."""
        return {"hugetlb": "2MB hugetlb", "thp": "2MB THP", "4KB": "4KB"}[self.how]


def check_backing(backing):
    """`backing` if it is one of BACKINGS, else ValueError."""
    if backing not in BACKINGS:
        raise ValueError(f"unknown backing {backing!r} (expected {', '.join(BACKINGS)})")
    return backing


def _bracketed(path):
    """The bracketed word of a THP sysfs file ("always", "madvise", "never",
    "inherit"), or None when the file is missing or unreadable."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else None


def thp_mode(thp_path=THP_SYSFS, size_path=THP_2MB_SYSFS):
    """Whether 2MB THP can be had by asking: "always", "madvise", "never", or
    None without THP. The 2MB size's own switch wins over the global one
    unless it says "inherit" (or the kernel has none)."""
    own = _bracketed(size_path)
    return own if own not in (None, "inherit") else _bracketed(thp_path)


def _hugetlb_available(node):
    """2MB hugepages a new mapping can have now: the pool's available pages,
    and with a node no more than the node has free (the pool's reservation
    does not look at nodes, see hugepages.check_node_available)."""
    try:
        available = hugepages.pool("2MB").available
    except MappingError:
        return 0
    on_node = None if node is None else hugepages.node_free("2MB", node)
    return available if on_node is None else min(available, on_node)


def kernel_backing(
    nbytes, buffers=1, node=None, refused=None, thp_path=THP_SYSFS, size_path=THP_2MB_SYSFS
):
    """The best mapping this machine gives now for `buffers` buffers of `nbytes`
    standing for the kernel's direct map: a Backing (hugetlb, thp or 4KB).
    node: the buffers will be bound to that NUMA node. refused: why hugetlb
    is out of the question (e.g. its mapping failed), to choose between the
    other two."""
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


def chosen_backing(backing, nbytes, buffers=1, node=None):
    """The Backing for `backing` as asked (one of BACKINGS): "auto" is
    kernel_backing()'s choice; "hugetlb" checks the 2MB pool (and the node's
    share) and raises MappingError naming the file to write; "thp" raises
    UnavailableError where THP is off; "4KB" refuses THP."""
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


def _huge_bytes(spans, smaps):
    """Bytes on huge pages (THP's AnonHugePages, hugetlb's Private_ and
    Shared_Hugetlb) of the smaps entries that overlap any of `spans`
    (buffers or (address, length) pairs), each entry once, at most the
    spans' total. One scanner for C and Python: csrc/region.c
    pz_smaps_scan_file(), which counts an entry whole (anonymous neighbours
    with the same flags merge into one entry, so the rest of an entry is
    usually another of the caller's buffers)."""
    pages = _core.smaps_pages(spans, smaps)
    return min(pages["anon_huge"] + pages["hugetlb"], _total(spans))


def _total(spans):
    return sum(s[1] if isinstance(s, tuple) else memoryview(s).nbytes for s in spans)


def huge_bytes(address, length, smaps=SMAPS):
    """Bytes of [address, address + length) that smaps shows on huge pages."""
    return _huge_bytes([(address, length)], smaps)


def huge_share(*buffers, smaps=SMAPS):
    """The share (0..1) of pagezero Regions or other buffers, together, that
    is on huge pages now (0 for no bytes)."""
    spans = [(r.address, r.size) if hasattr(r, "address") else r for r in buffers]
    total = _total(spans)
    return _huge_bytes(spans, smaps) / total if total else 0.0


def huge_details(huge_pages):
    """A Result's details for a (bytes on huge pages, bytes) pair: huge_bytes,
    buffer_bytes and huge_share; {} for None (not measured)."""
    if not huge_pages or not huge_pages[1]:
        return {}
    huge, total = huge_pages
    return {"huge_bytes": huge, "buffer_bytes": total, "huge_share": huge / total}


def observed_backing(buffers, smaps=SMAPS):
    """The Backing of buffers someone else mapped, as smaps shows it: hugetlb,
    THP when any of it is on transparent huge pages, else 4KB."""
    pages = _core.smaps_pages(buffers, smaps)
    return Backing("hugetlb" if pages["hugetlb"] else "thp" if pages["anon_huge"] else "4KB")


def backing_details(used, buffers, smaps=SMAPS):
    """What a result's details say of its buffers' Backing `used`: its note
    (why not hugetlb), and for THP the share smaps shows on huge pages
    (huge_details), read once the buffers are faulted in."""
    d = {"backing_note": used.note} if used.note else {}
    if used.how == "thp":
        d.update(huge_details((_huge_bytes(buffers, smaps), _total(buffers))))
    return d


def thp_warning(share, nbytes):
    """A line when a THP buffer of `nbytes` got less than THP_MIN_SHARE of it on
    huge pages, else None. Buffers under 2MB cannot have any and get none."""
    if nbytes < _HUGE or share >= THP_MIN_SHARE:
        return None
    # Rounded down: 94.9% must not read "95%" beside a 95% threshold.
    return (
        f"only {math.floor(share * 100)}% of the {format_size(nbytes)} buffer is on huge "
        f"pages (THP asked; smaps): its figures are partly those of 4KB pages"
    )
