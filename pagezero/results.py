"""Results as values: immutable, validated on creation, saved as versioned JSON.

A Result holds one benchmark run: its parameters, one raw sample per timed
loop in the clock's own unit, the clock's rate, and the machine it ran on.
Everything else (seconds, bytes per second, cycles per byte, statistics) is
derived from those, so a saved file can be re-analysed without re-running.
"""

import json
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from .files import atomic_write
from .frozen import deep_frozen as _deep_frozen
from .frozen import frozen as _frozen
from .frozen import thawed as _thawed
from .points import SIZE_PARAMS, identity_params, params_key, point_key
from .result_checks import check_document, check_result, check_run, read_json
from .results_table import sample_table, write_csv
from .stats import summarize
from .sysinfo import build_info
from .units import format_size

__all__ = [
    "Result",
    "ResultSet",
    "save_results",
    "load_results",
    "SCHEMA",
    "SCHEMA_VERSION",
    "result_type",
    "DETAIL_KEYS",
    "atomic_write",
    "params_key",
    "point_key",
]

SCHEMA = "pagezero.results"
# Version 2 moved the machine to the top of the file and added each
# result's run (repetition, process). Version 3 keys a result's extra fields
# by its benchmark name (no "type"), records the pagezero version and the
# extension's build at the top, and says which signal stopped a run
# ("interrupted"). Version 1 and 2 files still load.
SCHEMA_VERSION = 3

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
_RESULT_TYPES = {}

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


def result_type(benchmark):
    """Class decorator: results of `benchmark` load as this Result subclass."""

    def register(cls):
        cls.BENCHMARK = benchmark
        _RESULT_TYPES[benchmark] = cls
        return cls

    return register


def _own_fields(cls):
    """The fields a registered subclass adds to Result."""
    base = {f.name for f in fields(Result)}
    return [f.name for f in fields(cls) if f.name not in base]


@dataclass(frozen=True)
class Result:
    """One run of a benchmark: `loops` samples of `bytes_per_loop` bytes each."""

    benchmark: str  # "memset", "memcpy" or "mmap"
    function: str  # kernel name (mmap: the workload)
    params: MappingProxyType  # size, page, chunk, loops, value, ... as given
    bytes_per_loop: int
    clock: str
    samples: tuple  # one duration per loop, in the clock's unit
    clock_hz: float = None  # ticks per second: 1e9 for ns/timeval, measured for tsc
    machine: MappingProxyType = field(default_factory=dict)
    # The conditions a run had and what its C entry measured beside the
    # samples (per-thread samples, cold method, counters; mmap's pages and
    # latencies): DETAIL_KEYS lists the keys by benchmark. Empty for a plain run.
    details: MappingProxyType = field(default_factory=dict)
    # None, or the signal that stopped the run ("SIGINT", ...): the samples
    # are the loops completed before it.
    interrupted: str = None

    def __post_init__(self):
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
        return self.total_bytes / total

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
        return tuple(self.bytes_per_loop / s for s in secs)

    @property
    def unit(self):
        """The unit of values(): bytes/sec, or cycles/byte for the cycles clock."""
        return "bytes/sec" if self.clock_hz is not None else "cycles/byte"

    def values(self):
        """One value per loop in `unit`: what statistics and comparisons use."""
        if self.clock_hz is not None:
            return self.rates
        return tuple(s / self.bytes_per_loop for s in self.samples)

    def stats(self):
        """stats.summarize() of the per-loop values, with their unit: for rates
        the mean is harmonic (total bytes over total time, as bytes_per_sec)."""
        return dict(summarize(self.values(), unit=self.unit), unit=self.unit)

    def label(self):
        """What this result measured, in one line, the point's identity as read
        (point_key: no loops, sizes spelled alike, the cycles clock named):
        "memset x86-64-stosb chunk=4KB page=4KB size=1GB value=0"."""
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
        if self.interrupted:
            d["interrupted"] = self.interrupted
        own = _own_fields(type(self))
        if own:
            d[self.benchmark] = {name: _thawed(_deep_frozen(getattr(self, name))) for name in own}
        return d

    @classmethod
    def from_dict(cls, d):
        """The Result a to_dict() gave (any schema version), as the class
        registered for its benchmark."""
        check_result(d)
        try:
            kind = _RESULT_TYPES.get(d["benchmark"], Result) if cls is Result else cls
            own = {}
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
                interrupted=_signal_name(d.get("interrupted")),
                **own,
            )
        except (KeyError, TypeError, AttributeError, OverflowError) as e:
            raise ValueError(f"not a pagezero result: missing or bad {e}") from None


def _signal_name(value):
    """None, or what stopped a run: a signal name; True (files before version
    3 recorded only whether) reads as "unknown signal"."""
    if not value:
        return None
    return value if isinstance(value, str) else "unknown signal"


