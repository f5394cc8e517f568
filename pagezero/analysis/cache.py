"""The cache a run really has, from the temporal kernels' rates (docs/studies/extents.rst)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pagezero.system.machine import llc, llc_bytes
from pagezero.units import format_size

# Rates within this of the plateau's are on it (placement alone moves one by 3-5% here).
PLATEAU_TOLERANCE = 0.15
# A level this much faster than the plateau is a cache (the knee's clear step); less, noise.
CACHE_STEP = 1.3
# The plateau needs this many extents: one point alone is not a level.
PLATEAU_MIN_EXTENTS = 2
# The cache level is read over the extents from plateau / CACHE_WINDOW up to the plateau:
# wide enough for the L3's level, narrow enough to leave the L2's faster one out.
CACHE_WINDOW = 8
# At least this share of the temporal kernels must show the fall: on a loaded machine one
# kernel's noise can look like one (a 2-vCPU Zen 4 VM at load 9: one of six "fell" at 128MB).
MIN_SHARE = 0.5
# Sizes within this ratio are one cache: a ladder of powers of two places a fall within 2x.
SAME_CACHE_RATIO = 2.0


@dataclass(frozen=True)
class KernelCache:
    """One kernel's fall: last extent at cache speed, first on the plateau, both levels."""

    kernel: str
    cache_bytes: int
    plateau_bytes: int
    cache_bytes_per_sec: float
    memory_bytes_per_sec: float


def kernel_cache(kernel: str, by_extent: Mapping[int, float]) -> KernelCache | None:
    """Where one temporal kernel's rate falls from a cache level to the memory plateau, or None."""
    pts = sorted((e, r) for e, r in by_extent.items() if r > 0)
    if len(pts) < PLATEAU_MIN_EXTENTS + 1:
        return None
    last, start = pts[-1][1], len(pts) - 1
    while start > 0 and _within(pts[start - 1][1], last, 1 + PLATEAU_TOLERANCE):
        start -= 1
    if len(pts) - start < PLATEAU_MIN_EXTENTS or start == 0:
        return None
    memory = statistics.median(r for _, r in pts[start:])
    plateau = pts[start][0]
    window = [r for e, r in pts[:start] if e * CACHE_WINDOW >= plateau and r >= CACHE_STEP * memory]
    if not window:
        return None
    level = statistics.median(window)
    # Not empty: the window's rates from its median up are at speed.
    at_speed = [e for e, r in pts[:start] if r * (1 + PLATEAU_TOLERANCE) >= level]
    return KernelCache(kernel, max(at_speed), plateau, level, memory)


def _within(value: float, of: float, ratio: float) -> bool:
    """Whether `value` is within a factor `ratio` of `of`."""
    return of / ratio <= value <= of * ratio


@dataclass(frozen=True)
class MeasuredCache:
    """The cache a run has, measured, beside sysfs's LLC.

    Attributes
    ----------
    cache_bytes, plateau_bytes, llc_bytes, llc_source : int or None, str or None
        The largest extent still at cache speed and the first on the plateau (None if unseen);
        sysfs's LLC size and where it was read (a sysfs file, or sysconf), None when unknown.
    kernels, extents : tuple of KernelCache, tuple of int
        The kernels that showed a fall (kept where too few for a cache); the extents measured.
    """

    cache_bytes: int | None
    plateau_bytes: int | None
    llc_bytes: int | None = None
    llc_source: str | None = None
    kernels: tuple[KernelCache, ...] = ()
    extents: tuple[int, ...] = ()

    @property
    def differs(self) -> bool:
        """Whether sysfs's LLC is outside the fall measured: not the cache measured."""
        # The fall is gradual where the L3 is shared (a Zen 4 VM's 32 MiB: 8-16MB to 32-64MB)
        # and known within a factor of two: an LLC inside the fall is the one measured.
        if self.cache_bytes is None or self.plateau_bytes is None or not self.llc_bytes:
            return False
        return not self.cache_bytes / SAME_CACHE_RATIO <= self.llc_bytes <= self.plateau_bytes

    @property
    def effective_bytes(self) -> int | None:
        """The cache the studies take as "in cache": the measured one where it differs."""
        return self.cache_bytes if self.differs or not self.llc_bytes else self.llc_bytes

    @property
    def measured_instead_of_llc(self) -> int | None:
        """The measured cache, in bytes, where the studies use it instead of sysfs's LLC."""
        return self.effective_bytes if self.source == "measured" else None

    @property
    def source(self) -> str:
        """Which cache effective_bytes is, in words: "measured" or "sysfs" (or "unknown")."""
        if self.differs or (self.cache_bytes is not None and not self.llc_bytes):
            return "measured"
        return "sysfs" if self.llc_bytes else "unknown"

    def words(self) -> str:
        """The cache the studies use, with which it is: "64MB (measured; sysfs's LLC: 480MB)"."""
        size = self.effective_bytes
        if size is None:
            return "unknown (sysfs gives no LLC, and the rates show no cache)"
        if self.source == "measured":
            llc = format_size(self.llc_bytes) if self.llc_bytes else "none"
            return f"{format_size(size)} (measured; sysfs's LLC: {llc})"
        if self.cache_bytes is None:
            return f"{format_size(size)} (sysfs's LLC; the rates measured show no cache)"
        return f"{format_size(size)} (sysfs's LLC; measured: {format_size(self.cache_bytes)})"

    def to_json(self) -> dict[str, Any]:
        """As JSON: the fields, and effective_bytes, source and differs; sizes in bytes."""
        doc = dict(asdict(self), kernels=[asdict(k) for k in self.kernels])
        derived = {"effective_bytes": self.effective_bytes, "source": self.source}
        return dict(doc, extents=list(self.extents), **derived, differs=self.differs)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> MeasuredCache:
        """The inverse of to_json()."""
        kernels = tuple(KernelCache(**k) for k in doc.get("kernels", ()))
        keep = ("cache_bytes", "plateau_bytes", "llc_bytes", "llc_source")
        extents = tuple(doc.get("extents", ()))
        return cls(**{k: doc.get(k) for k in keep}, kernels=kernels, extents=extents)


