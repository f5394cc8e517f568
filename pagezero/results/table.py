"""A ResultSet as a tidy table, one row per sample (loop): a numpy structured array,
and the same rows as CSV."""

from __future__ import annotations

import json
import os
from typing import IO, TYPE_CHECKING, Any

from pagezero.files import atomic_write

if TYPE_CHECKING:
    import numpy.typing as npt

    from pagezero.results.resultset import ResultSet

__all__ = ["sample_table", "write_csv"]


def sample_table(rs: ResultSet) -> npt.NDArray[Any]:
    """A tidy numpy structured array of `rs`'s samples, one row per loop.

    Parameters
    ----------
    rs : ResultSet
        The results to tabulate.

    Returns
    -------
    numpy.ndarray
        A structured array with the fields benchmark, function, one per
        parameter any result has (int64 where every result's value is an
        integer, text otherwise), repetition, process, loop, measurement (the
        loop's value: bytes/sec, or cycles/byte for the cycles clock) and unit.
    """
    import numpy as np

    names = sorted({k for r in rs.results for k in r.params})
    numeric = {
        k: all(
            isinstance(r.params.get(k), int) and not isinstance(r.params.get(k), bool)
            for r in rs.results
        )
        for k in names
    }
    rows = []
    for r, run in zip(rs.results, rs.runs):
        params = [
            r.params.get(k) if numeric[k] else json.dumps(r.params.get(k)).strip('"') for k in names
        ]
        where = (run["repetition"], run["process"])
        for i, v in enumerate(r.values()):
            rows.append((r.benchmark, r.function, *params, *where, i, v, r.unit))
    width = max([len(str(x)) for row in rows for x in row if isinstance(x, str)] + [8])
    dtype = (
        [("benchmark", f"U{width}"), ("function", f"U{width}")]
        + [(k, "i8" if numeric[k] else f"U{width}") for k in names]
        + [
            ("repetition", "i8"),
            ("process", "i8"),
            ("loop", "i8"),
            ("measurement", "f8"),
            ("unit", f"U{width}"),
        ]
    )
    return np.array(rows, dtype=dtype)


def write_csv(rs: ResultSet, path: str | os.PathLike[str]) -> None:
    """sample_table(rs) written to `path` as CSV, a header row first.

    Parameters
    ----------
    rs : ResultSet
        The results to write.
    path : str or os.PathLike
        The CSV file, written atomically (:func:`pagezero.files.atomic_write`).

    Raises
    ------
    OSError
        The file cannot be written.
    """
    import csv

    t = sample_table(rs)

    def write(f: IO[str]) -> None:
        w = csv.writer(f)
        w.writerow(t.dtype.names or ())  # never None: sample_table builds a structured dtype
        w.writerows(row.tolist() for row in t)

    atomic_write(path, write)
