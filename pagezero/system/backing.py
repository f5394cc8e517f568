"""The pages under buffers standing for the kernel's direct map (glossary: "backing"), in smaps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero._core import MappingError, UnavailableError
from pagezero.files import read_text
from pagezero.system import hugepages
from pagezero.units import format_size

SMAPS = "/proc/self/smaps"
THP_SYSFS = "/sys/kernel/mm/transparent_hugepage/enabled"
# Multi-size THP kernels (6.8) have a switch per size; "inherit" defers to THP_SYSFS.
THP_2MB_SYSFS = "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"
# Below this share on huge pages, a THP buffer's figures are said to be partly 4KB ones.
THP_MIN_SHARE = 0.95
BACKINGS: tuple[str, ...] = ("auto", "hugetlb", "thp", "4KB")  # batch() and folio() take these
_HUGE = 2 << 20

# Buffers (anything with the buffer protocol) or (address, length) pairs.
Span = Any


@dataclass(frozen=True)
class Backing:
    """How a buffer standing for the kernel's direct map is mapped: "hugetlb", "thp" or "4KB"."""

    how: str
    note: str | None = None  # why not hugetlb, when not (a line for the reader)

    @property
    def page(self) -> str:
        return "2MB" if self.how == "hugetlb" else "4KB"

    @property
    def thp(self) -> bool | None:
        return None if self.how == "hugetlb" else self.how == "thp"

    def region_args(self) -> dict[str, Any]:
        """The page and thp arguments of pagezero.region() and memset() for this backing."""
        return {"page": self.page, "thp": self.thp}

    @classmethod
    def of(cls, page: str, thp: bool | None) -> Backing:
        """The Backing whose region_args() these are (a sweep's point's page and thp)."""
        return cls("hugetlb" if page == "2MB" else "thp" if thp else "4KB")

    @property
    def label(self) -> str:
        return {"hugetlb": "2MB hugetlb", "thp": "2MB THP", "4KB": "4KB"}[self.how]


def check_backing(backing: str) -> str:
    if backing not in BACKINGS:
        raise ValueError(f"unknown backing {backing!r} (expected {', '.join(BACKINGS)})")
    return backing


def sysfs_choice(path: str) -> str | None:
    """The bracketed word of a sysfs choice file ("always [madvise] never"), or None."""
    text = read_text(path) or ""
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else None


def thp_mode(thp_path: str = THP_SYSFS, size_path: str = THP_2MB_SYSFS) -> str | None:
    """2MB THP: "always", "madvise", "never" (its own switch unless "inherit"), None without."""
    own = sysfs_choice(size_path)
    return own if own not in (None, "inherit") else sysfs_choice(thp_path)


def kernel_backing(
    nbytes: int,
    buffers: int = 1,
    node: int | None = None,
    refused: str | None = None,
    thp_path: str = THP_SYSFS,
    size_path: str = THP_2MB_SYSFS,
) -> Backing:
    """The best backing for `buffers` of `nbytes` on `node` now; `refused` says why not hugetlb."""
    if refused is None:
        needed = hugepages.pages_needed(nbytes, "2MB", buffers)
        available = hugepages.available_pages("2MB", node)
        if available >= needed:
            return Backing("hugetlb")
        where = "" if node is None else f" on node {node}"
        refused = f"{needed} 2MB hugepages needed, {available} available{where}"
    mode = thp_mode(thp_path, size_path)
    if mode in ("always", "madvise"):
        return Backing("thp", f"{refused}: transparent huge pages asked with MADV_HUGEPAGE")
    return Backing(
        "4KB",
        f"{refused}, and transparent huge pages are {mode or 'not available'} ({thp_path}): "
        "4KB pages, whose TLB misses clear_pages() does not pay",
    )