def measured_cache(
    temporal_rates: Mapping[str, Mapping[int, float]],
    llc_bytes: int | None = None,
    llc_source: str | None = None,
    above_bytes: int = 0,
) -> MeasuredCache:
    """The cache a run has, from the temporal kernels' rates over extents.

    Parameters
    ----------
    temporal_rates : mapping of str to mapping of int to float
        {kernel: {extent in bytes: rate in bytes/sec}}, temporal kernels only.
    llc_bytes, llc_source, above_bytes : int or None, str or None, int
        sysfs's LLC size, to report beside it, and where it was read; only extents larger than
        `above_bytes` are read (sysfs's L2: its fall to the L3 is no end).

    Returns
    -------
    MeasuredCache
        The lower medians of the falls ending near their median; None under MIN_SHARE of kernels.
    """
    above = {
        k: {e: r for e, r in by.items() if e > above_bytes} for k, by in temporal_rates.items()
    }
    found = [c for k, by in sorted(above.items()) if (c := kernel_cache(k, by)) is not None]
    extents = tuple(sorted({e for by in temporal_rates.values() for e in by}))
    measured = [by for by in above.values() if by]
    # Falls that end far apart are noise, not one cache: only those near their median count.
    middle = statistics.median_low(c.cache_bytes for c in found) if found else 0
    agreeing = [c for c in found if _within(c.cache_bytes, middle, SAME_CACHE_RATIO)]
    enough = agreeing and len(agreeing) >= MIN_SHARE * len(measured)
    cache = statistics.median_low(c.cache_bytes for c in agreeing) if enough else None
    plateau = statistics.median_low(c.plateau_bytes for c in agreeing) if enough else None
    return MeasuredCache(cache, plateau, llc_bytes, llc_source, tuple(found), extents)


def extents_to_add(
    temporal_rates: Mapping[str, Mapping[int, float]],
    memory_bytes: int | None,
    above_bytes: int = 0,
    most: int = 3,
) -> list[int]:
    """Extents doubling the largest (to memory_bytes / 4) to twice the cache, or a few more."""
    extents = sorted({e for by in temporal_rates.values() for e in by})
    if not extents or not memory_bytes:
        return []
    cache = measured_cache(temporal_rates, above_bytes=above_bytes).cache_bytes
    if cache is None and not any(
        _falling_at_the_top(by, above_bytes) for by in temporal_rates.values()
    ):
        return []
    wanted = most if cache is not None else min(most, PLATEAU_MIN_EXTENTS)
    top, out = extents[-1], list[int]()
    while len(out) < wanted and (cache is None or top < 2 * cache) and 2 * top <= memory_bytes // 4:
        top *= 2
        out.append(top)
    return out


def _falling_at_the_top(by_extent: Mapping[int, float], above_bytes: int) -> bool:
    """Whether the largest extent's rate is CACHE_STEP below one within its CACHE_WINDOW."""
    pts = sorted(by_extent.items())
    if len(pts) < 2:
        return False
    top, last = pts[-1]
    near = [r for e, r in pts[:-1] if e * CACHE_WINDOW >= top and e > above_bytes]
    return bool(near) and last * CACHE_STEP <= max(near)


# The machine() dict's key for the measured cache, set by the extents study for later ones.
INFO_KEY = "measured_cache"


def llc_source(info: Mapping[str, Any]) -> str | None:
    """Where a machine() dict's LLC size was read (its highest data cache level's source)."""
    found = llc(info)
    return found.get("source") if found else None


def run_cache(info: Mapping[str, Any]) -> MeasuredCache:
    """The cache of a machine() dict: the measured one where a study set it, else sysfs's."""
    doc = info.get(INFO_KEY)
    sysfs = MeasuredCache(None, None, llc_bytes(info), llc_source(info))
    return MeasuredCache.from_json(doc) if doc else sysfs
