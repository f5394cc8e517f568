"""Results as values: immutable, validated on creation, saved as versioned JSON.

A Result holds one benchmark run: its parameters, one raw sample per timed
loop in the clock's own unit, the clock's rate, and the machine it ran on.
Everything else (seconds, bytes per second, cycles per byte, statistics) is
derived from those, so a saved file can be re-analysed without re-running.
"""
import json
import math
import os
import statistics
import tempfile
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Result", "save_results", "load_results", "SCHEMA", "SCHEMA_VERSION"]

SCHEMA = "pagezero.results"
SCHEMA_VERSION = 1

# Units of a sample, by clock. Clocks that count cycles have no fixed rate
# except tsc, whose rate is measured and stored with the result.
_NS_CLOCKS = ("ns", "timeval")
_CYCLE_CLOCKS = ("cycles", "tsc")


def _frozen(mapping):
    return MappingProxyType(dict(mapping))


def _deep_frozen(value):
    """Nested dicts and lists as read-only mappings and tuples."""
    if isinstance(value, (dict, MappingProxyType)):
        return MappingProxyType({k: _deep_frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_deep_frozen(v) for v in value)
    return value


def _thawed(value):
    """_deep_frozen's inverse, for JSON."""
    if isinstance(value, MappingProxyType):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


@dataclass(frozen=True)
class Result:
    """One run of a benchmark: `loops` samples of `bytes_per_loop` bytes each."""

    benchmark: str              # "memset", "memcpy" or "mmap"
    function: str               # kernel name (mmap: the workload)
    params: MappingProxyType    # size, page, chunk, loops, value, ... as given
    bytes_per_loop: int
    clock: str
    samples: tuple              # one duration per loop, in the clock's unit
    clock_hz: float = None      # ticks per second: 1e9 for ns/timeval, measured for tsc
    machine: MappingProxyType = field(default_factory=dict)
    # What a benchmark measured beyond the samples, e.g. mmap's per-thread
    # samples, page sizes and fault latencies; empty for memset/memcpy.
    details: MappingProxyType = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "details", _deep_frozen(self.details))
        object.__setattr__(self, "machine", _frozen(self.machine))
        object.__setattr__(self, "samples", tuple(self.samples))
        if not self.samples:
            raise ValueError("a Result needs at least one sample")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.samples):
            raise ValueError("samples must be non-negative integers (clock ticks)")
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
    def loops(self):
        return len(self.samples)

    @property
    def total_bytes(self):
        return self.bytes_per_loop * self.loops

    @property
    def seconds(self):
        """Each loop's duration in seconds, or None for the cycles clock."""
        if self.clock_hz is None:
            return None
        return tuple(s / self.clock_hz for s in self.samples)

    @property
    def bytes_per_sec(self):
        """Total bytes over total time, as perf bench computes it (None for cycles)."""
        secs = self.seconds
        if secs is None:
            return None
        total = sum(secs)
        return self.total_bytes / total if total > 0 else math.inf

    @property
    def cycles_per_byte(self):
        """Cycles (or TSC reference cycles) per byte, for the clocks that count them."""
        if self.clock not in _CYCLE_CLOCKS:
            return None
        return sum(self.samples) / self.total_bytes

    @property
    def rates(self):
        """Bytes per second of each loop (None for the cycles clock)."""
        secs = self.seconds
        if secs is None:
            return None
        return tuple(self.bytes_per_loop / s if s > 0 else math.inf for s in secs)

    def stats(self):
        """Mean, stdev, %stdev, median, min and max of the per-loop rates
        (or of the per-loop cycles per byte for the cycles clock)."""
        if self.rates is not None:
            values, unit = self.rates, "bytes/sec"
        else:
            values, unit = tuple(s / self.bytes_per_loop for s in self.samples), "cycles/byte"
        mean = statistics.fmean(values)
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        return {
            "unit": unit,
            "n": len(values),
            "mean": mean,
            "stdev": stdev,
            "stdev_pct": 100.0 * stdev / mean if mean else 0.0,
            "median": statistics.median(values),
            "min": min(values),
            "max": max(values),
        }

    # Serialisation ----------------------------------------------------

    def to_dict(self):
        d = {
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
        return d

    @classmethod
    def from_dict(cls, d):
        try:
            return cls(
                benchmark=d["benchmark"],
                function=d["function"],
                params=d["params"],
                bytes_per_loop=d["bytes_per_loop"],
                clock=d["clock"],
                samples=d["samples"],
                clock_hz=d.get("clock_hz"),
                machine=d.get("machine", {}),
                details=d.get("details", {}),
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a pagezero result: {e}") from None


def save_results(path, results):
    """Write results to `path` as JSON, atomically: a crash leaves no half-written file."""
    doc = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "results": [r.to_dict() for r in results],
    }
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".pagezero-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load_results(path):
    """Read a file written by save_results (any schema version up to this one)."""
    with open(path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a pagezero results file")
    version = doc.get("version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"{path}: results schema version {version!r} is newer than "
                         f"this pagezero understands ({SCHEMA_VERSION})")
    return [Result.from_dict(r) for r in doc["results"]]
