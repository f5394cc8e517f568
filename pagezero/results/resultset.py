"""Results as values: immutable, validated on creation, saved as versioned JSON.

A Result (pagezero.results.result) holds one benchmark run: its parameters, one raw
sample per timed loop in the clock's own unit, the clock's rate, and the
machine it ran on. Everything else (seconds, bytes per second, cycles per
byte, statistics) is derived from those, so a saved file can be re-analysed
without re-running. A ResultSet holds the runs of one study and reads and
writes the versioned JSON file.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Any, overload

from pagezero.analysis.stats import summarize
from pagezero.files import atomic_write
from pagezero.results.frozen import deep_frozen as _deep_frozen
from pagezero.results.frozen import frozen as _frozen
from pagezero.results.frozen import thawed as _thawed
from pagezero.results.points import params_key, point_key, summarize_points
from pagezero.results.result import DETAIL_KEYS, Result, result_type, signal_name
from pagezero.results.schema import check_document, check_result, check_run, read_json
from pagezero.results.table import sample_table, write_csv
from pagezero.system.machine import build_info

if TYPE_CHECKING:
    import numpy.typing as npt

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


class ResultSet:
    """Results of one study, each with how it was run, the machine, and any interruption.

    Grid points are the distinct points.point_key()s (benchmark, function,
    unit, parameters but loops); each point's samples pool the loops of all
    its repetitions.

    Parameters
    ----------
    results : iterable of Result
        The results, in the order they were measured.
    runs : sequence of Mapping, optional
        One per result: its "repetition" and worker "process" (0 when not
        given) and, when known, the worker's "pid". Default: all 0.
    machine : Mapping, optional
        The machine the study ran on; default, the first result's.
    interrupted : str or bool, optional
        The signal that stopped the study, if one did (True: an unknown one).
    build : Mapping, optional
        pagezero's version and the extension's build, as a file recorded them
        ("pagezero", "build"); None for results made here.
    lost : sequence of Mapping, optional
        Worker processes that died unsaved (sweeps): {"process", "repetitions",
        "reason"}.

    Raises
    ------
    ValueError
        Not one run per result, or `lost` not a list of objects.
    """

    def __init__(
        self,
        results: Iterable[Result],
        runs: Sequence[Mapping[str, Any]] | None = None,
        machine: Mapping[str, Any] | None = None,
        interrupted: str | bool | None = None,
        build: Mapping[str, Any] | None = None,
        lost: Any = None,
    ) -> None:
        self.results: tuple[Result, ...] = tuple(results)
        runs = runs if runs is not None else [{}] * len(self.results)
        if len(runs) != len(self.results):
            raise ValueError("one run description per result is needed")
        self.runs: tuple[Mapping[str, Any], ...] = tuple(
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
        self.interrupted = signal_name(interrupted)
        # pagezero's version and the extension's build, as the file recorded
        # them (None: made here, build_info() is written on saving).
        self.build: Mapping[str, Any] | None = _frozen(build) if build else None
        # Worker processes that died unsaved (sweeps): {"process", "repetitions", "reason"}.
        if lost is not None and not (
            isinstance(lost, (list, tuple))
            and all(isinstance(x, (dict, MappingProxyType)) for x in lost)
        ):
            raise ValueError("lost is not a list of objects (the worker processes lost)")
        self.lost: tuple[Any, ...] = tuple(_deep_frozen(x) for x in lost or ())

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    @overload
    def __getitem__(self, index: int) -> Result: ...
    @overload
    def __getitem__(self, index: slice) -> ResultSet: ...
    def __getitem__(self, index: int | slice) -> Result | ResultSet:
        """The Result of run `index` (for a set of one point), or a ResultSet of a slice."""
        if isinstance(index, slice):
            return ResultSet(
                self.results[index], self.runs[index], self.machine, self.interrupted, self.build
            )
        return self.results[index]

    @property
    def bytes_per_sec(self) -> float | None:
        """The rate of the one point the set holds: the median of its per-run medians.

        It is the figure the tables, ``compare`` and the report show. None when the
        point was measured in cycles; ValueError when the set holds several points
        (use :meth:`stats` or ``summarize_points``).
        """
        points = summarize_points(self)
        if len(points) != 1:
            raise ValueError(
                f"bytes_per_sec is a figure of one point; this set holds {len(points)}"
            )
        (_, summary), *_ = points.values()
        return summary["median"] if summary["unit"] == "bytes/sec" else None

    @property
    def benchmarks(self) -> list[str]:
        """The benchmarks the results measured, sorted."""
        return sorted({r.benchmark for r in self.results})

    def points(self) -> list[tuple[Result, list[Result]]]:
        """Grid points in first-seen order.

        Returns
        -------
        list of (Result, list of Result)
            Per point: the Result of its first run, and every Result of it.
        """
        groups: dict[Any, list[Result]] = {}
        for r in self.results:
            groups.setdefault(point_key(r), []).append(r)
        return [(rs[0], rs) for rs in groups.values()]

    def stats(self) -> list[dict[str, Any]]:
        """One row per grid point, with summarize() of all its per-loop values.

        Returns
        -------
        list of dict
            benchmark, function, params, label, unit, and stats.summarize()'s
            entries in that unit (for rates, the harmonic mean: the point's
            total bytes over its total time).
        """
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

    def table(self) -> npt.NDArray[Any]:
        """A tidy numpy structured array, one row per sample (loop).

        Returns
        -------
        numpy.ndarray
            As results_table.sample_table() describes it.
        """
        return sample_table(self)

    def to_pandas(self) -> Any:  # a pandas.DataFrame: pandas is optional, without types here
        """The table() as a pandas DataFrame (pandas is not a dependency).

        Returns
        -------
        pandas.DataFrame
            One row per loop, the columns of table().

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        try:
            # import_module, not an import statement: pandas is optional and
            # ships no types, so mypy is not asked to find them.
            pd = importlib.import_module("pandas")
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.table())

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """The table() written to `path` as CSV, a header row first.

        Parameters
        ----------
        path : str or os.PathLike
            The CSV file, written atomically.
        """
        write_csv(self, path)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the set as versioned JSON: the machine once at the top, each result with its run.

        The file also records pagezero's version and the extension's build (the
        ones it was loaded with, or this installation's). Written atomically.

        Parameters
        ----------
        path : str or os.PathLike
            The results file.

        Raises
        ------
        OSError
            The file cannot be written.
        """
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

        def write(f: IO[str]) -> None:
            json.dump(doc, f, indent=1)
            f.write("\n")

        atomic_write(path, write)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ResultSet:
        """Read a results file of any schema version up to this one.

        Parameters
        ----------
        path : str or os.PathLike
            A file ResultSet.save (or save_results) wrote.

        Returns
        -------
        ResultSet
            Its results, runs, machine, interruption, build and lost workers.

        Raises
        ------
        ValueError
            Naming the file (and the result): not JSON, not a results file, a
            schema version this pagezero does not know, or a result of the
            wrong shape.
        OSError
            The file cannot be read.
        """
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


def save_results(path: str | os.PathLike[str], results: Iterable[Result]) -> None:
    """Write results to `path` as JSON, atomically (see ResultSet.save).

    Parameters
    ----------
    path : str or os.PathLike
        The results file.
    results : iterable of Result
        The results, each as one run of repetition 0, process 0.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    ResultSet(results).save(path)


def load_results(path: str | os.PathLike[str]) -> list[Result]:
    """The Results of a file written by save_results or ResultSet.save.

    Parameters
    ----------
    path : str or os.PathLike
        The results file.

    Returns
    -------
    list of Result
        Its results, in file order.

    Raises
    ------
    ValueError
        The file is not a results file this pagezero reads (see ResultSet.load).
    OSError
        The file cannot be read.
    """
    return list(ResultSet.load(path).results)
