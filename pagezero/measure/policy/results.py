"""The results of the policy benchmarks, registered under their benchmark
names ("batch", "folio") so that files load them back as these classes."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pagezero.results.resultset import Result, result_type


@result_type("batch")
@dataclass(frozen=True)
class BatchResult(Result):
    """A batch run (pagezero.batch()).

    Samples are whole passes (ns, yields included); the batch figures summarise every batch of
    every pass (ns, without the yields); params["backing"] the pages cleared (hugetlb, thp, 4KB).

    Attributes
    ----------
    batch_bytes : int
        The bytes each batch clears.
    batches_per_loop : int
        The batches of one pass (per thread).
    pass_worst_ns : tuple of int
        Each pass's slowest batch, in ns.
    batch_ns : mapping of str to float
        Over every batch of every pass, in ns: "max", "p99", "median", "mean", and
        "typical_worst" (the slowest batch position, median over passes).
    """

    batch_bytes: int = 0
    batches_per_loop: int = 0
    pass_worst_ns: tuple[int, ...] = ()  # each pass's slowest batch
    # None only until __post_init__ freezes it into a mapping: every reader sees a mapping.
    batch_ns: Mapping[str, float] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if "backing" not in self.params:
            # Saved before batch() chose its pages: those runs cleared 4KB pages, THP refused.
            object.__setattr__(self, "params", {**self.params, "backing": "4KB"})
        super().__post_init__()
        object.__setattr__(self, "pass_worst_ns", tuple(self.pass_worst_ns))
        object.__setattr__(self, "batch_ns", MappingProxyType(dict(self.batch_ns or {})))
        if self.batch_bytes <= 0 or self.batches_per_loop <= 0:
            raise ValueError("a BatchResult needs batch_bytes and batches_per_loop")
        if len(self.pass_worst_ns) != len(self.samples):
            raise ValueError("pass_worst_ns needs one value per pass")

    @property
    def worst_ms(self) -> float:
        """The slowest batch of all passes, in ms."""
        return self.batch_ns["max"] / 1e6

    @property
    def p99_ms(self) -> float:
        """The 99th percentile of every batch of every pass, in ms."""
        return self.batch_ns["p99"] / 1e6

    @property
    def median_ms(self) -> float:
        """The median of every batch of every pass, in ms."""
        return self.batch_ns["median"] / 1e6

    @property
    def typical_worst_ms(self) -> float:
        """The slowest batch position, median over passes: what a batch costs
        when no other task takes the CPU in the middle of it."""
        return self.batch_ns["typical_worst"] / 1e6


@result_type("folio")
@dataclass(frozen=True)
class FolioResult(Result):
    """A folio run (pagezero.folio()).

    Samples are the clears (ns); touch_ns and cold_ns the neighbourhood touch right after each
    clear and after evicting it.

    Attributes
    ----------
    touch_ns : tuple of int
        Per loop, the touch of the neighbourhood right after the clear, in ns.
    cold_ns : tuple of int
        Per loop, the same touch with the neighbourhood evicted, in ns.
    touch_lines : int
        The cache lines each touch reads.
    neighbourhood : tuple of (int, int)
        The pages touched: (first page, page count).
    backing : str
        The folio's pages: "hugetlb", "thp" or "4KB".
    cold_method : str
        How the baseline evicts: "clflush" or "evict".
    """

    touch_ns: tuple[int, ...] = ()
    cold_ns: tuple[int, ...] = ()
    touch_lines: int = 0
    neighbourhood: tuple[int, ...] = ()  # (first page, page count)
    backing: str = ""  # "hugetlb", "thp" or "4KB"
    cold_method: str = ""  # "clflush" or "evict"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("touch_ns", "cold_ns", "neighbourhood"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not (len(self.touch_ns) == len(self.cold_ns) == len(self.samples)):
            raise ValueError("touch_ns and cold_ns need one value per loop")
        if self.touch_lines <= 0 or len(self.neighbourhood) != 2:
            raise ValueError("a FolioResult needs touch_lines and the neighbourhood")

    @property
    def touch_ns_per_line(self) -> float:
        """Median over loops of the touch right after the clear, ns per line."""
        return statistics.median(self.touch_ns) / self.touch_lines

    @property
    def cold_ns_per_line(self) -> float:
        """Median over loops of the same touch with the neighbourhood evicted."""
        return statistics.median(self.cold_ns) / self.touch_lines

    @property
    def clear_bytes_per_sec(self) -> float:
        """Median over loops of the clearing rate, in bytes/sec (bytes_per_sec is total/total)."""
        rates = self.rates
        if rates is None:
            # A folio is timed in ns, so it has rates: only a file that says otherwise.
            raise ValueError(f"a folio result timed by the {self.clock} clock has no rate")
        return statistics.median(rates)
