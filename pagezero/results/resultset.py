"""ResultSet, a measurement's runs, saved as versioned JSON; results folders loaded as one."""

from __future__ import annotations

import csv
import importlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

from pagezero.files import atomic_write
from pagezero.results.points import (
    format_figure,
    grouped,
    point_key,
    point_names,
    summarize,
    summarize_points,
    title,
)
from pagezero.results.result import Result, deep_frozen, frozen, result_type, signal_name, thawed
from pagezero.results.schema import check_document, check_result, check_run, is_int, read_json
from pagezero.system.machine import build_info

if TYPE_CHECKING:
    import numpy.typing as npt

# Result, result_type and atomic_write: where their callers import them from.
__all__ = ["ResultSet", "merged", "save_results", "load_results", "SCHEMA", "SCHEMA_VERSION"]
__all__ += ["Result", "result_type", "atomic_write", "results_files", "is_results_file"]
__all__ += ["load_folder", "load_path", "load_sources"]

SCHEMA = "pagezero.results"
SCHEMA_VERSION = 3  # the versions' differences: docs/measuring.rst


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


class ResultSet:
    """The runs of one measurement or study, a sequence of :class:`Result` (docs/measuring.rst).

    Parameters
    ----------
    results : iterable of Result
        The results, in the order they were measured.
    runs : sequence of Mapping, optional
        Per result: its "repetition", worker "process" (default 0) and, when known, "pid".
    machine, interrupted : optional
        The machine (default: the first result's); the signal that stopped it (True: unknown).
    build, lost : Mapping, sequence of Mapping, optional
        A file's "pagezero" version and "build" (None: made here); the worker processes that
        died unsaved (sweeps): {"process", "repetitions", "reason"}.

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
        given = [{k: r[k] for k in ("repetition", "process", "pid") if k in r} for r in runs]
        self.runs: tuple[Mapping[str, Any], ...] = tuple(
            MappingProxyType({"repetition": 0, "process": 0} | r) for r in given
        )
        if machine is None:
            machine = self.results[0].machine if self.results else {}
        self.machine = frozen(machine)
        self.interrupted = signal_name(interrupted)
        self.build: Mapping[str, Any] | None = frozen(build) if build else None
        objects = isinstance(lost, (list, tuple)) and all(
            isinstance(x, (dict, MappingProxyType)) for x in lost
        )
        if lost is not None and not objects:
            raise ValueError("lost is not a list of objects (the worker processes lost)")
        self.lost: tuple[Any, ...] = tuple(deep_frozen(x) for x in lost or ())

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    @overload
    def __getitem__(self, index: int) -> Result: ...
    @overload
    def __getitem__(self, index: slice) -> ResultSet: ...
    def __getitem__(self, index: int | slice) -> Result | ResultSet:
        """The Result at `index` (run `index` of a one-point set), or a ResultSet of a slice."""
        if isinstance(index, slice):
            return ResultSet(
                self.results[index], self.runs[index], self.machine, self.interrupted, self.build
            )
        return self.results[index]

    def __repr__(self) -> str:
        stop = f", interrupted by {self.interrupted}" if self.interrupted else ""
        points = list(summarize_points(self).values())
        if len(points) == 1:
            (first, s), *_ = points
            figure = format_figure(s["median"], s["unit"])
            return f"<ResultSet {title(first)}: {figure}, {_count(s['runs'], 'run')}{stop}>"
        processes = len({run["process"] for run in self.runs})
        counts = f"{_count(len(points), 'point')}, {_count(len(self), 'result')}"
        return f"<ResultSet {counts}, {_count(processes, 'run')}{stop}>"

    @property
    def bytes_per_sec(self) -> float | None:
        """The one point's rate in bytes/sec, the median of its per-run medians (None in cycles);
        ValueError when the set holds several points (use :meth:`summary` or :meth:`stats`)."""
        points = summarize_points(self)
        if len(points) != 1:
            raise ValueError(
                f"bytes_per_sec is a figure of one point; this set holds {len(points)}"
            )
        ((_, summary),) = points.values()
        return summary["median"] if summary["unit"] == "bytes/sec" else None

    @property
    def benchmarks(self) -> list[str]:
        """The benchmarks the results measured, sorted."""
        return sorted({r.benchmark for r in self.results})

    def summary(self) -> str:
        """One line a point: its name, figure (as :attr:`bytes_per_sec`), spread between runs."""
        points = list(summarize_points(self).values())
        names = point_names([r for r, _ in points])
        figures = [format_figure(s["median"], s["unit"]) for _, s in points]
        width, fwidth = (max(map(len, x), default=0) for x in (names, figures))
        lines = [
            f"{name:<{width}}  {figure:>{fwidth}} +- {s['spread_pct']:.2f}% "
            f"between {s['spread_of']}, {_count(s['runs'], 'run')}"
            for name, figure, (_, s) in zip(names, figures, points)
        ]
        if self.interrupted:
            lines.append(f"interrupted by {self.interrupted}")
        return "\n".join(lines) or "no results"

    def points(self) -> list[tuple[Result, list[Result]]]:
        """Grid points in first-seen order: (the Result of its first run, all its Results)."""
        return [(rs[0], rs) for rs in grouped(self.results, point_key).values()]

    def stats(self) -> list[dict[str, Any]]:
        """One dict per grid point: benchmark, function, params, label, stats of all its loops."""
        rows = []
        for r, rs in self.points():
            row = {"benchmark": r.benchmark, "function": r.function, "params": dict(r.params)}
            values = [v for x in rs for v in x.values()]
            rows.append(dict(row, label=r.label(), unit=r.unit, **summarize(values, unit=r.unit)))
        return rows

    def table(self) -> npt.NDArray[Any]:
        """A tidy numpy structured array, a row per loop: benchmark, function, each parameter (int64
        or text), repetition, process, loop, measurement (bytes/sec or cycles/byte), unit."""
        import numpy as np

        names = sorted({k for r in self.results for k in r.params})
        numeric = {k: all(is_int(r.params.get(k)) for r in self.results) for k in names}
        rows = []
        for r, run in zip(self.results, self.runs):
            ps = [r.params.get(k) for k in names]
            ps = [v if numeric[k] else json.dumps(v).strip('"') for k, v in zip(names, ps)]
            where = (run["repetition"], run["process"])
            rows += [
                (r.benchmark, r.function, *ps, *where, i, v, r.unit)
                for i, v in enumerate(r.values())
            ]
        text = f"U{max([len(str(x)) for row in rows for x in row if isinstance(x, str)] + [8])}"
        params_dtype = [(k, "i8" if numeric[k] else text) for k in names]
        ints = [("repetition", "i8"), ("process", "i8"), ("loop", "i8")]
        dtype = [("benchmark", text), ("function", text), *params_dtype, *ints]
        return np.array(rows, dtype=dtype + [("measurement", "f8"), ("unit", text)])

    def to_pandas(self) -> Any:  # a pandas.DataFrame: pandas is optional and untyped
        """:meth:`table` as a pandas DataFrame; ImportError without pandas (not a dependency)."""
        try:
            pd = importlib.import_module("pandas")  # not an import statement: mypy has no stubs
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.table())

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """:meth:`table` written to `path` atomically as CSV, a header row first."""
        t = self.table()
        rows = [t.dtype.names or (), *(row.tolist() for row in t)]  # names: never None here
        atomic_write(path, lambda f: csv.writer(f).writerows(rows))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the set as versioned JSON, atomically (the build as loaded, or this one's).

        Parameters
        ----------
        path : str or os.PathLike
            The results file; OSError when it cannot be written.
        """
        machine = thawed(self.machine)
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
            **(thawed(deep_frozen(self.build)) if self.build else build_info()),
            "machine": machine,
            "interrupted": self.interrupted,
            "results": entries,
        }
        if self.lost:
            doc["lost"] = [dict(x) for x in self.lost]
        atomic_write(path, lambda f: f.write(json.dumps(doc, indent=1) + "\n"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ResultSet:
        """A results file of any schema version up to this one, as :meth:`save` wrote it.

        Parameters
        ----------
        path : str or os.PathLike
            The results file; OSError when it cannot be read.

        Raises
        ------
        ValueError
            Naming the file: not JSON or a results file, an unknown version, a bad result.
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


def merged(sets: Sequence[ResultSet]) -> ResultSet:
    """Several sets as one, each set's processes numbered apart; the first's machine."""
    processes: dict[tuple[int, Any], int] = {}
    runs = [
        dict(run, process=processes.setdefault((i, run["process"]), len(processes)))
        for i, s in enumerate(sets)
        for run in s.runs
    ]
    interrupted = next((s.interrupted for s in sets if s.interrupted), False)
    results = [r for s in sets for r in s.results]
    return ResultSet(results, runs, dict(sets[0].machine) if sets else {}, interrupted)


def save_results(path: str | os.PathLike[str], results: Iterable[Result]) -> None:
    """Write results to the file `path`, each as one run (:meth:`ResultSet.save`, its OSError).

    Parameters
    ----------
    path, results : str or os.PathLike, iterable of Result
        The results file; the results (a ResultSet's runs are not kept).
    """
    ResultSet(results).save(path)


def load_results(path: str | os.PathLike[str]) -> list[Result]:
    """The Results of a results file, in file order (:meth:`ResultSet.load` keeps their runs).

    Parameters
    ----------
    path : str or os.PathLike
        The results file: OSError or ValueError as :meth:`ResultSet.load` raises them.
    """
    return list(ResultSet.load(path).results)


def is_results_file(path: str) -> bool:
    """Whether `path` is JSON with pagezero's results schema (read, not validated)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def results_files(folder: str) -> list[str]:
    """The results files under `folder`, sorted depth first; ValueError for none or no folder."""
    if not os.path.isdir(folder):
        raise ValueError(f"{folder}: no such folder")
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        names = [n for n in sorted(files) if n.endswith(".json") and not n.startswith(".")]
        found += [p for p in (os.path.join(root, n) for n in names) if is_results_file(p)]
    if not found:
        raise ValueError(f"{folder}: no pagezero results files under it")
    return found


def _study(path: str) -> str:
    """The study a file holds, by its name: "extents" for .../run-2/extents.json."""
    return os.path.splitext(os.path.basename(path))[0]


def _merged(folder: str) -> tuple[ResultSet, list[str]]:
    """Every results file under one machine's `folder` as one set, and each result's study."""
    paths = results_files(folder)
    sets = [ResultSet.load(p) for p in paths]
    names = sorted(
        {s.machine.get("fleet_name") or s.machine.get("hostname") or "unknown" for s in sets}
    )
    if len(names) > 1:
        raise ValueError(
            f"{folder}: holds results of several machines ({', '.join(names)}); "
            f"name one machine's folder, e.g. {os.path.join(folder, names[0])}"
        )
    studies = [_study(p) for p, s in zip(paths, sets) for _ in s.results]
    return merged(sets), studies


def load_folder(folder: str) -> ResultSet:
    """Every results file under one machine's `folder` as one ResultSet; other JSON passed over."""
    return _merged(folder)[0]


def load_sources(path: str) -> tuple[ResultSet, list[str]]:
    """(load_path(path), each result's study: its file's name, "extents" in a report folder)."""
    if os.path.isdir(path):
        return _merged(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    rs = ResultSet.load(path)
    return rs, [_study(path)] * len(rs.results)


def load_path(path: str) -> ResultSet:
    """A results file, or a folder of them (load_folder); ValueError for no such file."""
    return load_sources(path)[0]
