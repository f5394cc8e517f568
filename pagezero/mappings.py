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

from . import hugepages
from ._core import MappingError
from .units import format_size

__all__ = ["Backing", "BACKINGS", "kernel_backing", "check_backing", "huge_bytes",
           "huge_share", "huge_details", "thp_warning", "THP_SYSFS", "THP_MIN_SHARE"]

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

    how: str            # "hugetlb", "thp" or "4KB"
    note: str = None    # why not hugetlb, when not (a line for the reader)

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
    return text[start + 1:end] if 0 <= start < end else None


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


def kernel_backing(nbytes, buffers=1, node=None, thp_path=THP_SYSFS, size_path=THP_2MB_SYSFS):
    """The best mapping this machine gives now for `buffers` buffers of `nbytes`
    standing for the kernel's direct map: a Backing (hugetlb, thp or 4KB).
    node: the buffers will be bound to that NUMA node."""
    needed = hugepages.pages_needed(nbytes, "2MB", buffers)
    available = _hugetlb_available(node)
    if available >= needed:
        return Backing("hugetlb")
    where = "" if node is None else f" on node {node}"
    short = f"{needed} 2MB hugepages needed, {available} available{where}"
    mode = thp_mode(thp_path, size_path)
    if mode in ("always", "madvise"):
        return Backing("thp", f"{short}: transparent huge pages asked with MADV_HUGEPAGE")
    return Backing("4KB", f"{short}, and transparent huge pages are "
                          f"{mode or 'not available'} ({thp_path}): 4KB pages, whose TLB "
                          f"misses clear_pages() does not pay")


def _huge_bytes(spans, smaps):
    """Bytes on huge pages (THP's AnonHugePages, hugetlb's Private_ and
    Shared_Hugetlb) of the smaps entries overlapping any of `spans`
    ((address, length) pairs), each entry once, at most the spans' total.

    An entry counts whole: anonymous neighbours with the same flags merge into
    one entry, so the other part of an entry is usually another of the
    caller's buffers (the C core's pz_smaps_scan() counts the same way)."""
    total = 0
    hits = False

    def overlaps(lo, hi):
        return any(lo < a + n and a < hi for a, n in spans)

    with open(smaps) as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            head = fields[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                hits = overlaps(lo, hi)
            elif hits and head in ("AnonHugePages:", "Private_Hugetlb:", "Shared_Hugetlb:"):
                total += int(fields[1]) * 1024
    return min(total, sum(n for _, n in spans))


def huge_bytes(address, length, smaps="/proc/self/smaps"):
    """Bytes of [address, address + length) that smaps shows on huge pages
    (see _huge_bytes for how a merged entry counts)."""
    return _huge_bytes([(address, length)], smaps)


def huge_share(*regions, smaps="/proc/self/smaps"):
    """The share (0..1) of pagezero Regions (together) on huge pages now."""
    spans = [(r.address, r.size) for r in regions]
    total = sum(n for _, n in spans)
    return _huge_bytes(spans, smaps) / total if total else 0.0


def huge_details(huge_pages):
    """A Result's details for a (bytes on huge pages, bytes) pair: huge_bytes,
    buffer_bytes and huge_share; {} for None (not measured)."""
    if not huge_pages or not huge_pages[1]:
        return {}
    huge, total = huge_pages
    return {"huge_bytes": huge, "buffer_bytes": total, "huge_share": huge / total}


def thp_warning(share, nbytes):
    """A line when a THP buffer of `nbytes` got less than THP_MIN_SHARE of it on
    huge pages, else None. Buffers under 2MB cannot have any and get none."""
    if nbytes < _HUGE or share >= THP_MIN_SHARE:
        return None
    # Rounded down: 94.9% must not read "95%" beside a 95% threshold.
    return (f"only {math.floor(share * 100)}% of the {format_size(nbytes)} buffer is on huge "
            f"pages (THP asked; smaps): its figures are partly those of 4KB pages")
