"""One run as a value: raw clock ticks, the clock's rate, the machine; all else is derived."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from pagezero.results.points import describe, format_figure, summarize, title
from pagezero.results.schema import check_result

_R = TypeVar("_R", bound="Result")
_V = TypeVar("_V")

# Clocks that count cycles have no fixed rate, except tsc, whose rate is measured and stored.
_NS_CLOCKS = ("ns", "timeval")
_CYCLE_CLOCKS = ("cycles", "tsc")
_TICK = {"ns": "1 ns", "timeval": "1 us", "tsc": "a TSC tick", "cycles": "a cycle"}

# Result subclasses by benchmark name (result_type), which every file holds (a class name would
# break saved files on a rename); a subclass's own fields are saved under it ("batch": {...}).
_RESULT_TYPES: dict[str, type[Result]] = {}
# What a file holds of every result, in its order; details and interrupted follow when set.
_SAVED = "benchmark function params bytes_per_loop clock clock_hz samples machine".split()


def frozen(mapping: Mapping[str, _V]) -> MappingProxyType[str, _V]:
    """A read-only view of a private copy of `mapping` (its values as they are)."""
    return MappingProxyType(dict(mapping))


def deep_frozen(value: Any) -> Any:
    """`value` with every dict a read-only mapping and every list a tuple, at every depth."""
    if isinstance(value, (dict, MappingProxyType)):
        return MappingProxyType({k: deep_frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """deep_frozen's inverse, for JSON: read-only mappings as dicts, tuples as lists."""
    if isinstance(value, MappingProxyType):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value


def result_type(benchmark: str) -> Callable[[type[_R]], type[_R]]:
    """Class decorator: results of `benchmark` load as this subclass, its fields saved under it."""

    def register(cls: type[_R]) -> type[_R]:
        cls.BENCHMARK = benchmark
        cls.__repr__ = Result.__repr__  # type: ignore[method-assign]  # not @dataclass's
        _RESULT_TYPES[benchmark] = cls
        return cls

    return register


def _own_fields(cls: type[Result]) -> list[str]:
    base = {f.name for f in fields(Result)}
    return [f.name for f in fields(cls) if f.name not in base]


