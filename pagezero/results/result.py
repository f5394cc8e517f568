"""One run as a value: the Result class, immutable and validated on creation.

A Result holds one benchmark run: its parameters, one raw sample per timed
loop in the clock's own unit, the clock's rate, and the machine it ran on.
Everything else (seconds, bytes per second, cycles per byte, statistics) is
derived from those, so a saved file can be re-analysed without re-running.
Sets of results and their files are pagezero.results.resultset'.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from pagezero.analysis.stats import summarize
from pagezero.results.frozen import deep_frozen as _deep_frozen
from pagezero.results.frozen import frozen as _frozen
from pagezero.results.frozen import thawed as _thawed
from pagezero.results.points import SIZE_PARAMS, identity_params
from pagezero.results.schema import check_result
from pagezero.units import format_size

__all__ = ["Result", "result_type", "signal_name", "DETAIL_KEYS"]

_R = TypeVar("_R", bound="Result")

# Units of a sample, by clock. Clocks that count cycles have no fixed rate
# except tsc, whose rate is measured and stored with the result.
_NS_CLOCKS = ("ns", "timeval")
_CYCLE_CLOCKS = ("cycles", "tsc")
# What one tick of each clock is, for the message on a loop shorter than one.
_TICK = {"ns": "1 ns", "timeval": "1 us", "tsc": "a TSC tick", "cycles": "a cycle"}


# One way to extend a result: a Result subclass registered under its
# BENCHMARK name (result_type). The benchmark name is in every file of every
# version and says what was measured; a class name is a Python detail that a
# rename would break saved files with. A subclass's own fields are saved
# under the benchmark's name ("batch": {...}, "folio": {...}).
_RESULT_TYPES: dict[str, type[Result]] = {}

# `details` records the conditions a run had and what its C entry measured
# beside the samples; these are its keys, by benchmark (all optional).
_CONDITION_KEYS = (
    "thread_samples",
    "thread_bytes",
    "cpus",
    "cold_method",
    "cold_timing",
    "counters",
    "counters_source",
)
DETAIL_KEYS = {
    "memset": _CONDITION_KEYS,
    "memcpy": _CONDITION_KEYS,
    "batch": _CONDITION_KEYS,
    "folio": ("cold_method", "cold_timing", "counters", "counters_source"),
    "mmap": ("thread_samples", "pages", "latency"),
}


def result_type(benchmark: str) -> Callable[[type[_R]], type[_R]]:
    """Class decorator: results of `benchmark` load as this Result subclass.

    The subclass's own dataclass fields are saved under the benchmark's name
    (``"batch": {...}``) and read back from there by :meth:`Result.from_dict`.

    Parameters
    ----------
    benchmark : str
        The benchmark name the results carry ("batch", "folio").

    Returns
    -------
    callable
        The decorator: it sets the class's BENCHMARK, registers it, and returns
        it unchanged.
    """

    def register(cls: type[_R]) -> type[_R]:
        cls.BENCHMARK = benchmark
        _RESULT_TYPES[benchmark] = cls
        return cls

    return register


def _own_fields(cls: type[Result]) -> list[str]:
    """The fields a registered subclass adds to Result."""
    base = {f.name for f in fields(Result)}
    return [f.name for f in fields(cls) if f.name not in base]


@dataclass(frozen=True)
class Result:
    """One run of a benchmark: `loops` samples of `bytes_per_loop` bytes each.

    Immutable: params, machine and details are kept as read-only copies,
    samples as a tuple.

    Parameters
    ----------
    benchmark : str
        "memset", "memcpy", "mmap", or a registered subclass's ("batch", "folio").
    function : str
        The kernel's name (mmap: the workload).
    params : Mapping
        The parameters as given: size, page, chunk, loops, value, ...
    bytes_per_loop : int
        Bytes each timed loop cleared or copied.
    clock : str
        "ns", "timeval", "tsc" or "cycles".
    samples : sequence of int
        One duration per loop, in the clock's ticks.
    clock_hz : float or None
        Ticks per second: set to 1e9 for ns and timeval, measured for tsc,
        None for cycles.
    machine : Mapping
        The machine it ran on (sysinfo.machine()).
    details : Mapping
        The conditions and side measurements of the run (DETAIL_KEYS).
    interrupted : str or None
        The signal that stopped the run, if one did.

    Raises
    ------
    ValueError
        No samples, a sample that is not a non-negative integer, a loop (or a
        thread's every loop) of 0 ticks, bytes_per_loop not positive, an
        unknown clock, or a tsc result without a positive clock_hz.
    """

    # Set on a registered subclass by result_type(); Result itself has none.
    BENCHMARK: ClassVar[str]

    benchmark: str  # "memset", "memcpy" or "mmap"
    function: str  # kernel name (mmap: the workload)
    params: Mapping[str, Any]  # size, page, chunk, loops, value, ... as given
    bytes_per_loop: int
    clock: str
    samples: Sequence[int]  # one duration per loop, in the clock's unit (a tuple once made)
    clock_hz: float | None = None  # ticks per second: 1e9 for ns/timeval, measured for tsc
    machine: Mapping[str, Any] = field(default_factory=dict)
    # The conditions a run had and what its C entry measured beside the
    # samples (per-thread samples, cold method, counters; mmap's pages and
    # latencies): DETAIL_KEYS lists the keys by benchmark. Empty for a plain run.
    details: Mapping[str, Any] = field(default_factory=dict)
    # None, or the signal that stopped the run ("SIGINT", ...): the samples
    # are the loops completed before it.
    interrupted: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "details", _deep_frozen(self.details))
        object.__setattr__(self, "machine", _frozen(self.machine))
        object.__setattr__(self, "samples", tuple(self.samples))
        if not self.samples:
            raise ValueError("a Result needs at least one sample")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.samples):
            raise ValueError("samples must be non-negative integers (clock ticks)")
        zeros = self.samples.count(0)
        if zeros:
            # A loop shorter than one tick has no rate (bytes over no time), and
            # the loops beside it are a tick or two, as coarse: refuse the run
            # rather than keep an infinite rate or drop loops silently.
            raise ValueError(
                f"{zeros} of {len(self.samples)} loops of {self.benchmark} {self.function} "
                f"took 0 ticks: shorter than one tick of the {self.clock} clock "
                f"({_TICK.get(self.clock, 'its resolution')}); clear more bytes per loop "
                f"or use a finer clock (ns)"
            )
        threads = self.details.get("thread_samples", ())
        if any(not sum(t) for t in threads):
            raise ValueError(
                f"a thread of {self.benchmark} {self.function} took 0 ticks in every loop: "
                f"its part is shorter than one tick of the {self.clock} clock "
                f"({_TICK.get(self.clock, 'its resolution')}); clear more bytes per thread"
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

    # Derived values ---------------------------------------------------

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
        if self.clock_hz is None:
            return None
        return tuple(s / self.clock_hz for s in self.samples)

    @property
    def bytes_per_sec(self) -> float | None:
        """Total bytes over total time in bytes/sec, as perf bench computes it (None for cycles)."""
        secs = self.seconds
        if secs is None:
            return None
        total = sum(secs)
        return self.total_bytes / total

    @property
    def cycles_per_byte(self) -> float | None:
        """Cycles (or TSC reference cycles) per byte, for the clocks that count them (else None)."""
        if self.clock not in _CYCLE_CLOCKS:
            return None
        return sum(self.samples) / self.total_bytes

    @property
    def rates(self) -> tuple[float, ...] | None:
        """Bytes per second of each loop (None for the cycles clock)."""
        secs = self.seconds
        if secs is None:
            return None
        return tuple(self.bytes_per_loop / s for s in secs)

    @property
    def unit(self) -> str:
        """The unit of values(): bytes/sec, or cycles/byte for the cycles clock."""
        return "bytes/sec" if self.clock_hz is not None else "cycles/byte"

    def values(self) -> tuple[float, ...]:
        """One value per loop in `unit`: what statistics and comparisons use.

        Returns
        -------
        tuple of float
            Per loop, bytes/sec (the rates), or cycles/byte for the cycles clock.
        """
        rates = self.rates
        if rates is not None:  # the clock has a rate (clock_hz)
            return rates
        return tuple(s / self.bytes_per_loop for s in self.samples)

    def stats(self) -> dict[str, Any]:
        """stats.summarize() of the per-loop values, with their unit.

        For rates the mean is harmonic (total bytes over total time, as
        bytes_per_sec).

        Returns
        -------
        dict
            summarize()'s entries (in `unit`) and "unit".
        """
        return dict(summarize(self.values(), unit=self.unit), unit=self.unit)

    def label(self) -> str:
        """What this result measured, in one line: the point's identity as read.

        As point_key() has it: no loops, sizes spelled alike, the cycles clock
        named.

        Returns
        -------
        str
            For example "memset x86-64-stosb chunk=4KB page=4KB size=1GB value=0".
        """
        parts = [self.benchmark, self.function]
        for k, v in sorted(identity_params(self.params).items()):
            if v is None:
                continue
            if k in SIZE_PARAMS and isinstance(v, int) and not isinstance(v, bool):
                v = format_size(v) if v else "0"
            parts.append(f"{k}={json.dumps(v).strip(chr(34))}")
        if self.unit != "bytes/sec":
            # Cycles per byte is another point than bytes per second (point_key):
            # the label says so, as the grid axis `-g clock=cycles` would.
            parts.append(f"clock={self.clock}")
        return " ".join(parts)

    # Serialisation ----------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types, as a results file holds it.

        Returns
        -------
        dict
            benchmark, function, params, bytes_per_loop, clock, clock_hz,
            samples and machine; details and interrupted when set; a registered
            subclass's own fields under its benchmark's name.
        """
        d: dict[str, Any] = {
            "benchmark": self.benchmark,
            "function": self.function,
            "params": dict(self.params),
            "bytes_per_loop": self.bytes_per_loop,
            "clock": self.clock,
            "clock_hz": self.clock_hz,
            "samples": list(self.samples),
            "machine": dict(self.machine),
        }
        if self.details:
            # Optional, so files without it (and readers that ignore it) still work.
            d["details"] = _thawed(self.details)
        if self.interrupted:
            d["interrupted"] = self.interrupted
        own = _own_fields(type(self))
        if own:
            d[self.benchmark] = {name: _thawed(_deep_frozen(getattr(self, name))) for name in own}
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Result:
        """The Result a to_dict() gave (any schema version).

        Parameters
        ----------
        d : dict
            One result as read from JSON.

        Returns
        -------
        Result
            An instance of the class registered for its benchmark (when called
            on Result), else of `cls`.

        Raises
        ------
        ValueError
            `d` has not a result's shape, or its values are refused by Result.
        """
        check_result(d)
        try:
            kind = _RESULT_TYPES.get(d["benchmark"], Result) if cls is Result else cls
            own: dict[str, Any] = {}
            if kind is not Result:
                extra = d[d["benchmark"]]
                if not isinstance(extra, dict):
                    raise TypeError(d["benchmark"])
                own = {name: extra[name] for name in _own_fields(kind)}
            return kind(
                benchmark=d["benchmark"],
                function=d["function"],
                params=d["params"],
                bytes_per_loop=d["bytes_per_loop"],
                clock=d["clock"],
                samples=d["samples"],
                clock_hz=d.get("clock_hz"),
                machine=d.get("machine", {}),
                details=d.get("details", {}),
                interrupted=signal_name(d.get("interrupted")),
                **own,
            )
        except (KeyError, TypeError, AttributeError, OverflowError) as e:
            raise ValueError(f"not a pagezero result: missing or bad {e}") from None


def signal_name(value: object) -> str | None:
    """None, or what stopped a run, as a file records it.

    Parameters
    ----------
    value : str, bool or None
        A signal's name; True (files before version 3 recorded only whether)
        reads as "unknown signal".

    Returns
    -------
    str or None
        The signal's name, or None when nothing stopped the run.
    """
    if not value:
        return None
    return value if isinstance(value, str) else "unknown signal"
