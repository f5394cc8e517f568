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
from dataclasses import dataclass

from . import hugepages
from ._core import MappingError
from .units import format_size

__all__ = ["Backing", "kernel_backing", "huge_bytes", "huge_share", "thp_warning",
           "THP_SYSFS", "THP_MIN_SHARE"]

THP_SYSFS = "/sys/kernel/mm/transparent_hugepage/enabled"
# Below this share of a THP buffer on huge pages, its figures are said to be
# partly 4KB ones.
THP_MIN_SHARE = 0.95
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


def _thp_mode(path=THP_SYSFS):
    """The bracketed word of the THP sysfs file ("always", "madvise", "never"), or None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else None


def kernel_backing(nbytes, buffers=1, thp_path=THP_SYSFS):
    """The best mapping this machine gives now for `buffers` buffers of `nbytes`
    standing for the kernel's direct map: a Backing (hugetlb, thp or 4KB)."""
    try:
        pool = hugepages.pool("2MB")
    except MappingError:
        pool = None
    needed = hugepages.pages_needed(nbytes, "2MB", buffers)
    if pool is not None and pool.available >= needed:
        return Backing("hugetlb")
    short = (f"{needed} 2MB hugepages needed, {pool.available if pool else 0} available")
    mode = _thp_mode(thp_path)
    if mode in ("always", "madvise"):
        return Backing("thp", f"{short}: transparent huge pages asked with MADV_HUGEPAGE")
    return Backing("4KB", f"{short}, and transparent huge pages are "
                          f"{mode or 'not available'} ({thp_path}): 4KB pages, whose TLB "
                          f"misses clear_pages() does not pay")


def huge_bytes(address, length, smaps="/proc/self/smaps"):
    """Bytes of [address, address + length) that /proc/self/smaps shows on huge
    pages (THP's AnonHugePages and hugetlb's Private_Hugetlb), summed over the
    mappings that overlap it (a mapping counts in proportion to the overlap)."""
    total, mapping = 0, None

    def flush():
        nonlocal total
        if mapping and mapping[2]:
            lo, hi, huge = mapping
            overlap = max(0, min(hi, address + length) - max(lo, address))
            total += huge * overlap // (hi - lo)

    with open(smaps) as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and ":" not in head:
                flush()
                lo, hi = (int(x, 16) for x in head.split("-"))
                mapping = [lo, hi, 0] if lo < address + length and hi > address else None
            elif mapping and head in ("AnonHugePages:", "Private_Hugetlb:", "Shared_Hugetlb:"):
                mapping[2] += int(line.split()[1]) * 1024
    flush()
    return min(total, length)


def huge_share(region):
    """The share (0..1) of a pagezero Region that is on huge pages now."""
    return huge_bytes(region.address, region.size) / region.size


def thp_warning(share, nbytes):
    """A line when a THP buffer of `nbytes` got less than THP_MIN_SHARE of it on
    huge pages, else None. Buffers under 2MB cannot have any and get none."""
    if nbytes < _HUGE or share >= THP_MIN_SHARE:
        return None
    return (f"only {share:.0%} of the {format_size(nbytes)} buffer is on huge pages "
            f"(THP asked; smaps): its figures are partly those of 4KB pages")