@dataclass(frozen=True, repr=False)
class Result:
    """One run of a benchmark, immutable: `loops` samples of `bytes_per_loop` bytes each.

    Parameters
    ----------
    benchmark, function : str
        "memset", "memcpy", "mmap", "batch", "folio"; the kernel's name (mmap: the workload).
    params, bytes_per_loop : Mapping, int
        The parameters as given (size, page, chunk, loops, ...); bytes each timed loop cleared.
    clock, samples : str, sequence of int
        "ns", "timeval", "tsc" or "cycles"; one duration per loop, in its ticks.
    clock_hz : float or None
        Ticks per second: 1e9 for ns and timeval, measured for tsc, None for cycles.
    machine, details, interrupted : Mapping, Mapping, str or None
        The machine (:func:`pagezero.machine`); the run's conditions (docs/measuring.rst); the
        signal that stopped the run ("SIGINT"), if one did.

    Raises
    ------
    ValueError
        No samples, a sample not a tick count, a loop or thread of 0 ticks, bytes_per_loop not
        positive, an unknown clock, or tsc without a positive clock_hz.
    """

    BENCHMARK: ClassVar[str]  # a registered subclass's (result_type); Result has none

    benchmark: str
    function: str
    params: Mapping[str, Any]
    bytes_per_loop: int
    clock: str
    samples: Sequence[int]
    clock_hz: float | None = None
    machine: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    interrupted: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", frozen(self.params))
        object.__setattr__(self, "details", deep_frozen(self.details))
        object.__setattr__(self, "machine", frozen(self.machine))
        object.__setattr__(self, "samples", tuple(self.samples))
        if not self.samples:
            raise ValueError("a Result needs at least one sample")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.samples):
            raise ValueError("samples must be non-negative integers (clock ticks)")
        what = f"{self.benchmark} {self.function}"
        tick = f"one tick of the {self.clock} clock ({_TICK.get(self.clock, 'its resolution')})"
        if zeros := self.samples.count(0):
            # No rate, and the loops beside it as coarse: refuse rather than drop loops silently.
            raise ValueError(
                f"{zeros} of {len(self.samples)} loops of {what} took 0 ticks: shorter than "
                f"{tick}; clear more bytes per loop or use a finer clock (ns)"
            )
        if any(not sum(t) for t in self.details.get("thread_samples", ())):
            raise ValueError(
                f"a thread of {what} took 0 ticks in every loop: its part is shorter than "
                f"{tick}; clear more bytes per thread"
            )
        if self.bytes_per_loop <= 0:
            raise ValueError("bytes_per_loop must be positive")
        if self.clock in _NS_CLOCKS:
            object.__setattr__(self, "clock_hz", 1e9)
        elif self.clock == "tsc":
            if not self.clock_hz or self.clock_hz <= 0:
                raise ValueError("a tsc Result needs the measured clock_hz")
        elif self.clock != "cycles":
            raise ValueError(f"unknown clock {self.clock!r}")

    def __repr__(self) -> str:
        figure = self.bytes_per_sec if self.unit == "bytes/sec" else self.cycles_per_byte
        stop = f", interrupted by {self.interrupted}" if self.interrupted else ""
        figures = f"{format_figure(figure, self.unit)}, {self.loops} loops{stop}"
        return f"<{type(self).__name__} {title(self)}: {figures}>"

    @property
    def loops(self) -> int:
        """The number of timed loops (samples)."""
        return len(self.samples)

    @property
    def total_bytes(self) -> int:
        """Bytes of all loops together: bytes_per_loop times loops."""
        return self.bytes_per_loop * self.loops

    @property
    def seconds(self) -> tuple[float, ...] | None:
        """Each loop's duration in seconds, or None for the cycles clock."""
        hz = self.clock_hz
        return None if hz is None else tuple(s / hz for s in self.samples)

    @property
    def bytes_per_sec(self) -> float | None:
        """Total bytes over total time, as perf bench computes it (None for the cycles clock)."""
        secs = self.seconds
        return None if secs is None else self.total_bytes / sum(secs)

    @property
    def cycles_per_byte(self) -> float | None:
        """Cycles or tsc ticks (reference cycles) per byte; None for the clocks that count time."""
        cycles = self.clock in _CYCLE_CLOCKS
        return sum(self.samples) / self.total_bytes if cycles else None

    @property
    def rates(self) -> tuple[float, ...] | None:
        """Bytes per second of each loop (None for the cycles clock)."""
        secs = self.seconds
        return None if secs is None else tuple(self.bytes_per_loop / s for s in secs)

    @property
    def unit(self) -> str:
        """The unit of values(): bytes/sec, or cycles/byte for the cycles clock."""
        return "bytes/sec" if self.clock_hz is not None else "cycles/byte"

    def values(self) -> tuple[float, ...]:
        """One value per loop in :attr:`unit`: the rates, or cycles/byte for the cycles clock."""
        rates = self.rates
        return rates if rates is not None else tuple(s / self.bytes_per_loop for s in self.samples)

    def stats(self) -> dict[str, Any]:
        """Statistics of the per-loop values (summary.summarize(): harmonic for rates), and unit."""
        return dict(summarize(self.values(), unit=self.unit), unit=self.unit)

    def label(self) -> str:
        """Its point's identity in one line, sizes spelled alike, no loops, the cycles clock
        named: "memset x86-64-stosb chunk=4KB page=4KB size=1GB value=0"."""
        cycles = f" clock={self.clock}" if self.unit != "bytes/sec" else ""
        return describe(self) + cycles  # the clock as the grid axis `-g clock=cycles` names it

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types, as a results file holds it (own fields by benchmark)."""
        d = {k: thawed(getattr(self, k)) for k in _SAVED}
        if self.details:  # optional: files without it (and readers that ignore it) still work
            d["details"] = thawed(self.details)
        if self.interrupted:
            d["interrupted"] = self.interrupted
        if own := _own_fields(type(self)):
            d[self.benchmark] = {name: thawed(deep_frozen(getattr(self, name))) for name in own}
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Result:
        """A to_dict() of any version as its benchmark's class (on Result), or ValueError."""
        check_result(d)
        try:
            kind = _RESULT_TYPES.get(d["benchmark"], Result) if cls is Result else cls
            own: dict[str, Any] = {}
            if kind is not Result:
                extra = d[d["benchmark"]]
                if not isinstance(extra, dict):
                    raise TypeError(d["benchmark"])
                own = {name: extra[name] for name in _own_fields(kind)}
            known = {f.name: d[f.name] for f in fields(Result) if f.name in d}
            return kind(**dict(known, interrupted=signal_name(d.get("interrupted"))), **own)
        except (KeyError, TypeError, AttributeError, OverflowError) as e:
            raise ValueError(f"not a pagezero result: missing or bad {e}") from None


def signal_name(value: object) -> str | None:
    """None, or what stopped a run; True (files before version 3) reads as "unknown signal"."""
    return (value if isinstance(value, str) else "unknown signal") if value else None