class ResultSet:
    """Results of one study: each Result with how it was run (repetition and
    worker process), the machine, and whether the study was interrupted.

    Grid points are the distinct points.point_key()s (benchmark, function,
    unit, parameters but loops); each point's samples pool the loops of all
    its repetitions.
    """

    def __init__(self, results, runs=None, machine=None, interrupted=None, build=None, lost=None):
        self.results = tuple(results)
        runs = runs if runs is not None else [{}] * len(self.results)
        if len(runs) != len(self.results):
            raise ValueError("one run description per result is needed")
        self.runs = tuple(
            MappingProxyType(
                {
                    "repetition": r.get("repetition", 0),
                    "process": r.get("process", 0),
                    **({"pid": r["pid"]} if "pid" in r else {}),
                }
            )
            for r in runs
        )
        if machine is None:
            machine = self.results[0].machine if self.results else {}
        self.machine = _frozen(machine)
        # None, or the signal that stopped the study ("SIGINT", ...).
        self.interrupted = _signal_name(interrupted)
        # pagezero's version and the extension's build, as the file recorded
        # them (None: made here, build_info() is written on saving).
        self.build = _frozen(build) if build else None
        # Worker processes that died unsaved (sweeps): {"process", "repetitions", "reason"}.
        if lost is not None and not (
            isinstance(lost, (list, tuple))
            and all(isinstance(x, (dict, MappingProxyType)) for x in lost)
        ):
            raise ValueError("lost is not a list of objects (the worker processes lost)")
        self.lost = tuple(_deep_frozen(x) for x in lost or ())

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    @property
    def benchmarks(self):
        return sorted({r.benchmark for r in self.results})

    def points(self):
        """Grid points in first-seen order: a list of (Result of the first run,
        [every Result of that point])."""
        groups = {}
        for r in self.results:
            groups.setdefault(point_key(r), []).append(r)
        return [(rs[0], rs) for rs in groups.values()]

    def stats(self):
        """One row per grid point: benchmark, function, its parameters, the unit,
        and summarize() of all its per-loop values (for rates, the harmonic
        mean: the point's total bytes over its total time)."""
        rows = []
        for first, rs in self.points():
            values = [v for r in rs for v in r.values()]
            rows.append(
                dict(
                    benchmark=first.benchmark,
                    function=first.function,
                    params=dict(first.params),
                    label=first.label(),
                    unit=first.unit,
                    **summarize(values, unit=first.unit),
                )
            )
        return rows

    def table(self):
        """A tidy numpy structured array, one row per sample (loop)."""
        return sample_table(self)

    def to_pandas(self):
        """The table() as a pandas DataFrame (pandas is not a dependency)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.table())

    def to_csv(self, path):
        """The table() written to `path` as CSV, a header row first."""
        write_csv(self, path)

    def save(self, path):
        """Versioned JSON: the machine once at the top, each result with its run."""
        machine = dict(self.machine)
        entries = []
        for r, run in zip(self.results, self.runs):
            d = r.to_dict()
            if d["machine"] == machine:
                del d["machine"]  # inherits the top-level one on loading
            d["run"] = dict(run)
            entries.append(d)
        doc = {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            **(_thawed(_deep_frozen(self.build)) if self.build else build_info()),
            "machine": machine,
            "interrupted": self.interrupted,
            "results": entries,
        }
        if self.lost:
            doc["lost"] = [dict(x) for x in self.lost]
        atomic_write(path, lambda f: (json.dump(doc, f, indent=1), f.write("\n")))

    @classmethod
    def load(cls, path):
        """Read any schema version up to this one; ValueError for anything else."""
        doc = read_json(path)
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise ValueError(f"{path}: not a pagezero results file")
        version = doc.get("version")
        if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
            raise ValueError(
                f"{path}: results schema version {version!r} is not one this "
                f"pagezero understands (1..{SCHEMA_VERSION})"
            )
        try:
            check_document(doc)
            machine = doc.get("machine")  # version 1 kept it in each result only
            results, runs = [], []
            for i, d in enumerate(doc["results"]):
                try:
                    check_result(d)
                    if "machine" not in d and machine is not None:
                        d = dict(d, machine=machine)
                    run = d.get("run", {})
                    check_run(run)
                    results.append(Result.from_dict(d))
                    runs.append(run)
                except ValueError as e:
                    raise ValueError(f"result {i + 1}: {e}") from None
            build = {k: doc[k] for k in ("pagezero", "build") if k in doc}
            return cls(
                results, runs, machine, doc.get("interrupted"), build or None, lost=doc.get("lost")
            )
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None


def save_results(path, results):
    """Write results to `path` as JSON, atomically (see ResultSet.save)."""
    ResultSet(results).save(path)


def load_results(path):
    """The Results of a file written by save_results or ResultSet.save."""
    return list(ResultSet.load(path).results)