def chosen_backing(backing: str, nbytes: int, buffers: int = 1, node: int | None = None) -> Backing:
    """The Backing asked for ("auto": kernel_backing()'s), or MappingError/UnavailableError."""
    check_backing(backing)
    if backing == "auto":
        return kernel_backing(nbytes, buffers, node)
    if backing == "hugetlb":
        hugepages.check_mappable(nbytes, "2MB", buffers, node)
    elif backing == "thp" and thp_mode() not in ("always", "madvise"):
        raise UnavailableError(
            f"transparent huge pages are {thp_mode() or 'not available'} "
            f"here ({THP_SYSFS}, {THP_2MB_SYSFS}): no THP backing"
        )
    return Backing(backing)


def map_backed(
    mapper: Any, nbytes: int, buffers: int = 1, node: int | None = None, backing: str = "auto"
) -> tuple[Any, Backing]:
    """(mapper(Backing), the Backing) asked; "auto" takes its next if the hugetlb mapping fails."""
    used = chosen_backing(backing, nbytes, buffers, node)
    try:
        return mapper(used), used
    except MappingError as e:
        if backing != "auto" or used.how != "hugetlb":
            raise
        why = f"the hugetlb mapping failed ({e})"
    used = kernel_backing(nbytes, buffers, node, refused=why)
    return mapper(used), used


def _huge_bytes(spans: Sequence[Span], smaps: str) -> int:
    """Bytes on huge pages (THP, hugetlb) of the smaps entries `spans` overlap, at most theirs."""
    # Whole entries (csrc/region.c pz_smaps_scan_file()): anonymous neighbours with the same
    # flags merge into one entry, whose rest is usually another of the caller's buffers.
    pages = _core.smaps_pages(spans, smaps)
    huge: int = pages["anon_huge"] + pages["hugetlb"]
    return min(huge, _total(spans))


def _total(spans: Sequence[Span]) -> int:
    return sum(s[1] if isinstance(s, tuple) else memoryview(s).nbytes for s in spans)


def huge_bytes(address: int, length: int, smaps: str = SMAPS) -> int:
    """Bytes of [address, address + length) that smaps shows on huge pages."""
    return _huge_bytes([(address, length)], smaps)


def huge_share(*buffers: Any, smaps: str = SMAPS) -> float:
    """The share (0..1) of Regions or buffers, together, on huge pages now."""
    spans = [(r.address, r.size) if hasattr(r, "address") else r for r in buffers]
    total = _total(spans)
    return _huge_bytes(spans, smaps) / total if total else 0.0


def huge_details(huge_pages: tuple[int, int] | None) -> dict[str, Any]:
    """A Result's huge_bytes, buffer_bytes and huge_share for (bytes on huge pages, bytes)."""
    if not huge_pages or not huge_pages[1]:
        return {}
    huge, total = huge_pages
    return {"huge_bytes": huge, "buffer_bytes": total, "huge_share": huge / total}


def observed_backing(buffers: Sequence[Span], smaps: str = SMAPS) -> Backing:
    """The Backing smaps shows for buffers someone else mapped."""
    pages = _core.smaps_pages(buffers, smaps)
    return Backing("hugetlb" if pages["hugetlb"] else "thp" if pages["anon_huge"] else "4KB")


def backing_details(used: Backing, buffers: Sequence[Span], smaps: str = SMAPS) -> dict[str, Any]:
    """A Result's backing_note, and for THP the share smaps shows on huge pages."""
    d = {"backing_note": used.note} if used.note else {}
    if used.how == "thp":
        d.update(huge_details((_huge_bytes(buffers, smaps), _total(buffers))))
    return d


def thp_warning(share: float, nbytes: int) -> str | None:
    """A line when a THP buffer of 2MB or more got less than THP_MIN_SHARE on huge pages."""
    if nbytes < _HUGE or share >= THP_MIN_SHARE:
        return None
    # Rounded down: 94.9% must not read "95%" beside a 95% threshold.
    return (
        f"only {math.floor(share * 100)}% of the {format_size(nbytes)} buffer is on huge "
        f"pages (THP asked; smaps): its figures are partly those of 4KB pages"
    )
